#!/usr/bin/env python3
"""`einrel iterate` with a block-sparse carried value against numpy: McWeeny purification P <- 3 P^2 - 2 P^3
(drivers/examples/mcweeny.ein at order N) of a random gapped banded matrix (docs/sparse.md "Iterations").
- at each of --ranks, with --screen EPS: converges (|P^2 - P|_F^2 below the tolerance), the result equals numpy's
  dense iteration of as many steps within the bound docs/sparse.md states for a screened iteration, e per step
  equals numpy's, and the carried density stays below the start's band;
- P's shape is re-derived after every step: the output holds P with its mask over the tiles, nothing outside
  it, and every tile whose norm in numpy's result is at least 10 EPS inside it;
- the same graph with P dense (computed dense, no screening) gives the same result;
- checkpointed at step K on 2 ranks and resumed on 2 and 3: bit-identical to the uninterrupted 2-rank run on 2
  ranks, within rounding on 3 (another plan sums in another order)."""
import argparse
import json
import os
import sys

import h5py
import numpy as np

import check_common

N, TILE, EPS = 384, 16, 1e-9


def start_matrix(rng):
    """A symmetric banded H with a staggered diagonal (a gap around the middle of its spectrum), scaled into
    P0 = (I - (H - mu) / r) / 2 with mu in the gap and r the spectral radius of H - mu: P0's spectrum is in
    [0, 1], its states below mu above 1/2."""
    H = np.diag(0.8 * (1 - 2 * (np.arange(N) % 2)))
    for d in range(1, 7):
        off = rng.uniform(-1, 1, N - d) * np.exp(-d / 2)
        H += np.diag(off, d) + np.diag(off, -d)
    w = np.linalg.eigvalsh(H)
    mu = 0.5 * (w[N // 2 - 1] + w[N // 2])
    r = max(abs(w[0] - mu), abs(w[-1] - mu))
    return 0.5 * (np.eye(N) - (H - mu * np.eye(N)) / r), w[N // 2] - w[N // 2 - 1]


def numpy_iteration(P, steps):
    """McWeeny's step as P^2 (3 I - 2 P), and |P^2 - P|_F^2 of each P it reads."""
    es, three = [], 3 * np.eye(N)
    for _ in range(steps):
        square = P @ P
        es.append(float(np.linalg.norm(square - P) ** 2))
        P = square @ (three - 2 * P)
    return P, es


def tile_norms(P):
    t = N // TILE
    return np.sqrt((P.reshape(t, TILE, t, TILE) ** 2).sum(axis=(1, 3)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1,2,3")
    args = check_common.parse_args(ap)
    rng = np.random.default_rng(11)
    P0, gap = start_matrix(rng)
    data = os.path.join(args.work_dir, "P0.h5")
    with h5py.File(data, "w") as f:
        f["P"] = P0
    path = lambda name: os.path.join(args.work_dir, name)
    # The example graph at order N, P sparse or dense.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "drivers", "examples", "mcweeny.ein")) as g:
        example = g.read()
    for sparse in (True, False):
        with open(path(f"mcweeny_{sparse}.ein"), "w") as g:
            g.write(example.replace("input P f64[4096,4096] sparse", f"input P f64[{N},{N}]" + (" sparse" if sparse else "")))
    failures = []

    def iterate(ranks, extra, sparse=True):
        cmd = [args.mpiexec, "-n", str(ranks), args.einrel, "iterate", path(f"mcweeny_{sparse}.ein"), "--carry",
               "P=P_next", "--input", data] + (["--drop-zero-blocks", "--sparse-tile", str(TILE), "--screen", repr(EPS)]
                                               if sparse else []) + extra
        return check_common.run_watched(cmd, timeout=300)

    def read(name):
        with h5py.File(path(name), "r") as f:
            return np.array(f["P"]), (np.array(f["P.mask"]).astype(bool) if "P.mask" in f else None)

    start_density = float((tile_norms(P0) > 0).mean())
    print(f"P0: {N}² with tiles of {TILE}, tile density {start_density:.3f}, gap {gap:.3f}")
    full2 = None
    for r in (int(x) for x in args.ranks.split(",")):
        p = iterate(r, ["--steps", "40", "--until", "e", "--tolerance", "1e-16", "--output", path(f"full{r}.h5"),
                        "--report", path(f"full{r}.json")])
        if p.returncode != 0:
            failures.append(f"np{r}: iterate failed: {p.stderr.strip()}")
            continue
        rep = json.load(open(path(f"full{r}.json")))
        steps = rep["steps_run"]
        got, mask = read(f"full{r}.h5")
        want, es = numpy_iteration(P0, steps)
        # docs/sparse.md "Iterations": each step's screening and truncation change P by less than
        # (products screened + tiles dropped) EPS in Frobenius norm; McWeeny neither grows nor damps the part of
        # an error that mixes occupied and empty states, so the errors add up over the steps.
        bound = EPS * N * steps
        err = float(np.linalg.norm(got - want))
        if not rep["converged"] or not err <= bound:
            failures.append(f"np{r}: converged {rep['converged']} after {steps} steps, |P - P_numpy|_F = {err:.3g} "
                            f"(bound {bound:.3g})")
        if not np.allclose(rep["until_values"], es, rtol=1e-6, atol=1e3 * EPS):
            failures.append(f"np{r}: e per step {rep['until_values'][:4]}... numpy {es[:4]}...")
        density = rep["carried_density_per_step"]["P"]
        norms = tile_norms(got)
        if mask is None or mask.shape != (N // TILE, N // TILE):
            failures.append(f"np{r}: the output has no mask over P's tiles")
        elif np.any(norms[~mask] != 0) or np.any(~mask & (tile_norms(want) >= 10 * EPS)):
            failures.append(f"np{r}: the result's mask drops a tile numpy holds above 10 EPS, or holds data outside")
        if not (max(density) < 1 and rep["replanned_each_step"] and len(density) == steps):
            failures.append(f"np{r}: densities {density}")
        if r == 2:
            full2 = got
        print(f"np{r}: converged after {steps} steps, |P - P_numpy|_F = {err:.2e} (bound {bound:.1e}), density "
              f"{density[0]:.3f} -> {max(density):.3f} (max) -> {density[-1]:.3f}, e {es[-1]:.2e}")

    # The same iteration with P dense: the engine computes every block, no screening.
    p = iterate(2, ["--steps", "12", "--output", path("dense.h5")], sparse=False)
    if p.returncode != 0:
        failures.append(f"dense: iterate failed: {p.stderr.strip()}")
    else:
        sparse_run = iterate(2, ["--steps", "12", "--output", path("sparse12.h5")])
        dense = read("dense.h5")[0]
        err = float(np.linalg.norm(dense - read("sparse12.h5")[0])) if sparse_run.returncode == 0 else np.inf
        if not err <= EPS * N * 12:
            failures.append(f"dense and sparse P differ after 12 steps by {err:.3g}")
        print(f"12 steps with P dense against P sparse: |difference|_F = {err:.2e}")

    # Checkpoint at step 6 on 2 ranks, resume to step 12 on 2 and 3.
    p = iterate(2, ["--steps", "6", "--checkpoint", path("ck.h5"), "--checkpoint-every", "6"])
    if p.returncode != 0:
        failures.append(f"checkpointed run failed: {p.stderr.strip()}")
    elif os.path.exists(path("sparse12.h5")):
        with h5py.File(path("ck.h5"), "r") as f:
            if sorted(f.keys()) != ["P", "P.mask", "iterate_step"]:
                failures.append(f"the checkpoint holds {sorted(f.keys())}")
        uninterrupted = read("sparse12.h5")[0]
        for r in (2, 3):
            p = iterate(r, ["--steps", "12", "--restart", path("ck.h5"), "--output", path(f"resumed{r}.h5")])
            if p.returncode != 0:
                failures.append(f"resume on {r} ranks failed: {p.stderr.strip()}")
                continue
            got = read(f"resumed{r}.h5")[0]
            same = np.array_equal(got, uninterrupted)
            err = float(np.abs(got - uninterrupted).max())
            if (r == 2 and not same) or not err <= 1e-12:
                failures.append(f"resumed on {r} ranks: {err:.3g} from the uninterrupted 2-rank run")
            print(f"checkpoint at step 6 on 2 ranks, resumed on {r}: "
                  f"{'bit-identical' if same else f'within {err:.2e}'} to the uninterrupted run")
    return check_common.finish(failures, f"einrel iterate with a block-sparse carried value at ranks {args.ranks}")


if __name__ == "__main__":
    sys.exit(main())
