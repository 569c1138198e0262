#!/usr/bin/env python3
"""`einrel train` against plain SGD in numpy: a two-layer ReLU network with softmax cross-entropy, trained
for --steps steps at each of --ranks, f64. Every parameter in OUT.h5 must equal numpy's (backpropagation
written out by hand here) to 1e-8 relative, and the reported losses must equal numpy's loss before each
update and decrease. Also: bad requests fail with one error line and leave no file."""
import argparse
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

import check_common

GRAPH = """input X f64[{n},{f}]
input Y f64[{n},{k}]
input W1 f64[{f},{h}]
input b1 f64[{h}]
input W2 f64[{h},{k}]
input b2 f64[{k}]
A = einsum("nf,fh->nh", X, W1)
H = einsum("nh,h->nh", A, b1, join=add, map=relu)
B = einsum("nh,hk->nk", H, W2)
Z = einsum("nk,k->nk", B, b2, join=add)
P = softmax(Z)
LP = einsum("nk->nk", P, map=log)
C = einsum("nk,nk->", Y, LP)
L = einsum("->", C, map=scale({scale!r}))
output L
"""


def numpy_sgd(values, lr, steps):
    X, Y = values["X"], values["Y"]
    p = {k: values[k].copy() for k in ("W1", "b1", "W2", "b2")}
    n = X.shape[0]
    losses = []
    for _ in range(steps):
        A = X @ p["W1"] + p["b1"]
        H = np.maximum(A, 0)
        Z = H @ p["W2"] + p["b2"]
        E = np.exp(Z - Z.max(axis=1, keepdims=True))
        P = E / E.sum(axis=1, keepdims=True)
        losses.append(float(-(Y * np.log(P)).sum() / n))
        dZ = (P - Y) / n
        dH = dZ @ p["W2"].T
        dA = dH * (A > 0)
        grads = {"W2": H.T @ dZ, "b2": dZ.sum(axis=0), "W1": X.T @ dA, "b1": dA.sum(axis=0)}
        for k in p:
            p[k] = p[k] - lr * grads[k]
    return p, losses


def reports_escape_names(args, graph, data):
    """The train and run reports of a graph whose file name holds a quote, a backslash and a tab are JSON that
    reads back that name, and both start with schema_version."""
    odd = os.path.join(args.work_dir, 'we"ird\\na\tme.ein')
    shutil.copyfile(graph, odd)
    failures = []
    for command, extra in (("train", ["--loss", "L", "--params", "W1", "--lr", "0.1", "--steps", "1"]), ("run", [])):
        report = os.path.join(args.work_dir, f"odd-{command}.json")
        cmd = [args.mpiexec, "-n", "1", args.einrel, command, odd, "--input", data,
               "--output", os.path.join(args.work_dir, f"odd-{command}.h5"), "--report", report] + extra
        p = check_common.run_watched(cmd, timeout=120)
        if p.returncode != 0:
            failures.append(f"{command} of {odd!r} failed: {p.stderr.strip()}")
            continue
        with open(report) as fh:
            text = fh.read()
        try:
            rep = json.loads(text)
        except ValueError as e:
            failures.append(f"{command}'s report is not JSON ({e}): {text[:300]!r}")
            continue
        if rep.get("graph") != odd or next(iter(rep)) != "schema_version":
            failures.append(f"{command}'s report names the graph {rep.get('graph')!r}, keys {list(rep)[:3]}")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1,2,3")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--planners", default="eindecomp,data,sqrt")
    args = check_common.parse_args(ap)
    n, f, h, k, lr = 12, 10, 16, 5, 0.5
    rng = np.random.default_rng(3)
    values = {"X": rng.uniform(-1, 1, (n, f)), "Y": np.eye(k)[rng.integers(0, k, n)],
              "W1": rng.normal(0, 0.5, (f, h)), "b1": rng.normal(0, 0.1, h), "W2": rng.normal(0, 0.5, (h, k)),
              "b2": rng.normal(0, 0.1, k)}
    graph = os.path.join(args.work_dir, "mlp.ein")
    with open(graph, "w") as fh:
        fh.write(GRAPH.format(n=n, f=f, h=h, k=k, scale=-1.0 / n))
    data = os.path.join(args.work_dir, "in.h5")
    with h5py.File(data, "w") as fh:
        for name, v in values.items():
            fh[name] = v
    want, want_losses = numpy_sgd(values, lr, args.steps)
    failures = []
    runs = [(int(r), planner) for r in args.ranks.split(",") for planner in args.planners.split(",")]
    for r, planner in runs:
        out, report = (os.path.join(args.work_dir, f"{name}-np{r}-{planner}") for name in ("out.h5", "report.json"))
        cmd = [args.mpiexec, "-n", str(r), args.einrel, "train", graph, "--loss", "L", "--params", "W1,b1,W2,b2",
               "--lr", str(lr), "--steps", str(args.steps), "--input", data, "--output", out, "--report", report,
               "--planner", planner]
        p = check_common.run_watched(cmd, timeout=300)
        if p.returncode != 0:
            failures.append(f"np{r} {planner}: {' '.join(cmd)} failed: {p.stderr.strip()}")
            continue
        with h5py.File(out, "r") as fh:
            for name, w in want.items():
                got = np.array(fh[name])
                err = float(np.max(np.abs(got - w) / np.maximum(np.abs(w), 1e-300)))
                if not err <= 1e-8:
                    failures.append(f"np{r} {planner}: {name} differs from numpy's SGD by {err:.3g} (relative)")
        with open(report) as fh:
            rep = json.load(fh)
        losses = rep["losses"]
        if len(losses) != args.steps or not np.allclose(losses, want_losses, rtol=1e-10, atol=0):
            failures.append(f"np{r} {planner}: losses {losses}, numpy {want_losses}")
        if not all(b < a for a, b in zip(losses, losses[1:])):
            failures.append(f"np{r} {planner}: the losses do not decrease: {losses}")
        if len(rep["seconds_per_step"]) != args.steps:
            failures.append(f"np{r} {planner}: seconds_per_step {rep['seconds_per_step']}")
        print(f"np{r} {planner}: losses {', '.join(f'{x:.6f}' for x in losses)}; {rep['seconds_per_step'][-1]:.4f} s/step")
    failures += reports_escape_names(args, graph, data)
    out = os.path.join(args.work_dir, "bad.h5")
    for extra, expected in [(["--params", "W1,A"], "'A' is computed by an einsum"),
                            (["--params", "W1", "--lr", "-1"], "--lr needs a finite number > 0"),
                            (["--params", "W1", "--loss", "H"], "must be 0-d")]:
        cmd = [args.mpiexec, "-n", "2", args.einrel, "train", graph, "--loss", "L", "--lr", "0.1", "--steps", "2",
               "--input", data, "--output", out]
        for i in range(0, len(extra), 2):  # later values replace the defaults above
            if extra[i] in cmd:
                cmd[cmd.index(extra[i]) + 1] = extra[i + 1]
            else:
                cmd += extra[i:i + 2]
        p = check_common.run_watched(cmd, timeout=120)
        lines = [line for line in p.stderr.splitlines() if line.startswith("einrel: error:")]
        if p.returncode == 0 or len(lines) != 1 or expected not in lines[0] or os.path.exists(out):
            failures.append(f"train {' '.join(extra)}: status {p.returncode}, stderr {p.stderr!r}")
    # A failure on one rank, or on all, in reading, a step's exchange, kernels or reduction, or the writing of the
    # parameters: every rank ends, one error line in all, no parameter file and no report.
    report = os.path.join(args.work_dir, "bad.json")
    for who, rank in (("2", "on rank 2"), ("all", "on rank ")):
        for phase, vertex in (("read", "X"), ("redistribute", "A"), ("kernels", "grad_W1"), ("reduce", "grad_W1"),
                              ("write", "W2")):
            spec = f"{who}:{vertex}:{phase}"
            cmd = [args.mpiexec, "-n", "3", args.einrel, "train", graph, "--loss", "L", "--params", "W1,b1,W2,b2",
                   "--lr", "0.1", "--steps", "2", "--input", data, "--output", out, "--report", report, "--procs",
                   "4", "--planner", "data"]  # data: the batch cut, so grad_W1's partial sums are reduced
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, EINREL_TEST_INJECT_FAILURE=spec))
            lines = [line for line in (p.stdout + p.stderr).splitlines() if line.startswith("einrel: error:")]
            if (p.returncode == 0 or len(lines) != 1 or f"injected failure {rank}" not in lines[0] or
                    os.path.exists(out) or os.path.exists(report)):
                failures.append(f"train with {spec}: status {p.returncode}, output {p.stdout + p.stderr!r}")
    return check_common.finish(failures, f"einrel train against numpy SGD at ranks {args.ranks}")


if __name__ == "__main__":
    sys.exit(main())
