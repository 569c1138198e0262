#!/usr/bin/env bash
# Builds every einrel target for Kokkos' CUDA backend (library, `einrel`, the test programs of every
# backend, Cuda included, the benchmarks and the examples) with warnings as errors, on a machine with the
# CUDA toolkit and no GPU. The Kokkos stack is cmake/bootstrap-deps.sh --backend cuda
# (Debian's Kokkos 3.4 patched for CUDA 13, docs/dependencies.md); einrel is compiled by that Kokkos'
# nvcc_wrapper. Fails when the build fails or when its log holds a warning (nvcc's own diagnostics
# included, which -Werror does not turn into errors). Then runs the one test that needs no GPU:
# Cli_no_visible_gpu (the program started where no GPU is visible ends with one error line, exit 1).
#
#   bash cmake/cuda-build-check.sh
#
# Environment: EINREL_CUDA_BUILD_DIR (default build-cuda/ in the source tree), EINREL_DEPS_JOBS (build jobs,
# default: nproc), and bootstrap-deps.sh's own (EINREL_CUDA_HOME for a toolkit outside /usr/local/cuda,
# EINREL_CUDA_ARCH for the GPU that will run the build: HOPPER90 for an H100 or H200, AMPERE80 by default).
# To run the build on a GPU machine without einrel's dependencies: cmake/cuda-device-bundle.sh, then
# cmake/cuda-device-run.sh there (docs/testing.md, "On a GPU").
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EINREL_CUDA_BUILD_DIR:-${root}/build-cuda}
jobs=${EINREL_DEPS_JOBS:-$(nproc)}
phase() { echo "[einrel-cuda] $1: $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
phase_start=$SECONDS

prefix=$(bash "${root}/cmake/bootstrap-deps.sh" --backend cuda | tail -n 1)
kokkos_prefix=${prefix%%;*}
phase "set-up"

mkdir -p "$build"
echo "[einrel-cuda] configuring ${build} (compiler: ${kokkos_prefix}/bin/nvcc_wrapper)"
cmake -S "$root" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="${kokkos_prefix}/bin/nvcc_wrapper" -DEINREL_ENABLE_TESTS=ON \
  -DEINREL_ENABLE_PERF_TESTS=ON -DEINREL_WARNINGS_AS_ERRORS=ON >"${build}/configure.log" 2>&1 ||
  { cat "${build}/configure.log"; exit 1; }
grep -A 20 -- "-- einrel .* configuration" "${build}/configure.log" | grep -- "^--   " || true
grep -q "Kokkos backends.*Cuda" "${build}/configure.log" ||
  { echo "[einrel-cuda] error: the configured Kokkos has no Cuda backend (${build}/configure.log)" >&2; exit 1; }
phase "configure"

# From clean, so that the log holds every file's diagnostics.
echo "[einrel-cuda] building from clean with ${jobs} jobs (log: ${build}/build.log)"
status=0
cmake --build "$build" --parallel "$jobs" --clean-first >"${build}/build.log" 2>&1 || status=$?
phase "build"
if [[ $status != 0 ]]; then
  grep -E -B 2 -A 12 "error|Error" "${build}/build.log" | head -n 200
  echo "[einrel-cuda] error: the CUDA build failed (log: ${build}/build.log)" >&2
  exit 1
fi
if grep -n -i "warning" "${build}/build.log" >"${build}/warnings.log"; then
  head -n 50 "${build}/warnings.log"
  echo "[einrel-cuda] error: the CUDA build printed $(wc -l <"${build}/warnings.log") warning lines" \
    "(${build}/warnings.log)" >&2
  exit 1
fi
cuda_tests=$(find "$build/unit_tests" -maxdepth 1 -type f -name '*_Cuda_test' | wc -l)
[[ $cuda_tests -gt 0 ]] ||
  { echo "[einrel-cuda] error: no test program was built for the Cuda backend" >&2; exit 1; }
# The one thing a CUDA build does without a GPU: refuse to start, with one error line on every rank.
ctest --test-dir "$build" -R '^Cli_no_visible_gpu$' --output-on-failure ||
  { echo "[einrel-cuda] error: without a GPU, einrel did not end with one error line" >&2; exit 1; }
phase "no-GPU check"
echo "[einrel-cuda] every target built for CUDA without a warning, ${cuda_tests} test programs for Cuda," \
  "and without a visible GPU einrel ends with one error line; total ${SECONDS} s"
