#!/usr/bin/env python3
"""einrel matrix-chain against ScaLAPACK pdgemm on the same ranks (eindecomp.txt §9, experiment 1).

For each rank count R, scale S and shape (square, skewed), runs alternately, --reps times each:
`einrel matrix-chain` under every planner (and, for the skewed chain, eindecomp and sqrt at --procs 4) and
the ScaLAPACK peer `einrel_scalapack_chain`, all with one thread per rank. Prints medians, the ratio
ScaLAPACK seconds / einrel seconds (> 1: einrel faster), and the fraction of the machine's dgemm ceiling
each reaches. The ceiling is R times single-thread dgemm on warm buffers, measured here with numpy in its
own process (float64, 2048^3, best of 5).

  OMP_PROC_BIND=false /usr/bin/python3 perf_tests/matrix_chain_bench.py --einrel build/drivers/einrel \
      --scalapack build/perf_tests/einrel_scalapack_chain --ranks 1 2 --scales 2048 4096 --reps 3
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

RATE = re.compile(r": ([0-9.]+) s, ([0-9.]+) GFLOP/s")


def ceiling_per_core():
    code = ("import numpy as np, time\n"
            "a = np.random.rand(2048, 2048); b = np.random.rand(2048, 2048); c = a @ b\n"
            "best = min((lambda t: (np.matmul(a, b, out=c), time.perf_counter() - t)[1])(time.perf_counter())"
            " for _ in range(5))\n"
            "print(2 * 2048**3 / best / 1e9)\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                check=True).stdout)


def timed(cmd):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_PROC_BIND="false")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    m = RATE.search(out.stdout.strip().splitlines()[-1])
    return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--scalapack", required=True)
    ap.add_argument("--mpiexec", default="/usr/bin/mpiexec.mpich")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--scales", type=int, nargs="+", default=[2048, 4096])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--nb", type=int, default=128, help="ScaLAPACK block size")
    args = ap.parse_args()

    per_core = ceiling_per_core()
    print(f"dgemm ceiling: {per_core:.1f} GFLOP/s per core (numpy, 1 thread, warm 2048^3)")
    print("ranks  chain       S     run                     median s   GFLOP/s  of ceiling  ScaLAPACK s / this")
    for r in args.ranks:
        launch = [args.mpiexec, "-n", str(r)]
        for s in args.scales:
            for skewed in (False, True):
                shape = ["--skewed"] if skewed else []
                runs = {f"einrel {p}": launch + [args.einrel, "matrix-chain", "--scale", str(s), "--planner", p] + shape
                        for p in ("eindecomp", "sqrt", "data", "greedy")}
                if skewed:
                    for p in ("eindecomp", "sqrt"):
                        runs[f"einrel {p} p=4"] = runs[f"einrel {p}"] + ["--procs", "4"]
                runs[f"scalapack nb={args.nb}"] = launch + [args.scalapack, "--scale", str(s), "--nb", str(args.nb)] + shape
                times = {name: [] for name in runs}
                rates = {name: [] for name in runs}
                for _ in range(args.reps):  # alternate: every run once per round
                    for name, cmd in runs.items():
                        t, g = timed(cmd)
                        times[name].append(t)
                        rates[name].append(g)
                peer = statistics.median(times[f"scalapack nb={args.nb}"])
                for name in runs:
                    t, g = statistics.median(times[name]), statistics.median(rates[name])
                    print(f"{r:<6} {'skewed' if skewed else 'square':<10} {s:<5} {name:<22} {t:9.3f} {g:9.1f}"
                          f" {g / (r * per_core):10.2f} {peer / t:12.2f}")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
