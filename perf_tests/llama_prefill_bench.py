#!/usr/bin/env python3
"""Prefill of one LLaMA decoder layer (eindecomp.txt §9, experiment 3) under EinDecomp and the LLM baselines
megatron, sequence and attention, on the same ranks.

Writes the layer at the given shape with einrel_llama_graph and its inputs with drivers/examples/llama_inputs.py,
then for each rank count R runs `einrel run` under the four planners alternately, --reps times each, with
ranks x threads = the machine's cores (OMP_NUM_THREADS = cores / R, at least 1). Prints the median of the
report's total_seconds (evaluation once inputs are loaded) and input_seconds (reading the inputs' blocks,
replicated ones included), the floats moved and the predicted cost, and baseline seconds / eindecomp seconds
(> 1: EinDecomp faster). The independent peer is numpy in its own process
running the same forward pass on all cores (check_llama_numpy.py's reference), once per repetition.

  OMP_PROC_BIND=false /usr/bin/python3 perf_tests/llama_prefill_bench.py --einrel build/drivers/einrel \\
      --graph-tool build/perf_tests/einrel_llama_graph --ranks 1 2 4 --reps 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLANNERS = ["eindecomp", "megatron", "sequence", "attention"]
NUMPY_FORWARD = r"""
import sys, time, h5py, numpy as np
sys.path.insert(0, sys.argv[2])
from check_llama_numpy import llama_forward
v = {k: np.array(h5py.File(sys.argv[1], "r")[k]) for k in h5py.File(sys.argv[1], "r")}
llama_forward(v)
t = time.perf_counter(); llama_forward(v); print(time.perf_counter() - t)
"""


def run(args, ranks, planner, graph, data, work):
    threads = max(1, (os.cpu_count() or 1) // ranks)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
    report = os.path.join(work, f"report-{planner}-{ranks}.json")
    cmd = [args.mpiexec, "-n", str(ranks), args.einrel, "run", graph, "--input", data, "--planner", planner,
           "--report", report]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    with open(report) as fh:
        rep = json.load(fh)
    return rep["total_seconds"], rep["floats_moved"], rep["predicted_cost"], rep["input_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--graph-tool", required=True, help="einrel_llama_graph")
    ap.add_argument("--mpiexec", default="/usr/bin/mpiexec.mpich")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--shape", type=int, nargs=5, default=[1024, 1024, 16, 64, 2816],
                    metavar=("S", "A", "H", "D", "F"), help="sequence, model, heads, head width, FFN hidden")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="einrel-llama-")
    graph, data = os.path.join(work, "llama.ein"), os.path.join(work, "in.h5")
    s, a, h, d, f = args.shape
    with open(graph, "w") as fh:
        subprocess.run([args.graph_tool, "--sequence", str(s), "--model", str(a), "--heads", str(h), "--head-dim",
                        str(d), "--hidden", str(f)], stdout=fh, check=True)
    examples = os.path.join(HERE, "..", "drivers", "examples")
    subprocess.run([sys.executable, os.path.join(examples, "llama_inputs.py"), graph, data], check=True)
    print(f"LLaMA layer s={s} a={a} h={h} d={d} f={f}, f64")
    peer_runs = []
    print("ranks  planner     median s   input s   floats moved   predicted    baseline/eindecomp  numpy/this")
    for r in args.ranks:
        runs = {p: [] for p in PLANNERS}
        for _ in range(args.reps):
            if r == args.ranks[0]:
                env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count() or 1))
                peer_runs.append(float(subprocess.run(
                    [sys.executable, "-c", NUMPY_FORWARD, data, os.path.join(HERE, "..", "system_tests", "cli")],
                    env=env, capture_output=True, text=True, check=True).stdout))
            for p in PLANNERS:
                runs[p].append(run(args, r, p, graph, data, work))
        peer = statistics.median(peer_runs)
        ref = statistics.median(x[0] for x in runs["eindecomp"])
        for p, v in runs.items():
            t, t_in = statistics.median(x[0] for x in v), statistics.median(x[3] for x in v)
            print(f"{r:5d}  {p:10s} {t:9.4f}  {t_in:8.4f}   {v[0][1]:12.0f}   {v[0][2]:10.4g}   {t / ref:18.2f}"
                  f"  {peer / t:10.2f}")
    print(f"numpy forward (own process, {os.cpu_count()} threads): {statistics.median(peer_runs):.4f} s")


if __name__ == "__main__":
    main()
