"""What the check scripts share: their common options and fresh work directory, commands run under a watch for
hangs, `einrel plan` as JSON, and their summary."""
import json
import os
import shutil
import signal
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


def _descendants(pid):
    """The processes below `pid` (read from /proc), children before their children."""
    children = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        found.append(p)
        todo += children.get(p, [])
    return found


def _stacks(pid):
    """What a hung run's processes are doing: each process's name and, where gdb is installed, every thread's
    backtrace."""
    lines = []
    for p in _descendants(pid):
        try:
            name = open(f"/proc/{p}/comm").read().strip()
        except OSError:
            continue
        lines.append(f"--- process {p} ({name})")
        if shutil.which("gdb") and not name.startswith(("mpiexec", "hydra")):
            try:
                bt = subprocess.run(["gdb", "-batch", "-p", str(p), "-ex", "thread apply all bt"],
                                    capture_output=True, text=True, timeout=30)
                lines += [line for line in bt.stdout.splitlines() if line.startswith(("#", "Thread"))]
            except subprocess.TimeoutExpired:
                lines.append("(gdb took more than 30 s)")
    return "\n".join(lines)


def run_watched(cmd, timeout=240, cwd=None, env=None):
    """subprocess.run(cmd, capture_output=True, text=True) with a limit: a command still running after `timeout`
    seconds is not raised on but reported, so that the check names the case that hung and goes on: printed at once
    with every process's stacks, taken before the command and every process below it are killed, and said in the
    stderr of the result, whose returncode is then None."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    try:
        out, err = p.communicate(timeout=timeout)
        return subprocess.CompletedProcess(cmd, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        hung = f"HUNG: still running after {timeout} s, killed: {' '.join(cmd)}"
        print(hung, flush=True)  # first, in case the test's own limit ends it while the stacks are taken
        stacks = _stacks(p.pid)
        for q in [p.pid] + _descendants(p.pid):  # MPI launchers may put the ranks in groups of their own
            try:
                os.kill(q, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out, err = p.communicate()
        print(stacks, flush=True)
        err += f"\n{hung} (its stacks printed above)\n"
        return subprocess.CompletedProcess(cmd, None, out, err)


def plan_json(einrel, graph, options, launcher=()):
    """`einrel plan GRAPH --format json OPTIONS` (under `launcher`, if any) parsed; raises when it fails."""
    cmd = list(launcher) + [einrel, "plan", graph, "--format", "json"] + list(options)
    r = run_watched(cmd)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def finish(failures, what):
    """Prints each failure and the count; the exit status of the check."""
    for fail in failures:
        print("FAIL", fail)
    print(f"{what}: {len(failures)} failures")
    return 1 if failures else 0
