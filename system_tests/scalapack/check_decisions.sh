#!/bin/bash
# Which way check_decisions' calls went, from EINREL_SCALAPACK_VERBOSE=1's lines (one per call, from the grid's
# first process; the reference calls, sent to ScaLAPACK with EINREL_SCALAPACK=off, left out):
#   auto (default): the update on ScaLAPACK, predicted; the deep product on einrel, planned; the same product a
#                   block cycle further on, on the kept plan ("planned in 0 s"); in place, on it too;
#   EINREL_SCALAPACK_CACHE_MB=1: no plan kept, each deep product planned again;
#   EINREL_SCALAPACK=on: all four on einrel;  EINREL_SCALAPACK=sometimes: all on ScaLAPACK, the reason named.
#   system_tests/scalapack/check_decisions.sh build/system_tests/scalapack/check_decisions RANKS
set -u
EXE=$1
RANKS=$2
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
fail=0
# run LABEL ENV...: the verbose lines of the calls under test, one per line.
run() {
  local out
  out=$(env "${@:2}" EINREL_SCALAPACK_VERBOSE=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false "$MPIEXEC" -n "$RANKS" "$EXE" 2>&1)
  if ! grep -q "agree with ScaLAPACK: ok" <<<"$out"; then
    echo "FAIL $1: results differ or the run failed:"
    echo "$out" | tail -5
    fail=1
  fi
  grep "^einrel_scalapack: pdgemm_" <<<"$out" | grep -v "EINREL_SCALAPACK=off"
}
# expect LABEL LINES N PATTERN: line N matches PATTERN (grep -E).
expect() {
  local line
  line=$(sed -n "$3p" <<<"$2")
  if grep -Eq "$4" <<<"$line"; then echo "ok   $1, call $3: $line"; else echo "FAIL $1, call $3: wanted /$4/, got: $line"; fail=1; fi
}
grid="\(f64, 1x$RANKS grid\)"
lines=$(run auto)
expect auto "$lines" 1 "pdgemm_ 2560x2560x64 $grid on ScaLAPACK: .*predicted .* on ScaLAPACK, .* on einrel"
expect auto "$lines" 2 "pdgemm_ 2560x2560x2048 $grid on einrel: .*planned in [0-9.e-]+ s, "
expect auto "$lines" 2 "1 product\(s\)"
expect auto "$lines" 3 "on einrel: .*planned in 0 s, .*1 product\(s\)"
expect auto "$lines" 4 "on einrel: .*planned in 0 s, "
lines=$(run cache EINREL_SCALAPACK_CACHE_MB=1)
expect cache "$lines" 3 "on einrel: .*planned in (0\.|[1-9])[0-9.e-]* s, .*0 product\(s\), 0 MB kept"
lines=$(run on EINREL_SCALAPACK=on)
expect on "$lines" 1 "pdgemm_ 2560x2560x64 $grid on einrel: "
lines=$(run bad EINREL_SCALAPACK=sometimes)
expect bad "$lines" 2 "on ScaLAPACK: .*EINREL_SCALAPACK='sometimes': expected off, on or auto"
[ $fail = 0 ] && echo "decisions at $RANKS ranks: ok"
exit $fail
