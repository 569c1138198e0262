"""What the check scripts share: their common options and fresh work directory, `einrel plan` as JSON, and
their summary."""
import json
import os
import shutil
import subprocess


def parse_args(ap):
    """Adds --einrel, --mpiexec and --work-dir to `ap`, parses the command line and empties the work directory."""
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    return args


def plan_json(einrel, graph, options, launcher=()):
    """`einrel plan GRAPH --format json OPTIONS` (under `launcher`, if any) parsed; raises when it fails."""
    cmd = list(launcher) + [einrel, "plan", graph, "--format", "json"] + list(options)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def finish(failures, what):
    """Prints each failure and the count; the exit status of the check."""
    for fail in failures:
        print("FAIL", fail)
    print(f"{what}: {len(failures)} failures")
    return 1 if failures else 0
