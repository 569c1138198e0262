#!/usr/bin/env python3
"""The check scripts' watch for hangs (check_common.run_watched), on a stand-in for a hung run: ranks that
sleep under mpiexec past the limit. Checks that the result says it hung, lists every rank, and that no
process of it is left once it returns; and that a command within its limit comes back as subprocess.run's.

    check_watch.py --mpiexec M
"""
import argparse
import contextlib
import io
import os
import sys
import time

from check_common import run_watched

# A marker in the command line, to find what is left of the run.
SLEEPER = "import time; time.sleep(120)  # check_watch"


def left_over():
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if SLEEPER.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    args = ap.parse_args()
    failures = []
    began = time.monotonic()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        r = run_watched([args.mpiexec, "-n", "3", sys.executable, "-c", SLEEPER], timeout=3)
    took = time.monotonic() - began
    print(printed.getvalue())
    if r.returncode is not None or "HUNG: still running after 3 s" not in r.stderr:
        failures.append(f"a hang not reported: returncode {r.returncode}, stderr {r.stderr!r}")
    ranks = sum(1 for line in printed.getvalue().splitlines() if line.startswith("--- process") and "python" in line)
    if ranks != 3:
        failures.append(f"{ranks} ranks listed, not 3")
    if took > 60:
        failures.append(f"returned after {took:.0f} s")
    time.sleep(0.5)
    if left_over():
        failures.append(f"processes left running: {left_over()}")
    r = run_watched([args.mpiexec, "-n", "2", sys.executable, "-c", "print('done')"], timeout=60)
    if r.returncode != 0 or r.stdout.count("done") != 2:  # the ranks' lines may interleave
        failures.append(f"a quick run: returncode {r.returncode}, stdout {r.stdout!r}")
    for fail in failures:
        print("FAIL", fail)
    print(f"watch for hangs: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
