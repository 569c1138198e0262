#!/usr/bin/env python3
"""One-vertex graphs through `einrel run --random 1 --report` against numpy (np.einsum with optimize=True,
which hands contractions to OpenBLAS) on the same shapes and dtype. Prints CSV
case,equation,shape,einrel_seconds,numpy_seconds,ratio (ratio = numpy / einrel: > 1 means einrel is
faster): einrel's time is the vertex's `seconds` from the run report (the whole vertex: blocks, kernels,
aggregation), median over --reps runs; numpy's is the median of --reps timed calls after a warm-up.

  OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 python3 perf_tests/einrel_vs_numpy.py --einrel build/drivers/einrel
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

CASES = [
    ("square_matmul", "ij,jk->ik", {"i": 1024, "j": 1024, "k": 1024}),
    ("square_matmul", "ij,jk->ik", {"i": 2048, "j": 2048, "k": 2048}),
    ("transposed", "ji,kj->ik", {"i": 1024, "j": 1024, "k": 1024}),
    ("skinny", "ij,jk->ik", {"i": 4096, "j": 64, "k": 4096}),
    ("batched_small", "bij,bjk->bik", {"b": 4096, "i": 16, "j": 16, "k": 16}),
    ("batched_large", "bij,bjk->bik", {"b": 8, "i": 512, "j": 512, "k": 512}),
    ("permuted_multilabel", "abcd,cdef->feba", {c: 32 for c in "abcdef"}),
    ("permuted_multilabel", "ijk,jil->kl", {"i": 64, "j": 64, "k": 512, "l": 512}),
    ("attention_scores", "shd,thd->hst", {"s": 512, "t": 512, "h": 8, "d": 64}),
    ("linear", "bi,oi->bo", {"b": 1024, "i": 1024, "o": 1024}),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f64")
    args = ap.parse_args()
    dtype = np.float32 if args.dtype == "f32" else np.float64
    rng = np.random.default_rng(1)
    total_einrel = total_numpy = 0.0
    print("case,equation,shape,einrel_seconds,numpy_seconds,ratio")
    with tempfile.TemporaryDirectory() as work:
        for name, equation, extent in CASES:
            lhs, out = equation.split("->")
            operands = lhs.split(",")
            shapes = [[extent[c] for c in op] for op in operands]
            graph = os.path.join(work, "g.ein")
            with open(graph, "w") as f:
                for k, shape in enumerate(shapes):
                    f.write(f"input X{k} {args.dtype}[{','.join(map(str, shape))}]\n")
                f.write(f'Z = einsum("{equation}", {", ".join(f"X{k}" for k in range(len(shapes)))})\noutput Z\n')
            report = os.path.join(work, "r.json")
            einrel_times = []
            for _ in range(args.reps):
                p = subprocess.run([args.einrel, "run", graph, "--random", "1", "--report", report],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"einrel failed on {equation}: {p.stderr}")
                einrel_times.append(json.load(open(report))["vertices"][0]["seconds"])
            arrays = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
            np.einsum(equation, *arrays, optimize=True)
            numpy_times = []
            for _ in range(args.reps):
                start = time.perf_counter()
                np.einsum(equation, *arrays, optimize=True)
                numpy_times.append(time.perf_counter() - start)
            e, n = statistics.median(einrel_times), statistics.median(numpy_times)
            total_einrel += e
            total_numpy += n
            shape = "x".join(f"{c}{extent[c]}" for c in extent)
            print(f"{name},{equation.replace(',', ';')},{shape},{e:.6f},{n:.6f},{n / e:.3f}", flush=True)
    print(f"total,,,{total_einrel:.6f},{total_numpy:.6f},{total_numpy / total_einrel:.3f}")


if __name__ == "__main__":
    main()
