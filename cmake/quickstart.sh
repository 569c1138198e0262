#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12 machine (as root):
#   bash cmake/quickstart.sh demo   set up, build, and run the demo graph on 2 MPI ranks
#   bash cmake/quickstart.sh test   set up, build, and run the whole test suite through ctest
# Set-up is cmake/bootstrap-deps.sh (seconds when already done). The build goes to $EINREL_BUILD_DIR
# (default: build/ in the source tree).
set -euo pipefail

mode=${1:-}
if [[ "$mode" != demo && "$mode" != test ]]; then
  echo "usage: bash cmake/quickstart.sh demo|test" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EINREL_BUILD_DIR:-${root}/build}
jobs=$(nproc)

prefix=$(bash "${root}/cmake/bootstrap-deps.sh" | tail -n 1)

echo "[einrel] configuring ${build}"
cmake -S "$root" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DEINREL_ENABLE_TESTS="$([[ $mode == test ]] && echo ON || echo OFF)" -DEINREL_WARNINGS_AS_ERRORS=ON \
  >"${build}.configure.log" 2>&1 || { cat "${build}.configure.log"; exit 1; }
grep -A 20 -- "-- einrel .* configuration" "${build}.configure.log" | grep -- "^--   " || true
echo "[einrel] building with ${jobs} jobs"
cmake --build "$build" --parallel "$jobs"

# Kokkos' OpenMP backend: no thread pinning (ranks may share cores), threads split among ranks.
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}

if [[ $mode == demo ]]; then
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
  echo "[einrel] demo: mpiexec.mpich -n 2 einrel run drivers/examples/matmul.ein --random 1"
  mpiexec.mpich -n 2 "${build}/drivers/einrel" run "${root}/drivers/examples/matmul.ein" --random 1 \
    --output "${build}/demo-output.h5" --report "${build}/demo-report.json"
else
  echo "[einrel] testing: ctest --test-dir ${build}"
  ctest --test-dir "$build" --output-on-failure --parallel "$jobs"
fi
