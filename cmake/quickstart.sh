#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12 machine (as root):
#   bash cmake/quickstart.sh demo   set up, build, and run the demo graph on 2 MPI ranks
#   bash cmake/quickstart.sh test   set up, build, and run the whole test suite through ctest; then the
#                                   sanitizer build (clang-14, AddressSanitizer + UBSan + leak checks,
#                                   Serial backend, fuzz targets) and its tests: unit tests at 1 and 3
#                                   ranks, short fuzz runs, mutated graphs through the program
# Set-up is cmake/bootstrap-deps.sh (seconds when already done). The build goes to $EINREL_BUILD_DIR
# (default: build/ in the source tree), the sanitizer build to $EINREL_SANITIZER_BUILD_DIR (default:
# build-sanitize/); EINREL_SKIP_SANITIZERS=1 leaves the sanitizer build out.
set -euo pipefail

mode=${1:-}
if [[ "$mode" != demo && "$mode" != test ]]; then
  echo "usage: bash cmake/quickstart.sh demo|test" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EINREL_BUILD_DIR:-${root}/build}
jobs=$(nproc)

# Minutes of each phase, for the CI budget (docs/testing.md).
phase() { echo "[einrel] $1: $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
phase_start=$SECONDS

prefix=$(bash "${root}/cmake/bootstrap-deps.sh" | tail -n 1)
phase "set-up"

echo "[einrel] configuring ${build}"
cmake -S "$root" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DEINREL_ENABLE_TESTS="$([[ $mode == test ]] && echo ON || echo OFF)" -DEINREL_WARNINGS_AS_ERRORS=ON \
  >"${build}.configure.log" 2>&1 || { cat "${build}.configure.log"; exit 1; }
grep -A 20 -- "-- einrel .* configuration" "${build}.configure.log" | grep -- "^--   " || true
echo "[einrel] building with ${jobs} jobs"
cmake --build "$build" --parallel "$jobs"
phase "configure and build"

# Kokkos' OpenMP backend: no thread pinning (ranks may share cores), threads split among ranks.
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}

if [[ $mode == demo ]]; then
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
  echo "[einrel] demo: mpiexec.mpich -n 2 einrel run drivers/examples/matmul.ein --random 1"
  mpiexec.mpich -n 2 "${build}/drivers/einrel" run "${root}/drivers/examples/matmul.ein" --random 1 \
    --output "${build}/demo-output.h5" --report "${build}/demo-report.json"
  exit 0
fi

# The end of the output of each test that failed in ctest's last run in build directory $1, printed again at the
# end of the run: a CI log kept only in part (its beginning and end) still shows why a test failed.
failed_tails() {
  local log="$1/Testing/Temporary/LastTest.log" name
  while IFS=: read -r _ name; do
    echo "[einrel] the end of ${name}'s output (${1}):"
    awk -v p=" Test: ${name}" 'substr($0, length($0) - length(p) + 1) == p { on = 1 }
      on && /^<end of output>$/ { exit } on' "$log" | tail -n 60
  done <"$1/Testing/Temporary/LastTestsFailed.log"
}
tails=()

status=0
echo "[einrel] testing: ctest --test-dir ${build}"
ctest --test-dir "$build" --output-on-failure --parallel "$jobs" || { status=1; tails+=("$build"); }
phase "tests"
if [[ "${EINREL_SKIP_SANITIZERS:-0}" != 1 ]]; then
  sanitize=${EINREL_SANITIZER_BUILD_DIR:-${root}/build-sanitize}
  sanitize_prefix=$(bash "${root}/cmake/bootstrap-deps.sh" --backend serial | tail -n 1)
  phase "sanitizer set-up"
  echo "[einrel] configuring the sanitizer build ${sanitize} (clang-14, ASan + UBSan, Serial, fuzz targets)"
  cmake -S "$root" -B "$sanitize" -DCMAKE_PREFIX_PATH="$sanitize_prefix" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DEINREL_ENABLE_TESTS=ON \
    -DEINREL_ENABLE_SANITIZERS=ON -DEINREL_ENABLE_FUZZING=ON -DEINREL_WARNINGS_AS_ERRORS=ON \
    >"${sanitize}.configure.log" 2>&1 || { cat "${sanitize}.configure.log"; exit 1; }
  echo "[einrel] building the sanitizer build with ${jobs} jobs"
  cmake --build "$sanitize" --parallel "$jobs"
  phase "sanitizer configure and build"
  # Unit tests at 1 and 3 ranks (no rank label: one process), fuzzing, hostile input.
  echo "[einrel] testing the sanitizer build: ctest --test-dir ${sanitize} -L '^(unit|fuzz|hostile)\$' -LE '^np[^13]\$'"
  ctest --test-dir "$sanitize" --output-on-failure --parallel "$jobs" -L '^(unit|fuzz|hostile)$' -LE '^np[^13]$' ||
    { status=1; tails+=("$sanitize"); }
  phase "sanitizer tests"
fi
for dir in "${tails[@]}"; do failed_tails "$dir" || true; done
echo "[einrel] total: ${SECONDS} s"
exit $status
