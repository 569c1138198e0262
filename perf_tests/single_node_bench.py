#!/usr/bin/env python3
"""einrel on one rank against peers outside it, on single contractions and on whole graphs.

einrel: `einrel run GRAPH --random 1 --report R.json`; its time is the report's `total_seconds` (the
evaluation, after the run has taken and touched its memory), "cold" adds `memory_seconds`.
numpy: the same operations written as a numpy user would (np.einsum(optimize=True) made contiguous for
contractions, broadcasting for the rest) in a separate process per repetition: "cold" is the first call in
that fresh process, "warm" the median of the calls after it.
BLAS: for contractions, plain cblas_dgemm/sgemm on warm pre-touched buffers outside Kokkos
(build/perf_tests/einrel_blas_peer), batch x m x n x k as the contraction's label groups give them — the
machine's GEMM rate on the same multiply-adds, whatever layout einrel must first arrange.

Prints CSV: case,equation,shape,einrel_s,einrel_cold_s,numpy_warm_s,numpy_cold_s,blas_s,vs_numpy,vs_numpy_cold,vs_blas
(ratios = peer time / einrel time: > 1 means einrel is faster), medians over --reps runs that alternate
the sides, then the geometric means of vs_numpy per group.

  OMP_NUM_THREADS=2 OMP_PROC_BIND=false /usr/bin/python3 perf_tests/single_node_bench.py \\
      --einrel build/drivers/einrel --blas build/perf_tests/einrel_blas_peer
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Single contractions: (name, equation, extents).
CONTRACTIONS = [
    ("square_matmul", "ij,jk->ik", {"i": 2048, "j": 2048, "k": 2048}),
    ("transposed_lhs", "ji,jk->ik", {"i": 1536, "j": 1536, "k": 1536}),
    ("transposed_both", "ji,kj->ik", {"i": 1024, "j": 1024, "k": 1024}),
    ("tall_output", "ij,jk->ik", {"i": 8192, "j": 256, "k": 2048}),
    ("skinny_inner", "ij,jk->ik", {"i": 4096, "j": 64, "k": 4096}),
    ("linear", "bi,oi->bo", {"b": 4096, "i": 1024, "o": 1024}),
    ("permuted_multilabel", "abcd,cdef->feba", {c: 32 for c in "abcdef"}),
    ("two_label_inner", "ijk,jil->kl", {"i": 64, "j": 64, "k": 512, "l": 512}),
    ("attention_scores", "shd,thd->hst", {"s": 512, "t": 512, "h": 8, "d": 64}),
    ("attention_values", "hst,thd->shd", {"s": 1024, "t": 1024, "h": 8, "d": 64}),
    ("batched", "bij,bjk->bik", {"b": 64, "i": 192, "j": 192, "k": 192}),
    ("batched_small", "bij,bjk->bik", {"b": 4096, "i": 16, "j": 16, "k": 16}),
    ("projection", "sa,ahd->shd", {"s": 2048, "a": 1024, "h": 16, "d": 64}),
]

# Whole graphs: perf_tests/graphs/NAME.ein and the numpy program computing the same.
GRAPHS = ["matmul_chain", "mlp_forward", "attention", "skewed_chain"]


def numpy_graph(name, a, np):
    """The graph `name` in numpy, on the dict of its inputs `a`."""
    ein = lambda eq, *ops: np.ascontiguousarray(np.einsum(eq, *ops, optimize=True))
    if name == "matmul_chain":
        p = a["M0"]
        for k in range(1, 7):
            p = p @ a[f"M{k}"]
        return p
    if name == "mlp_forward":
        h = np.maximum(a["X"] @ a["W1"] + a["b1"], 0)
        return np.maximum(h @ a["W2"] + a["b2"], 0)
    if name == "attention":
        x = a["X"]
        qh, kh, vh = (ein("sa,ahd->shd", x, a[w]) for w in ("WQ", "WK", "WV"))
        t2 = ein("shd,thd->hst", qh, kh) * 0.125
        e = np.exp(t2 - t2.max(axis=-1, keepdims=True))
        t3 = e / e.sum(axis=-1, keepdims=True)
        return ein("shd,ahd->sa", ein("hst,thd->shd", t3, vh), a["WO"])
    if name == "skewed_chain":
        return a["A"] @ a["B"] + a["C"] @ (a["D"] @ a["E"])
    raise KeyError(name)


def graph_inputs(path):
    """(name, dtype, shape) of every input statement of a .ein file."""
    out = []
    for line in open(path):
        words = line.split("#")[0].split()
        if len(words) == 3 and words[0] == "input":
            dtype, dims = words[2].rstrip("]").split("[")
            out.append((words[1], dtype, [int(d) for d in dims.split(",") if d]))
    return out


def numpy_worker(spec):
    """Runs in its own process: prints {"cold": s, "warm": [s, ...]} for one case."""
    import numpy as np
    rng = np.random.default_rng(1)
    dtype = np.float32 if spec["dtype"] == "f32" else np.float64
    arrays = {n: rng.uniform(-1, 1, s).astype(dtype) for n, s in spec["inputs"]}
    if "equation" in spec:
        ops = [arrays[n] for n, _ in spec["inputs"]]
        call = lambda: np.ascontiguousarray(np.einsum(spec["equation"], *ops, optimize=True))
    else:
        call = lambda: numpy_graph(spec["graph"], arrays, np)
    times = []
    for _ in range(spec["calls"]):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    print(json.dumps({"cold": times[0], "warm": times[1:]}))


def label_groups(equation, extent):
    """batch, m, n, k sizes of a binary contraction: labels in both operands and the output, in X and the
    output only, in Y and the output only, in both operands only."""
    lhs, out = equation.split("->")
    x, y = lhs.split(",")
    size = lambda labels: math.prod(extent[c] for c in labels)
    return (size([c for c in out if c in x and c in y]), size([c for c in out if c in x and c not in y]),
            size([c for c in out if c in y and c not in x]), size([c for c in x if c in y and c not in out]))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--numpy-worker":
        return numpy_worker(json.loads(sys.argv[2]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--blas", help="einrel_blas_peer; without it no BLAS column")
    ap.add_argument("--reps", type=int, default=3, help="einrel runs and numpy processes per case")
    ap.add_argument("--calls", type=int, default=4, help="numpy calls per process: one cold, the rest warm")
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f64")
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    args = ap.parse_args()
    threads = os.environ.get("OMP_NUM_THREADS", "2")
    env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)

    cases = []
    for name, equation, extent in CONTRACTIONS:
        operands = equation.split("->")[0].split(",")
        inputs = [(f"X{k}", [extent[c] for c in op]) for k, op in enumerate(operands)]
        text = "".join(f"input {n} {args.dtype}[{','.join(map(str, s))}]\n" for n, s in inputs)
        text += f'Z = einsum("{equation}", {", ".join(n for n, _ in inputs)})\noutput Z\n'
        shape = "x".join(f"{c}{extent[c]}" for c in extent)
        cases.append(("contraction", name, equation, shape, text, {"equation": equation, "inputs": inputs},
                      label_groups(equation, extent)))
    for name in GRAPHS:
        text = open(os.path.join(HERE, "graphs", name + ".ein")).read()
        if args.dtype == "f32":
            text = text.replace("f64[", "f32[")
        path = os.path.join(HERE, "graphs", name + ".ein")
        cases.append(("graph", name, "", f"graphs/{name}.ein", text,
                      {"graph": name, "inputs": [(n, s) for n, _, s in graph_inputs(path)]}, None))

    print("case,equation,shape,einrel_s,einrel_cold_s,numpy_warm_s,numpy_cold_s,blas_s,vs_numpy,vs_numpy_cold,vs_blas")
    ratios = {"contraction": [], "graph": []}
    with tempfile.TemporaryDirectory() as work:
        graph, report = os.path.join(work, "g.ein"), os.path.join(work, "r.json")
        for group, name, equation, shape, text, spec, groups in cases:
            if args.only not in name:
                continue
            open(graph, "w").write(text)
            spec = dict(spec, dtype=args.dtype, calls=args.calls)
            e_warm, e_cold, n_warm, n_cold, blas = [], [], [], [], []
            for _ in range(args.reps):
                p = subprocess.run([args.einrel, "run", graph, "--random", "1", "--report", report], env=env,
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"einrel failed on {name}: {p.stderr.strip()}")
                r = json.load(open(report))
                e_warm.append(r["total_seconds"])
                e_cold.append(r["total_seconds"] + r["memory_seconds"])
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--numpy-worker", json.dumps(spec)],
                                   env=env, capture_output=True, text=True, check=True)
                t = json.loads(p.stdout)
                n_cold.append(t["cold"])
                n_warm.append(statistics.median(t["warm"]))
                if args.blas and groups:
                    b, m, n, k = groups
                    p = subprocess.run([args.blas, "--dtype", args.dtype, "--batch", str(b), "--m", str(m), "--n",
                                        str(n), "--k", str(k), "--reps", "3"], env=env, capture_output=True,
                                       text=True, check=True)
                    blas.append(float(p.stdout.split()[0]))
            e, ec, nw, nc = (statistics.median(v) for v in (e_warm, e_cold, n_warm, n_cold))
            bl = statistics.median(blas) if blas else None
            ratios[group].append(nw / e)
            print(f"{name},{equation.replace(',', ';')},{shape},{e:.6f},{ec:.6f},{nw:.6f},{nc:.6f},"
                  f"{'' if bl is None else f'{bl:.6f}'},{nw / e:.3f},{nc / ec:.3f},"
                  f"{'' if bl is None else f'{bl / e:.3f}'}", flush=True)
    for group, values in ratios.items():
        if values:
            geomean = math.exp(sum(map(math.log, values)) / len(values))
            print(f"geomean vs_numpy {group}s,,,,,,,,{geomean:.3f},,")


if __name__ == "__main__":
    main()
