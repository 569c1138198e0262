#!/usr/bin/env python3
"""`einrel iterate` against the same iteration in numpy: X <- 0.1 A X + B (a contraction, f64) with a carried
pair and the 0-d step difference r, at each of --ranks.
- N steps uninterrupted equal numpy's iterate to 1e-12 relative, the report's r values numpy's r;
- checkpointed at step N/2 on 2 ranks and resumed to step N on 1, 2 and 3 ranks: equal to the uninterrupted
  2-rank run, bit-identical when resumed on 2 ranks (the same plan, the same reduction order) and to 1e-13
  relative on others (another plan may sum in another order; the script prints whether they are bit-identical);
- the inputs bound one by one with --bind (datasets in groups of other files) instead of --input, at each of
  --ranks and on a restart: the same X as with --input, bit for bit;
- --until r --tolerance T stops at the first step with |r| < T, as numpy's;
- bad requests fail with one error line and leave no file."""
import argparse
import json
import os
import sys

import h5py
import numpy as np

import check_common

GRAPH = """input A f64[{n},{n}]
input B f64[{n},{m}]
input X f64[{n},{m}]
AX     = einsum("ij,jk->ik", A, X, map=scale(0.1))
X_next = einsum("ik,ik->ik", AX, B, join=add)
r      = einsum("ik,ik->", X_next, X, join=sqdiff)
output X_next
"""


def numpy_iterate(values, steps):
    A, B, X = values["A"], values["B"], values["X"].copy()
    rs = []
    for _ in range(steps):
        X_next = 0.1 * A @ X + B
        rs.append(float(((X_next - X) ** 2).sum()))
        X = X_next
    return X, rs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1,2,3")
    ap.add_argument("--steps", type=int, default=20)
    args = check_common.parse_args(ap)
    n, m, steps = 60, 12, args.steps
    rng = np.random.default_rng(7)
    values = {"A": rng.uniform(-1, 1, (n, n)) / np.sqrt(n), "B": rng.uniform(-1, 1, (n, m)), "X": np.zeros((n, m))}
    graph = os.path.join(args.work_dir, "step.ein")
    with open(graph, "w") as fh:
        fh.write(GRAPH.format(n=n, m=m))
    data = os.path.join(args.work_dir, "in.h5")
    with h5py.File(data, "w") as fh:
        for name, v in values.items():
            fh[name] = v
    want, want_r = numpy_iterate(values, steps)
    failures = []
    path = lambda name: os.path.join(args.work_dir, name)

    def iterate(ranks, extra, env=None, carry="X=X_next", sources=("--input", data)):
        cmd = [args.mpiexec, "-n", str(ranks), args.einrel, "iterate", graph, "--carry", carry, *sources] + extra
        return check_common.run_watched(cmd, timeout=300, env=env)

    def read(name):
        with h5py.File(path(name), "r") as fh:
            return np.array(fh["X"])

    def relative(got, w):
        return float(np.max(np.abs(got - w)) / np.max(np.abs(w)))

    for r in (int(x) for x in args.ranks.split(",")):
        p = iterate(r, ["--steps", str(steps), "--until", "r", "--tolerance", "0", "--output", path(f"full{r}.h5"),
                        "--report", path(f"full{r}.json")])
        if p.returncode != 0:
            failures.append(f"np{r}: iterate failed: {p.stderr.strip()}")
            continue
        err = relative(read(f"full{r}.h5"), want)
        rep = json.load(open(path(f"full{r}.json")))
        if not err <= 1e-12:
            failures.append(f"np{r}: X after {steps} steps differs from numpy's by {err:.3g}")
        # r is a sum of squared differences: once those reach rounding, it is rounding too.
        if rep["steps_run"] != steps or not np.allclose(rep["until_values"], want_r, rtol=1e-9, atol=1e-20 * want_r[0]):
            failures.append(f"np{r}: {rep['steps_run']} steps, r {rep['until_values'][:3]}..., numpy {want_r[:3]}...")
        print(f"np{r}: {steps} steps, X within {err:.2e} of numpy, r from {want_r[0]:.3e} to {want_r[-1]:.3e}")

    # Checkpoint at N/2 on 2 ranks, resume on 1, 2, 3.
    half = steps // 2
    p = iterate(2, ["--steps", str(half), "--checkpoint", path("ck.h5"), "--checkpoint-every", str(half)])
    if p.returncode != 0:
        failures.append(f"checkpointed run failed: {p.stderr.strip()}")
    else:
        with h5py.File(path("ck.h5"), "r") as fh:
            if float(np.array(fh["iterate_step"])) != half or sorted(fh.keys()) != ["X", "iterate_step"]:
                failures.append(f"checkpoint holds {sorted(fh.keys())}, step {np.array(fh['iterate_step'])}")
        full = read("full2.h5") if os.path.exists(path("full2.h5")) else want
        for r in (1, 2, 3):
            p = iterate(r, ["--steps", str(steps), "--restart", path("ck.h5"), "--output", path(f"resumed{r}.h5")])
            if p.returncode != 0:
                failures.append(f"resume on {r} ranks failed: {p.stderr.strip()}")
                continue
            got = read(f"resumed{r}.h5")
            same = np.array_equal(got, full)
            err = relative(got, full)
            if (r == 2 and not same) or not err <= 1e-13:
                failures.append(f"resumed on {r} ranks: {err:.3g} from the uninterrupted 2-rank run")
            print(f"checkpoint at step {half} on 2 ranks, resumed on {r}: "
                  f"{'bit-identical' if same else f'within {err:.2e}'} to the uninterrupted run")

    # --bind (docs/cli.md): each input from a dataset of its own file, in groups; the run and a restart equal --input's.
    bindings = []
    for name, v in values.items():
        with h5py.File(path(f"bound_{name}.h5"), "w") as fh:
            fh.create_group("deep/er")[name] = v
        bindings += ["--bind", f"{name}={path(f'bound_{name}.h5')}:/deep/er/{name}"]
    for r in (int(x) for x in args.ranks.split(",")):
        p = iterate(r, ["--steps", str(steps), "--output", path(f"bound{r}.h5")], sources=bindings)
        if p.returncode != 0:
            failures.append(f"np{r}: iterate --bind failed: {p.stderr.strip()}")
        elif os.path.exists(path(f"full{r}.h5")) and not np.array_equal(read(f"bound{r}.h5"), read(f"full{r}.h5")):
            failures.append(f"np{r}: iterate --bind differs from --input: {relative(read(f'bound{r}.h5'), want):.3g}")
        else:
            print(f"np{r}: iterate --bind A=..:/deep/er/A ...: the same X as --input")
    if os.path.exists(path("ck.h5")) and os.path.exists(path("resumed3.h5")):
        p = iterate(3, ["--steps", str(steps), "--restart", path("ck.h5"), "--output", path("bound_resumed.h5")],
                    sources=bindings[:4])  # A and B bound; X from the checkpoint
        if p.returncode != 0 or not np.array_equal(read("bound_resumed.h5"), read("resumed3.h5")):
            failures.append(f"iterate --restart with --bind on 3 ranks: status {p.returncode}, {p.stderr.strip()}")
        else:
            print("restart on 3 ranks with A and B bound: the same X as with --input")

    # Convergence: the first step with |r| below the tolerance.
    tol = want_r[steps // 2]
    stop = next(k for k, x in enumerate(want_r) if abs(x) < tol) + 1
    p = iterate(2, ["--steps", str(steps), "--until", "r", "--tolerance", repr(tol), "--report", path("until.json"),
                    "--output", path("until.h5")])
    if p.returncode != 0:
        failures.append(f"--until failed: {p.stderr.strip()}")
    else:
        rep = json.load(open(path("until.json")))
        if rep["steps_run"] != stop or not rep["converged"]:
            failures.append(f"--until r --tolerance {tol}: {rep['steps_run']} steps, numpy stops at {stop}")
        print(f"--until r --tolerance {tol:.3e}: stopped after step {rep['steps_run']} (numpy: {stop})")

    out = path("bad.h5")
    for carry, extra, expected in [
            ("A=X_next", [], "'A' is f64[60,60] but 'X_next' is f64[60,12]"), ("X=AX,X=X_next", [], "twice"),
            ("X=r", [], "'X' is f64[60,12] but 'r' is f64[]"), ("X=Q", [], "'Q' is no einsum vertex"),
            ("r=X_next", [], "'r' is no input"), ("X=X_next", ["--until", "AX", "--tolerance", "1"], "needs a 0-d"),
            ("X=X_next", ["--restart", path("ck.h5")], f"records {half} steps done of --steps {half}")]:
        steps_given = str(half) if "--restart" in extra else str(steps)
        p = iterate(2, ["--steps", steps_given, "--output", out] + extra, carry=carry)
        lines = [line for line in p.stderr.splitlines() if line.startswith("einrel: error:")]
        if p.returncode == 0 or len(lines) != 1 or (expected and expected not in lines[0]) or os.path.exists(out):
            failures.append(f"iterate --carry {carry} {' '.join(extra)}: status {p.returncode}, stderr {p.stderr!r}")
    # A failure on one rank while the checkpoint is written: one error line, no checkpoint, no output.
    p = iterate(2, ["--steps", "4", "--checkpoint", path("bad-ck.h5"), "--checkpoint-every", "2", "--output", out],
                env=dict(os.environ, EINREL_TEST_INJECT_FAILURE="1:X:write"))
    lines = [line for line in (p.stdout + p.stderr).splitlines() if line.startswith("einrel: error:")]
    if p.returncode == 0 or len(lines) != 1 or os.path.exists(path("bad-ck.h5")) or os.path.exists(out):
        failures.append(f"failure at the checkpoint: status {p.returncode}, output {p.stdout + p.stderr!r}")
    return check_common.finish(failures, f"einrel iterate against numpy at ranks {args.ranks}")


if __name__ == "__main__":
    sys.exit(main())
