#!/usr/bin/env python3
"""The ScaLAPACK matrix-chain peer (perf_tests/scalapack_chain.cpp: three pdgemm_ calls on a block-cyclic
grid, timed between barriers on allocated and filled arrays) built twice from the same source: linked against
Debian's ScaLAPACK alone, and relinked with einrel's libeinrel_scalapack in front of it (its pdgemm_ computed
by einrel). Runs the two alternately, --reps times each, one thread per rank, and prints their medians and the
speed-up. Also runs the plain peer under LD_PRELOAD=libeinrel_scalapack.so (no relink at all, set for the ranks
only, not for mpiexec) when --preload names the library.

The order of the sides rotates from one repetition to the next, so that each follows each other side equally
often: einrel's first call touches memory that ScaLAPACK's run does not, and on this machine (a virtual one)
fresh pages cost ~1 ms per MB, more on pages no recent process has used. With a fixed order the einrel side
that always ran right after ScaLAPACK paid most of it: "relinked 1.21x, preloaded 1.46x" (issue 42) was the
order, not the linking (docs/benchmarks.md).

  OMP_PROC_BIND=false /usr/bin/python3 perf_tests/pdgemm_relink_bench.py \\
      --peer build/perf_tests/einrel_scalapack_chain --relinked build/perf_tests/einrel_scalapack_chain_relinked \\
      --preload build/drivers/scalapack/libeinrel_scalapack.so --ranks 2 --scale 4096 --nb 128 --reps 5
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", required=True)
    ap.add_argument("--relinked", required=True)
    ap.add_argument("--preload")
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--scale", type=int, default=4096)
    ap.add_argument("--nb", type=int, default=128)
    ap.add_argument("--skewed", action="store_true")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    shape = ["--scale", str(args.scale), "--nb", str(args.nb)] + (["--skewed"] if args.skewed else [])
    runs = {"scalapack": ([args.peer], {}), "relinked to einrel": ([args.relinked], {})}
    if args.preload:
        runs["LD_PRELOAD einrel"] = ([args.peer], {"LD_PRELOAD": os.path.abspath(args.preload)})
    times = {name: [] for name in runs}
    names = list(runs)
    for rep in range(args.reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            cmd, extra = runs[name]
            launcher = ["env"] + [f"{k}={v}" for k, v in extra.items()]
            p = subprocess.run([args.mpiexec, "-n", str(args.ranks)] + launcher + cmd + shape, capture_output=True,
                               text=True, env=env)
            found = re.search(r": ([0-9.]+) s, ", p.stdout)
            if p.returncode != 0 or not found:
                sys.exit(f"{name} failed: {p.stdout}\n{p.stderr}")
            times[name].append(float(found.group(1)))
    peer = statistics.median(times["scalapack"])
    print(f"{'skewed' if args.skewed else 'square'} chain S = {args.scale}, nb = {args.nb}, {args.ranks} ranks, "
          f"medians of {args.reps}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"  {name:20s} {m:8.3f} s   scalapack / this {peer / m:5.2f}   ({', '.join(f'{t:.3f}' for t in ts)})")


if __name__ == "__main__":
    main()
