#!/usr/bin/env python3
"""The density sweep of block-sparse products (docs/sparse.md, docs/benchmarks.md "Block-sparse density sweep"):
einrel with block-sparse inputs against the same graph with dense inputs, at block densities from 1 % to 100 %,
with the efficiency against the structural flop count. Benchmarks: the product C = A B of --n (sparse_bench.py's
bar case) and the chain (A B) C of --n / 2.

For each density D, this script draws the masks of the inputs itself (numpy, seed --seed: each tile of edge
--tile present with probability D), writes them with their masks (`/A.mask`) into one HDF5 file, and counts the
structural flops: 2 t³ times the number of (i, k, j) with A_ik and B_kj both present (for the chain, then with
AB's structural shape and C), the least any block product can do. It then runs, alternating the sides --reps times on --ranks ranks:
- sparse: `einrel run` of the graph with its inputs declared `sparse` (their shapes from the masks; the planner chooses
  the blocks it runs: the input's tiles, several in one, or the dense plan);
- dense: the same graph and file with the inputs declared dense;
both planned under the machine model `einrel calibrate` measures on the same ranks first (the planner's block
sizes follow its rates; `--machine FILE` gives one, `--default-model` plans under the defaults),
and takes the medians of the reports' `evaluation_seconds` (the vertices; with `--input-reads move` the inputs are
read before the evaluation, so input reading and memory warm-up are excluded on both sides). Efficiency = dense seconds × (structural flops / dense flops) / sparse seconds: 1 where
the sparse run does only the structural flops at the dense run's rate. It also prints the flops the sparse run
did against the structural count (> 1 where the planner ran coarser blocks), and the dense run's GFLOP/s per
rank against numpy's one-thread dgemm (its own process), the absolute check on the peer. The tile ceiling is
numpy's rate on --tile³ products, --ranks processes at once (numpy_tile_rate), over the dense run's rate per
rank: the efficiency a run made of the input's block products reaches if each runs at the BLAS's own rate for
its size and nothing else costs (the BLAS packs both operands of every call, which a large GEMM amortizes).

  OMP_NUM_THREADS=1 OMP_PROC_BIND=false python3 perf_tests/sparse_sweep.py --einrel build/drivers/einrel --ranks 2
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np

from numpy_peer import numpy_dgemm_rate, numpy_tile_rate

# The product of --n and the chain (A B) C of --n / 2, as sparse_bench.py runs them; {s} is " sparse" or "".
GRAPHS = {
    "product": "input A f64[{n},{n}]{s}\ninput B f64[{n},{n}]{s}\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n",
    "chain": "input A f64[{n},{n}]{s}\ninput B f64[{n},{n}]{s}\ninput C f64[{n},{n}]{s}\n"
             "AB = einsum(\"ij,jk->ik\", A, B)\nABC = einsum(\"ik,kl->il\", AB, C)\noutput ABC\n",
}


def write_inputs(path, names, n, tile, density, rng):
    """The inputs `names` (n × n) with tiles present with probability `density` (uniform values there, zero
    elsewhere) and their masks; returns the structural flops of their chain product, left to right (each
    product's shape the structural product of its operands')."""
    t = n // tile
    masks = [rng.uniform(0, 1, (t, t)) < density for _ in names]
    with h5py.File(path, "w") as f:
        for name, mask in zip(names, masks):
            d = f.create_dataset(name, (n, n), "f8", chunks=(tile, tile), fillvalue=0.0)
            for i, k in zip(*np.nonzero(mask)):
                d[i * tile:(i + 1) * tile, k * tile:(k + 1) * tile] = rng.uniform(-1, 1, (tile, tile))
            f[name + ".mask"] = mask.astype(np.uint8)
    pairs, left = 0, masks[0].astype(np.int64)
    for right in masks[1:]:
        product = left @ right.astype(np.int64)
        pairs += int(product.sum())
        left = (product > 0).astype(np.int64)
    return 2 * tile ** 3 * pairs


def run(args, graph, data):
    report = graph + ".json"
    cmd = [args.mpiexec, "-n", str(args.ranks), args.einrel, "run", graph, "--input", data, "--input-reads", "move",
           "--report", report] + (["--machine", args.machine] if args.machine else [])
    subprocess.run(cmd, check=True, capture_output=True)
    with open(report) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--tile", type=int, default=256)
    ap.add_argument("--densities", type=float, nargs="+", default=[0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--bench", nargs="+", default=["product", "chain"], choices=sorted(GRAPHS))
    ap.add_argument("--machine", help="a machine file for both sides (default: `einrel calibrate` on --ranks first)")
    ap.add_argument("--default-model", action="store_true", help="plan under the default machine model")
    args = ap.parse_args()
    args.einrel = os.path.abspath(args.einrel)
    rng = np.random.default_rng(args.seed)
    numpy_rate = numpy_dgemm_rate(args.n)
    tile_rate = numpy_tile_rate(args.tile, args.ranks)
    print(f"# numpy one-thread dgemm {args.n}³: {numpy_rate / 1e9:.1f} GFLOP/s per core; {args.tile}³ products, "
          f"{args.ranks} processes at once: {tile_rate / 1e9:.1f} ({tile_rate / numpy_rate:.2f} of it)")
    print("bench,density,structural_fraction,sparse_s,dense_s,dense_over_sparse,efficiency,flops_done_over_structural,"
          "dense_gflops_per_rank,dense_over_numpy,tile_ceiling,proposed_by", flush=True)
    with tempfile.TemporaryDirectory() as work:
        if not args.machine and not args.default_model:
            args.machine = os.path.join(work, "machine.json")
            subprocess.run([args.mpiexec, "-n", str(args.ranks), args.einrel, "calibrate", "--output", args.machine],
                           check=True, capture_output=True)
        if args.machine:
            with open(args.machine) as f:
                machine = json.load(f)
            print(f"# machine model {args.machine}: {machine['flops_per_second'] / 1e9:.1f} GFLOP/s, "
                  f"gemm_half_rate_dimension {machine['gemm_half_rate_dimension']:.2f}")
        for bench in args.bench:
            n = args.n if bench == "product" else args.n // 2
            names = "AB" if bench == "product" else "ABC"
            dense_flops = 2 * n ** 3 * (len(names) - 1)
            sparse_graph, dense_graph = os.path.join(work, "sparse.ein"), os.path.join(work, "dense.ein")
            with open(sparse_graph, "w") as f:
                f.write(GRAPHS[bench].format(n=n, s=" sparse"))
            with open(dense_graph, "w") as f:
                f.write(GRAPHS[bench].format(n=n, s=""))
            for density in args.densities:
                data = os.path.join(work, "inputs.h5")
                structural = write_inputs(data, names, n, args.tile, density, rng)
                sp, de = [], []
                for _ in range(args.reps):
                    rs = run(args, sparse_graph, data)
                    rd = run(args, dense_graph, data)
                    sp.append(rs["evaluation_seconds"])
                    de.append(rd["evaluation_seconds"])
                s, d = statistics.median(sp), statistics.median(de)
                fraction = structural / dense_flops
                done = sum(r["flops"] for r in rs["ranks"])
                rate = dense_flops / d / args.ranks
                print(f"{bench},{density},{fraction:.5f},{s:.4f},{d:.4f},{d / s:.2f},{d * fraction / s:.3f},"
                      f"{done / structural if structural else float('nan'):.3f},{rate / 1e9:.1f},"
                      f"{rate / numpy_rate:.3f},{tile_rate / rate:.3f},\"{rs['proposed_by']}\"", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
