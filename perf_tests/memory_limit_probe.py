#!/usr/bin/env python3
"""How far --memory-limit goes below what a plan needs: for each graph and rank count R, `einrel plan --ranks R`
gives the requested plan's estimated peak E; then `mpiexec.mpich -n R einrel run G --random 1 --memory-limit L`
runs at L = E/2, E/4, E/8. A run that starts must stay within L as measured (peak_allocated_bytes) and within
10 % of its estimate on every rank; a refusal is the one-line error naming the smallest peak the search
reached and the vertex where it falls. Prints one CSV row per (graph, R, L) and exits non-zero on a run over
its limit or off its estimate.

  python3 perf_tests/memory_limit_probe.py --einrel build/drivers/einrel \\
      [--graphs drivers/examples/four_index.ein ...] [--ranks 1 2 3 4] [--mpiexec mpiexec.mpich]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--graphs", nargs="*",
                    default=[g for g in sorted(glob.glob("drivers/examples/*.ein"))
                             if not re.search(r"^input .*\bsparse\b", open(g).read(), re.M)])
    ap.add_argument("--ranks", nargs="*", type=int, default=[1, 2, 3, 4])
    ap.add_argument("--fractions", nargs="*", type=int, default=[2, 4, 8])
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    bad = 0
    print("graph,ranks,limit,outcome,estimated,allocated,smallest_peak,at_vertex")
    for graph in a.graphs:
        for R in a.ranks:
            p = subprocess.run([a.einrel, "plan", graph, "--ranks", str(R), "--format", "json"], capture_output=True,
                               text=True, check=True)
            needed = max(r["estimated_peak_allocated_bytes"] for r in json.loads(p.stdout)["ranks"])
            for f in a.fractions:
                limit = needed // f
                with tempfile.TemporaryDirectory() as work:
                    q = subprocess.run([a.mpiexec, "-n", str(R), a.einrel, "run", graph, "--random", "1",
                                        "--memory-limit", str(limit), "--report", f"{work}/r.json"],
                                       capture_output=True, text=True, env=env)
                    name = os.path.basename(graph)
                    if q.returncode == 0:
                        ranks = json.load(open(f"{work}/r.json"))["ranks"]
                        estimated = max(r["estimated_peak_allocated_bytes"] for r in ranks)
                        allocated = max(r["peak_allocated_bytes"] for r in ranks)
                        off = any(not 0.9 <= r["peak_allocated_bytes"] / r["estimated_peak_allocated_bytes"] <= 1.1
                                  for r in ranks)
                        bad += allocated > limit or off
                        print(f"{name},{R},{limit},ran,{estimated},{allocated},,", flush=True)
                    else:
                        m = re.search(r"the closest \(.*\) needs (\d+) bytes on rank \d+ at vertex '(\w+)'", q.stderr)
                        if not m:
                            sys.exit(f"{name} on {R} ranks under {limit}: {q.stderr.strip()}")
                        print(f"{name},{R},{limit},refused,,,{m.group(1)},{m.group(2)}", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
