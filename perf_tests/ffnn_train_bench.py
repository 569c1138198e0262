#!/usr/bin/env python3
"""Training steps of the FFNN classifier (eindecomp.txt §9, experiment 2) under EinDecomp and the data-parallel
plan (`data`: the batch cut everywhere, weight gradients summed across ranks as DDP's all-reduce does).

For each rank count R, runs `einrel train GRAPH --loss L --params W1,b1,W2,b2 --steps S` alternately under
eindecomp and data, --reps times each, with ranks x threads = the machine's cores (OMP_NUM_THREADS = cores / R,
at least 1). A step's time is the median over steps 2..S of the report's seconds_per_step (the slowest rank's);
floats moved per step come from the report. The independent peer is numpy in its own process running the same
SGD step (forward, backprop written out, update) on the same data with all cores: the single-node reference
a training step should beat or match at R = 1. Prints medians and the ratio data / eindecomp (> 1: EinDecomp
faster).

  OMP_PROC_BIND=false /usr/bin/python3 perf_tests/ffnn_train_bench.py --einrel build/drivers/einrel \\
      --graph drivers/examples/ffnn.ein --ranks 1 2 4 --reps 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

NUMPY_STEP = r"""
import sys, time, h5py, numpy as np
v = {k: np.array(h5py.File(sys.argv[1], "r")[k]) for k in ("X", "Y", "W1", "b1", "W2", "b2")}
lr, steps = float(sys.argv[2]), int(sys.argv[3])
X, Y = v["X"], v["Y"]
p = {k: v[k] for k in ("W1", "b1", "W2", "b2")}
n = X.shape[0]
times = []
for _ in range(steps):
    t = time.perf_counter()
    A = X @ p["W1"] + p["b1"]; H = np.maximum(A, 0); Z = H @ p["W2"] + p["b2"]
    E = np.exp(Z - Z.max(axis=1, keepdims=True)); P = E / E.sum(axis=1, keepdims=True)
    loss = -(Y * np.log(P)).sum() / n
    dZ = (P - Y) / n; dA = (dZ @ p["W2"].T) * (A > 0)
    g = {"W2": H.T @ dZ, "b2": dZ.sum(axis=0), "W1": X.T @ dA, "b1": dA.sum(axis=0)}
    p = {k: p[k] - lr * g[k] for k in p}
    times.append(time.perf_counter() - t)
print(sorted(times[1:])[len(times[1:]) // 2])
"""


def einrel_step(args, ranks, planner, data, work):
    threads = max(1, (os.cpu_count() or 1) // ranks)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
    report = os.path.join(work, f"report-{planner}-{ranks}.json")
    cmd = [args.mpiexec, "-n", str(ranks), args.einrel, "train", args.graph, "--loss", "L", "--params",
           "W1,b1,W2,b2", "--lr", str(args.lr), "--steps", str(args.steps), "--input", data, "--output",
           os.path.join(work, "params.h5"), "--report", report, "--planner", planner]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    with open(report) as fh:
        rep = json.load(fh)
    return (statistics.median(rep["seconds_per_step"][1:]), statistics.median(rep["floats_moved_per_step"]),
            rep["losses"], rep["predicted_cost_per_step"])


def numpy_step(args, data):
    env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count() or 1))
    out = subprocess.run([sys.executable, "-c", NUMPY_STEP, data, str(args.lr), str(args.steps)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--graph", required=True)
    ap.add_argument("--mpiexec", default="/usr/bin/mpiexec.mpich")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--lr", type=float, default=0.5)
    args = ap.parse_args()
    if args.steps < 2:
        sys.exit("--steps must be at least 2 (the first step is not timed)")
    work = tempfile.mkdtemp(prefix="einrel-ffnn-")
    data = os.path.join(work, "data.h5")
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(args.graph)), "ffnn_data.py"),
                    args.graph, data], check=True)
    peer = statistics.median(numpy_step(args, data) for _ in range(args.reps))
    print(f"numpy (own process, {os.cpu_count()} threads): {peer:.4f} s per step")
    print("ranks  planner    s/step   floats moved/step  predicted/step  losses (first, last)  data/eindecomp  numpy/this")
    for r in args.ranks:
        runs = {"eindecomp": [], "data": []}
        for _ in range(args.reps):
            for planner in runs:
                runs[planner].append(einrel_step(args, r, planner, data, work))
        seconds = {p: statistics.median(x[0] for x in v) for p, v in runs.items()}
        for planner, v in runs.items():
            losses = v[0][2]
            print(f"{r:5d}  {planner:9s} {seconds[planner]:8.4f}   {v[0][1]:17.0f}  {v[0][3]:14.4g}  "
                  f"{losses[0]:.4f}, {losses[-1]:.4f}      {seconds['data'] / seconds['eindecomp']:14.2f}  "
                  f"{peer / seconds[planner]:10.2f}")


if __name__ == "__main__":
    main()
