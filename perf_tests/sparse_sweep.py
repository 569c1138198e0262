#!/usr/bin/env python3
"""The density sweep of block-sparse products (docs/sparse.md, docs/benchmarks.md "Block-sparse density sweep"):
einrel with block-sparse inputs against the same graph with dense inputs, at block densities from 1 % to 100 %,
with the efficiency against the structural flop count.

For each density D, this script draws the masks of A and B itself (numpy, seed --seed: each tile of edge --tile
present with probability D), writes A and B with their masks (`/A.mask`) into one HDF5 file, and counts the
structural flops: 2 t³ times the number of (i, k, j) with A_ik and B_kj both present, the least any block
product can do. It then runs, alternating the sides --reps times on --ranks ranks:
- sparse: `einrel run` of C = A B with A and B declared `sparse` (their shapes from the masks; the planner chooses
  the blocks it runs: the input's tiles, several in one, or the dense plan);
- dense: the same graph and file with the inputs declared dense;
and takes the medians of the reports' `evaluation_seconds` (the vertices; with `--input-reads move` the inputs are
read before the evaluation, so input reading and memory warm-up are excluded on both sides). Efficiency = dense seconds × (structural flops / dense flops) / sparse seconds: 1 where
the sparse run does only the structural flops at the dense run's rate. It also prints the flops the sparse run
did against the structural count (> 1 where the planner ran coarser blocks), and the dense run's GFLOP/s per
rank against numpy's one-thread dgemm (its own process), the absolute check on the peer.

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

GRAPH = "input A f64[{n},{n}]{s}\ninput B f64[{n},{n}]{s}\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n"


def numpy_dgemm_rate(n):
    """numpy's one-thread n³ dgemm in its own process, warm, median of 3."""
    code = ("import numpy as np, time, statistics\n"
            f"a = np.random.default_rng(1).uniform(-1, 1, ({n}, {n})); b = a.copy(); a @ b\n"
            "t = []\n"
            "for _ in range(3):\n    s = time.perf_counter(); a @ b; t.append(time.perf_counter() - s)\n"
            f"print(2 * {n}**3 / statistics.median(t))")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                check=True).stdout)


def write_inputs(path, n, tile, density, rng):
    """A and B with tiles present with probability `density` (uniform values there, zero elsewhere) and their
    masks; returns the structural flops of A B."""
    t = n // tile
    masks = [rng.uniform(0, 1, (t, t)) < density for _ in range(2)]
    with h5py.File(path, "w") as f:
        for name, mask in zip("AB", masks):
            d = f.create_dataset(name, (n, n), "f8", chunks=(tile, tile), fillvalue=0.0)
            for i, k in zip(*np.nonzero(mask)):
                d[i * tile:(i + 1) * tile, k * tile:(k + 1) * tile] = rng.uniform(-1, 1, (tile, tile))
            f[name + ".mask"] = mask.astype(np.uint8)
    pairs = int((masks[0].astype(np.int64) @ masks[1].astype(np.int64)).sum())
    return 2 * tile ** 3 * pairs


def run(args, graph, data):
    report = graph + ".json"
    cmd = [args.mpiexec, "-n", str(args.ranks), args.einrel, "run", graph, "--input", data, "--input-reads", "move",
           "--report", report]
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
    args = ap.parse_args()
    args.einrel = os.path.abspath(args.einrel)
    rng = np.random.default_rng(args.seed)
    numpy_rate = numpy_dgemm_rate(args.n)
    print(f"# numpy one-thread dgemm {args.n}³: {numpy_rate / 1e9:.1f} GFLOP/s per core")
    print("density,structural_fraction,sparse_s,dense_s,dense_over_sparse,efficiency,flops_done_over_structural,"
          "dense_gflops_per_rank,dense_over_numpy,proposed_by", flush=True)
    dense_flops = 2 * args.n ** 3
    with tempfile.TemporaryDirectory() as work:
        sparse_graph, dense_graph = os.path.join(work, "sparse.ein"), os.path.join(work, "dense.ein")
        with open(sparse_graph, "w") as f:
            f.write(GRAPH.format(n=args.n, s=" sparse"))
        with open(dense_graph, "w") as f:
            f.write(GRAPH.format(n=args.n, s=""))
        for density in args.densities:
            data = os.path.join(work, "inputs.h5")
            structural = write_inputs(data, args.n, args.tile, density, rng)
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
            print(f"{density},{fraction:.5f},{s:.4f},{d:.4f},{d / s:.2f},{d * fraction / s:.3f},"
                  f"{done / structural if structural else float('nan'):.3f},{rate / 1e9:.1f},{rate / numpy_rate:.3f},"
                  f"\"{rs['proposed_by']}\"", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
