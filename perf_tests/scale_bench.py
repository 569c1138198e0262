#!/usr/bin/env python3
"""Planning at supercomputer scale (docs/scale.md): `einrel plan GRAPH --procs N --ranks N --format json` as a whole
process, one thread, for N = 64 ... 65 536 on the 6-product chain, the FFNN, the LLaMA layer and a block-sparse chain.
Per row: the planning seconds (median of --reps), the process's peak resident memory, the plan's estimated seconds,
its busiest rank's floats sent and received, and the lower-bound certificate's elements touched beyond an even share
against the least any plan needs (docs/planner.md "Lower-bound certificate"): how far the plan is from the bound.

With --nodes FILE (perf_tests/machines/two_level.json: the default network, links within a node of 64 ranks 2.5x
faster and 4x quicker), each row also gives the estimated seconds of the plan chosen under that two-level machine
(docs/planner.md "Nodes"), from one more process.

With --baseline OTHER_EINREL the two binaries alternate run by run, and the plans must agree (same partitions and
estimate): the peer of a planning time is the earlier build, since no other system plans these graphs; COSMA's
and CTF's choices (milliseconds at any P, ../shared/ANCHORS.md) are the bar.

  OMP_NUM_THREADS=1 python3 perf_tests/scale_bench.py --einrel build/drivers/einrel [--max 65536] [--reps 3]
      [--graphs chain,llama] [--baseline OLD/einrel] [--timeout 600] [--nodes perf_tests/machines/two_level.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPHS = {
    "chain": ("perf_tests/graphs/matmul_chain.ein", []),
    "ffnn": ("drivers/examples/ffnn.ein", []),
    "llama": ("drivers/examples/llama_layer.ein", []),
    "sparse": ("drivers/examples/sparse_chain.ein", ["--random", "1", "--random-density", "0.1", "--sparse-tile", "128"]),
}


def plan(einrel, graph, extra, n, timeout):
    """One `einrel plan` process: (seconds, JSON), or None past the timeout."""
    args = [einrel, "plan", os.path.join(ROOT, graph), *extra, "--procs", str(n), "--ranks", str(n), "--format", "json"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return None
    seconds = time.perf_counter() - start
    if child.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {err.strip()}")
    return seconds, json.loads(out)


def peak_mb(einrel, graph, extra, n, timeout):
    """The peak resident memory of one more run, read by /usr/bin/time (its own child's, not the maximum so far)."""
    args = ["/usr/bin/time", "-f", "%M", einrel, "plan", os.path.join(ROOT, graph), *extra, "--procs", str(n),
            "--ranks", str(n), "--format", "json"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    try:
        out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return float("nan")
    return int(out.stderr.strip().splitlines()[-1]) / 1024


def figures(doc):
    ranks = doc.get("ranks", [])
    cert = doc.get("certificate", {})
    return {
        "estimated_seconds": doc["estimated_seconds"],
        "busiest_sent": max((r["floats_sent"] for r in ranks), default=0),
        "busiest_received": max((r["floats_received"] for r in ranks), default=0),
        "touched": cert.get("touched", 0),
        "lower_bound": cert.get("lower_bound", 0),
    }


def plan_key(doc):
    return json.dumps([doc["nodes"], doc["estimated_seconds"]], sort_keys=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--baseline", help="another einrel to compare with, run alternately")
    ap.add_argument("--graphs", default="chain,ffnn,llama,sparse")
    ap.add_argument("--min", type=int, default=64)
    ap.add_argument("--max", type=int, default=65536)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600, help="seconds one run may take; past it the row says so")
    ap.add_argument("--nodes", help="a machine file of two levels: add the estimate of the plan chosen under it")
    a = ap.parse_args()
    head = "graph,N,plan_seconds,peak_mb,estimated_seconds,busiest_sent,busiest_received,touched,lower_bound,ratio"
    head += ",two_level_seconds,two_level_plan_seconds" if a.nodes else ""
    print(head + (",baseline_seconds,baseline_peak_mb,speedup,same_plan" if a.baseline else ""), flush=True)
    for name in a.graphs.split(","):
        graph, extra = GRAPHS[name]
        n = a.min
        skip_baseline = False
        while n <= a.max:
            times, base, same = [], [], True
            doc = None
            for _ in range(a.reps):
                run = plan(a.einrel, graph, extra, n, a.timeout)
                if run is None:
                    break
                times.append(run[0])
                doc = run[1]
                if a.baseline and not skip_baseline:
                    other = plan(a.baseline, graph, extra, n, a.timeout)
                    if other is None:
                        skip_baseline = True
                    else:
                        base.append(other[0])
                        same = same and plan_key(other[1]) == plan_key(doc)
            if doc is None:
                print(f"{name},{n},over {a.timeout:.0f} s", flush=True)
                break
            f = figures(doc)
            ratio = f["touched"] / f["lower_bound"] if f["lower_bound"] else float("nan")
            row = (f"{name},{n},{statistics.median(times):.3f},{peak_mb(a.einrel, graph, extra, n, a.timeout):.0f},"
                   f"{f['estimated_seconds']:.6g},{f['busiest_sent']},{f['busiest_received']},{f['touched']:.0f},"
                   f"{f['lower_bound']:.0f},{ratio:.2f}")
            if a.nodes:
                two = plan(a.einrel, graph, extra + ["--machine", a.nodes], n, a.timeout)
                row += f",{two[1]['estimated_seconds']:.6g},{two[0]:.3f}" if two else ",over,"
            if a.baseline:
                if base:
                    b = statistics.median(base)
                    row += (f",{b:.3f},{peak_mb(a.baseline, graph, extra, n, a.timeout):.0f},"
                            f"{b / statistics.median(times):.2f},{'yes' if same else 'NO'}")
                else:
                    row += ",over,,,"
            print(row, flush=True)
            n *= 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
