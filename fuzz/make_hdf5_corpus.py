#!/usr/bin/python3
"""Writes the HDF5 seed corpus of the hdf5_input fuzz target (corpus/hdf5_input/): the datasets the
target reads (A f64 6x5, B f32 4x3) in the layouts and file formats einrel meets, plus near misses.
Run: /usr/bin/python3 fuzz/make_hdf5_corpus.py (numpy, h5py)."""
import os

import h5py
import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "hdf5_input")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1)
A = rng.standard_normal((6, 5))
B = rng.standard_normal((4, 3)).astype(np.float32)


def write(name, fill, **file_options):
    path = os.path.join(out, name)
    with h5py.File(path, "w", **file_options) as f:
        fill(f)


def both(f, **options):
    f.create_dataset("A", data=A, **options)
    f.create_dataset("B", data=B, **options)


write("contiguous.h5", both)
write("latest_format.h5", both, libver="latest")
write("chunked.h5", lambda f: both(f, chunks=(2, 3)))
write("gzip.h5", lambda f: both(f, chunks=(2, 3), compression="gzip"))
write("wrong_dtype.h5", lambda f: (f.create_dataset("A", data=A.astype(np.float32)),
                                   f.create_dataset("B", data=B.astype(np.float64))))
write("wrong_shape.h5", lambda f: (f.create_dataset("A", data=A.T), f.create_dataset("B", data=B[:2])))
write("integers.h5", lambda f: (f.create_dataset("A", data=(A * 10).astype(np.int32)),
                                f.create_dataset("B", data=(B * 10).astype(np.int64))))
write("groups.h5", lambda f: (f.create_group("A").create_dataset("x", data=A), f.create_dataset("B", data=B)))
write("attributes.h5", lambda f: (both(f), f["A"].attrs.create("unit", b"m")))
