#!/usr/bin/env python3
"""`einrel run --screen EPS` on the product of two block-sparse matrices whose entries decay away from the
diagonal, their block norms in /A.norms and /B.norms, at each of --ranks and a few thresholds:
- the result equals numpy's screened product, computed here from the documented rule (docs/sparse.md
  "Screening by norms") on the grid the plan cut the product into: a block pair is skipped when the bounds
  of its operands' norms multiply to less than EPS (a block of the plan's grid is bounded by the root of the sum
  of the squared norms of the dataset's blocks it overlaps), an output block is dropped when the bounds of its
  remaining pairs sum to less than EPS;
- the difference from the exact product is within the documented bound (the screened pairs' bounds plus the
  dropped blocks' bounds);
- `einrel plan` predicts the run: the same screening counts, tuples and flops on every rank."""
import argparse
import json
import math
import os
import sys

import h5py
import numpy as np

import check_common

GRAPH = """input A f64[{n},{n}] sparse
input B f64[{n},{n}] sparse
C = einsum("ij,jk->ik", A, B)
output C
"""


def decaying(rng, n, decay):
    i = np.arange(n)
    return rng.uniform(-1, 1, (n, n)) * np.exp(-np.abs(i[:, None] - i[None, :]) / decay)


def tile_norms(x, tile):
    m = x.shape[0] // tile
    return np.sqrt((x.reshape(m, tile, m, tile) ** 2).sum(axis=(1, 3)))


def even_cuts(n, parts):
    """Block starts of einrel's even grid: the first n % parts blocks one larger."""
    q, r = divmod(n, parts)
    starts = [0]
    for b in range(parts):
        starts.append(starts[-1] + q + (1 if b < r else 0))
    return starts


def regrid(norms, tile, rows, cols):
    """Bounds of the norms of the blocks [rows] x [cols] from the tiles' norms: sqrt of the sum of the squares of
    the tiles each block overlaps."""
    out = np.zeros((len(rows) - 1, len(cols) - 1))
    for a in range(len(rows) - 1):
        for b in range(len(cols) - 1):
            t = norms[rows[a] // tile:(rows[a + 1] - 1) // tile + 1, cols[b] // tile:(cols[b + 1] - 1) // tile + 1]
            out[a, b] = math.sqrt(float((t ** 2).sum()))
    return out


def screened_product(A, B, nA, nB, tile, parts, eps):
    n = A.shape[0]
    ci, cj, ck = (even_cuts(n, parts[label]) for label in "ijk")
    bA, bB = regrid(nA, tile, ci, cj), regrid(nB, tile, cj, ck)
    C = np.zeros((n, n))
    screened = truncated = 0
    bound_error = 0.0
    for a in range(len(ci) - 1):
        for c in range(len(ck) - 1):
            kept, bound, skipped, products = [], 0.0, 0.0, 0
            for b in range(len(cj) - 1):
                if bA[a, b] == 0 or bB[b, c] == 0:
                    continue  # an absent pair: not a product at all
                products += 1
                w = bA[a, b] * bB[b, c]
                if w < eps:
                    screened += 1
                    skipped += w
                else:
                    kept.append(b)
                    bound += w
            if products and bound < eps:  # a block with products, none left or too small: dropped
                truncated += 1
                bound_error += skipped + bound
                continue
            bound_error += skipped
            for b in kept:
                C[ci[a]:ci[a + 1], ck[c]:ck[c + 1]] += A[ci[a]:ci[a + 1], cj[b]:cj[b + 1]] @ B[cj[b]:cj[b + 1], ck[c]:ck[c + 1]]
    return C, screened, truncated, bound_error


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1,2,3")
    args = check_common.parse_args(ap)
    n, tile = 384, 24
    rng = np.random.default_rng(11)
    A, B = decaying(rng, n, 12.0), decaying(rng, n, 18.0)
    nA, nB = tile_norms(A, tile), tile_norms(B, tile)
    data = os.path.join(args.work_dir, "in.h5")
    with h5py.File(data, "w") as fh:
        fh["A"], fh["B"], fh["A.norms"], fh["B.norms"] = A, B, nA, nB
    graph = os.path.join(args.work_dir, "product.ein")
    with open(graph, "w") as fh:
        fh.write(GRAPH.format(n=n))
    exact = A @ B
    failures = []
    for r in (int(x) for x in args.ranks.split(",")):
        for eps in (1e-12, 1e-6, 1e-3, 0.3):
            what = f"np{r} --screen {eps}"
            options = ["--input", data, "--screen", repr(eps)]
            planned = check_common.plan_json(args.einrel, graph, options + ["--ranks", str(r)])
            out, report = (os.path.join(args.work_dir, f"{name}-{r}-{eps}") for name in ("C.h5", "r.json"))
            p = check_common.run_watched([args.mpiexec, "-n", str(r), args.einrel, "run", graph, "--output", out,
                                          "--report", report] + options, timeout=300)
            if p.returncode != 0:
                failures.append(f"{what}: run failed: {p.stderr.strip()}")
                continue
            rep = json.load(open(report))
            with h5py.File(out, "r") as fh:
                got = np.array(fh["C"])
            parts = next(node["partition"] for node in planned["nodes"] if node["name"] == "C")
            want, screened, truncated, bound = screened_product(A, B, nA, nB, tile, parts, eps)
            err = float(np.abs(got - want).max() / np.abs(want).max())
            if not err <= 1e-12:
                failures.append(f"{what}: C differs from numpy's screened product by {err:.3g} (partition {parts})")
            if rep["screening"] != planned["screening"] or rep["screening"] != {
                    "threshold": eps, "screened_products": screened, "truncated_blocks": truncated}:
                failures.append(f"{what}: screening run {rep['screening']}, plan {planned['screening']}, numpy "
                                f"{screened} screened, {truncated} truncated")
            off = float(np.linalg.norm(got - exact))
            if not off <= bound * (1 + 1e-9) + 1e-12 * np.linalg.norm(exact):
                failures.append(f"{what}: ||C - AB|| = {off:.3g} above the bound {bound:.3g}")
            for key in ("tuples", "flops", "floats_sent", "floats_received", "peak_block_bytes"):
                if [x[key] for x in rep["ranks"]] != [x[key] for x in planned["ranks"]]:
                    failures.append(f"{what}: {key} run {[x[key] for x in rep['ranks']]}, plan "
                                    f"{[x[key] for x in planned['ranks']]}")
            flops = sum(x["flops"] for x in rep["ranks"])
            print(f"{what}: partition {parts}, {screened} products screened, {truncated} blocks truncated, "
                  f"{flops / (2.0 * n ** 3):.3f} of the dense flops, ||C - AB|| = {off:.2e} <= {bound:.2e}")
    return check_common.finish(failures, f"einrel --screen against numpy at ranks {args.ranks}")


if __name__ == "__main__":
    sys.exit(main())
