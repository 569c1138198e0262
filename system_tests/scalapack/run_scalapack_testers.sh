#!/bin/bash
# ScaLAPACK's own testers (Debian's scalapack-mpi-test, MPICH builds) run twice each, without and with
# libeinrel_scalapack.so preloaded, and their pass/fail summaries compared. A tester passes when einrel's run
# completes (exit status 0, its summary printed, no timeout) and has no more failed tests, and no fewer passed
# ones, than the run on ScaLAPACK alone.
#
#   system_tests/scalapack/run_scalapack_testers.sh LIB RANKS [TESTER ...]
#
#   LIB      path to libeinrel_scalapack.so (e.g. build/drivers/scalapack/libeinrel_scalapack.so)
#   RANKS    MPI ranks of every run (2 on a 2-core machine; Debian's ctest uses 4)
#   TESTER   names in /usr/lib/x86_64-linux-gnu/scalapack/mpich-tests or its PBLAS/ folder (xdlu, dpb3tst, ...);
#            the default list is the fast real testers whose ScaLAPACK routines call pdgemm_/psgemm_ (and the
#            PBLAS level-3 testers, which call pdgemm_/pdgeadd_ with type-2 descriptors that einrel hands on).
#
# Environment: SCALAPACK_TESTERS_DIR (where the testers are), TESTER_TIMEOUT (seconds per run, default 600),
# KEEP=1 (keep the scratch folder, printed at the end), MPIEXEC (default mpiexec.mpich), EINREL_SCALAPACK (for
# the einrel runs, default `on`: einrel takes every call it can, where `auto` would leave most to ScaLAPACK).
# EINREL_TESTERS_DTYPE1=1: the PBLAS testers (?pb?tst) pass type-2 descriptors (11 entries, BLOCK_CYCLIC_2D_INB),
# which einrel hands on to ScaLAPACK untouched, so by default none of their calls reaches einrel. With this set, a
# small preloaded shim (built here with ${MPICC:-mpicc.mpich}) rewrites every type-2 descriptor whose first blocks
# are whole (IMB = MB, INB = NB, true of the stock .dat files) into the equivalent type-1 descriptor, in both runs,
# so that einrel computes their PxGEMM and PxGEADD tests (and receives their error-exit tests' illegal arguments).
# Prints one line per tester and then exactly "N passed, M failed"; exits 1 when any tester failed.
set -u

usage() {
  echo "usage: $0 path/to/libeinrel_scalapack.so RANKS [TESTER ...]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
LIB=$1
RANKS=$2
shift 2
case $RANKS in '' | *[!0-9]*) usage ;; esac
[ -f "$LIB" ] || { echo "$0: no library at $LIB" >&2; exit 2; }
LIB=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")

TD=${SCALAPACK_TESTERS_DIR:-/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
TMO=${TESTER_TIMEOUT:-600}
[ -d "$TD" ] || { echo "$0: no ScaLAPACK testers in $TD (Debian package scalapack-mpi-test)" >&2; exit 2; }

if [ $# -gt 0 ]; then
  TESTERS=("$@")
else
  TESTERS=(xdlu xslu xdinv xsinv xdls xsls xdhrd xshrd xdbrd xsbrd xdtrd xstrd xdnep xsnep xdhseqr dpb3tst spb3tst)
fi

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/einrel-scalapack-testers.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$SCRATCH"' EXIT

SHIM=""
if [ "${EINREL_TESTERS_DTYPE1:-0}" = 1 ]; then
  SHIM=$SCRATCH/libinb2dense.so
  cat >"$SCRATCH/inb2dense.c" <<'SHIM_SOURCE'
#define _GNU_SOURCE
#include <dlfcn.h>
/* A type-2 descriptor with whole first blocks, as the equivalent type-1 one; anything else unchanged. */
static const int* conv(const int* d, int* x) {
  if (d[0] != 2 || d[4] != d[6] || d[5] != d[7]) return d;
  x[0] = 1, x[1] = d[1], x[2] = d[2], x[3] = d[3], x[4] = d[6], x[5] = d[7], x[6] = d[8], x[7] = d[9], x[8] = d[10];
  return x;
}
#define NEXT(name) static void (*next)(); if (!next) next = (void (*)())dlsym(RTLD_NEXT, #name)
#define GEMM(name, T) \
  void name(const char* ta, const char* tb, const int* m, const int* n, const int* k, const T* al, const T* a, \
            const int* ia, const int* ja, const int* da, const T* b, const int* ib, const int* jb, const int* db, \
            const T* be, T* c, const int* ic, const int* jc, const int* dc) { \
    int xa[9], xb[9], xc[9]; NEXT(name); \
    ((void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*, \
               const int*, const int*, const T*, const int*, const int*, const int*, const T*, T*, const int*, \
               const int*, const int*))next)(ta, tb, m, n, k, al, a, ia, ja, conv(da, xa), b, ib, jb, conv(db, xb), \
                                             be, c, ic, jc, conv(dc, xc)); }
#define ADD(name, T) \
  void name(const char* t, const int* m, const int* n, const T* al, const T* a, const int* ia, const int* ja, \
            const int* da, const T* be, T* c, const int* ic, const int* jc, const int* dc) { \
    int xa[9], xc[9]; NEXT(name); \
    ((void (*)(const char*, const int*, const int*, const T*, const T*, const int*, const int*, const int*, const T*, \
               T*, const int*, const int*, const int*))next)(t, m, n, al, a, ia, ja, conv(da, xa), be, c, ic, jc, \
                                                             conv(dc, xc)); }
#define TRAN(name, T) \
  void name(const int* m, const int* n, const T* al, const T* a, const int* ia, const int* ja, const int* da, \
            const T* be, T* c, const int* ic, const int* jc, const int* dc) { \
    int xa[9], xc[9]; NEXT(name); \
    ((void (*)(const int*, const int*, const T*, const T*, const int*, const int*, const int*, const T*, T*, \
               const int*, const int*, const int*))next)(m, n, al, a, ia, ja, conv(da, xa), be, c, ic, jc, \
                                                         conv(dc, xc)); }
GEMM(pdgemm_, double) GEMM(psgemm_, float) ADD(pdgeadd_, double) ADD(psgeadd_, float)
TRAN(pdtran_, double) TRAN(pstran_, float)
SHIM_SOURCE
  "${MPICC:-mpicc.mpich}" -O1 -shared -fPIC -o "$SHIM" "$SCRATCH/inb2dense.c" -ldl ||
    { echo "$0: cannot build the type-2 to type-1 descriptor shim" >&2; exit 2; }
fi

# "passed failed skipped complete" of a tester's output.
summary() {
  awk '
    /tests completed and passed residual checks/ { lap = 1; p = $1 }
    /tests completed and failed residual checks/ { f = $1 }
    /tests skipped/                              { s = $1 }
    /END OF TESTS|End of Tests|End of tests/     { done = 1 }
    /Testing Summary/                            { pb = 1 }
    pb && $1 == "|" && NF == 6 && $3 ~ /^[0-9]+$/ { pp += $4; pf += $5; ps += $6 }
    /FAILED  \*\*\*\*\*/                         { pcheck++ }
    /(^|[^A-Z])PASSED([^A-Z]|$)|^Passed /        { np++ }
    /(^|[^A-Z])FAILED([^A-Z]|$)|^Failed /        { nf++ }
    /Bad .* parameters|SKIPPED/                  { ns++ }
    END {
      if (lap)     printf "%d %d %d %d\n", p, f, s, done
      else if (pb) printf "%d %d %d %d\n", pp, pf + pcheck, ps, done
      else         printf "%d %d %d %d\n", np, nf, ns, (np + nf > 0)
    }' "$1"
}

# run TESTER MODE: runs it in a scratch copy of the .dat files; prints "rc seconds".
run() {
  local t=$1 mode=$2 exe dir start end rc
  if [ -x "$TD/$t" ]; then exe=$TD/$t; elif [ -x "$TD/PBLAS/$t" ]; then exe=$TD/PBLAS/$t; else return 3; fi
  dir=$SCRATCH/$t-$mode
  mkdir -p "$dir"
  cp -L "$TD"/*.dat "$TD"/PBLAS/*.dat "$dir"/ 2>/dev/null
  local pre=() shim=""
  case $t in [sd]pb[123]tst) shim=$SHIM ;; esac
  if [ "$mode" = einrel ]; then
    pre=(env "LD_PRELOAD=${shim:+$shim:}$LIB" "EINREL_SCALAPACK=${EINREL_SCALAPACK:-on}")
  elif [ -n "$shim" ]; then
    pre=(env "LD_PRELOAD=$shim")
  fi
  start=$(date +%s.%N)
  (cd "$dir" && OMP_NUM_THREADS=1 OMP_PROC_BIND=false timeout -k 10 "$TMO" "$MPIEXEC" -n "$RANKS" "${pre[@]}" "$exe" \
    >out.txt 2>err.txt </dev/null)
  rc=$?
  end=$(date +%s.%N)
  echo "$rc $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
}

npass=0
nfail=0
total_start=$(date +%s)
for t in "${TESTERS[@]}"; do
  if ! base=$(run "$t" base); then
    echo "FAIL $t: no such tester in $TD or $TD/PBLAS"
    nfail=$((nfail + 1))
    continue
  fi
  ein=$(run "$t" einrel)
  read -r brc bsec <<<"$base"
  read -r erc esec <<<"$ein"
  read -r bp bf bs bdone <<<"$(summary "$SCRATCH/$t-base/out.txt")"
  read -r ep ef es edone <<<"$(summary "$SCRATCH/$t-einrel/out.txt")"
  line="$t ($RANKS ranks): ScaLAPACK $bp passed $bf failed $bs skipped rc=$brc ${bsec}s; einrel $ep passed $ef failed $es skipped rc=$erc ${esec}s"
  why=""
  if [ "$brc" != 0 ] || [ "$bdone" != 1 ]; then
    why="the run without einrel did not complete (rc=$brc) at $RANKS ranks"
  elif [ "$erc" = 124 ] || [ "$erc" = 137 ]; then
    why="einrel's run timed out after ${TMO}s (hang?)"
  elif [ "$erc" != 0 ] || [ "$edone" != 1 ]; then
    why="einrel's run did not complete (rc=$erc)"
  elif [ "$ef" -gt "$bf" ]; then
    why="more failed tests with einrel"
  elif [ "$ep" -lt "$bp" ]; then
    why="fewer passed tests with einrel"
  fi
  if [ -z "$why" ]; then
    echo "PASS $line"
    npass=$((npass + 1))
  else
    echo "FAIL $line: $why"
    grep -h -m 3 -E "Abort|Fatal|ERROR|Segmentation|signal|TERMINATED" "$SCRATCH/$t-einrel/err.txt" "$SCRATCH/$t-einrel/out.txt" 2>/dev/null |
      sed 's/^/     /'
    nfail=$((nfail + 1))
  fi
done
echo "$((npass + nfail)) testers at $RANKS ranks in $(($(date +%s) - total_start)) s$([ "${KEEP:-0}" = 1 ] && echo ", outputs kept in $SCRATCH")"
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
