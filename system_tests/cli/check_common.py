"""What the numpy check scripts share: their common options and fresh work directory, and their summary."""
import os
import shutil


def parse_args(ap):
    """Adds --einrel, --mpiexec and --work-dir to `ap`, parses the command line and empties the work directory."""
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    return args


def finish(failures, what):
    """Prints each failure and the count; the exit status of the check."""
    for fail in failures:
        print("FAIL", fail)
    print(f"{what}: {len(failures)} failures")
    return 1 if failures else 0
