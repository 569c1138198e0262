#!/usr/bin/env python3
"""`einrel run` on HDF5 files as h5py writes them, against docs/cli.md "HDF5 files", at each of --ranks:
- read as numpy reads them: chunked datasets with gzip, shuffle and fletcher32, big-endian floats, chunks never
  written (they read as the dataset's fill value), datasets in groups reached through --bind, soft links and
  external links, datasets with attributes, files written with h5py's newest format (libver="latest");
- refused with one error line naming the reason: an integer dataset or one of another float size than the graph
  declares; a filter this HDF5 cannot decode (h5py's own lzf), named; a dangling link;
- written: an existing output file is replaced whole (nothing of the old one is left); an output in a directory
  that does not exist fails with the OS's reason and leaves no file; with --full-disk (root, a 1 MiB tmpfs mounted
  for the test), an output larger than the disk fails with "No space left on device" and leaves no file."""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

import check_common

GRAPH = """input A f64[{n},{m}]
input B f64[{m},{k}]
C = einsum("ij,jk->ik", A, B)
output C
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1,2,3")
    ap.add_argument("--full-disk", action="store_true", help="mount a 1 MiB tmpfs (needs root) and fill it")
    args = check_common.parse_args(ap)
    n, m, k = 37, 29, 23
    rng = np.random.default_rng(5)
    A, B = rng.uniform(-1, 1, (n, m)), rng.uniform(-1, 1, (m, k))
    path = lambda name: os.path.join(args.work_dir, name)
    graph = path("product.ein")
    with open(graph, "w") as fh:
        fh.write(GRAPH.format(n=n, m=m, k=k))
    failures = []

    def run(ranks, sources, output):
        cmd = [args.mpiexec, "-n", str(ranks), args.einrel, "run", graph, *sources, "--output", output]
        return check_common.run_watched(cmd, timeout=300)

    # Files a user's producer may write, each with the A and B that numpy reads from it.
    fill = 7.5
    A_unwritten = A.copy()
    A_unwritten[16:, 8:16] = fill  # chunk rows 2.., chunk column 1 never written
    with h5py.File(path("chunked.h5"), "w") as fh:
        fh.create_dataset("A", data=A, chunks=(8, 8), compression="gzip", compression_opts=9, shuffle=True,
                          fletcher32=True)
        fh.create_dataset("B", data=B.astype(">f8"), chunks=(5, 23))  # big-endian
        fh["A"].attrs["units"] = "m"
    with h5py.File(path("sparse_chunks.h5"), "w") as fh:
        d = fh.create_dataset("A", shape=(n, m), dtype="f8", chunks=(8, 8), fillvalue=fill)
        d[:16, :] = A[:16, :]
        for col in range(0, m, 8):
            if col != 8:
                d[16:, col:col + 8] = A[16:, col:col + 8]
        fh["B"] = B
    with h5py.File(path("external.h5"), "w") as fh:
        fh.create_group("data/run1")["B"] = B
    with h5py.File(path("linked.h5"), "w", libver="latest") as fh:
        fh.create_group("raw")["A"] = A
        fh["A"] = h5py.SoftLink("/raw/A")
        fh["B"] = h5py.ExternalLink(path("external.h5"), "/data/run1/B")
    readable = [
        ("chunked, gzip, shuffle, fletcher32, big-endian", ["--input", path("chunked.h5")], A),
        ("chunks never written read as the fill value", ["--input", path("sparse_chunks.h5")], A_unwritten),
        ("soft and external links", ["--input", path("linked.h5")], A),
        ("--bind into groups and through an external link",
         ["--bind", f"A={path('linked.h5')}:/raw/A", "--bind", f"B={path('linked.h5')}:/B"], A),
    ]
    for r in (int(x) for x in args.ranks.split(",")):
        for what, sources, a in readable:
            out = path(f"out-{r}.h5")
            p = run(r, sources, out)
            if p.returncode != 0:
                failures.append(f"np{r} {what}: failed: {p.stderr.strip()}")
                continue
            with h5py.File(out, "r") as fh:
                got = np.array(fh["C"])
            err = float(np.abs(got - a @ B).max())
            if not err <= 1e-12:
                failures.append(f"np{r} {what}: C differs from numpy's by {err:.3g}")
            print(f"np{r} {what}: C within {err:.1e} of numpy's")

    # Refused, with the reason: one error line on every rank's behalf, no output.
    with h5py.File(path("integer.h5"), "w") as fh:
        fh["A"], fh["B"] = (A * 100).astype(np.int32), B
    with h5py.File(path("float32.h5"), "w") as fh:
        fh["A"], fh["B"] = A.astype(np.float32), B
    with h5py.File(path("lzf.h5"), "w") as fh:
        fh.create_dataset("A", data=A, chunks=(8, 8), compression="lzf")
        fh["B"] = B
    with h5py.File(path("dangling.h5"), "w") as fh:
        fh["A"] = h5py.SoftLink("/nowhere/A")
        fh["B"] = h5py.ExternalLink(path("missing.h5"), "/B")
    refused = [
        ("an integer dataset", ["--input", path("integer.h5")], "dataset 'A' is integer32 but the graph declares f64"),
        ("a float32 dataset", ["--input", path("float32.h5")], "dataset 'A' is float32 but the graph declares f64"),
        ("an lzf dataset", ["--input", path("lzf.h5")], "HDF5 filter 'lzf' (id 32000)"),
        ("a dangling soft link", ["--input", path("dangling.h5")], "'A' is a soft link to '/nowhere/A', which leads to no object"),
        ("a dangling external link", ["--bind", f"A={path('chunked.h5')}:/A", "--bind", f"B={path('dangling.h5')}:/B"],
         "'B' is an external link to '" + path('missing.h5') + ":/B', which leads to no object"),
    ]
    for r in (1, 3):
        for what, sources, expected in refused:
            out = path("refused.h5")
            p = run(r, sources, out)
            lines = [line for line in p.stderr.splitlines() if line.startswith("einrel: error:")]
            if p.returncode == 0 or len(lines) != 1 or expected not in lines[0] or os.path.exists(out):
                failures.append(f"np{r} {what}: status {p.returncode}, stderr {p.stderr.strip()!r}, "
                                f"expected one line with {expected!r}")
            else:
                print(f"np{r} {what}: {lines[0]}")

    # An existing output file is replaced whole.
    old = path("existing.h5")
    with h5py.File(old, "w") as fh:
        fh["C"], fh["stale"] = np.zeros((3, 3)), np.ones(4)
    p = run(2, ["--input", path("chunked.h5")], old)
    with h5py.File(old, "r") as fh:
        names = sorted(fh.keys())
    if p.returncode != 0 or names != ["C"]:
        failures.append(f"an existing output: status {p.returncode}, now holds {names}: {p.stderr.strip()}")
    else:
        print("an existing output file is replaced whole: it holds only C")

    # Where the output cannot be written: the OS's reason, and no file.
    missing = path("no/such/dir/C.h5")
    p = run(2, ["--input", path("chunked.h5")], missing)
    lines = [line for line in p.stderr.splitlines() if line.startswith("einrel: error:")]
    if p.returncode == 0 or len(lines) != 1 or "No such file or directory" not in lines[0]:
        failures.append(f"an output in a missing directory: status {p.returncode}, stderr {p.stderr.strip()!r}")
    else:
        print(f"an output in a missing directory: {lines[0]}")
    if args.full_disk:
        failures += full_disk(args, run, path)
    return check_common.finish(failures, f"einrel on HDF5 files as h5py writes them, ranks {args.ranks}")


def full_disk(args, run, path):
    """An output larger than a 1 MiB tmpfs: "No space left on device", no file left there."""
    big = path("big.ein")
    with open(big, "w") as fh:
        fh.write('input A f64[400,400]\nC = einsum("ij->ij", A, map=scale(2))\noutput C\n')
    mount = tempfile.mkdtemp(prefix="einrel-full-")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount], capture_output=True).returncode != 0:
        print("--full-disk: cannot mount a tmpfs here (not root?); skipped")
        return []
    try:
        cmd = [args.mpiexec, "-n", "2", args.einrel, "run", big, "--random", "1", "--output", f"{mount}/C.h5"]
        p = check_common.run_watched(cmd, timeout=300)
        lines = [line for line in p.stderr.splitlines() if line.startswith("einrel: error:")]
        left = os.listdir(mount)
        if p.returncode == 0 or len(lines) != 1 or "No space left on device" not in lines[0] or left:
            return [f"a full disk: status {p.returncode}, stderr {p.stderr.strip()!r}, left {left}"]
        print(f"a full disk: {lines[0]}")
        return []
    finally:
        subprocess.run(["umount", mount])
        os.rmdir(mount)


if __name__ == "__main__":
    sys.exit(main())
