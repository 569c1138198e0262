#!/usr/bin/env python3
"""Whole-process planning time: `einrel plan` on one product (the floor any process costs), the 1000-product chain of 512² matrices and on 1 and 8
transformer layers (written by `einrel_planner_bench --write-graphs`), at p = 64 on one rank (--procs 64), on
64 ranks (--ranks 64) and on 4096 ranks (--procs 64 --ranks 4096), median of --reps runs. With --baseline OTHER_EINREL the two binaries alternate run by
run and the plans' JSON must agree (a before/after comparison); the peer of a planning time is the same
planner's earlier build, since no other system plans these graphs.

  python3 perf_tests/planner_process_bench.py --einrel build/drivers/einrel \\
      --graph-tool build/perf_tests/einrel_planner_bench [--baseline OLD/einrel] [--reps 5]
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time

# The floor: one product, whose planning takes next to nothing, shows what any `einrel plan` process costs
# (loading, MPI's start-up and finalization, output).
ONE_PRODUCT = "input A f32[512,512]\ninput B f32[512,512]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n"
CASES = [("one_product.ein", ["--procs", "64"]), ("chain1000_512.ein", ["--procs", "64"]), ("chain1000_512.ein", ["--ranks", "64"]),
         ("chain1000_512.ein", ["--procs", "64", "--ranks", "4096"]), ("transformer1.ein", ["--procs", "64"]),
         ("transformer1.ein", ["--ranks", "64"]), ("transformer1.ein", ["--procs", "64", "--ranks", "4096"]),
         ("transformer8.ein", ["--procs", "64"]), ("transformer8.ein", ["--ranks", "64"])]


def plan(einrel, graph, args):
    start = time.perf_counter()
    out = subprocess.run([einrel, "plan", graph, *args, "--format", "json"], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"{einrel} plan {graph} {' '.join(args)} failed: {out.stderr.strip()}")
    return seconds, out.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--graph-tool", required=True, help="einrel_planner_bench")
    ap.add_argument("--baseline", help="another einrel to compare with, run alternately")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([a.graph_tool, "--write-graphs", work], check=True)
        with open(f"{work}/one_product.ein", "w") as f:
            f.write(ONE_PRODUCT)
        print("graph,options,einrel_seconds" + (",baseline_seconds,speedup,same_plan" if a.baseline else ""))
        for name, args in CASES:
            graph = f"{work}/{name}"
            times, base, plans = [], [], set()
            for _ in range(a.reps):
                seconds, text = plan(a.einrel, graph, args)
                times.append(seconds)
                if a.baseline:
                    seconds_b, text_b = plan(a.baseline, graph, args)
                    base.append(seconds_b)
                    plans.add(text == text_b)
            row = f"{name},{' '.join(args)},{statistics.median(times):.3f}"
            if a.baseline:
                b = statistics.median(base)
                row += f",{b:.3f},{b / statistics.median(times):.2f},{all(plans)}"
            print(row, flush=True)


if __name__ == "__main__":
    main()
