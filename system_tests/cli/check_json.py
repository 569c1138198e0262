#!/usr/bin/env python3
"""Runs one einrel command and checks fields of the JSON it produces, instead of columns of its text.

    check_json.py --einrel E [--mpiexec M --ranks N] --work-dir D --expect EXPR [--expect EXPR ...] -- ARGS...

ARGS is the command line after `einrel` (`plan G ...`, `reshard ...` or `run G ...`). A `plan` or `reshard`
gets `--format json` and its standard output is the document; a `run` gets `--report D/report.json`, which is the document. Each EXPR is a
Python expression over `j` (the document) and `node(name)` (a plan's or report's vertex by name) that must be
true, e.g. "j['procs'] == 4" or "node('C')['partition'] == {'i': 2, 'j': 2, 'k': 2}". Exit 0 when every
expression holds; otherwise each failed one and the document are printed, exit 1.
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--einrel", required=True)
    parser.add_argument("--mpiexec")
    parser.add_argument("--ranks", type=int, default=0)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("args", nargs=argparse.REMAINDER)
    o = parser.parse_args()
    args = o.args[1:] if o.args[:1] == ["--"] else o.args
    if not args or args[0] not in ("plan", "reshard", "run") or not o.expect:
        parser.error("give --expect and a plan, reshard or run command after --")
    os.makedirs(o.work_dir, exist_ok=True)
    report = os.path.abspath(os.path.join(o.work_dir, "report.json"))
    if os.path.exists(report):
        os.remove(report)
    command = [o.einrel] + args + (["--report", report] if args[0] == "run" else ["--format", "json"])
    if o.ranks:
        command = [o.mpiexec, "-n", str(o.ranks)] + command
    p = subprocess.run(command, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"einrel failed ({p.returncode}): {' '.join(command)}\n{p.stdout}{p.stderr}")
        return 1
    j = json.loads(open(report).read() if args[0] == "run" else p.stdout)
    nodes = j.get("nodes", j.get("vertices", []))

    def node(name):
        found = [n for n in nodes if n["name"] == name]
        if not found:
            raise KeyError(f"no vertex '{name}'")
        return found[0]

    failed = []
    for e in o.expect:
        try:
            if not eval(e, {"j": j, "node": node}):
                failed.append(e)
        except Exception as x:  # a missing field is a failed expectation, not a crash
            failed.append(f"{e}  ({type(x).__name__}: {x})")
    for e in failed:
        print(f"FAILED: {e}")
    if failed:
        print(json.dumps({k: v for k, v in j.items() if k not in ("nodes", "vertices")}, indent=1))
        return 1
    print(f"ok: {len(o.expect)} expectation(s) on {' '.join(args)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
