#!/usr/bin/env python3
"""The two-level machine model from outside (docs/planner.md "Nodes"): `einrel calibrate --ranks-per-node 2` on 4
ranks writes both levels and the node size; a machine file of two levels changes the plan's estimate only where
ranks share nodes (`--ranks-per-node`, simulated), a file without node rates plans as before; `einrel plan` and
`einrel run` agree on the estimate under a simulated map, and a run without one finds its nodes (here one node
of every rank); a run planned under two levels computes what one rank computes (--check); malformed node
sizes fail with one line."""
import argparse
import json
import os
import sys

import check_common

GRAPH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "drivers", "examples", "attention.ein")
TWO = {"latency_seconds": 1e-5, "seconds_per_byte": 1e-9, "node_latency_seconds": 5e-7,
       "node_seconds_per_byte": 5e-11}


def run(cmd, cwd):
    return check_common.run_watched(cmd, timeout=240, cwd=cwd)


def main():
    args = check_common.parse_args(argparse.ArgumentParser())
    d, failures = args.work_dir, []
    files = {"two.json": TWO, "one.json": {k: TWO[k] for k in ("latency_seconds", "seconds_per_byte")}}
    for name, rates in files.items():
        with open(os.path.join(d, name), "w") as f:
            json.dump(rates, f)

    p = run([args.mpiexec, "-n", "4", args.einrel, "calibrate", "--reps", "1", "--ranks-per-node", "2", "--output",
             "m.json"], d)
    print(p.stdout)
    if p.returncode != 0:
        failures.append(f"calibrate --ranks-per-node 2 failed ({p.returncode}): {p.stderr}")
    else:
        m = json.load(open(os.path.join(d, "m.json")))
        for rate in ("latency_seconds", "node_latency_seconds", "seconds_per_byte", "node_seconds_per_byte"):
            if not (isinstance(m.get(rate), float) and 0 < m[rate] < 1):
                failures.append(f"calibrate wrote {rate} = {m.get(rate)}")
        if m.get("ranks_per_node") != 2:
            failures.append(f"calibrate wrote ranks_per_node {m.get('ranks_per_node')}, expected 2")
        if "within a node of 2 ranks" not in p.stdout:
            failures.append("calibrate's summary does not give the node's rates")

    def plan(*options):
        return check_common.plan_json(args.einrel, GRAPH, ["--ranks", "4"] + list(options))

    seconds = {}
    for label, options in (("none", []), ("one-level file", ["--machine", os.path.join(d, "one.json")]),
                           ("one-level file, nodes of 2", ["--machine", os.path.join(d, "one.json"),
                                                           "--ranks-per-node", "2"]),
                           ("two-level file", ["--machine", os.path.join(d, "two.json")]),
                           ("two-level file, a rank a node", ["--machine", os.path.join(d, "two.json"),
                                                              "--ranks-per-node", "1"]),
                           ("two-level file, nodes of 2", ["--machine", os.path.join(d, "two.json"),
                                                           "--ranks-per-node", "2"]),
                           ("two-level file, one node", ["--machine", os.path.join(d, "two.json"),
                                                         "--ranks-per-node", "4"])):
        j = plan(*options)
        seconds[label] = j["estimated_seconds"]
        print(f"plan {label}: estimated {j['estimated_seconds']} s, ranks_per_node {j['ranks_per_node']}")
    one = seconds["one-level file"]
    for label in ("one-level file, nodes of 2", "two-level file", "two-level file, a rank a node"):
        if seconds[label] != one:
            failures.append(f"{label}: {seconds[label]} s, expected the one-level {one} s")
    if not seconds["two-level file, one node"] < seconds["two-level file, nodes of 2"] < one:
        failures.append(f"cheaper links within nodes do not lower the estimate: {seconds}")

    for label, extra, expected in (("nodes of 2", ["--ranks-per-node", "2"], seconds["two-level file, nodes of 2"]),
                                   ("nodes MPI finds", [], seconds["two-level file, one node"])):
        p = run([args.mpiexec, "-n", "4", args.einrel, "run", GRAPH, "--random", "3", "--check", "--machine",
                 "two.json", "--report", "r.json"] + extra, d)
        if p.returncode != 0:
            failures.append(f"run under two levels, {label}: exit {p.returncode}: {p.stderr}")
            continue
        got = json.load(open(os.path.join(d, "r.json")))["estimated_seconds"]
        print(f"run {label}: estimated {got} s (plan: {expected} s)")
        if got != expected:
            failures.append(f"run under two levels, {label}: estimated {got} s, plan {expected} s")

    for name, text, expected in (("zero", '{"ranks_per_node": 0}', "'ranks_per_node' must be a whole number"),
                                 ("half", '{"ranks_per_node": 2.5}', "'ranks_per_node' must be a whole number")):
        path = os.path.join(d, name + ".json")
        with open(path, "w") as f:
            f.write(text)
        p = run([args.einrel, "plan", GRAPH, "--machine", path], d)
        lines = [line for line in p.stderr.splitlines() if line.startswith("einrel: error:")]
        if not (p.returncode == 1 and len(lines) == 1 and expected in lines[0] and path in lines[0]):
            failures.append(f"machine file {name}: exit {p.returncode}, stderr {p.stderr!r}")
    p = run([args.einrel, "plan", GRAPH, "--ranks-per-node", "0"], d)
    if p.returncode != 1 or "ranks-per-node" not in p.stderr:
        failures.append(f"--ranks-per-node 0: exit {p.returncode}, stderr {p.stderr!r}")
    return check_common.finish(failures, "two-level machine model")


if __name__ == "__main__":
    sys.exit(main())
