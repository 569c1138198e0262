"""Writes every input of a graph file to an HDF5 file, as `einrel run --input` reads them: one root dataset per
input, named like it, of its dtype and shape, values uniform in [-1, 1) from a seeded generator.

    python3 drivers/examples/random_inputs.py GRAPH.ein OUT.h5 [--seed S]
"""
import argparse
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_inputs import numpy_dtype, read_inputs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph")
    parser.add_argument("output")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    inputs = read_inputs(args.graph)
    rng = np.random.default_rng(args.seed)
    with h5py.File(args.output, "w") as f:
        for name, (dtype, shape) in inputs.items():
            f.create_dataset(name, data=rng.uniform(-1, 1, shape).astype(numpy_dtype(dtype)))
    print(f"wrote {len(inputs)} input(s) of {args.graph} to {args.output}")


if __name__ == "__main__":
    main()
