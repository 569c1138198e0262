#!/usr/bin/env python3
"""Peak resident memory per rank of `einrel run` on an N×N f64 matmul read from HDF5, at several rank
counts, against the same run on one rank (the peer). Each rank runs under `/usr/bin/time -f %M`, so the
figure is the kernel's own accounting of the process, independent of einrel. Prints CSV
ranks,max_rank_peak_mib,ratio_to_1_rank,wall_seconds,floats_moved,max_rel_error (the output against
numpy's A @ B, computed in this process).

  OMP_PROC_BIND=false python3 perf_tests/memory_by_ranks.py --einrel build/drivers/einrel --n 4096 --ranks 1 2 4
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    args = ap.parse_args()
    args.einrel = os.path.abspath(args.einrel)
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as work:
        graph = os.path.join(work, "mm.ein")
        with open(graph, "w") as f:
            f.write(f"input A f64[{args.n},{args.n}]\ninput B f64[{args.n},{args.n}]\n"
                    "C = einsum(\"ij,jk->ik\", A, B)\noutput C\n")
        a, b = rng.uniform(-1, 1, (args.n, args.n)), rng.uniform(-1, 1, (args.n, args.n))
        with h5py.File(os.path.join(work, "in.h5"), "w") as f:
            f["A"], f["B"] = a, b
        expected = a @ b
        del a, b
        print("ranks,max_rank_peak_mib,ratio_to_1_rank,wall_seconds,floats_moved,max_rel_error")
        base = None
        for R in args.ranks:
            env = dict(os.environ, OMP_NUM_THREADS=str(max(1, args.cores // R)))
            out = os.path.join(work, f"out{R}.h5")
            start = time.perf_counter()
            # One file per rank (PMI_RANK from the launcher): the ranks' stderr lines would interleave.
            timed = (f'exec /usr/bin/time -f %M -o peak.$PMI_RANK "{args.einrel}" run mm.ein --input in.h5 '
                     f'--output "{out}" --report r.json')
            p = subprocess.run([args.mpiexec, "-n", str(R), "sh", "-c", timed], cwd=work, capture_output=True,
                               text=True, env=env)
            wall = time.perf_counter() - start
            if p.returncode != 0:
                sys.exit(f"einrel failed at R={R}:\n{p.stdout}\n{p.stderr}")
            peaks = [int(open(os.path.join(work, f"peak.{r}")).read().split()[-1]) for r in range(R)]
            peak = max(peaks) / 1024
            base = base or peak
            with h5py.File(out, "r") as f:
                err = np.max(np.abs(f["C"][()] - expected)) / np.max(np.abs(expected))
            report = json.load(open(os.path.join(work, "r.json")))
            print(f"{R},{peak:.1f},{peak / base:.3f},{wall:.2f},{report['floats_moved']},{err:.1e}", flush=True)
            os.remove(out)


if __name__ == "__main__":
    main()
