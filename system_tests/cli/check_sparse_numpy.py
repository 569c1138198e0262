#!/usr/bin/env python3
"""Runs `mpiexec.mpich -n R einrel run` on random block-sparse graphs (docs/sparse.md) and checks, at one R:
- every output against numpy on the dense equivalent (absent blocks zero), for random masks of densities
  5-50 % over random block grids, the shapes given as mask datasets, as norms datasets, or found with
  --drop-zero-blocks; an input's elements in blocks its mask calls absent are garbage in the file and must
  read as zero;
- the run report: floats moved between ranks equal to the dry run's prediction;
- with --sparse-output, each sparse output's mask next to it, and the output zero outside it;
- that peak block bytes and tuples shrink with density: the same product at 10 % against its dense run."""
import argparse
import json
import os
import sys

import h5py
import numpy as np

import check_common


def cuts(n, parts):
    """The block starts of einrel's even grid (the first n % parts blocks one larger), and n."""
    q, r = divmod(n, parts)
    return [b * q + min(b, r) for b in range(parts + 1)]


def tile_cuts(n, tile):
    """The block starts of blocks of edge `tile` (the last one shorter), and n."""
    return list(range(0, n, tile)) + [n]


def expand(mask, shape, tile=None):
    """The element mask of a block mask over the even grid of `shape`, or over its blocks of edge `tile`."""
    out = mask
    for d, n in enumerate(shape):
        c = tile_cuts(n, tile) if tile else cuts(n, mask.shape[d])
        out = np.repeat(out, np.diff(c), axis=d)
    return out


# (name, graph text with {S} where an input is sparse, inputs {name: (labels, sparse)}, outputs {name: numpy
# over the inputs}). A map applies to each joined element, before the aggregation (docs/graph-format.md).
CASES = [
    ("matmul", "input A f64[{i},{k}]{S}\ninput B f64[{k},{j}]{S}\nC = einsum(\"ik,kj->ij\", A, B)\noutput C\n",
     {"A": ("ik", True), "B": ("kj", True)}, {"C": lambda v: v["A"] @ v["B"]}),
    ("chain_relu_transpose",
     "input A f64[{i},{k}]{S}\ninput B f64[{k},{j}]{S}\ninput C f64[{j},{l}]{S}\n"
     "AB = einsum(\"ik,kj->ij\", A, B)\nABC = einsum(\"ij,jl->il\", AB, C, map=relu)\nT = einsum(\"il->li\", ABC)\n"
     "output T\n",
     {"A": ("ik", True), "B": ("kj", True), "C": ("jl", True)},
     {"T": lambda v: np.maximum((v["A"] @ v["B"])[:, :, None] * v["C"][None, :, :], 0).sum(axis=1).T}),
    ("four_index", "input T f64[{a},{b},{i},{j}]{S}\ninput V f64[{c},{d},{a},{b}]{S}\n"
     "R = einsum(\"abij,cdab->cdij\", T, V)\noutput R\n",
     {"T": ("abij", True), "V": ("cdab", True)}, {"R": lambda v: np.einsum("abij,cdab->cdij", v["T"], v["V"])}),
    ("sparse_dense_mixed",
     "input A f64[{i},{k}]{S}\ninput W f64[{k},{j}]\ninput D f64[{i},{j}]{S}\n"
     "H = einsum(\"ik,kj->ij\", A, W)\nE = einsum(\"ij,ij->ij\", H, D)\nF = einsum(\"ij,ij->ij\", H, D, join=add)\n"
     "G = einsum(\"ij->j\", E, map=exp)\nM = einsum(\"ij->i\", F, agg=max)\noutput E, G, M\n",
     {"A": ("ik", True), "W": ("kj", False), "D": ("ij", True)},
     {"E": lambda v: (v["A"] @ v["W"]) * v["D"], "G": lambda v: np.exp((v["A"] @ v["W"]) * v["D"]).sum(axis=0),
      "M": lambda v: ((v["A"] @ v["W"]) + v["D"]).max(axis=1)}),
    ("reductions", "input A f64[{i},{j}]{S}\ninput B f64[{i},{j}]{S}\n"
     "P = einsum(\"ij,ij->ij\", A, B)\ns = einsum(\"ij->i\", P)\nn = einsum(\"ij->j\", A, map=square)\noutput P, s, n\n",
     {"A": ("ij", True), "B": ("ij", True)},
     {"P": lambda v: v["A"] * v["B"], "s": lambda v: (v["A"] * v["B"]).sum(axis=1),
      "n": lambda v: (v["A"] ** 2).sum(axis=0)}),
    # The union (docs/sparse.md): element-wise joins of two zeros that are zero keep the blocks either operand
    # has, an aggregation by sum included; their products stay sparse.
    ("union", "input A f64[{i},{j}]{S}\ninput B f64[{i},{j}]{S}\ninput C f64[{j},{k}]{S}\n"
     "D = einsum(\"ij,ij->ij\", A, B, join=sub, map=scale(2))\nM = einsum(\"ij,ij->ij\", A, B, join=max)\n"
     "q = einsum(\"ij,ij->i\", A, B, join=sqdiff)\nP = einsum(\"ij,jk->ik\", D, C)\n"
     "S = einsum(\"ik,ik->ik\", P, P, join=add, map=neg)\noutput D, M, q, S\n",
     {"A": ("ij", True), "B": ("ij", True), "C": ("jk", True)},
     {"D": lambda v: 2 * (v["A"] - v["B"]), "M": lambda v: np.maximum(v["A"], v["B"]),
      "q": lambda v: ((v["A"] - v["B"]) ** 2).sum(axis=1), "S": lambda v: -4 * (v["A"] - v["B"]) @ v["C"]}),
    # Regression (issue 41): a dense input whose first reader skips absent blocks is whole for its later readers.
    ("dense_input_read_after_sparse",
     "input Z f64[{i},{j}]{S}\ninput W f64[{i},{j}]\nP = einsum(\"ij,ij->ij\", Z, W)\n"
     "Q = einsum(\"ij->ij\", W, map=scale(2))\nU = einsum(\"ij->j\", W, agg=max)\noutput P, Q, U\n",
     {"Z": ("ij", True), "W": ("ij", False)},
     {"P": lambda v: v["Z"] * v["W"], "Q": lambda v: 2 * v["W"], "U": lambda v: v["W"].max(axis=0)}),
]
# The outputs of CASES that are dense (a vertex computed dense, docs/sparse.md): every other output is sparse
# and gets its mask with --sparse-output, absent blocks or not.
DENSE_OUTPUTS = {"G", "M", "Q", "U"}


def make_case(rng, case, source):
    """Random extents, masks and data; the HDF5 input file. Returns the graph text, the dense values and the
    einrel options that bind the shapes."""
    name, text, inputs, outputs = case
    labels = sorted({c for lab, _ in inputs.values() for c in lab})
    dims = {c: int(rng.integers(12, 60)) for c in labels}
    if name == "four_index":
        dims = {c: int(rng.integers(6, 14)) for c in labels}
    values, options = {}, []
    path = os.path.join(args.work_dir, f"{name}_{source}.h5")
    with h5py.File(path, "w") as f:
        for tensor, (lab, sparse) in inputs.items():
            shape = tuple(dims[c] for c in lab)
            x = rng.uniform(-1, 1, shape)
            if sparse:
                parts = tuple(int(rng.integers(1, min(n, 6) + 1)) for n in shape)
                density = rng.uniform(0.05, 0.5)
                mask = rng.uniform(0, 1, parts) < density
                if source == "drop":  # the file holds the zeros; einrel finds them in blocks of edge `tile`
                    tile = 4
                    mask = rng.uniform(0, 1, tuple(-(-n // tile) for n in shape)) < density
                    x = x * expand(mask, shape, tile)
                    f[tensor] = x
                else:
                    f[tensor] = x  # garbage where the mask says absent: the mask is the truth
                    if source == "norms":
                        f[tensor + ".norms"] = np.where(mask, rng.uniform(0.5, 2, parts), 0.0)
                    else:
                        f[tensor + ".mask"] = mask.astype(np.uint8)
                    x = x * expand(mask, shape)
            else:
                f[tensor] = x
            values[tensor] = x
    if source == "drop":
        options += ["--drop-zero-blocks", "--sparse-tile", "4"]
    graph = text.replace("{S}", " sparse").format(**dims)
    return graph, values, path, options


def run(graph_text, stem, extra):
    graph = os.path.join(args.work_dir, stem + ".ein")
    with open(graph, "w") as g:
        g.write(graph_text)
    report, out = os.path.join(args.work_dir, stem + ".json"), os.path.join(args.work_dir, stem + "_out.h5")
    cmd = [args.mpiexec, "-n", str(args.ranks), args.einrel, "run", graph, "--report", report, "--output", out] + extra
    done = check_common.run_watched(cmd, timeout=240)
    if done.returncode != 0:
        return None, None, f"{stem}: exit {done.returncode}: {done.stderr.strip()[-400:]}"
    with open(report) as r:
        return json.load(r), out, None


ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--seed", type=int, default=32)
args = check_common.parse_args(ap)
rng = np.random.default_rng(args.seed + args.ranks)
failures = []
runs = 0
for case in CASES:
    for source in ("mask", "norms", "drop"):
        graph, values, path, options = make_case(rng, case, source)
        stem = f"{case[0]}_{source}"
        report, out, error = run(graph, stem, ["--input", path, "--sparse-output"] + options)
        runs += 1
        if error:
            failures.append(error)
            continue
        if report["floats_moved"] != report["predicted_cost"]:
            failures.append(f"{stem}: moved {report['floats_moved']} floats, the dry run said {report['predicted_cost']}")
        with h5py.File(out) as f:
            for name, want in case[3].items():
                got, ref = f[name][()], want(values)
                err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-300)
                if not err <= 1e-12:
                    failures.append(f"{stem}: output {name} differs from numpy by {err:.3e} (relative)")
                if name not in DENSE_OUTPUTS and name + ".mask" not in f:
                    failures.append(f"{stem}: sparse output {name} has no mask with --sparse-output")
                if name + ".mask" in f:
                    mask = f[name + ".mask"][()].astype(bool)
                    if np.any(got[~expand(mask, got.shape)] != 0):
                        failures.append(f"{stem}: output {name} is non-zero outside its mask")
        print(f"{stem}: R = {args.ranks}, moved {report['floats_moved']}, plan by {report.get('proposed_by')}")

# Regression (issue 41): a sparse output gets its mask even when no block of it is absent.
full = "input A f64[9,7] sparse\ninput B f64[7,5] sparse\nC = einsum(\"ik,kj->ij\", A, B)\noutput C\n"
path = os.path.join(args.work_dir, "all_present.h5")
with h5py.File(path, "w") as f:
    f["A"], f["B"] = rng.uniform(-1, 1, (9, 7)), rng.uniform(-1, 1, (7, 5))
    f["A.mask"], f["B.mask"] = np.ones((2, 2), np.uint8), np.ones((3, 1), bool)
report, out, error = run(full, "all_present", ["--input", path, "--sparse-output"])
if error:
    failures.append(error)
else:
    with h5py.File(out) as f:
        if "C.mask" not in f or not f["C.mask"][()].all():
            failures.append("all_present: the sparse output C has no mask, or an absent block, with --sparse-output")

# Regression (issue 64, fuzz_cli.py seed 7202): under --memory-limit the plan slices a dense 3-operand einsum, whose
# passes the schedule keeps as blocks of their own; --sparse-output wrote a mask for the dense output.
# The limit that slices it depends on R (more ranks, less per rank): the largest of a few that `einrel plan` slices.
sliced = "input K f64[4,8,8]\nv2 = einsum(\"SND,QDN,QND->QS\", K, K, K)\noutput v2\n"
sliced_graph = os.path.join(args.work_dir, "sliced_plan.ein")
with open(sliced_graph, "w") as g:
    g.write(sliced)
limit = None
for bytes_per_rank in (3000, 2000, 1500, 1000):
    planned = check_common.run_watched([args.einrel, "plan", sliced_graph, "--ranks", str(args.ranks),
                                        "--memory-limit", str(bytes_per_rank), "--format", "json"], timeout=120)
    if planned.returncode == 0 and "sliced" in json.loads(planned.stdout).get("proposed_by", ""):
        limit = bytes_per_rank
        break
report, out, error = (None, None, f"sliced_dense: no memory limit of 3000 ... 1000 bytes slices the plan at R = "
                                  f"{args.ranks}") if limit is None else \
    run(sliced, "sliced_dense", ["--random", "1", "--memory-limit", str(limit), "--sparse-output"])
if error:
    failures.append(error)
else:
    with h5py.File(out) as f:
        if sorted(f.keys()) != ["v2"] or "sliced" not in report.get("proposed_by", ""):
            failures.append(f"sliced_dense: the output file holds {sorted(f.keys())}, plan by "
                            f"{report.get('proposed_by')}: a dense output has no mask")

# Regression (issue 41, found by the differential fuzzer): an input that is an output, held on several ranks by
# a reader that replicates it, made the NaN count throw on some ranks ("block 0 has 2 sites, not one owner") and
# hang the others (at --procs 2 on 2 and 3 ranks).
graph = ("input K f64[11]\ninput M f64[4,11] sparse\nv1 = einsum(\"F,iF\", K, M, join=sub, map=shift(-3))\n"
         "v2 = einsum(\"C,f->fC\", v1, v1, join=min)\noutput v2, K\n")
path = os.path.join(args.work_dir, "input_output.h5")
k, m = rng.uniform(-1, 1, 11), rng.uniform(-1, 1, (4, 11))
with h5py.File(path, "w") as f:
    f["K"], f["M"], f["M.mask"] = k, m, np.ones((1, 1), np.int64)
report, out, error = run(graph, "input_output", ["--input", path, "--procs", "2"])
if error:
    failures.append(error)
else:
    s = (k[None, :] - m - 3).sum(axis=1)
    with h5py.File(out) as f:
        if not (np.array_equal(f["K"][()], k) and np.allclose(f["v2"][()], np.minimum.outer(s, s).T, rtol=1e-12)):
            failures.append("input_output: K or v2 differs from numpy")

# Regression (issue 41): a mask holds non-negative integers (bool included) and norms non-negative numbers;
# anything else is one error line naming the dataset and the block, and no output.
bad_values = [("mask", np.array([[1, -1], [0, 1]], np.int32), "-1"), ("mask", np.array([[1, 0.5], [0, 1]]), "0.5"),
              ("mask", np.array([[1, np.nan], [0, 1]]), "NaN"), ("norms", np.array([[1, np.nan], [0, 1]]), "NaN"),
              ("norms", np.array([[1, 2], [-0.5, 1]]), "-0.5")]
for k, (kind, values, shown) in enumerate(bad_values):
    path = os.path.join(args.work_dir, f"bad_{kind}_{k}.h5")
    with h5py.File(path, "w") as f:
        f["A"], f["B"] = np.ones((6, 6)), np.ones((6, 6))
        f["A." + kind] = values
    graph = "input A f64[6,6] sparse\ninput B f64[6,6]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n"
    stem = f"bad_{kind}_{k}"
    report, out, error = run(graph, stem, ["--input", path])
    errors = [l for l in (error or "").splitlines() if "einrel: error:" in l]
    if not error or len(errors) != 1 or f"A.{kind}" not in errors[0] or shown not in errors[0]:
        failures.append(f"{stem}: expected one error line naming A.{kind} and {shown}, got: {error}")
    if os.path.exists(os.path.join(args.work_dir, stem + "_out.h5")):
        failures.append(f"{stem}: an output file was written on failure")

# Memory and tuples shrink with density: a 512² product at 10 % against the same product dense.
sparse = "input A f64[512,512] sparse\ninput B f64[512,512] sparse\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n"
dense = sparse.replace(" sparse", "")
rs, _, e1 = run(sparse, "shrink_sparse", ["--random", "3", "--random-density", "0.1", "--sparse-tile", "64", "--check"])
rd, _, e2 = run(dense, "shrink_dense", ["--random", "3", "--check"])
failures += [e for e in (e1, e2) if e]
if rs and rd:
    peak = lambda r: max(x["peak_block_bytes"] for x in r["ranks"])
    tuples = lambda r: sum(x["tuples"] for x in r["ranks"])
    print(f"512² at 10 %: peak block bytes {peak(rs)} against {peak(rd)} dense")
    if not peak(rs) <= 0.3 * peak(rd):
        failures.append(f"10 % dense product holds {peak(rs)} bytes at its peak, dense {peak(rd)}")
    if rs["floats_moved"] > rd["floats_moved"] and args.ranks > 1:
        failures.append(f"10 % dense product moves {rs['floats_moved']} floats, dense {rd['floats_moved']}")
    if rs["floats_moved"] != rs["predicted_cost"]:
        failures.append("sparse product: floats moved differ from the dry run")
sys.exit(check_common.finish(failures, f"block-sparse runs at R = {args.ranks} ({runs} graphs)"))
