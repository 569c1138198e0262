#!/usr/bin/env python3
"""ScaLAPACK's own drivers with and without libeinrel_scalapack.so preloaded: whole-run time and peak memory
per rank, alternating the two sides, --reps runs each, one thread per rank (issue 42's bar: einrel never slower
than ScaLAPACK, and bounded in memory).

Runs
  * einrel_scalapack_lu (perf_tests/scalapack_lu.cpp: pdgetrf_ on a random N×N matrix, sized at run time) at
    each --lu-sizes N: the factorization's time (between barriers) and the whole run's;
  * Debian's testers (scalapack-mpi-test, MPICH builds) named by --drivers: xdlu, xdinv, xdtrd, xdhrd (and
    their single-precision twins) each on one generated input (--driver-n, --driver-nb, one grid), since their
    work space is fixed at build time (N ≤ ~660 on 2 ranks); any other (xdbrd, xdls, xdnep, xdsep, ...) on
    its stock input files (the grids of those that fit the ranks started). xdlu
    runs without its condition-estimate and iterative-refinement tests: with them (T in LU.dat) it hung in 2
    of 6 runs on ScaLAPACK alone at N = 300, NB = 32, 1x2 (the ranks in different collectives).
Peak memory is the largest maximum resident set size of any rank (/usr/bin/time -f %M around each rank,
appending to one file).
Every run must succeed, and the two sides' LU factors must agree (sum of |LU| to 1e-8 relative); a driver's
einrel run must pass as many residual checks as ScaLAPACK's. Prints one table of medians and ratios
(einrel / ScaLAPACK: time above 1 is slower, memory above 1 is more).

  OMP_PROC_BIND=false /usr/bin/python3 perf_tests/scalapack_drivers_bench.py \\
      --preload build/drivers/scalapack/libeinrel_scalapack.so --lu build/perf_tests/einrel_scalapack_lu \\
      --lu-sizes 1000,2000,3000 --nb 128 --grid 1x2 --drivers xdlu,xdinv,xdtrd --reps 3
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TESTERS = "/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests"


# Input files of Debian's testers for one size, block size and grid (the formats of their stock .dat files).
def driver_input(driver, n, nb, p, q):
    if driver in ("xdlu", "xslu"):
        return "LU.dat", [
            "'LU'", "'MPI'", "'LU.out'", "6", "1", f"{n}", f"{n}", "1", f"{nb}", "1", "1", "1", "1", "1", f"{p}", f"{q}",
            "1.0", "F"]  # T (condition estimate, iterative refinement) hangs now and then, einrel or not
    if driver in ("xdinv", "xsinv"):
        return "INV.dat", [
            "'INV'", "'MPI'", "'INV.out'", "6", "1", "'GEN'", "1", f"{n}", "1", f"{nb}", "1", f"{p}", f"{q}", "1.0"]
    if driver in ("xdtrd", "xstrd"):
        return "TRD.dat", [
            "'TRD'", "'MPI'", "'TRD.out'", "6", "'L'", "1", f"{n}", "1", f"{nb}", "1", f"{p}", f"{q}", "10.0"]
    if driver in ("xdhrd", "xshrd"):
        return "HRD.dat", [
            "'HRD'", "'MPI'", "'HRD.out'", "6", "1", f"{n}", "1", f"{n}", "1", f"{nb}", "1", f"{p}", f"{q}", "3.0"]
    return None, None  # the tester's stock input files (Debian's, in TESTERS)


def run(cmd, cwd, env, timeout, rss_file):
    """Seconds, stdout, and the largest peak RSS of any rank in MB, of one mpiexec run; exits on failure."""
    if os.path.exists(rss_file):
        os.remove(rss_file)
    start = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    seconds = time.monotonic() - start
    with open(rss_file) as f:  # a line per rank, appended by each rank's /usr/bin/time
        rss = [int(k) for k in re.findall(r"einrel-peak-rss (\d+)", f.read())]
    if p.returncode != 0 or not rss:
        sys.exit(f"scalapack_drivers_bench: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-2000:]}\n"
                 f"{p.stderr[-2000:]}")
    return seconds, p.stdout, max(rss) / 1024


def residual_checks(out):
    """(passed, failed) residual checks of a tester's summary."""
    passed = re.search(r"(\d+) tests completed and passed", out)
    failed = re.search(r"(\d+) tests completed and failed", out)
    if not passed or not failed:
        return None
    return int(passed.group(1)), int(failed.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preload", required=True, help="libeinrel_scalapack.so")
    ap.add_argument("--lu", help="einrel_scalapack_lu")
    ap.add_argument("--lu-sizes", default="1000,2000,3000")
    ap.add_argument("--nb", type=int, default=128)
    ap.add_argument("--grid", default="1x2")
    ap.add_argument("--drivers", default="xdlu,xdinv,xdtrd")
    ap.add_argument("--driver-n", type=int, default=600)
    ap.add_argument("--driver-nb", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    p, q = (int(x) for x in args.grid.split("x"))
    ranks = p * q
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    preload = os.path.abspath(args.preload)

    work = tempfile.mkdtemp(prefix="einrel-scalapack-drivers-")
    rss_file = os.path.join(work, "peak-rss.txt")

    def command(program, einrel):
        inner = ["env", f"LD_PRELOAD={preload}"] if einrel else []
        return ([args.mpiexec, "-n", str(ranks), "/usr/bin/time", "-a", "-o", rss_file, "-f", "einrel-peak-rss %M"]
                + inner + program)

    cases = []  # (name, program, cwd, parse)
    if args.lu:
        lu = os.path.abspath(args.lu)
        for n in (int(x) for x in args.lu_sizes.split(",") if x):
            cases.append((f"LU N={n} NB={args.nb} {args.grid}",
                          [lu, "--n", str(n), "--nb", str(args.nb), "--grid", args.grid], None, "lu"))
    for driver in (d for d in args.drivers.split(",") if d):
        name, lines = driver_input(driver, args.driver_n, args.driver_nb, p, q)
        folder = os.path.join(work, driver)
        os.makedirs(folder)
        if name:
            with open(os.path.join(folder, name), "w") as f:
                f.write("\n".join(lines) + "\n")
            label = f"{driver} N={args.driver_n} NB={args.driver_nb} {args.grid}"
        else:
            for dat in glob.glob(os.path.join(TESTERS, "*.dat")):
                shutil.copy(dat, folder)
            label = f"{driver} (stock input) {ranks} ranks"
        cases.append((label, [os.path.join(TESTERS, driver)], folder, "driver"))

    print(f"# {ranks} rank(s), one thread each, medians of {args.reps} alternating runs; ratio = einrel / ScaLAPACK")
    print("case,scalapack_s,einrel_s,time_ratio,scalapack_factor_s,einrel_factor_s,factor_ratio,"
          "scalapack_peak_MB,einrel_peak_MB,memory_ratio")
    for name, program, cwd, kind in cases:
        sides = {False: {"t": [], "f": [], "m": []}, True: {"t": [], "f": [], "m": []}}
        outputs = {}
        for rep in range(args.reps):
            for einrel in (False, True) if rep % 2 == 0 else (True, False):  # each side first as often
                seconds, out, mb = run(command(program, einrel), cwd or work, env, args.timeout, rss_file)
                s = sides[einrel]
                s["t"].append(seconds)
                s["m"].append(mb)
                if kind == "lu":
                    m = re.search(r": ([0-9.]+) s, .* sum \|LU\| ([0-9.eE+-]+)", out)
                    if not m:
                        sys.exit(f"scalapack_drivers_bench: no result line in {out!r}")
                    s["f"].append(float(m.group(1)))
                    outputs[einrel] = float(m.group(2))
                else:
                    outputs[einrel] = residual_checks(out)
        if kind == "lu" and abs(outputs[True] - outputs[False]) > 1e-8 * abs(outputs[False]):
            sys.exit(f"scalapack_drivers_bench: {name}: sum |LU| {outputs[True]} with einrel, {outputs[False]} without")
        if kind == "driver" and (outputs[True] is None or outputs[False] is None or outputs[True][1] > 0
                                 or outputs[True][0] < outputs[False][0]):
            sys.exit(f"scalapack_drivers_bench: {name}: residual checks {outputs[True]} with einrel, "
                     f"{outputs[False]} without")
        med = {e: {k: statistics.median(v) if v else float("nan") for k, v in s.items()} for e, s in sides.items()}
        sc, ei = med[False], med[True]
        print(f"{name},{sc['t']:.3f},{ei['t']:.3f},{ei['t'] / sc['t']:.2f},{sc['f']:.3f},{ei['f']:.3f},"
              f"{ei['f'] / sc['f'] if kind == 'lu' else float('nan'):.2f},{sc['m']:.0f},{ei['m']:.0f},"
              f"{ei['m'] / sc['m']:.2f}", flush=True)


if __name__ == "__main__":
    main()
