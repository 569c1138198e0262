#!/usr/bin/env python3
"""`einrel calibrate` at 2 ranks writes a machine file of positive, finite rates that `--machine` reads; the
plan's estimated seconds follow the rates (a machine 10x slower at flops estimates a compute-bound product
at least 5x slower); malformed machine files fail with one line naming the file. The rates' values depend on
the machine and are not checked beyond being plausible (latency under 1 s, rates above 1e6 per second)."""
import argparse
import json
import math
import os
import sys

import check_common

RATES = ("latency_seconds", "seconds_per_byte", "file_seconds_per_byte", "flops_per_second",
         "memory_bytes_per_second")
GRAPH = "input A f64[384,384]\ninput B f64[384,384]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n"


def run(cmd, cwd):
    return check_common.run_watched(cmd, timeout=240, cwd=cwd)


def estimate(args, d, machine):
    p = run([args.einrel, "plan", "g.ein", "--procs", "2", "--format", "json", "--machine", machine], d)
    return json.loads(p.stdout)["estimated_seconds"] if p.returncode == 0 else None


def main():
    args = check_common.parse_args(argparse.ArgumentParser())
    d, failures = args.work_dir, []
    with open(os.path.join(d, "g.ein"), "w") as f:
        f.write(GRAPH)
    p = run([args.mpiexec, "-n", "2", args.einrel, "calibrate", "--output", "m.json", "--reps", "3"], d)
    if p.returncode != 0:
        return check_common.finish([f"calibrate failed ({p.returncode}): {p.stdout} {p.stderr}"], "calibrate")
    print(p.stdout)
    machine = json.load(open(os.path.join(d, "m.json")))
    for rate in RATES:
        x = machine.get(rate)
        ok = isinstance(x, (int, float)) and math.isfinite(x) and x > 0
        ok = ok and (x < 1 if rate == "latency_seconds" else True)
        ok = ok and (1 / x > 1e6 if rate.endswith("seconds_per_byte") else True)
        ok = ok and (x > 1e6 if rate.endswith("per_second") else True)
        if not ok:
            failures.append(f"{rate} = {x} is not a plausible rate")
    half = machine.get("gemm_half_rate_dimension")  # the dimension where a call runs at half the rate
    if not (isinstance(half, (int, float)) and 0 <= half <= 4 * 768):
        failures.append(f"gemm_half_rate_dimension = {half} is not plausible")
    call = machine.get("call_seconds")  # a kernel call's own cost, besides its flops
    if not (isinstance(call, (int, float)) and 0 <= call < 1e-3):
        failures.append(f"call_seconds = {call} is not plausible")
    if machine.get("num_ranks") != 2:
        failures.append(f"num_ranks {machine.get('num_ranks')}, expected 2")

    if estimate(args, d, "m.json") is None:
        failures.append("einrel plan --machine m.json failed on the file calibrate wrote")

    # The model's response to the flop rate and to d0, on the calibrated compute rates with every other cost
    # made negligible: the product is compute-bound only where its flops cost more than its calls, messages
    # and reads (two ranks time-sharing one GPU measure hundreds of microseconds per call).
    compute = dict(machine, latency_seconds=1e-9, seconds_per_byte=1e-15, file_seconds_per_byte=1e-15,
                   call_seconds=0.0, memory_bytes_per_second=1e15)
    for name, rates in (("compute.json", compute),
                        ("slow.json", dict(compute, flops_per_second=machine["flops_per_second"] / 10))):
        with open(os.path.join(d, name), "w") as f:
            json.dump(rates, f)
    base, slower = estimate(args, d, "compute.json"), estimate(args, d, "slow.json")
    print(f"estimated seconds: calibrated flop rate {base}, flops / 10 {slower}")
    if base is None or slower is None or not slower >= 5 * base:
        failures.append(f"a 10x slower flop rate estimates {slower} s against {base} s")

    # Small contraction calls cost more as d0 grows: the 384-cube product cut in 8 (p = 8, calls of 96 x 192
    # x 192 at most) against one call per rank (p = 2).
    def finer(machine_file):
        p = run([args.einrel, "plan", "g.ein", "--procs", "8", "--ranks", "2", "--format", "json", "--machine",
                 machine_file], d)
        return json.loads(p.stdout)["estimated_seconds"] if p.returncode == 0 else None
    for d0, name in ((0, "flat.json"), (256, "steep.json")):
        with open(os.path.join(d, name), "w") as f:
            json.dump(dict(compute, gemm_half_rate_dimension=d0), f)
    flat, steep = finer("flat.json"), finer("steep.json")
    print(f"estimated seconds at p = 8: d0 = 0 {flat}, d0 = 256 {steep}")
    if flat is None or steep is None or not steep > 1.5 * flat:
        failures.append(f"d0 = 256 estimates {steep} s for small calls against {flat} s with d0 = 0")

    for name, text, expected in (
            ("unknown", '{"latency_seconds": 1e-6, "bandwidth": 3}', "unknown rate 'bandwidth'"),
            ("negative", '{"flops_per_second": -1}', "'flops_per_second' must be positive"),
            ("not_json", 'latency_seconds = 1', "expected '{'"),
            ("string", '{"flops_per_second": "fast"}', "expected a number")):
        path = os.path.join(d, name + ".json")
        with open(path, "w") as f:
            f.write(text)
        p = run([args.einrel, "plan", "g.ein", "--procs", "2", "--machine", path], d)
        lines = [line for line in p.stderr.splitlines() if line.startswith("einrel: error:")]
        ok = p.returncode == 1 and len(lines) == 1 and expected in lines[0] and path in lines[0]
        print(f"machine file {name}: exit {p.returncode}, {lines} {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"machine file {name}: exit {p.returncode}, stderr {p.stderr!r}")
    p = run([args.einrel, "plan", "g.ein", "--machine", "missing.json"], d)
    if p.returncode != 1 or "cannot open machine file 'missing.json'" not in p.stderr:
        failures.append(f"missing machine file: exit {p.returncode}, stderr {p.stderr!r}")
    return check_common.finish(failures, "einrel calibrate and --machine")


if __name__ == "__main__":
    sys.exit(main())
