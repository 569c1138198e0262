#!/usr/bin/env python3
"""Inputs for llama_layer.ein (or any graph written by builders::llama_layer): reads the shapes from the
graph's `input` lines and writes one root dataset per input into an HDF5 file.

  python3 llama_inputs.py llama_layer.ein in.h5 [--seed N]
  mpiexec.mpich -n 2 einrel run llama_layer.ein --input in.h5 --output out.h5

x is N(0, 1); projections and FFN weights N(0, 1/fan_in); norm gains 1 + N(0, 0.1); cos and sin are
LLaMA's rotary tables (theta = 10000, the rotate-half pairing of column i with i + d/2); rot is the signed
permutation with (q @ rot) = concat(-q[d/2:], q[:d/2]); mask is causal (0 where t <= s, -1e9 elsewhere).
"""
import argparse
import sys

import h5py
import numpy as np

from graph_inputs import numpy_dtype, read_inputs


def rope_tables(s, d, theta=10000.0):
    freq = theta ** (-np.arange(0, d, 2) / d)
    angles = np.outer(np.arange(s), freq)
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles), np.sin(angles)


def rotate_half_matrix(d):
    rot = np.zeros((d, d))
    half = d // 2
    for e in range(half):
        rot[e + half, e] = -1.0
        rot[e, e + half] = 1.0
    return rot


def make(inputs, seed):
    rng = np.random.default_rng(seed)
    s, a = inputs["x"][1]
    _, h, d = inputs["WQ"][1]
    values = {"x": rng.normal(0, 1, (s, a))}
    for name in ("WQ", "WK", "WV", "WO"):
        values[name] = rng.normal(0, a ** -0.5, (a, h, d))
    values["cos"], values["sin"] = rope_tables(s, d)
    values["rot"] = rotate_half_matrix(d)
    values["mask"] = np.where(np.arange(s)[None, :] <= np.arange(s)[:, None], 0.0, -1e9)
    values["attn_norm"] = 1 + rng.normal(0, 0.1, a)
    values["ffn_norm"] = 1 + rng.normal(0, 0.1, a)
    f = inputs["W_gate"][1][1]
    values["W_gate"] = rng.normal(0, a ** -0.5, (a, f))
    values["W_up"] = rng.normal(0, a ** -0.5, (a, f))
    values["W_down"] = rng.normal(0, f ** -0.5, (f, a))
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("output")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    inputs = read_inputs(args.graph)
    values = make(inputs, args.seed)
    unknown = sorted(set(inputs) - set(values))
    if unknown:
        sys.exit(f"llama_inputs.py: {args.graph} has inputs this generator does not know: {', '.join(unknown)}")
    with h5py.File(args.output, "w") as fh:
        for name, (dtype, shape) in inputs.items():
            v = values[name]
            if v.shape != shape:
                sys.exit(f"llama_inputs.py: {name} is {list(shape)} in {args.graph}, the layer makes it {list(v.shape)}")
            fh[name] = v.astype(numpy_dtype(dtype))


if __name__ == "__main__":
    main()
