#!/usr/bin/env python3
"""Runs `mpiexec.mpich -n R einrel run --memory-limit L` on graphs of several kinds (chains, a layer with
in-place bias-and-ReLU, attention with softmax, a contraction that packs its result, a skewed chain) and
checks, at one R:
- `einrel plan --ranks R --format json` and the run report give the same per-rank estimate
  (estimated_peak_allocated_bytes: the dry run, the one estimator);
- the plan the run chose fits: the busiest rank's estimate is at most L;
- every rank's measured peak_allocated_bytes is within 10 % of its estimate;
- limits just under the requested plan's estimate and at a quarter of it either pick a plan that fits, as
  estimated and as measured (within 10 % on every rank), or fail with the one-line error naming the
  smallest peak reached and the shortfall;
- an input file of another type than the graph's, with a limit no plan fits, fails naming the input (inputs are
  checked before a plan is sought) and writes nothing."""
import argparse
import json
import os
import re
import subprocess
import sys

import h5py
import numpy as np

GRAPHS = {
    "chain": "input M0 f64[160,160]\ninput M1 f64[160,160]\ninput M2 f64[160,160]\ninput M3 f64[160,160]\n"
             "P1 = einsum(\"ij,jk->ik\", M0, M1)\nP2 = einsum(\"ij,jk->ik\", P1, M2)\n"
             "P3 = einsum(\"ij,jk->ik\", P2, M3)\noutput P3\n",
    "layer": "input X f64[256,96]\ninput W1 f64[96,384]\ninput b1 f64[384]\ninput W2 f64[384,96]\ninput b2 f64[96]\n"
             "XW1 = einsum(\"sa,af->sf\", X, W1)\nH = einsum(\"sf,f->sf\", XW1, b1, join=add, map=relu)\n"
             "HW2 = einsum(\"sf,fa->sa\", H, W2)\nY = einsum(\"sa,a->sa\", HW2, b2, join=add, map=relu)\noutput Y\n",
    "attention": "input X f32[96,64]\ninput WQ f32[64,4,16]\ninput WK f32[64,4,16]\ninput WV f32[64,4,16]\n"
                 "QH = einsum(\"sa,ahd->shd\", X, WQ)\nKH = einsum(\"sa,ahd->shd\", X, WK)\n"
                 "VH = einsum(\"sa,ahd->shd\", X, WV)\nT1 = einsum(\"shd,thd->hst\", QH, KH)\n"
                 "T2 = einsum(\"hst->hst\", T1, map=scale(0.25))\nT3 = softmax(T2)\n"
                 "O = einsum(\"hst,thd->shd\", T3, VH)\noutput O\n",
    "packed": "input X f64[12,10,24,16]\ninput Y f64[24,16,9,14]\nZ = einsum(\"abcd,cdef->feba\", X, Y)\noutput Z\n",
    "skewed": "input A f64[200,20]\ninput B f64[20,200]\ninput C f64[200,20]\ninput D f64[20,2000]\n"
              "input E f64[2000,200]\nAB = einsum(\"ij,jk->ik\", A, B)\nDE = einsum(\"ij,jk->ik\", D, E)\n"
              "CDE = einsum(\"ij,jk->ik\", C, DE)\nR = einsum(\"ij,ij->ij\", AB, CDE, join=add)\noutput R\n",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    R = args.ranks
    failures = []

    def run(cmd):
        return subprocess.run(cmd, capture_output=True, text=True)

    for name, text in GRAPHS.items():
        graph = os.path.join(args.work_dir, name + ".ein")
        with open(graph, "w") as f:
            f.write(text)
        p = run([args.einrel, "plan", graph, "--ranks", str(R), "--format", "json"])
        if p.returncode != 0:
            sys.exit(f"{name}: einrel plan failed: {p.stderr}")
        planned = [r["estimated_peak_allocated_bytes"] for r in json.loads(p.stdout)["ranks"]]
        limit = max(planned) + max(planned) // 4
        report = os.path.join(args.work_dir, name + ".json")
        if os.path.exists(report):
            os.remove(report)
        p = run([args.mpiexec, "-n", str(R), args.einrel, "run", graph, "--random", "1", "--memory-limit", str(limit),
                 "--report", report])
        if p.returncode != 0:
            sys.exit(f"{name}: einrel run failed: {p.stderr}")
        ranks = json.load(open(report))["ranks"]
        estimated = [r["estimated_peak_allocated_bytes"] for r in ranks]
        if estimated != planned:
            failures.append(f"{name}: the run's estimate {estimated} is not the plan's {planned}")
        if max(estimated) > limit:
            failures.append(f"{name}: the chosen plan needs {max(estimated)} bytes, over the limit {limit}")
        for r in ranks:
            ratio = r["peak_allocated_bytes"] / r["estimated_peak_allocated_bytes"]
            print(f"{name} R={R} rank {r['rank']}: allocated {r['peak_allocated_bytes']} estimated "
                  f"{r['estimated_peak_allocated_bytes']} ({ratio:.3f})")
            if not 0.9 <= ratio <= 1.1:
                failures.append(f"{name}: rank {r['rank']} allocated {r['peak_allocated_bytes']} bytes, "
                                f"estimated {r['estimated_peak_allocated_bytes']} ({ratio:.3f})")
        # Just under the requested plan's estimate, and a quarter of it (finer plans, docs/planner.md "Memory
        # limit", and sliced ones, "Slicing"): another plan that fits as measured, or the one-line error naming
        # the smallest peak reached.
        for tight in (max(planned) - 1, max(planned) // 4):
            p = run([args.mpiexec, "-n", str(R), args.einrel, "run", graph, "--random", "1", "--memory-limit",
                     str(tight), "--report", report])
            if p.returncode == 0:
                ranks = json.load(open(report))["ranks"]
                chosen = max(r["estimated_peak_allocated_bytes"] for r in ranks)
                measured = max(r["peak_allocated_bytes"] for r in ranks)
                print(f"{name} R={R} under {tight}: estimated {chosen}, allocated {measured}")
                if chosen > tight or measured > tight:
                    failures.append(f"{name}: under --memory-limit {tight} the run chose a plan needing {chosen} "
                                    f"(allocated {measured})")
                for r in ranks:
                    if not 0.9 <= r["peak_allocated_bytes"] / r["estimated_peak_allocated_bytes"] <= 1.1:
                        failures.append(f"{name}: under {tight}, rank {r['rank']} allocated "
                                        f"{r['peak_allocated_bytes']}, estimated {r['estimated_peak_allocated_bytes']}")
            else:
                lines = [l for l in p.stderr.splitlines() if l.startswith("einrel: error:")]
                sliced = r"(?:, \w+ sliced along dimension \d+ in \d+ passes \((?:with its producers; )?\d+ vertices per pass\))?"
                pattern = rf"no plan fits the memory limit of {tight} bytes per rank; the closest \(\w+ at p = \d+{sliced}\) needs (\d+) bytes " \
                          rf"on rank \d+ at vertex '\w+', (\d+) bytes more than the limit"
                m = re.search(pattern, lines[0]) if len(lines) == 1 else None
                print(f"{name} R={R} under {tight}: {lines[0] if lines else p.stderr.strip()}")
                if not m or int(m.group(1)) - tight != int(m.group(2)):
                    failures.append(f"{name}: under --memory-limit {tight}: {p.stderr.strip()}")
    # The inputs are opened and checked before planning: with M2 of another type and a limit no plan fits, the error
    # names M2 (the limit's error would hide it), on one line, and no output file is written.
    graph = os.path.join(args.work_dir, "chain.ein")
    wrong, out = os.path.join(args.work_dir, "wrong_type.h5"), os.path.join(args.work_dir, "wrong_type_out.h5")
    with h5py.File(wrong, "w") as f:
        for k in range(4):
            f[f"M{k}"] = np.ones((160, 160), dtype=np.float32 if k == 2 else np.float64)
    if os.path.exists(out):
        os.remove(out)
    p = run([args.mpiexec, "-n", str(R), args.einrel, "run", graph, "--input", wrong, "--output", out,
             "--memory-limit", "1000"])
    lines = [l for l in p.stderr.splitlines() if l.startswith("einrel: error:")]
    print(f"wrong type under --memory-limit 1000: {lines[0] if lines else p.stderr.strip()}")
    if p.returncode == 0 or len(lines) != 1 or "'M2'" not in lines[0] or "memory limit" in lines[0]:
        failures.append(f"an input of the wrong type with an unmet limit: rc {p.returncode}, {p.stderr.strip()}")
    if os.path.exists(out):
        failures.append("a failed run wrote its output file")
    if failures:
        sys.exit("\n".join(failures))
    print(f"memory limits hold and estimates are within 10 % on {R} rank(s)")


if __name__ == "__main__":
    main()
