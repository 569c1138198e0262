#!/usr/bin/env python3
"""`--memory-limit` of two einrel builds side by side: the example graphs of drivers/examples and nine generated
ones (attention, MLP and Gram-matrix layers of seeded random sizes) at R = 1..4 under 1/2 and 1/4 of the
baseline's estimate for the requested plan. Each case runs with both builds in turn (--reps times), and where
both run the ratio of the medians of their evaluation seconds (total less memory warm-up) is printed, with what
each chose; where only one runs, which. Also checks every run of the build under test: measured peak within the
limit and within 10 % of its estimate, `--check` passed.

    python3 perf_tests/memory_limit_ab.py --einrel build/drivers/einrel --baseline OTHER/build/drivers/einrel
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile


def generated_graphs(seed):
    rng = random.Random(seed)
    out = []
    for _ in range(3):
        s, d, h = rng.choice([96, 120, 160, 192]), rng.choice([32, 48]), rng.choice([2, 4])
        out.append(f"input X f64[{s},{d}]\ninput WQ f64[{d},{h},{d // h}]\ninput WK f64[{d},{h},{d // h}]\n"
                   f"input WV f64[{d},{h},{d // h}]\nQ = einsum(\"sa,ahd->shd\", X, WQ)\nK = einsum(\"sa,ahd->shd\", X, WK)\n"
                   f"V = einsum(\"sa,ahd->shd\", X, WV)\nS = einsum(\"shd,thd->hst\", Q, K, map=scale(0.2))\n"
                   f"P = softmax(S)\nO = einsum(\"hst,thd->shd\", P, V)\nY = einsum(\"shd,ahd->sa\", O, WQ)\noutput Y\n")
        n, a, f = rng.choice([64, 90, 128]), rng.choice([32, 60]), rng.choice([512, 768, 1000])
        out.append(f"input X f64[{n},{a}]\ninput W1 f64[{a},{f}]\ninput W2 f64[{f},{a}]\n"
                   f"H = einsum(\"na,af->nf\", X, W1, map=relu)\nZ = einsum(\"nf,fa->na\", H, W2)\n"
                   f"r = einsum(\"na->n\", Z, agg=max)\noutput r\n")
        n, m = rng.choice([300, 384, 450]), rng.choice([16, 24])
        out.append(f"input A f64[{n},{m}]\ninput B f64[{n},{m}]\nG = einsum(\"im,jm->ij\", A, B)\n"
                   f"T = einsum(\"ij->ij\", G, map=tanh)\nc = einsum(\"ij->j\", T)\noutput c\n")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    work = tempfile.mkdtemp(prefix="einrel-ab-")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    graphs = [os.path.join(root, "drivers/examples", g + ".ein")
              for g in ("attention", "ffnn", "four_index", "llama_layer", "matmul")]
    for i, text in enumerate(generated_graphs(args.seed)):
        graphs.append(os.path.join(work, f"g{i}.ein"))
        with open(graphs[-1], "w") as fh:
            fh.write(text)

    def estimate(g, R):
        p = subprocess.run([args.baseline, "plan", g, "--ranks", str(R), "--format", "json"], capture_output=True,
                           text=True, env=env)
        return max(r["estimated_peak_allocated_bytes"] for r in json.loads(p.stdout)["ranks"])

    bad = []

    def run(binary, g, R, L, check):
        report = os.path.join(work, "r.json")
        if os.path.exists(report):
            os.remove(report)
        cmd = [args.mpiexec, "-n", str(R), binary, "run", g, "--random", "1", "--memory-limit", str(L), "--report",
               report] + (["--check"] if check else [])
        if subprocess.run(cmd, capture_output=True, text=True, env=env).returncode != 0:
            return None
        r = json.load(open(report))
        if check and not all(x["peak_allocated_bytes"] <= L and
                             0.9 <= x["peak_allocated_bytes"] / x["estimated_peak_allocated_bytes"] <= 1.1
                             for x in r["ranks"]):
            bad.append((g, R, L))
        return r["total_seconds"] - r["memory_seconds"], r["proposed_by"]

    ratios, counts = [], {"both": 0, "new only": 0, "baseline only": 0, "neither": 0}
    print("graph,ranks,limit,runs,new/baseline,chosen")
    for g in graphs:
        for R in (1, 2, 3, 4):
            E = estimate(g, R)
            for frac in (2, 4):
                L = E // frac
                new, old, how = [], [], ""
                for rep in range(args.reps):
                    o = run(args.baseline, g, R, L, False)
                    n = run(args.einrel, g, R, L, rep == 0)
                    if o:
                        old.append(o[0])
                    if n:
                        new.append(n[0])
                        how = n[1]
                kind = "both" if new and old else "new only" if new else "baseline only" if old else "neither"
                counts[kind] += 1
                ratio = statistics.median(new) / statistics.median(old) if kind == "both" else None
                if ratio:
                    ratios.append(ratio)
                print(f"{os.path.basename(g)},{R},{L},{kind},{'' if ratio is None else f'{ratio:.3f}'},{how}")
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    if ratios:
        print(f"where both ran: new/baseline median {statistics.median(ratios):.3f}, max {max(ratios):.3f}")
    for b in bad:
        print("FAIL: measured peak over the limit or off its estimate by more than 10 %:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
