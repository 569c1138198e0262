#!/usr/bin/env python3
"""Block-sparse relations (docs/sparse.md) against the same graphs dense and against scipy's sparse product.

For each benchmark and block density (1, 10, 50, 100 %), alternating the sides `--reps` times and taking
medians of the reports' `evaluation_seconds` (the inputs are generated before the evaluation,
`--input-reads move`, so generating them and taking memory count on neither side):
- einrel sparse: `einrel run G --random 1 --random-density D --sparse-tile T` on R ranks (the graph's inputs
  declared `sparse`);
- einrel dense: the same graph with dense inputs, same R;
- scipy (one rank, this process, one thread): the product of CSR matrices holding the dense equivalent of
  random block-sparse operands of that density (the 4-index contraction as the matrix product it is), timed
  warm, conversion excluded (up to --scipy-max-density: its cost grows with the square of the density).
Benchmarks: a product S×S (the issue's bar case at S = 4096, R = 2), a chain (A·B)·C at S/2, and the 4-index
contraction abij,cdab->cdij with extents E. Prints CSV: bench,density,einrel_sparse_s,einrel_dense_s,
dense_over_sparse,scipy_s,scipy_over_sparse,flops_done,flops_dense,efficiency,floats_moved,predicted,
peak_block_bytes,peak_dense,peak_ratio. flops_done and flops_dense are the reports' flops of the kernel calls that
ran (2 per multiply-add); efficiency = dense s × flops_done / flops_dense ÷ sparse s (flops_done is the
structural count where the plan cuts along the shapes; perf_tests/sparse_sweep.py counts it from the masks);
floats_moved and the dry run's prediction come from the sparse run's report; peaks are the busiest
rank's block bytes. scipy_over_sparse compares scipy on one core with einrel on R ranks. A first comment line
gives numpy's one-thread dgemm rate (its own process), against which the dense einrel side is checked.

  OMP_NUM_THREADS=1 OMP_PROC_BIND=false python3 perf_tests/sparse_bench.py --einrel build/drivers/einrel --ranks 2
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

from numpy_peer import numpy_dgemm_rate
import scipy.sparse


def graphs(s, e):
    mm = f"input A f64[{s},{s}] sparse\ninput B f64[{s},{s}] sparse\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n"
    h = s // 2
    chain = (f"input A f64[{h},{h}] sparse\ninput B f64[{h},{h}] sparse\ninput C f64[{h},{h}] sparse\n"
             "AB = einsum(\"ij,jk->ik\", A, B)\nABC = einsum(\"ik,kl->il\", AB, C)\noutput ABC\n")
    four = (f"input T f64[{e},{e},{e},{e}] sparse\ninput V f64[{e},{e},{e},{e}] sparse\n"
            "R = einsum(\"abij,cdab->cdij\", T, V)\noutput R\n")
    return {"product": mm, "chain": chain, "four_index": four}


def block_sparse(rng, rows, cols, tile, density):
    """A CSR matrix whose tile×tile blocks are present with probability `density`, uniform values in them."""
    mask = rng.uniform(0, 1, (-(-rows // tile), -(-cols // tile))) < density
    dense = rng.uniform(-1, 1, (rows, cols)) * np.kron(mask, np.ones((tile, tile)))[:rows, :cols]
    return scipy.sparse.csr_matrix(dense)


def scipy_seconds(bench, s, e, tile, density, rng):
    if bench == "product":
        a, b = block_sparse(rng, s, s, tile, density), block_sparse(rng, s, s, tile, density)
        start = time.perf_counter()
        a @ b
    elif bench == "chain":
        h = s // 2
        a, b, c = (block_sparse(rng, h, h, tile, density) for _ in range(3))
        start = time.perf_counter()
        (a @ b) @ c
    else:  # R(cd, ij) = V(cd, ab) · T(ab, ij), with blocks of (tile4)² elements in each matricised operand
        t4 = tile * tile
        v, t = block_sparse(rng, e * e, e * e, t4, density), block_sparse(rng, e * e, e * e, t4, density)
        start = time.perf_counter()
        v @ t
    return time.perf_counter() - start


def flops(report):
    """The flops of the kernel calls that ran, over all ranks (the report's per-rank count)."""
    return sum(r["flops"] for r in report["ranks"])


def run(args, graph, extra):
    report = graph + ".json"
    cmd = [args.mpiexec, "-n", str(args.ranks), args.einrel, "run", graph, "--random", "1", "--input-reads", "move",
           "--report", report] + extra
    subprocess.run(cmd, check=True, capture_output=True)
    with open(report) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--scale", type=int, default=4096)
    ap.add_argument("--four-extent", type=int, default=48)
    ap.add_argument("--tile", type=int, default=256)
    ap.add_argument("--four-tile", type=int, default=8)
    ap.add_argument("--densities", type=float, nargs="+", default=[0.01, 0.1, 0.5, 1.0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bench", nargs="+", default=["product", "chain", "four_index"])
    ap.add_argument("--scipy-max-density", type=float, default=0.1,
                    help="scipy's element-wise product grows with the square of the density: skipped above this")
    args = ap.parse_args()
    args.einrel = os.path.abspath(args.einrel)
    rng = np.random.default_rng(5)
    print(f"# numpy one-thread dgemm {args.scale}³: {numpy_dgemm_rate(args.scale) / 1e9:.1f} GFLOP/s per core "
          "(the dense peer's absolute check: einrel dense GFLOP/s per core = flops_dense / einrel_dense_s / ranks)")
    print("bench,density,einrel_sparse_s,einrel_dense_s,dense_over_sparse,scipy_s,scipy_over_sparse,flops_done,"
          "flops_dense,efficiency,floats_moved,predicted,peak_block_bytes,peak_dense,peak_ratio", flush=True)
    with tempfile.TemporaryDirectory() as work:
        for bench, text in graphs(args.scale, args.four_extent).items():
            if bench not in args.bench:
                continue
            tile = args.four_tile if bench == "four_index" else args.tile
            sparse_graph, dense_graph = os.path.join(work, bench + ".ein"), os.path.join(work, bench + "_dense.ein")
            with open(sparse_graph, "w") as f:
                f.write(text)
            with open(dense_graph, "w") as f:
                f.write(text.replace(" sparse", ""))
            for density in args.densities:
                sp, de, sc = [], [], []
                for _ in range(args.reps):
                    rs = run(args, sparse_graph, ["--random-density", str(density), "--sparse-tile", str(tile)])
                    rd = run(args, dense_graph, [])
                    sp.append(rs["evaluation_seconds"])
                    de.append(rd["evaluation_seconds"])
                    if density <= args.scipy_max_density:
                        sc.append(scipy_seconds(bench, args.scale, args.four_extent, tile, density, rng))
                s, d = statistics.median(sp), statistics.median(de)
                c = statistics.median(sc) if sc else float("nan")
                peak = max(r["peak_block_bytes"] for r in rs["ranks"])
                peak_d = max(r["peak_block_bytes"] for r in rd["ranks"])
                # dense s × (flops done / dense flops) / sparse s: 1 where the sparse run does its flops at the dense rate
                efficiency = d * flops(rs) / flops(rd) / s if s > 0 else float("nan")
                print(f"{bench},{density},{s:.4f},{d:.4f},{d / s:.1f},{c:.4f},{c / s:.1f},{flops(rs):.3e},"
                      f"{flops(rd):.3e},{efficiency:.3f},{rs['floats_moved']},{rs['predicted_cost']},{peak},{peak_d},"
                      f"{peak / peak_d:.3f}", flush=True)


if __name__ == "__main__":
    main()
