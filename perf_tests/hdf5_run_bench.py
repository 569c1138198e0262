#!/usr/bin/env python3
"""einrel's HDF5 transfers end to end: `einrel run` of C = A * 2 A^T (an N x N f64 input read whole in the
planner's layout, the result written) with EINREL_HDF5_TRANSFER=independent and =collective in turn, `--reps`
times, at each `--procs` (R: a block per rank; more: several blocks per rank), and as the peer h5py in its own
process reading A and writing C whole (serial HDF5, numpy). Prints per --procs the medians of the whole
process's seconds and of the report's `input_seconds` (the collective read of A), and the
collective/independent ratios; every output is compared with numpy's. docs/scale.md "HDF5 transfers" has the
figures and the command:

    python3 perf_tests/hdf5_run_bench.py --einrel build/drivers/einrel --ranks 2 --procs 2 16 --n 4096 --reps 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

PEER = """
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    a = f["A"][...]
with h5py.File(sys.argv[2], "w") as f:
    f["C"] = a * (2 * a.T)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--procs", type=int, nargs="+", default=None, help="einrel's --procs (default: --ranks)")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--work", default=None, help="directory for the files (default: a new one under /tmp)")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="einrel-hdf5-")
    os.makedirs(work, exist_ok=True)
    a = np.random.default_rng(1).standard_normal((args.n, args.n))
    with h5py.File(os.path.join(work, "in.h5"), "w") as f:
        f["A"] = a
    graph = os.path.join(work, "g.ein")
    with open(graph, "w") as fh:
        fh.write(f'input A f64[{args.n},{args.n}]\nB = einsum("ij->ji", A, map=scale(2))\n'
                 'C = einsum("ij,ij->ij", A, B)\noutput C\n')
    expected = a * (2 * a.T)
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    mb = args.n * args.n * 8 / 1e6
    print(f"N = {args.n} ({mb:.0f} MB read, {mb:.0f} MB written), R = {args.ranks}, medians of {args.reps}; "
          "every output equal to numpy's")
    for procs in args.procs or [args.ranks]:
        run_case(args, work, graph, expected, env, procs)


def run_case(args, work, graph, expected, env, procs):
    wall = {"independent": [], "collective": [], "h5py": []}
    read = {"independent": [], "collective": []}
    for _ in range(args.reps):
        for mode in ("independent", "collective", "h5py"):
            out = os.path.join(work, f"out_{mode}.h5")
            if os.path.exists(out):
                os.remove(out)
            if mode == "h5py":
                cmd = [sys.executable, "-c", PEER, os.path.join(work, "in.h5"), out]
            else:
                report = os.path.join(work, f"r_{mode}.json")
                cmd = [args.mpiexec, "-n", str(args.ranks), args.einrel, "run", graph, "--procs", str(procs),
                       "--input", os.path.join(work, "in.h5"), "--output", out, "--report", report]
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(env, EINREL_HDF5_TRANSFER=mode))
            wall[mode].append(time.perf_counter() - start)
            if mode != "h5py":
                with open(report) as fh:
                    read[mode].append(json.load(fh)["input_seconds"])
            with h5py.File(out, "r") as f:
                if not np.array_equal(f["C"][...], expected):
                    sys.exit(f"{mode}: the output differs from numpy's")
    med = {k: statistics.median(v) for k, v in wall.items()}
    med_read = {k: statistics.median(v) for k, v in read.items()}
    print(f"--procs {procs}")
    print(f"{'':12s} {'process s':>10s} {'read s':>8s}")
    for k in ("independent", "collective"):
        print(f"{k:12s} {med[k]:10.3f} {med_read[k]:8.3f}")
    print(f"{'h5py (peer)':12s} {med['h5py']:10.3f}")
    print(f"collective / independent: process {med['collective'] / med['independent']:.2f}, "
          f"read {med_read['collective'] / med_read['independent']:.2f}; "
          f"collective / h5py: {med['collective'] / med['h5py']:.2f}")


if __name__ == "__main__":
    main()
