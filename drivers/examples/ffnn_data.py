#!/usr/bin/env python3
"""Data and initial parameters for ffnn.ein (or any graph of its shape: inputs X [n,f], Y [n,k], W1 [f,h],
b1 [h], W2 [h,k], b2 [k], read from the graph's `input` lines), like the paper's sparse classifier: each row of X
has about --density of its features nonzero (uniform in (0, 1]), the label of a row is the arg-max of X times a
fixed random sparse teacher (so there is something to learn), W1 and W2 are He-initialised for the expected
number of nonzero inputs, biases zero.

  python3 ffnn_data.py ffnn.ein data.h5 [--seed N] [--density 0.02]
  mpiexec.mpich -n 2 einrel train ffnn.ein --loss L --params W1,b1,W2,b2 --lr 0.5 --steps 5 \\
      --input data.h5 --output params.h5
"""
import argparse
import sys

import h5py
import numpy as np

from graph_inputs import numpy_dtype, read_inputs


def make(inputs, seed, density):
    rng = np.random.default_rng(seed)
    n, f = inputs["X"][1]
    h, k = inputs["W2"][1]
    x = np.where(rng.random((n, f)) < density, rng.uniform(0, 1, (n, f)), 0.0)
    x[np.arange(n), rng.integers(0, f, n)] = 1.0  # no empty row
    teacher = np.where(rng.random((f, k)) < 0.05, rng.normal(0, 1, (f, k)), 0.0)
    y = np.eye(k)[np.argmax(x @ teacher, axis=1)]
    active = max(1.0, density * f)
    return {"X": x, "Y": y, "W1": rng.normal(0, np.sqrt(2 / active), (f, h)), "b1": np.zeros(h),
            "W2": rng.normal(0, np.sqrt(2 / h), (h, k)), "b2": np.zeros(k)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("output")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--density", type=float, default=0.02)
    args = ap.parse_args()
    inputs = read_inputs(args.graph)
    missing = sorted({"X", "Y", "W1", "b1", "W2", "b2"} - set(inputs))
    if missing:
        sys.exit(f"ffnn_data.py: {args.graph} lacks the inputs {', '.join(missing)}")
    values = make(inputs, args.seed, args.density)
    with h5py.File(args.output, "w") as fh:
        for name, (dtype, shape) in inputs.items():
            if name not in values or values[name].shape != shape:
                sys.exit(f"ffnn_data.py: input {name} {list(shape)} does not fit a two-layer classifier")
            fh[name] = values[name].astype(numpy_dtype(dtype))


if __name__ == "__main__":
    main()
