#!/usr/bin/env python3
"""Runs beyond 8 ranks (issue 63, docs/scale.md): at each R of --ranks (oversubscribed here: 16 in CI, 32 and 64 by
hand), `mpiexec.mpich -n R` runs of
- a 6-product chain of mixed shapes (`einrel run`, HDF5 inputs) against numpy's product;
- the LLaMA layer (drivers/examples/llama_layer.ein, llama_inputs.py) against check_llama_numpy's numpy forward;
- a block-sparse graph (zero blocks dropped on reading, `--drop-zero-blocks`) against numpy on the dense arrays;
- a library consumer, the slab operator (einrel::Program on each rank's own row slabs), which checks itself against
  plain loops on every rank.
Each output must equal numpy's to rounding (relative 1e-10). A line per run gives its wall seconds, the seconds
before and after the evaluation (launch, planning, set-up, writing: wall minus the report's total_seconds), the
busiest rank's peak allocated bytes and, where /usr/bin/time exists, each rank's whole-process peak resident memory
(median and most); times are trends only when R exceeds the cores.

  python3 system_tests/cli/check_scale_runs.py --einrel build/drivers/einrel --ranks 16 32 64 \\
      --examples drivers/examples --slab-operator build/drivers/einrel_slab_operator --work-dir /tmp/scale
"""
import argparse
import json
import os
import subprocess
import sys
import time

import h5py
import numpy as np

import check_common
from check_llama_numpy import llama_forward

CHAIN_SHAPES = [200, 160, 240, 96, 256, 128, 192, 144]  # M_k is CHAIN_SHAPES[k] x CHAIN_SHAPES[k+1]
TOLERANCE = 1e-10


def chain_case(work, rng):
    lines = [f"input M{k} f64[{CHAIN_SHAPES[k]},{CHAIN_SHAPES[k + 1]}]" for k in range(len(CHAIN_SHAPES) - 1)]
    previous = "M0"
    for k in range(1, len(CHAIN_SHAPES) - 1):
        lines.append(f"P{k} = einsum(\"ij,jk->ik\", {previous}, M{k})")
        previous = f"P{k}"
    lines.append(f"output {previous}")
    values = {f"M{k}": rng.uniform(-1, 1, (CHAIN_SHAPES[k], CHAIN_SHAPES[k + 1]))
              for k in range(len(CHAIN_SHAPES) - 1)}
    want = values["M0"]
    for k in range(1, len(CHAIN_SHAPES) - 1):
        want = want @ values[f"M{k}"]
    return "\n".join(lines) + "\n", values, {previous: want}, []


def sparse_case(work, rng):
    tile, n = 64, 512
    graph = (f"input A f64[{n},{n}] sparse\ninput B f64[{n},{n}] sparse\ninput W f64[{n},256]\n"
             "AB = einsum(\"ij,jk->ik\", A, B)\nH = einsum(\"ik,kl->il\", AB, W)\noutput AB, H\n")

    def sparse(density):
        a = rng.uniform(-1, 1, (n, n))
        keep = rng.random((n // tile, n // tile)) < density
        return a * np.kron(keep, np.ones((tile, tile)))

    values = {"A": sparse(0.3), "B": sparse(0.3), "W": rng.uniform(-1, 1, (n, 256))}
    ab = values["A"] @ values["B"]
    return graph, values, {"AB": ab, "H": ab @ values["W"]}, ["--drop-zero-blocks", "--sparse-tile", str(tile)]


def run_graph(args, ranks, name, graph_path, data, want, extra, failures):
    out = os.path.join(args.work_dir, f"{name}-np{ranks}.h5")
    report = os.path.join(args.work_dir, f"{name}-np{ranks}.json")
    # Each rank under /usr/bin/time, where there is one: its whole process's peak resident memory, appended as one
    # short line to a file of its own run (not stderr, which mpiexec forwards in chunks that interleave mid-line).
    rss_file = os.path.join(args.work_dir, f"{name}-np{ranks}.rss")
    if os.path.exists(rss_file):
        os.remove(rss_file)
    timed = ["/usr/bin/time", "-a", "-o", rss_file, "-f", "%M"] if os.path.exists("/usr/bin/time") else []
    cmd = [args.mpiexec, "-n", str(ranks), *timed, args.einrel, "run", graph_path, "--input", data, "--output", out,
           "--report", report, *extra]
    start = time.perf_counter()
    p = check_common.run_watched(cmd, timeout=args.timeout)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        failures.append(f"{' '.join(cmd)} failed: {p.stderr.strip()}")
        return
    with open(report) as fh:
        rep = json.load(fh)
    worst = 0.0
    with h5py.File(out, "r") as fh:
        for key, expected in want.items():
            got = np.array(fh[key])
            err = float(np.max(np.abs(got - expected)) / max(np.max(np.abs(expected)), 1e-300))
            worst = max(worst, err)
            if not err <= TOLERANCE:
                failures.append(f"{name} np{ranks}: {key} differs from numpy by {err:.3g} (relative to max |{key}|)")
    if rep["num_ranks"] != ranks or len(rep["ranks"]) != ranks:
        failures.append(f"{name} np{ranks}: the report lists {len(rep['ranks'])} of {ranks} ranks")
    peak = max(r["peak_allocated_bytes"] for r in rep["ranks"])
    rss = []
    if timed:
        with open(rss_file) as fh:
            rss = sorted(int(line) for line in fh.read().split())
        if len(rss) != ranks:
            failures.append(f"{name} np{ranks}: /usr/bin/time reported {len(rss)} of {ranks} ranks' peak memory")
    resident = f", per-rank peak resident {rss[len(rss) // 2] / 1024:.0f} MB median, {rss[-1] / 1024:.0f} MB most" \
        if rss else ""
    print(f"np{ranks} {name}: max error {worst:.2e}, wall {wall:.2f} s, outside the evaluation "
          f"{wall - rep['total_seconds']:.2f} s, evaluation {rep['evaluation_seconds']:.3f} s, computing ranks "
          f"{rep['computing_ranks']}, busiest rank's peak allocated {peak} bytes{resident}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, nargs="+", required=True)
    ap.add_argument("--examples", required=True, help="drivers/examples")
    ap.add_argument("--slab-operator", help="the einrel_slab_operator program (the library consumer)")
    ap.add_argument("--timeout", type=float, default=600)
    args = check_common.parse_args(ap)
    rng = np.random.default_rng(63)
    failures = []
    cases = []
    for name, make in (("chain", chain_case), ("sparse", sparse_case)):
        graph, values, want, extra = make(args.work_dir, rng)
        graph_path = os.path.join(args.work_dir, f"{name}.ein")
        data = os.path.join(args.work_dir, f"{name}-in.h5")
        with open(graph_path, "w") as fh:
            fh.write(graph)
        with h5py.File(data, "w") as fh:
            for key, value in values.items():
                fh[key] = value
        cases.append((name, graph_path, data, want, extra))
    llama = os.path.join(args.examples, "llama_layer.ein")
    llama_data = os.path.join(args.work_dir, "llama-in.h5")
    subprocess.run([sys.executable, os.path.join(args.examples, "llama_inputs.py"), llama, llama_data, "--seed", "5"],
                   check=True, capture_output=True)
    with h5py.File(llama_data, "r") as fh:
        cases.append(("llama", llama, llama_data, {"out": llama_forward({k: np.array(fh[k]) for k in fh})}, []))
    for ranks in args.ranks:
        for name, graph_path, data, want, extra in cases:
            run_graph(args, ranks, name, graph_path, data, want, extra, failures)
        if args.slab_operator:
            cmd = [args.mpiexec, "-n", str(ranks), args.slab_operator, "1009", "37", "12"]
            start = time.perf_counter()
            p = check_common.run_watched(cmd, timeout=args.timeout)
            wall = time.perf_counter() - start
            line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr.strip()
            if p.returncode != 0 or not line.endswith(": ok") or f"on {ranks} ranks" not in line:
                failures.append(f"{' '.join(cmd)}: {line}")
            print(f"np{ranks} slab operator (Program): wall {wall:.2f} s: {line}", flush=True)
    return check_common.finish(failures, "runs beyond 8 ranks against numpy")


if __name__ == "__main__":
    sys.exit(main())
