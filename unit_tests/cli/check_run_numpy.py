#!/usr/bin/env python3
"""Runs `mpiexec -n R einrel run` on graphs with HDF5 inputs and checks the outputs against numpy.einsum,
the run report's fields, and the error contract for a missing dataset."""
import argparse
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

CASES = [
    # (graph text, {input: (shape, dtype)}, {output: numpy expression over the inputs})
    (
        "input A f64[37,23]\ninput B f64[23,29]\nT = einsum(\"ij,jk->ik\", A, B)\noutput T\n",
        {"A": ((37, 23), np.float64), "B": ((23, 29), np.float64)},
        {"T": lambda v: np.einsum("ij,jk->ik", v["A"], v["B"])},
    ),
    (
        "input X f32[6,5,4]\ninput W f32[4,3]\n"
        "Y = einsum(\"bsi,io->bos\", X, W)\ns = einsum(\"bos->\", Y)\nr = einsum(\"bos\", Y)\noutput Y, s, r\n",
        {"X": ((6, 5, 4), np.float32), "W": ((4, 3), np.float32)},
        {
            "Y": lambda v: np.einsum("bsi,io->bos", v["X"], v["W"]),
            "s": lambda v: np.einsum("bos->", np.einsum("bsi,io->bos", v["X"], v["W"])),
            "r": lambda v: np.einsum("bos", np.einsum("bsi,io->bos", v["X"], v["W"])),
        },
    ),
]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    rng = np.random.default_rng(2024)
    launcher = [args.mpiexec, "-n", str(args.ranks), args.einrel, "run"]
    failures = 0

    for n, (graph, inputs, outputs) in enumerate(CASES):
        d = os.path.join(args.work_dir, f"case{n}")
        os.makedirs(d)
        with open(os.path.join(d, "g.ein"), "w") as f:
            f.write(graph)
        values = {k: rng.uniform(-1, 1, shape).astype(dt) for k, (shape, dt) in inputs.items()}
        with h5py.File(os.path.join(d, "in.h5"), "w") as f:
            for k, v in values.items():
                f[k] = v
        p = run(launcher + ["g.ein", "--input", "in.h5", "--output", "out.h5", "--report", "r.json"], cwd=d)
        if p.returncode != 0:
            print(f"case {n}: einrel failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
            failures += 1
            continue
        with h5py.File(os.path.join(d, "out.h5"), "r") as f:
            for name, expr in outputs.items():
                expected = expr({k: v.astype(np.float64) for k, v in values.items()})
                got = f[name][()]
                tol = 1e-5 if got.dtype == np.float32 else 1e-12
                err = np.max(np.abs(got - expected)) / max(1.0, np.max(np.abs(expected)))
                ok = got.shape == np.shape(expected) and got.dtype == values[next(iter(values))].dtype and err <= tol
                print(f"case {n} output {name}: shape {got.shape} dtype {got.dtype} max rel err {err:.2e} "
                      f"{'ok' if ok else 'FAIL'}")
                failures += not ok
        report = json.load(open(os.path.join(d, "r.json")))
        for key in ("total_seconds", "predicted_cost", "floats_moved", "vertices"):
            if key not in report:
                print(f"case {n}: report lacks '{key}'")
                failures += 1
        for v in report["vertices"]:
            if not {"name", "seconds", "kernel_seconds", "floats_moved"} <= v.keys():
                print(f"case {n}: report vertex lacks fields: {v}")
                failures += 1

    # Bad input files: one error line naming the problem, non-zero exit, nothing written.
    bad_inputs = [
        ("missing", {"A": np.zeros((37, 23))}, "has no dataset 'B'"),
        ("misshaped", {"A": np.zeros((37, 22)), "B": np.zeros((23, 29))}, "'A'"),
        ("mistyped", {"A": np.zeros((37, 23), np.float32), "B": np.zeros((23, 29))}, "'A'"),
    ]
    for name, datasets, expected in bad_inputs:
        d = os.path.join(args.work_dir, name)
        os.makedirs(d)
        with open(os.path.join(d, "g.ein"), "w") as f:
            f.write(CASES[0][0])
        with h5py.File(os.path.join(d, "in.h5"), "w") as f:
            for k, v in datasets.items():
                f[k] = v
        p = run(launcher + ["g.ein", "--input", "in.h5", "--output", "out.h5", "--report", "r.json"], cwd=d)
        lines = p.stderr.strip().splitlines()
        ok = (p.returncode != 0 and len(lines) == 1 and lines[0].startswith("einrel: error:")
              and expected in lines[0] and sorted(os.listdir(d)) == ["g.ein", "in.h5"])
        print(f"{name} input: exit {p.returncode}, stderr {lines}, files {sorted(os.listdir(d))} {'ok' if ok else 'FAIL'}")
        failures += not ok

    print(f"{failures} failure(s) at {args.ranks} rank(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
