#!/usr/bin/env python3
"""McWeeny purification of a block-sparse density matrix with `einrel iterate` (docs/sparse.md "Iterations").

The Hamiltonian is a 1-D chain of n sites with a staggered on-site energy (+delta, -delta) and hoppings t
between neighbours: an insulator with a gap of 2*delta around zero, whose density matrix (the projector on the
states below zero) decays exponentially away from the diagonal. Purification starts from
P0 = I/2 - H / (2 (delta + 2 t)) (the spectrum of H lies in [-(delta + 2 t), delta + 2 t], so P0's lies in
[0, 1], states below zero above 1/2) and repeats P <- 3 P^2 - 2 P^3, which drives every eigenvalue above 1/2
to 1 and every one below to 0 (McWeeny 1960; Palser and Manolopoulos 1998 for the grand-canonical start).

einrel runs the step graph drivers/examples/mcweeny.ein at order n (P2 = P P, P3 = P2 P, P_next = 3 P2 - 2 P3, and e = |P2 - P|_F^2, the
idempotency error) with P block-sparse on tiles of --tile: --screen EPS skips block products whose norm bound
is below EPS, and after each step the tiles of P whose norm is below EPS are dropped before the next step is
planned for the new shape. The iteration stops once e < --tolerance.

  python3 drivers/examples/purification.py --einrel build/drivers/einrel --n 4096 --ranks 2 --numpy --dense-steps 2

prints e and P's tile density per step, with --numpy the difference from numpy's dense iteration of the same
number of steps (no screening), and with --dense-steps K the time of K steps of the same graph with P dense
against the sparse steps' median. --json writes every figure."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcweeny.ein")


def mcweeny_graph(n, sparse):
    """drivers/examples/mcweeny.ein for a P of order n, declared sparse or not."""
    with open(EXAMPLE) as g:
        text = g.read()
    return text.replace("input P f64[4096,4096] sparse", f"input P f64[{n},{n}]" + (" sparse" if sparse else ""))


def hamiltonian_band(n, delta, t):
    """The chain's H as (diagonal, off-diagonal) vectors."""
    return delta * (1 - 2 * (np.arange(n) % 2)), np.full(n - 1, t)


def start(n, delta, t):
    """P0 = I/2 - H / (2 (delta + 2 t)) as (diagonal, off-diagonal)."""
    diag, off = hamiltonian_band(n, delta, t)
    scale = 0.5 / (delta + 2 * t)
    return 0.5 - scale * diag, -scale * off


def write_start(path, n, tile, delta, t):
    """P0 into `path` as dataset /P (chunked by tiles, zero where not written) with its tile mask /P.mask."""
    diag, off = start(n, delta, t)
    tiles = -(-n // tile)
    if n % tile:
        raise SystemExit(f"--n {n} is no multiple of --tile {tile}")
    mask = np.zeros((tiles, tiles), np.uint8)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("P", (n, n), "f8", chunks=(tile, tile), fillvalue=0.0)
        for b in range(tiles):
            lo, hi = b * tile, (b + 1) * tile
            block = np.diag(diag[lo:hi]) + np.diag(off[lo:hi - 1], 1) + np.diag(off[lo:hi - 1], -1)
            d[lo:hi, lo:hi] = block
            mask[b, b] = 1
            if b + 1 < tiles:  # the hopping across the tiles' edge
                d[hi - 1, hi] = off[hi - 1]
                d[hi, hi - 1] = off[hi - 1]
                mask[b, b + 1] = mask[b + 1, b] = 1
        f["P.mask"] = mask


def numpy_iteration(n, delta, t, steps):
    """The same iteration dense in numpy: P after `steps` steps and e per step."""
    diag, off = start(n, delta, t)
    P = np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)
    es = []
    for _ in range(steps):
        P2 = P @ P
        es.append(float(((P2 - P) ** 2).sum()))
        P = 3 * P2 - 2 * (P2 @ P)
    return P, es


def run_iterate(args, work, sparse, steps, until):
    graph = os.path.join(work, f"mcweeny_{'sparse' if sparse else 'dense'}.ein")
    with open(graph, "w") as g:
        g.write(mcweeny_graph(args.n, sparse))
    report = os.path.join(work, f"report_{'sparse' if sparse else 'dense'}.json")
    out = os.path.join(work, "P.h5")
    cmd = [args.mpiexec, "-n", str(args.ranks), args.einrel, "iterate", graph, "--carry", "P=P_next", "--input",
           os.path.join(work, "P0.h5"), "--steps", str(steps), "--report", report]
    if sparse:
        cmd += ["--screen", repr(args.screen), "--output", out]
    if until:
        cmd += ["--until", "e", "--tolerance", repr(args.tolerance)]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", str(max(1, 2 // args.ranks))),
               OMP_PROC_BIND="false")
    start_time = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start_time
    if done.returncode != 0:
        raise SystemExit(f"einrel iterate failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    with open(report) as r:
        return json.load(r), out, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--n", type=int, default=4096, help="sites (matrix order)")
    ap.add_argument("--tile", type=int, default=128, help="tile edge of P's shape")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--delta", type=float, default=1.0, help="staggered on-site energy (half the gap)")
    ap.add_argument("--hopping", type=float, default=1.0)
    ap.add_argument("--screen", type=float, default=1e-7, help="--screen EPS of einrel")
    ap.add_argument("--tolerance", type=float, default=1e-18, help="stop once |P^2 - P|_F^2 is below")
    ap.add_argument("--steps", type=int, default=40, help="at most this many steps")
    ap.add_argument("--numpy", action="store_true", help="compare with numpy's dense iteration")
    ap.add_argument("--dense-steps", type=int, default=0, help="time this many steps with P dense")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--work-dir")
    args = ap.parse_args()
    work = args.work_dir or tempfile.mkdtemp(prefix="purification-")
    os.makedirs(work, exist_ok=True)
    write_start(os.path.join(work, "P0.h5"), args.n, args.tile, args.delta, args.hopping)

    report, out, wall = run_iterate(args, work, True, args.steps, True)
    steps = report["steps_run"]
    density = report["carried_density_per_step"]["P"]
    seconds = report["seconds_per_step"]
    print(f"McWeeny purification of a {args.n}² chain (tiles of {args.tile}) on {args.ranks} rank(s), "
          f"--screen {args.screen:g}: {'converged' if report['converged'] else 'not converged'} after {steps} steps")
    print("step  density of P   |P²-P|²_F      seconds  (planning)")
    for k in range(steps):
        print(f"{k + 1:4d}  {density[k]:12.4f}  {report['until_values'][k]:12.4e}  {seconds[k]:9.4f}  "
              f"({report['planning_seconds_per_step'][k]:.4f})")
    figures = {"n": args.n, "tile": args.tile, "ranks": args.ranks, "screen": args.screen, "steps": steps,
               "converged": report["converged"], "density_per_step": density, "e_per_step": report["until_values"],
               "seconds_per_step": seconds, "planning_seconds_per_step": report["planning_seconds_per_step"],
               "wall_seconds": wall}
    with h5py.File(out) as f:
        P = np.array(f["P"])
    figures["trace"] = float(np.trace(P))
    print(f"trace of P: {figures['trace']:.6f} (electrons: {args.n // 2})")
    if args.numpy:
        ref, es = numpy_iteration(args.n, args.delta, args.hopping, steps)
        diff = P - ref
        figures["numpy"] = {"max_abs": float(np.abs(diff).max()),
                            "frobenius_relative": float(np.linalg.norm(diff) / np.linalg.norm(ref)),
                            "e_per_step": es}
        print(f"against numpy's dense iteration of {steps} steps: max |P - P_numpy| = {figures['numpy']['max_abs']:.3e},"
              f" |P - P_numpy|_F / |P_numpy|_F = {figures['numpy']['frobenius_relative']:.3e}")
    if args.dense_steps:
        dense, _, _ = run_iterate(args, work, False, args.dense_steps, False)
        d = statistics.median(dense["seconds_per_step"])
        s = statistics.median(seconds)
        figures["dense_seconds_per_step"] = dense["seconds_per_step"]
        figures["dense_over_sparse"] = d / s
        print(f"dense einrel: {d:.3f} s per step (median of {args.dense_steps}); sparse: {s:.4f} s per step "
              f"(median of {steps}); dense / sparse = {d / s:.1f}")
    if args.json:
        with open(args.json, "w") as j:
            json.dump(figures, j, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
