#!/usr/bin/env bash
# Runs einrel's CUDA build on a GPU machine that has the CUDA driver and toolkit (cuBLAS) but none of
# einrel's dependencies: unpacks the bundle of cmake/cuda-device-bundle.sh at its absolute paths, then
#   1. einrel_kernel_bench in f64 and f32 against plain cuBLAS and cudaMemcpy (CUDA events), and in f64 with
#      one call per sample;
#   2. `einrel matrix-chain --scale 8192` on one rank;
#   3. the profile of the permuted contractions (profile.txt): Nsight Compute's kernel durations, where ncu
#      is installed, and the host time of every CUDA API call einrel and cuBLAS make (CUPTI, through the
#      bundle's libcuda_api_times.so), with a timeline of the last calls; in the quick run too;
#   4. the CUDA test suite: every test of the build tree at 1 and 2 MPI ranks, except the host backends'
#      duplicates (_OpenMP, _Serial), the install-tree consumers (they need a compiler), ScaLAPACK's own
#      testers (not bundled), the host build's docs check and the tests of other tools (clang-format,
#      Graphviz, Open MPI); MPI is host-staged (GPU-aware MPI off), both ranks on the one GPU. It gets what is
#      left of EINREL_DEVICE_SECONDS (default 570) after the rest, so that one call of the device tool
#      (at most 600 s) holds the whole run;
# and ends with a short table. Logs go to $OUT (else .device/out in the source tree): at most 8 files, as
# the device tool brings back. A rerun of what a fix touched, in less device time:
#   EINREL_DEVICE_TESTS=REGEX   only the tests ctest -R REGEX selects (of those above);
#   EINREL_DEVICE_QUICK=1       only step 1's f64 runs, step 3's CUPTI part and step 4;
#   EINREL_DEVICE_PROFILE="CASE ..."  the kernel-bench cases step 3 times (default permuted_multilabel).
#
#   bash cmake/cuda-device-run.sh [BUNDLE]       (default: .device/einrel-cuda.tar.xz in the source tree)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle=${1:-${root}/.device/einrel-cuda.tar.xz}
out=${OUT:-${root}/.device/out}
mkdir -p "$out"
t0=$SECONDS
step() { echo "== [$((SECONDS - t0)) s] $*"; }

budget=${EINREL_DEVICE_SECONDS:-570}

step "machine"
gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader)
echo "$gpu"
grep PRETTY_NAME /etc/os-release; ldd --version | head -n 1; echo "cores: $(nproc)"

step "unpacking ${bundle}"
manifest=$(tar -xJOf "$bundle" ./opt/einrel-runtime/manifest) || { echo "no manifest in ${bundle}"; exit 1; }
source_dir=$(sed -n 's/^source=//p' <<<"$manifest")
build=$(sed -n 's/^build=//p' <<<"$manifest")
# The CTest files name the source tree where the bundle was made: point that path at this checkout.
if [[ "$source_dir" != "$root" && ! -e "$source_dir" ]]; then
  mkdir -p "$(dirname "$source_dir")"
  ln -s "$root" "$source_dir"
fi
tar -C / --keep-directory-symlink -xJf "$bundle" || exit 1

runtime=/opt/einrel-runtime
# cuBLAS from the machine's toolkit (the bundle leaves CUDA's libraries out).
cuda_lib=$(ldconfig -p | awk '/libcublas\.so\.[0-9]+ / {print $NF; exit}')
[[ -n "$cuda_lib" ]] && cuda_lib=$(dirname "$cuda_lib")
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -z "$cuda_lib" ]] && compgen -G "${d}/libcublas.so.*" >/dev/null && cuda_lib=$d
done
echo "cuBLAS from ${cuda_lib:-nowhere}"
export LD_LIBRARY_PATH="${runtime}/lib${cuda_lib:+:${cuda_lib}}${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
# GCC 12's runtime only where this machine lacks a library or has an older libstdc++ (GLIBCXX_3.4.30).
for lib in "${runtime}"/lib-gcc/*; do
  name=$(basename "$lib")
  if ! ldconfig -p | grep -q " ${name} " ||
    { [[ $name == libstdc++.so.6 ]] && ! grep -q GLIBCXX_3.4.30 "$(ldconfig -p | awk '/libstdc\+\+\.so\.6 / {print $NF; exit}')"; }; then
    ln -sf "$lib" "${runtime}/lib/${name}"
    echo "using GCC 12's ${name}"
  fi
done
export PATH="${runtime}/bin:${PATH}"
# What the CTest files call by absolute path.
[[ -e /usr/bin/mpiexec.mpich ]] || ln -s "${runtime}/bin/mpiexec.hydra" /usr/bin/mpiexec.mpich
[[ -e /usr/bin/hydra_pmi_proxy ]] || ln -s "${runtime}/bin/hydra_pmi_proxy" /usr/bin/hydra_pmi_proxy
[[ -e /usr/bin/cmake ]] || ln -s "$(command -v cmake)" /usr/bin/cmake
# The check scripts run /usr/bin/python3 and need numpy and h5py: take a python3 that has them.
if ! /usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null; then
  for python in "$(command -v python3)" /opt/*/.venv/bin/python3 /opt/conda/bin/python3; do
    [[ -x "$python" && "$python" != /usr/bin/python3 ]] || continue
    if "$python" -c 'import numpy, h5py' 2>/dev/null; then
      # A script, not a link: a virtual environment's python finds its packages from its own path.
      [[ -e /usr/bin/python3 ]] && mv /usr/bin/python3 /usr/bin/python3.system
      printf '#!/bin/sh\nexec %s "$@"\n' "$python" >/usr/bin/python3
      chmod 755 /usr/bin/python3
      echo "python3 for the check scripts: ${python}"
      break
    fi
  done
fi
missing=$(ldd "${build}/drivers/einrel" | grep 'not found')
[[ -z "$missing" ]] || { echo "libraries not found: ${missing}"; exit 1; }
export OMP_PROC_BIND=false OMP_NUM_THREADS=2

step "kernels against cuBLAS and cudaMemcpy"
timeout 70 "${build}/perf_tests/einrel_kernel_bench" --reps 15 --max-size 8192 >"${out}/kernels_f64.csv" 2>&1
quick=${EINREL_DEVICE_QUICK:-0}
[[ $quick == 1 ]] ||
  timeout 45 "${build}/perf_tests/einrel_kernel_bench" --reps 15 --max-size 8192 --dtype f32 >"${out}/kernels_f32.csv" 2>&1
# One call per sample: the latency of a lone call, einrel's host work per call included.
timeout 45 "${build}/perf_tests/einrel_kernel_bench" --reps 15 --max-size 8192 --calls 1 \
  >"${out}/kernels_f64_one_call.csv" 2>&1

if [[ $quick != 1 ]]; then
  step "matrix chain S = 8192, one rank"
  timeout 45 "${build}/drivers/einrel" matrix-chain --scale 8192 --report "${out}/chain_report.json" 2>&1 |
    tee "${out}/chain.txt"
  timeout 45 "${build}/drivers/einrel" matrix-chain --scale 8192 --dtype f32 2>&1 | tee -a "${out}/chain.txt"
fi

step "profile of the permuted contractions (Nsight Compute, CUPTI)"
profile="${out}/profile.txt"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)
if [[ -n "$ncu" && $quick != 1 ]]; then
  timeout 60 "$ncu" --csv --print-units base --print-kernel-base function --metrics gpu__time_duration.sum \
    --clock-control none --log-file /tmp/ncu_permuted.csv \
    "${build}/perf_tests/einrel_kernel_bench" --only permuted_multilabel --reps 3 --calls 1 >/dev/null 2>&1
  # Mean duration per kernel name (nanoseconds in the file).
  echo "# Nsight Compute: mean kernel duration, launches, kernel" >"$profile"
  awk -F'","' '/gpu__time_duration/ {gsub(/[",]/, "", $NF); n[$5]++; t[$5] += $NF}
    END {for (k in n) printf "%8.1f us  x%-3d %s\n", t[k] / n[k] / 1000, n[k], substr(k, 1, 90)}' \
    /tmp/ncu_permuted.csv | sort -k1 -n -r | head -n 12 | tee -a "$profile"
fi
if [[ -f "${runtime}/lib/libcuda_api_times.so" ]]; then
  for case in ${EINREL_DEVICE_PROFILE:-permuted_multilabel}; do
    echo "## CUDA API host time: einrel_kernel_bench --only ${case} --reps 5 --calls 1" >>"$profile"
    CUDA_INJECTION64_PATH="${runtime}/lib/libcuda_api_times.so" EINREL_API_TIMELINE=160 timeout 60 \
      "${build}/perf_tests/einrel_kernel_bench" --only "$case" --reps 5 --calls 1 >>"$profile" 2>&1
  done
  grep -A 12 '^# CUDA API host time' "$profile"
else
  echo "no libcuda_api_times.so in the bundle"
fi

step "CUDA test suite (1 and 2 ranks)"
exclude='_np([3-9]|[1-9][0-9])|_OpenMP|_Serial|^Package|^Docs_|ScaLAPACK_testers|ScaLAPACK_pblas_testers|^Format_|Cli_plan_dot_renders|Cli_error_foreign_launcher'
ctest_seconds=$((budget - (SECONDS - t0) - 15))
echo "ctest gets ${ctest_seconds} s"
(cd "$build" && timeout "$ctest_seconds" ctest -j 12 --timeout 150 -E "$exclude" ${EINREL_DEVICE_TESTS:+-R "$EINREL_DEVICE_TESTS"} \
  --output-on-failure) \
  >"${out}/ctest.log" 2>&1
ctest_status=$?
cp "${build}/Testing/Temporary/LastTest.log" "${out}/LastTest.log" 2>/dev/null
grep -E "tests passed|tests failed|^\s+[0-9]+ - |Total Test time" "${out}/ctest.log"

step "summary"
for f in "${out}"/kernels_f64.csv "${out}"/kernels_f32.csv "${out}"/kernels_f64_one_call.csv; do
  [[ -f "$f" ]] || continue
  echo "--- $(basename "$f")"
  grep -v '^# host time' "$f" | grep '^#'
  # Contractions are the rows with a GEMM peer; the generic ⊗/⊕ and permutation rows are rates, not matches.
  # The equation holds commas: a row is case, equation, shape and three rates, read from both ends.
  awk -F, '!/^#/ && $1 != "case" && NF >= 6 {
      equation = $2; for (i = 3; i <= NF - 4; ++i) equation = equation "," $i
      printf "%-22s %-16s %-24s %10.1f %10.1f %6.3f\n", $1, equation, $(NF - 3), $(NF - 2), $(NF - 1), $NF
      if ($1 !~ /^generic_|^permute_bandwidth/) { n++; s += log($NF); if (min == "" || $NF < min) min = $NF } }
    END { if (n) printf "contractions: geomean %.3f, min %.3f over %d\n", exp(s / n), min, n }' "$f"
  grep -v '^#' "$f" | awk -F, 'NF < 6' | head -n 5
done
echo "${gpu}"
echo "ctest exit status ${ctest_status}; total $((SECONDS - t0)) s"
