#!/usr/bin/env bash
# Packs what cmake/cuda-device-run.sh needs to run einrel's CUDA build on a GPU machine that has the CUDA
# runtime and driver but none of einrel's dependencies and no network: one .tar.xz of absolute paths,
#   * the CUDA build tree (build-cuda/: programs, CTest files, configured data; no objects, programs stripped;
#     only what cuda-device-run.sh runs),
#   * the Kokkos/Kokkos Kernels prefix its programs find by RPATH,
#   * every shared library those programs load that is not glibc's or CUDA's (MPICH, HDF5, OpenBLAS, libfabric,
#     …) in /opt/einrel-runtime/lib, and GCC 12's runtime in /opt/einrel-runtime/lib-gcc for a machine whose
#     own is older,
#   * MPICH's launcher (mpiexec.hydra, hydra_pmi_proxy) in /opt/einrel-runtime/bin,
#   * perf_tests/tools/cuda_api_times.cpp built with this machine's nvcc, and the CUPTI it loads, in
#     /opt/einrel-runtime/lib, where CUPTI is installed here (the run script's profile step).
# The tree must be built first (bash cmake/cuda-build-check.sh, with EINREL_CUDA_ARCH for the target GPU).
#
#   bash cmake/cuda-device-bundle.sh [OUTPUT]     (default: .device/einrel-cuda.tar.xz in the source tree)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EINREL_CUDA_BUILD_DIR:-${root}/build-cuda}
output=${1:-${root}/.device/einrel-cuda.tar.xz}
[[ -f "${build}/CTestTestfile.cmake" ]] || { echo "cuda-device-bundle: no CUDA build in ${build}" >&2; exit 1; }
# The Kokkos prefix the tree was configured with (the first of its CMAKE_PREFIX_PATH).
kokkos_prefix=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "${build}/CMakeCache.txt")
kokkos_prefix=${kokkos_prefix%%;*}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# The build tree at its own absolute path (CTest files name it), without what only the build needs.
mkdir -p "${stage}${build}"
# Left out too: what cuda-device-run.sh does not run (the host backends' test programs, the install-tree
# consumers, the benchmarks other than einrel_kernel_bench), so that the bundle stays small.
tar -C "$build" --exclude=CMakeFiles --exclude=_deps --exclude='*.o' --exclude='*.a' --exclude='*.d' \
  --exclude='*.make' --exclude=Makefile --exclude='*.log' --exclude='*_OpenMP_test' --exclude='*_Serial_test' \
  --exclude='*_OpenMP.cpp' --exclude='*_Serial.cpp' --exclude=./system_tests/package/work \
  --exclude='./perf_tests/einrel_[a-jl-z]*' -cf - . | tar -C "${stage}${build}" -xf -
mkdir -p "${stage}${kokkos_prefix}"
cp -a "${kokkos_prefix}/lib" "${stage}${kokkos_prefix}/"

is_elf() { [[ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" == '177ELF' ]]; }
mapfile -t programs < <(find "$stage" -type f -perm -u+x | while read -r f; do is_elf "$f" && echo "$f"; done)
strip --strip-unneeded "${programs[@]}" 2>/dev/null || true

runtime=${stage}/opt/einrel-runtime
mkdir -p "${runtime}/lib" "${runtime}/lib-gcc" "${runtime}/bin"
cp -a /usr/bin/mpiexec.hydra /usr/bin/hydra_pmi_proxy "${runtime}/bin/"
# Libraries the target machine has or must not take from here: glibc, the CUDA driver and toolkit.
system='^(linux-vdso|ld-linux|libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libcuda|libcudart|libcublas|libcublasLt|libnvidia|libnvJitLink|libcusparse|libcusolver|libcurand|libcufft)\.'
gcc_runtime='^(libstdc\+\+|libgcc_s|libgomp|libgfortran|libquadmath)\.'
ldd "${programs[@]}" "${runtime}"/bin/* 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  while read -r lib; do
    name=$(basename "$lib")
    # (einrel's own shared libraries, libeinrel_c and libeinrel_fortran, travel in the build tree)
    if [[ $name =~ $system ]] || [[ $lib == "${kokkos_prefix}"/* ]] || [[ $lib == "${build}"/* ]]; then continue; fi
    if [[ $name =~ $gcc_runtime ]]; then cp -L "$lib" "${runtime}/lib-gcc/"; else cp -L "$lib" "${runtime}/lib/"; fi
  done
# MPICH's UCX loads its transport modules at run time from ucx/ beside libucs, so ldd does not name them:
# cross-memory attach for ranks on one machine (the InfiniBand ones need libraries a GPU box may lack).
if compgen -G "${runtime}/lib/libucs.so*" >/dev/null; then
  mkdir -p "${runtime}/lib/ucx"
  cp -a /usr/lib/x86_64-linux-gnu/ucx/libuct_cma.so* "${runtime}/lib/ucx/"
fi

# The CUDA API timer (a CUPTI injection library) and its CUPTI, which a GPU machine's toolkit may lack.
cupti=$(ls /usr/local/cuda/lib*/libcupti.so.* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.* 2>/dev/null | head -n 1 || true)
if [[ -n "$cupti" ]] && command -v nvcc >/dev/null; then
  nvcc -O2 -std=c++17 -shared -Xcompiler -fPIC -o "${runtime}/lib/libcuda_api_times.so" \
    "${root}/perf_tests/tools/cuda_api_times.cpp" -L"$(dirname "$cupti")" -lcupti
  cp -L "$cupti" "${runtime}/lib/"
fi

# Where things are, for cuda-device-run.sh: the source tree the CTest files name, the build tree, Kokkos.
printf 'source=%s\nbuild=%s\nkokkos=%s\n' "$root" "$build" "$kokkos_prefix" >"${runtime}/manifest"

mkdir -p "$(dirname "$output")"
echo "cuda-device-bundle: $(du -sh "$stage" | cut -f1) staged, compressing into ${output}"
tar -C "$stage" -cf - . | xz -T0 -6 >"$output"
echo "cuda-device-bundle: $(du -h "$output" | cut -f1) ${output}"
