#!/usr/bin/env python3
"""drivers/examples/llama_layer.ein under `einrel run` against this script's own numpy forward of a LLaMA
decoder layer (rotate-half by slicing, not by the graph's permutation matrix), at 1-4 ranks under eindecomp and
the LLM baselines; and `einrel plan` at p = R = 4 ... 64: EinDecomp's plan at most each of megatron,
sequence and attention by the objective it was made for (floats moved; estimated seconds). Inputs come from
drivers/examples/llama_inputs.py."""
import argparse
import json
import os
import subprocess
import sys

import h5py
import numpy as np

import check_common

RUNS = [(1, "eindecomp"), (2, "eindecomp"), (2, "megatron"), (2, "sequence"), (2, "attention"), (3, "eindecomp"),
        (3, "sequence"), (4, "eindecomp"), (4, "megatron"), (4, "attention")]


def rms_norm(x, g, eps=1e-5):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * g


def rope(q, cos, sin):  # q [s,h,d]; cos, sin [s,d]
    half = q.shape[2] // 2
    rotated = np.concatenate([-q[:, :, half:], q[:, :, :half]], axis=2)
    return q * cos[:, None, :] + rotated * sin[:, None, :]


def einsum(eq, *xs):
    return np.einsum(eq, *xs, optimize=True)  # through BLAS where it can, as a fair peer in the benchmark


def llama_forward(v):
    x = v["x"]
    xn = rms_norm(x, v["attn_norm"])
    q, k, val = (einsum("sa,ahd->shd", xn, v[w]) for w in ("WQ", "WK", "WV"))
    q, k = rope(q, v["cos"], v["sin"]), rope(k, v["cos"], v["sin"])
    scores = einsum("shd,thd->hst", q, k) / np.sqrt(q.shape[2]) + v["mask"][None]
    e = np.exp(scores - scores.max(axis=2, keepdims=True))
    p = e / e.sum(axis=2, keepdims=True)
    x1 = x + einsum("shd,ahd->sa", einsum("hst,thd->shd", p, val), v["WO"])
    xn1 = rms_norm(x1, v["ffn_norm"])
    g = xn1 @ v["W_gate"]
    return x1 + ((g / (1 + np.exp(-g))) * (xn1 @ v["W_up"])) @ v["W_down"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", required=True)
    args = check_common.parse_args(ap)
    graph = os.path.join(args.examples, "llama_layer.ein")
    data = os.path.join(args.work_dir, "in.h5")
    subprocess.run([sys.executable, os.path.join(args.examples, "llama_inputs.py"), graph, data, "--seed", "5"],
                   check=True)
    with h5py.File(data, "r") as fh:
        values = {k: np.array(fh[k]) for k in fh}
    want = llama_forward(values)
    failures = []
    for ranks, planner in RUNS:
        out = os.path.join(args.work_dir, f"out-{planner}-np{ranks}.h5")
        cmd = [args.mpiexec, "-n", str(ranks), args.einrel, "run", graph, "--input", data, "--output", out,
               "--planner", planner]
        p = check_common.run_watched(cmd, timeout=300)
        if p.returncode != 0:
            failures.append(f"{' '.join(cmd)} failed: {p.stderr.strip()}")
            continue
        with h5py.File(out, "r") as fh:
            got = np.array(fh["out"])
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        print(f"run np{ranks} {planner}: max error {err:.2e} (relative to max |out|)")
        if not err <= 1e-10:
            failures.append(f"np{ranks} {planner}: out differs from numpy by {err:.3g}")
    # Each objective's figure (docs/planner.md "The objective"), from plans costed by their dry runs at R = p.
    for objective, figure in (("floats", "total_cost"), ("makespan", "estimated_seconds")):
        for p in (4, 8, 16, 32, 64):
            costs = {}
            for planner in ("eindecomp", "megatron", "sequence", "attention"):
                r = check_common.run_watched([args.einrel, "plan", graph, "--procs", str(p), "--planner", planner,
                                              "--objective", objective, "--format", "json"], timeout=120)
                if r.returncode != 0:
                    failures.append(f"plan p={p} {planner}: {r.stderr.strip()}")
                    continue
                costs[planner] = json.loads(r.stdout)[figure]
            print(f"plan p={p} {figure}: " + ", ".join(f"{k} {v:.4g}" for k, v in costs.items()))
            for baseline in ("megatron", "sequence", "attention"):
                if baseline in costs and "eindecomp" in costs and costs["eindecomp"] > costs[baseline] * (1 + 1e-9):
                    failures.append(f"p={p} {figure}: eindecomp {costs['eindecomp']} > {baseline} {costs[baseline]}")
    return check_common.finish(failures, "llama layer against numpy and the LLM baselines")


if __name__ == "__main__":
    sys.exit(main())
