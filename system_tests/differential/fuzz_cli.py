#!/usr/bin/env python3
"""Differential fuzzer of the `einrel run` command line (docs/cli.md) against a numpy oracle.

Case i (seed S + i, so `--seed S+i --cases 1` reruns it alone) is a random graph of 1-6 EinSum vertices over 1-4
inputs (docs/graph-format.md): contractions, transposing readers, element-wise ops with every join, reductions
(to a scalar too), outer products, 3-operand einsums, softmax and unary maps, inputs read several ways, inputs
that are outputs, intermediates read twice. Inputs are dense or block-sparse (docs/sparse.md: shapes from
`/X.mask`, `/X.norms`, `--drop-zero-blocks` or `--random-density`, garbage and NaN written where a block is
absent), come from `--input`, `--bind` or `--random`, in f32 or f64; the run varies the ranks, `--procs`,
`--planner`, `--transitions`, `--input-reads`, `--objective`, `--memory-limit` and more. A few cases are made
invalid on purpose (bad masks, datasets or bindings) and must fail by the one-line error contract.

The oracle shares no code with einrel: it evaluates the same graph in float64 by broadcasting every operand over
all labels of an einsum, joining, mapping and reducing. The tolerance of each element comes from the oracle
itself: the graph is evaluated again with every joined and mapped term perturbed by a relative
eps(dtype) * (terms summed + 8), and the spread of those runs (times 16) bounds what rounding in any order may do.

A failing case is shrunk (fewer outputs and vertices, fewer ranks, fewer options, smaller extents, sparse inputs
made dense) while it fails the same way, and printed as shell commands that reproduce it. The last line is
`N passed, M failed`; the exit status is 1 when a case failed.

    fuzz_cli.py --einrel build/drivers/einrel --mpiexec mpiexec.mpich --work-dir DIR --cases N --seed S
                [--max-ranks 6]"""
import argparse
import collections
import dataclasses
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

EPS = {"f32": float(np.finfo(np.float32).eps), "f64": float(np.finfo(np.float64).eps)}
NUMPY_DTYPE = {"f32": np.float32, "f64": np.float64}
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
BIG = 1e5  # no value of a generated graph may exceed this magnitude (f32 stays far from overflow)


# ---------------------------------------------------------------------------------------------------------------
# `--random SEED`: the counter-based generator of docs/cli.md, from its definition.

_M32 = np.uint64(0xFFFFFFFF)
_SH32, _SH8, _SH11 = np.uint64(32), np.uint64(8), np.uint64(11)


def philox4x32_10(counter, key):
    """Philox4x32-10 of counters (four arrays of 32-bit words held in uint64) under a key of two words."""
    c0, c1, c2, c3 = counter
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> _SH32) ^ c1 ^ k0, p1 & _M32, (p0 >> _SH32) ^ c3 ^ k1, p0 & _M32
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & _M32, (k1 + np.uint64(0xBB67AE85)) & _M32
    return c0, c1, c2, c3


def counter_random(seed, stream, count, dtype):
    """Elements 0 .. count-1 of `stream` under `--random seed`, as dtype ("f32" or "f64") values in [-1, 1)."""
    index = np.arange(count, dtype=np.uint64)
    zero = np.zeros(count, dtype=np.uint64)
    w0, w1, _, _ = philox4x32_10((index & _M32, index >> _SH32, zero + np.uint64(stream), zero),
                                 (seed & 0xFFFFFFFF, seed >> 32))
    if dtype == "f32":
        return ((w0 >> _SH8).astype(np.float64) * 2.0**-23 - 1).astype(np.float32)
    return (((w0 << _SH32) | w1) >> _SH11).astype(np.float64) * 2.0**-52 - 1


def check_philox():
    """Random123's known answers for Philox4x32-10: the oracle's generator must be right before it judges."""
    known = [((0, 0, 0, 0), (0, 0), 0x6627E8D5), ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, 0x408F276D),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0), 0xD16CFE09)]
    for counter, key, word0 in known:
        got = philox4x32_10([np.array([w], dtype=np.uint64) for w in counter], key)[0][0]
        assert int(got) == word0, f"philox4x32_10{counter, key}: {int(got):#x}, expected {word0:#x}"


# ---------------------------------------------------------------------------------------------------------------
# Block grids (docs/sparse.md).

def even_cuts(n, parts):
    """Block starts of einrel's even grid of `parts` blocks over n (the first n % parts one larger), then n."""
    q, r = divmod(n, parts)
    return [b * q + min(b, r) for b in range(parts + 1)]


def tile_cuts(n, tile):
    """Block starts of blocks of edge `tile` over n (the last one shorter), then n."""
    return list(range(0, n, tile)) + [n]


def expand_blocks(blocks, shape, cuts):
    """The element mask of a block mask: `cuts(extent, parts_or_tile)` gives each dimension's block starts."""
    out = np.asarray(blocks, dtype=bool)
    for d, n in enumerate(shape):
        out = np.repeat(out, np.diff(cuts(n, d)), axis=d)
    return out


def even_mask(blocks, shape):
    """Elements of `shape` in present blocks of a mask over the even grid of the mask's shape."""
    return expand_blocks(blocks, shape, lambda n, d: even_cuts(n, blocks.shape[d]))


def tile_parts(shape, tile):
    """Blocks per dimension of the grid of edge `tile`."""
    return tuple(-(-n // tile) for n in shape)


def tile_mask(blocks, shape, tile):
    """Elements of `shape` in present blocks of a mask over the grid of edge `tile`."""
    return expand_blocks(blocks, shape, lambda n, d: tile_cuts(n, tile))


# ---------------------------------------------------------------------------------------------------------------
# The oracle: equations, ops, and a broadcasting evaluator of a whole graph.

JOINS = {
    "mul": np.multiply, "add": np.add, "sub": np.subtract, "div": np.divide, "max": np.maximum,
    "min": np.minimum, "sqdiff": lambda x, y: np.square(x - y), "absdiff": lambda x, y: np.abs(x - y),
}
AGGS = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}
MAPS = {
    "identity": lambda x, c: x, "exp": lambda x, c: np.exp(x), "log": lambda x, c: np.log(x),
    "neg": lambda x, c: -x, "abs": lambda x, c: np.abs(x), "relu": lambda x, c: np.maximum(x, 0.0),
    "square": lambda x, c: x * x, "sqrt": lambda x, c: np.sqrt(x), "tanh": lambda x, c: np.tanh(x),
    "sigmoid": lambda x, c: 1 / (1 + np.exp(-x)), "scale": lambda x, c: c * x, "shift": lambda x, c: x + c,
    "pow": lambda x, c: np.power(x, c),
}


def parse_map(spec):
    """("scale", 0.5) for "scale(0.5)", ("exp", None) for "exp"."""
    if "(" in spec:
        name, constant = spec[:-1].split("(")
        return name, float(constant)
    return spec, None


def split_equation(eq):
    """The operands' labels and the output labels; without `->`, the labels seen once in ASCII order."""
    eq = eq.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:
        counts = collections.Counter("".join(terms))
        out = "".join(sorted(label for label, n in counts.items() if n == 1))
    return terms, out


class Noise:
    """Relative perturbations of eps * factor, or none: how rounding may move each term."""

    def __init__(self, eps=0.0, seed=None):
        self.eps = eps
        self.rng = np.random.default_rng(seed) if seed is not None else None

    def __call__(self, v, factor):
        if self.rng is None:
            return v
        return v * (1 + self.eps * factor * self.rng.uniform(-1, 1, np.shape(v)))


def einsum_reference(eq, operands, join, agg, fmap, noise):
    """Z[out] = agg over the labels not in out of fmap(join(X, Y, ...)), by broadcasting every operand over
    (output labels, aggregated labels)."""
    terms, out = split_equation(eq)
    order = list(out) + [label for label in dict.fromkeys("".join(terms)) if label not in out]
    extent = {}
    for x, t in zip(operands, terms):
        extent.update(zip(t, np.shape(x)))
    full = tuple(extent[label] for label in order)
    aligned = []
    for x, t in zip(operands, terms):
        present = [label for label in order if label in t]
        x = np.transpose(np.asarray(x, dtype=np.float64), [t.index(label) for label in present])
        aligned.append(x.reshape([extent[label] if label in t else 1 for label in order]))
    v = aligned[0]
    for y in aligned[1:]:
        v = JOINS[join](v, y)
    v = noise(np.broadcast_to(v, full).astype(np.float64), 2)
    name, constant = parse_map(fmap)
    v = MAPS[name](v, constant)
    aggregated = int(np.prod(full[len(out):], dtype=np.int64))
    v = noise(v, aggregated + 8)
    if len(order) == len(out):
        return v
    return AGGS[agg](v.reshape(full[:len(out)] + (-1,)), axis=-1)


def softmax_reference(x, noise):
    """softmax over the last dimension, as the four vertices of docs/graph-format.md compute it."""
    e = noise(np.exp(noise(x - np.max(x, axis=-1, keepdims=True), 2)), 8)
    s = noise(np.sum(e, axis=-1, keepdims=True), x.shape[-1] + 8)
    return noise(e / s, 2)


def evaluate(case, values, noise):
    """Every input and vertex of `case` in float64, the inputs given as `values`."""
    env = dict(values)
    for v in case.vertices:
        xs = [env[a] for a in v.args]
        if v.op == "softmax":
            env[v.name] = softmax_reference(xs[0], noise)
        else:
            env[v.name] = einsum_reference(v.eq, xs, v.join, v.agg, v.map, noise)
    return env


def check_oracle():
    """The evaluator against numpy's own einsum and formulas written out, before it judges einrel."""
    rng = np.random.default_rng(0)
    a, b, c = rng.uniform(0.5, 2, (3, 4)), rng.uniform(0.5, 2, (4, 5)), rng.uniform(0.5, 2, (5, 2))
    plain = Noise()
    expect = [
        (einsum_reference("ij,jk->ik", [a, b], "mul", "sum", "identity", plain), a @ b),
        (einsum_reference("ij,jk", [a, b], "mul", "sum", "identity", plain), a @ b),
        (einsum_reference("Ab,bC", [a, b], "mul", "sum", "identity", plain), a @ b),
        (einsum_reference("ba", [a], "mul", "sum", "identity", plain), a.T),
        (einsum_reference("ji,jk->ik", [a.T, b], "sub", "max", "identity", plain),
         (a[:, :, None] - b[None]).max(axis=1)),
        (einsum_reference("ij,jk,kl->il", [a, b, c], "mul", "sum", "identity", plain), a @ b @ c),
        (einsum_reference("ij,jk,kl->il", [a, b, c], "add", "min", "identity", plain),
         (a[:, :, None, None] + b[None, :, :, None] + c[None, None]).min(axis=(1, 2))),
        (einsum_reference("ij,j->ij", [a, b[:, 0]], "div", "sum", "pow(-0.5)", plain), (a / b[:, 0]) ** -0.5),
        (einsum_reference("ij->", [a], "mul", "prod", "shift(1e-3)", plain), np.prod(a + 1e-3)),
        (einsum_reference(",ij->ji", [np.float64(2.0), a], "sqdiff", "sum", "sigmoid", plain),
         1 / (1 + np.exp(-((2 - a.T) ** 2)))),
        (softmax_reference(a, plain), np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)),
    ]
    for k, (got, want) in enumerate(expect):
        assert np.allclose(got, want, rtol=1e-13, atol=0), f"oracle self-check {k}: {got} != {want}"
    for seed in range(60):
        case = random_case(seed, 1)
        with np.errstate(all="ignore"):
            env = evaluate(case, effective_inputs(case), plain)
        for v in case.vertices:
            if v.op == "einsum":
                xs = [env[x] for x in v.args]
                with np.errstate(all="ignore"):
                    got = einsum_reference(v.eq, xs, "mul", "sum", "identity", plain)
                assert np.allclose(got, np.einsum(v.eq, *xs), rtol=1e-12, atol=1e-12, equal_nan=True), \
                    f"oracle vs np.einsum: {v}"


# ---------------------------------------------------------------------------------------------------------------
# Cases.

@dataclasses.dataclass
class Input:
    """A graph input: its clean values (file cases) and where its block shape comes from."""
    name: str
    shape: tuple
    sparse: bool = False
    source: str = "dense"  # dense | mask | norms | both | drop | density
    blocks: object = None  # present flags over the mask's even grid (mask, norms, both)
    mask_dtype: str = "uint8"
    bind: object = None  # None: root dataset of in.h5; "ROOT": root of bind.h5; else a path in bind.h5
    values: object = None  # float64 array of dtype-exact values (file cases)


@dataclasses.dataclass
class Vertex:
    """An EinSum vertex or a softmax macro; `keywords` are the ops as the graph file spells them."""
    name: str
    op: str
    args: list
    eq: str = ""
    keywords: dict = dataclasses.field(default_factory=dict)

    @property
    def join(self):
        """The join op (default mul)."""
        return self.keywords.get("join", "mul")

    @property
    def agg(self):
        """The aggregation (default sum)."""
        return self.keywords.get("agg", "sum")

    @property
    def map(self):
        """The map (default identity)."""
        return self.keywords.get("map", "identity")


@dataclasses.dataclass
class Case:
    """One fuzz case: the graph, its input data and the `einrel run` options (name -> value, None for a flag)."""
    seed: int
    dtype: str
    inputs: list
    vertices: list
    outputs: list
    ranks: int
    options: dict
    random_seed: object = None  # --random SEED instead of files
    invalid: object = None  # how the case is broken on purpose, or None
    nonfinite: list = dataclasses.field(default_factory=list)  # (input, flat index, value) planted in inputs
    garbage_seed: int = 0

    def copy(self):
        """A copy whose inputs, vertices, outputs and options can be changed without touching this case."""
        return dataclasses.replace(self, inputs=[dataclasses.replace(i) for i in self.inputs],
                                   vertices=[dataclasses.replace(v, keywords=dict(v.keywords)) for v in self.vertices],
                                   outputs=list(self.outputs), options=dict(self.options),
                                   nonfinite=list(self.nonfinite))

    def input(self, name):
        """The input called `name`, or None."""
        return next((i for i in self.inputs if i.name == name), None)


def graph_text(case):
    """The .ein file of a case."""
    lines = []
    for i in case.inputs:
        lines.append(f"input {i.name} {case.dtype}[{','.join(map(str, i.shape))}]" + (" sparse" if i.sparse else ""))
    for v in case.vertices:
        if v.op == "softmax":
            lines.append(f"{v.name} = softmax({v.args[0]})")
        else:
            kw = "".join(f", {k}={val}" for k, val in v.keywords.items())
            lines.append(f'{v.name} = einsum("{v.eq}", {", ".join(v.args)}{kw})')
    lines.append("output " + ", ".join(case.outputs))
    return lines


def shapes_of(case):
    """The shape of every input and vertex of a case."""
    shapes = {i.name: tuple(i.shape) for i in case.inputs}
    for v in case.vertices:
        shapes[v.name] = shapes_of_vertex(v, shapes)
    return shapes


def shapes_of_vertex(v, shape):
    """The shape a vertex computes from its operands' shapes."""
    if v.op == "softmax":
        return shape[v.args[0]]
    terms, out = split_equation(v.eq)
    extent = {}
    for a, t in zip(v.args, terms):
        extent.update(zip(t, shape[a]))
    return tuple(extent[label] for label in out)


ZERO_KEEPING = {"identity", "neg", "abs", "relu", "square", "sqrt", "tanh", "scale"}


def keeps_zero(fmap):
    """f(0) = 0 (docs/sparse.md): the maps a vertex that skips absent blocks may have."""
    name, c = parse_map(fmap)
    return name in ZERO_KEEPING or (name == "shift" and c == 0) or (name == "pow" and c > 0)


# Joins whose value at two zeros is zero: an element-wise vertex of sparse values only keeps their union.
UNION_JOINS = {"add", "sub", "max", "min", "sqdiff", "absdiff"}


def sparse_values(case):
    """The names whose values are block-sparse by docs/sparse.md: sparse inputs, and vertices with a zero-keeping
    map (and sum if anything is aggregated) that read a sparse value with join mul or unary (the intersection),
    or read only sparse values with a join whose value at two zeros is zero (the union)."""
    sparse = {i.name for i in case.inputs if i.sparse}
    for v in case.vertices:
        if v.op != "einsum" or not any(a in sparse for a in v.args):
            continue
        terms, out = split_equation(v.eq)
        aggregates = bool(set("".join(terms)) - set(out))
        if not keeps_zero(v.map) or (aggregates and v.agg != "sum"):
            continue
        if (len(v.args) == 1 or v.join == "mul") or (v.join in UNION_JOINS and all(a in sparse for a in v.args)):
            sparse.add(v.name)
    return sparse


# ---------------------------------------------------------------------------------------------------------------
# Value ranges: interval arithmetic that keeps every generated graph finite and well away from overflow.

@dataclasses.dataclass
class Range:
    """Bounds on a tensor's values; `nonneg` when floating-point results are >= 0 too, not only exact ones."""
    lo: float
    hi: float
    nonneg: bool = False

    def magnitude(self):
        """The largest absolute value in the range."""
        return max(abs(self.lo), abs(self.hi))

    def away_from_zero(self, margin=0.25):
        """Whether every value has magnitude >= margin (and one sign)."""
        return self.lo >= margin or self.hi <= -margin


def hull(values, nonneg=False):
    """The smallest range holding `values`."""
    values = list(values)
    return Range(min(values), max(values), nonneg)


def join_range(join, a, b):
    """The range of join(x, y) for x in a, y in b, or None where the join is unsafe (division near zero)."""
    if join == "mul":
        return hull([a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi], a.nonneg and b.nonneg)
    if join == "add":
        return Range(a.lo + b.lo, a.hi + b.hi, a.nonneg and b.nonneg)
    if join == "sub":
        return Range(a.lo - b.hi, a.hi - b.lo)
    if join == "div":
        if not b.away_from_zero():
            return None
        return hull([a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi], a.nonneg and b.lo > 0)
    if join == "max":
        return Range(max(a.lo, b.lo), max(a.hi, b.hi), a.nonneg or b.nonneg)
    if join == "min":
        return Range(min(a.lo, b.lo), min(a.hi, b.hi), a.nonneg and b.nonneg)
    d = Range(a.lo - b.hi, a.hi - b.lo)
    top = d.magnitude()
    return Range(0.0, top * top if join == "sqdiff" else top, True)


def map_range(fmap, r):
    """The range of fmap over r, or None where fmap is unsafe there (log of small values, exp overflow, ...)."""
    name, c = parse_map(fmap)
    positive = r.lo >= 0.25
    if name == "identity":
        return r
    if name == "exp":
        return Range(np.exp(r.lo), np.exp(r.hi), True) if -20 <= r.lo and r.hi <= 11 else None
    if name == "log":
        return Range(np.log(r.lo), np.log(r.hi)) if positive else None
    if name == "neg":
        return Range(-r.hi, -r.lo)
    if name in ("abs", "square"):
        low = 0.0 if r.lo <= 0 <= r.hi else min(abs(r.lo), abs(r.hi))
        top = r.magnitude()
        return Range(low, top, True) if name == "abs" else Range(low * low, top * top, True)
    if name == "relu":
        return Range(max(r.lo, 0.0), max(r.hi, 0.0), True)
    if name == "sqrt":
        return Range(np.sqrt(max(r.lo, 0.0)), np.sqrt(r.hi), True) if positive or r.nonneg else None
    if name == "tanh":
        return Range(np.tanh(r.lo), np.tanh(r.hi), r.nonneg)
    if name == "sigmoid":
        return Range(1 / (1 + np.exp(-max(r.lo, -50))), 1 / (1 + np.exp(-min(r.hi, 50))), True)
    if name == "scale":
        return hull([c * r.lo, c * r.hi], r.nonneg and c >= 0)
    if name == "shift":
        return Range(r.lo + c, r.hi + c, r.nonneg and c >= 0 or r.lo + c >= 0.1)
    return pow_range(c, r)


def pow_range(c, r):
    """The range of x**c over r, or None where it is not finite and real: negative powers need values away from
    zero, non-integral ones positive values (or values >= 0 for c > 0)."""
    integral = float(c).is_integer()
    if c < 0 and not r.away_from_zero():
        return None
    if not integral and not (r.lo >= 0.25 or (c > 0 and r.nonneg)):
        return None
    points = [max(r.lo, 0.0) if not integral else r.lo, r.hi] + ([0.0] if r.lo < 0 < r.hi else [])
    values = [p ** c for p in points]
    return hull(values, r.nonneg or not integral or int(c) % 2 == 0)


def agg_range(agg, r, terms):
    """The range of agg over `terms` values in r, or None for a product that could leave [1e-15, 1e15]."""
    if agg == "sum":
        return Range(terms * r.lo, terms * r.hi, r.nonneg)
    if agg in ("max", "min"):
        return r
    if not r.away_from_zero() or r.magnitude() > 4:
        return None
    smallest = min(abs(r.lo), abs(r.hi))
    if terms * np.log2(max(r.magnitude(), 1 / smallest)) > 50:
        return None
    if r.lo > 0:
        return Range(r.lo ** terms, r.hi ** terms, True)
    return Range(-r.magnitude() ** terms, r.magnitude() ** terms)


# ---------------------------------------------------------------------------------------------------------------
# Graph generation.

CONSTANTS = {"scale": ["0.125", "-2.5e-1", "3", "0.5", "-1.5"], "shift": ["0.5", "-3", "1e-3", "2", "0", "-0.75"],
             "pow": ["2", "3", "0.5", "-1", "1.5", "-0.5"]}
PLAIN_MAPS = ["identity", "exp", "log", "neg", "abs", "relu", "square", "sqrt", "tanh", "sigmoid"]
NARY_OPS = [("mul", "sum"), ("add", "max"), ("add", "min")]
MAX_LABELS, MAX_RANK, MAX_BROADCAST = 5, 3, 20000


class GraphGen:
    """Builds the vertices of one case over its inputs, tracking each tensor's shape and value range."""

    def __init__(self, rng, nan_safe):
        self.rng, self.nan_safe = rng, nan_safe
        self.shape, self.range, self.inputs, self.sparse = {}, {}, set(), set()
        self.vertices, self.reads = [], collections.Counter()
        self.count = 0

    def pick(self, items, weights=None):
        """One of `items`, by optional relative weights."""
        p = None if weights is None else np.asarray(weights, dtype=float) / sum(weights)
        return items[int(self.rng.choice(len(items), p=p))]

    def add_input(self, name, shape, r, sparse):
        """Declares a graph input of values in range r (block-sparse: r holds 0)."""
        self.shape[name], self.range[name] = tuple(shape), r
        self.inputs.add(name)
        if sparse:
            self.sparse.add(name)
            self.range[name] = Range(min(r.lo, 0.0), max(r.hi, 0.0), r.nonneg)

    def joins(self):
        """The join ops to draw from (max and min are left out where NaN must propagate)."""
        return [j for j in JOINS if not (self.nan_safe and j in ("max", "min"))]

    def aggs(self):
        """The aggregations to draw from (sum first; max and min are left out where NaN must propagate)."""
        return [a for a in AGGS if not (self.nan_safe and a in ("max", "min"))]

    def maps(self):
        """Every map spelling, constants included; relu (max with 0) is left out where NaN must propagate."""
        names = [m for m in PLAIN_MAPS if not (self.nan_safe and m == "relu")]
        return names + [f"{m}({c})" for m, cs in CONSTANTS.items() for c in cs]

    def operand(self, accept=lambda name: True):
        """An existing tensor: unread inputs first, inputs read already (another reader, another way), often the
        newest vertex (chains), else any."""
        names = [n for n in self.shape if accept(n)]
        if not names:
            return None
        unread = [n for n in names if n in self.inputs and self.reads[n] == 0]
        if unread and self.rng.random() < 0.6:
            return self.pick(unread)
        reread = [n for n in names if n in self.inputs and self.reads[n] > 0]
        if reread and self.rng.random() < 0.25:
            return self.pick(reread)
        newest = [v.name for v in self.vertices if v.name in names]
        if newest and self.rng.random() < 0.4:
            return newest[-1]
        return self.pick(names)

    def emit(self, op, args, eq, keywords, r, prefix="v"):
        """Adds a vertex computing range `r`; its name."""
        self.count += 1
        name = f"{prefix}{self.count}"
        v = Vertex(name, op, list(args), eq, keywords)
        self.vertices.append(v)
        self.shape[name] = shapes_of_vertex(v, self.shape)
        self.range[name] = r
        self.reads.update(args)
        return name

    def letters(self):
        """Every label letter, shuffled."""
        return list(self.rng.permutation(list(LETTERS)))

    def unary_map(self, x, fmap, prefix="g"):
        """einsum("ab->ab", X, map=fmap): a guard or a unary map vertex."""
        labels = "".join(self.letters()[:len(self.shape[x])])
        return self.emit("einsum", [x], f"{labels}->{labels}", {"map": fmap},
                         map_range(fmap, self.range[x]), prefix)

    def positive(self, x):
        """X itself where its values are >= 0.25, else abs(X) + 0.5 by two guard vertices."""
        if self.range[x].lo >= 0.25:
            return x
        return self.unary_map(self.unary_map(x, "abs"), "shift(0.5)")

    def bounded(self, x):
        """X itself where exp and softmax are safe on it, else tanh(X) by a guard vertex."""
        r = self.range[x]
        if -20 <= r.lo and r.hi <= 11 and r.hi - r.lo <= 30:
            return x
        return self.unary_map(x, "tanh")

    def labels_for(self, shapes, share):
        """Labels for operands of these shapes: a dimension takes, with probability `share`, a label of an earlier
        operand with its extent (each label once per operand), else a fresh letter."""
        fresh, extent, result = self.letters(), {}, []
        for shape in shapes:
            mine = []
            for e in shape:
                free = [label for label in extent if extent[label] == e and label not in mine]
                label = self.pick(free) if free and self.rng.random() < share else fresh.pop()
                extent[label] = e
                mine.append(label)
            result.append("".join(mine))
        return result, extent

    def feasible_map(self, r):
        """A map that is safe on range r (identity more often than not), and the range after it."""
        options = [(m, map_range(m, r)) for m in self.maps()]
        options = [(m, mr) for m, mr in options if mr is not None and mr.magnitude() <= BIG]
        if self.rng.random() < 0.55 or not options:
            return "identity", r
        return self.pick(options)

    def feasible_agg(self, r, terms):
        """An aggregation that is safe on `terms` values in r (sum half of the time), and its range."""
        options = [(a, agg_range(a, r, terms)) for a in self.aggs()]
        options = [(a, ar) for a, ar in options if ar is not None and ar.magnitude() <= BIG]
        if not options:
            return None, None
        if self.rng.random() < 0.5:
            return options[0]
        return self.pick(options)

    def equation(self, terms, out):
        """The equation text: explicit, or implicit when numpy's rule gives `out` (sometimes)."""
        implicit_out = split_equation(",".join(terms))[1]
        if implicit_out == out and self.rng.random() < 0.5:
            return ",".join(terms)
        return ",".join(terms) + "->" + out

    def einsum(self, args, terms, out, extent, join):
        """Adds an einsum vertex with a safe map and aggregation; returns its name, or None if it would be
        too large or unsafe."""
        labels = set("".join(terms))
        if len(labels) > MAX_LABELS or len(out) > MAX_RANK or \
                np.prod([extent[label] for label in labels]) > MAX_BROADCAST:
            return None
        r = self.range[args[0]]
        for a in args[1:]:
            r = join_range(join, r, self.range[a]) if r is not None else None
        if r is None:
            return None
        keywords = {"join": join} if len(args) > 1 and (join != "mul" or self.rng.random() < 0.1) else {}
        fmap, r = self.feasible_map(r)
        if fmap != "identity" or self.rng.random() < 0.05:
            keywords["map"] = fmap
        aggregated = int(np.prod([extent[label] for label in labels - set(out)], dtype=np.int64))
        if labels - set(out):
            agg, r = self.feasible_agg(r, aggregated)
            if agg is None:
                return None
            if agg != "sum" or self.rng.random() < 0.1:
                keywords["agg"] = agg
        elif self.rng.random() < 0.05:
            keywords["agg"] = self.pick(self.aggs())  # nothing to aggregate: agg must not matter
        if r.magnitude() > BIG:
            return None
        return self.emit("einsum", args, self.equation(terms, out), keywords, r)

    # The kinds of vertices: each returns the new vertex's name, or None when it does not fit the tensors at hand.

    def contraction(self):
        """A binary einsum sharing some labels (matmuls, transposing readers, batch labels kept)."""
        x = self.operand(lambda n: len(self.shape[n]) > 0)
        if x is None:
            return None
        y = self.operand(lambda n: set(self.shape[n]) & set(self.shape[x]))
        if y is None:
            return None
        (tx, ty), extent = self.labels_for([self.shape[x], self.shape[y]], 0.7)
        once = [label for label in tx + ty if (label in tx) != (label in ty)]
        shared = [label for label in tx if label in ty]
        out = once + [label for label in shared if self.rng.random() < 0.25]
        out = "".join(self.rng.permutation(out)) if out else ""
        join = self.pick(self.joins(), [4] + [1] * (len(self.joins()) - 1))
        if join == "div":
            y = self.positive(y)
        return self.einsum([x, y], [tx, ty], out, extent, join)

    def elementwise(self):
        """A binary einsum of two tensors of one shape (up to a transpose), every label kept."""
        x = self.operand()
        y = self.operand(lambda n: sorted(self.shape[n]) == sorted(self.shape[x]))
        join = self.pick(self.joins())
        if join == "div":
            y = self.positive(y)
        (tx, ty), extent = self.labels_for([self.shape[x], self.shape[y]], 1.0)
        out = "".join(self.rng.permutation(list(tx))) if self.rng.random() < 0.3 else tx
        return self.einsum([x, y], [tx, ty], out, extent, join)

    def masked(self):
        """A sparse input times a dense tensor of its shape (up to a transpose), with a zero-keeping map: the vertex
        skips absent blocks and is often the dense tensor's first reader; then, often, another reader of the
        dense tensor in another layout."""
        x = self.operand(lambda n: n in self.sparse)
        if x is None:
            return None
        y = self.operand(lambda n: n not in self.sparse and sorted(self.shape[n]) == sorted(self.shape[x]))
        if y is None:
            return None
        (tx, ty), extent = self.labels_for([self.shape[x], self.shape[y]], 1.0)
        args, terms = ([x, y], [tx, ty]) if self.rng.random() < 0.5 else ([y, x], [ty, tx])
        r = join_range("mul", self.range[x], self.range[y])
        fmap = self.pick(["identity", "identity", "neg", "abs", "square", "tanh", "scale(0.5)", "shift(0)"])
        name = self.emit("einsum", args, ",".join(terms) + "->" + tx, {} if fmap == "identity" else {"map": fmap},
                         map_range(fmap, r))
        if self.shape[y] and self.rng.random() < 0.6:
            (t,), _ = self.labels_for([self.shape[y]], 0.0)
            out = "".join(self.rng.permutation(list(t))[:int(self.rng.integers(0, len(t) + 1))])
            kept = int(np.prod([self.shape[y][t.index(c)] for c in out], dtype=np.int64))
            # Each output element sums the elements that differ only in the dropped labels (none where it keeps all).
            self.emit("einsum", [y], f"{t}->{out}", {}, agg_range("sum", self.range[y], self.size(y) // kept))
        return name

    def size(self, name):
        """The number of elements of a tensor."""
        return int(np.prod(self.shape[name], dtype=np.int64))

    def broadcast(self):
        """A binary einsum of X and a tensor of fewer dimensions (a row, a column, a scalar) spread over X."""
        x = self.operand(lambda n: len(self.shape[n]) > 0)
        if x is None:
            return None
        fits = lambda n: len(self.shape[n]) < len(self.shape[x]) and \
            not (collections.Counter(self.shape[n]) - collections.Counter(self.shape[x]))
        y = self.operand(fits)
        if y is None:
            return None
        join = self.pick(self.joins())
        if join == "div":
            y = self.positive(y)
        (tx, ty), extent = self.labels_for([self.shape[x], self.shape[y]], 1.0)
        args, terms = ([x, y], [tx, ty]) if self.rng.random() < 0.7 else ([y, x], [ty, tx])
        return self.einsum(args, terms, tx, extent, join)

    def outer(self):
        """An outer product (or any join) of two small tensors: no label shared."""
        x = self.operand(lambda n: len(self.shape[n]) <= 2)
        y = x and self.operand(lambda n: len(self.shape[n]) + len(self.shape[x]) <= MAX_RANK)
        if y is None:
            return None
        join = self.pick(self.joins(), [3] + [1] * (len(self.joins()) - 1))
        if join == "div":
            y = self.positive(y)
        (tx, ty), extent = self.labels_for([self.shape[x], self.shape[y]], 0.0)
        out = "".join(self.rng.permutation(list(tx + ty)))
        return self.einsum([x, y], [tx, ty], out, extent, join)

    def reduction(self):
        """A unary einsum aggregating some labels, to a scalar too."""
        x = self.operand(lambda n: len(self.shape[n]) > 0)
        if x is None:
            return None
        (tx,), extent = self.labels_for([self.shape[x]], 0.0)
        keep = int(self.rng.integers(0, len(tx)))
        out = "".join(self.rng.permutation(list(tx))[:keep])
        return self.einsum([x], [tx], out, extent, "mul")

    def transpose(self):
        """A unary einsum permuting the labels, maybe with a map."""
        x = self.operand(lambda n: len(self.shape[n]) > 1)
        if x is None:
            return None
        (tx,), extent = self.labels_for([self.shape[x]], 0.0)
        out = "".join(self.rng.permutation(list(tx)))
        return self.einsum([x], [tx], out, extent, "mul")

    def unary(self):
        """A unary map, the operand first made safe for it (abs + 0.5 before log, sqrt, pow; tanh before exp)."""
        x = self.operand()
        fmap = self.pick(self.maps())
        name = parse_map(fmap)[0]
        if map_range(fmap, self.range[x]) is None:
            x = self.bounded(x) if name == "exp" else self.positive(x)
        r = map_range(fmap, self.range[x])
        if r is None or r.magnitude() > BIG:
            return None
        return self.unary_map(x, fmap, "v")

    def nary(self):
        """A 3-operand einsum (join=mul,agg=sum or the max-plus and min-plus semirings), no map. Not where NaN
        and Inf flow: einrel joins the operands pairwise (docs/graph-format.md), and inf * (a + b) is not
        inf * a + inf * b when a and b differ in sign."""
        x = self.operand(lambda n: len(self.shape[n]) > 0)
        if x is None or self.nan_safe:
            return None
        y = self.operand(lambda n: set(self.shape[n]) & set(self.shape[x]))
        if y is None:
            return None
        z = self.operand(lambda n: set(self.shape[n]) & (set(self.shape[x]) | set(self.shape[y])))
        if z is None:
            return None
        terms, extent = self.labels_for([self.shape[x], self.shape[y], self.shape[z]], 0.7)
        counts = collections.Counter("".join(terms))
        out = [label for label in counts if counts[label] == 1 or self.rng.random() < 0.15]
        out = "".join(self.rng.permutation(out)) if out else ""
        join, agg = self.pick(NARY_OPS)
        labels = set("".join(terms))
        if len(labels) > MAX_LABELS or len(out) > MAX_RANK or \
                np.prod([extent[label] for label in labels]) > MAX_BROADCAST:
            return None
        r = join_range(join, join_range(join, self.range[x], self.range[y]), self.range[z])
        aggregated = int(np.prod([extent[label] for label in labels - set(out)], dtype=np.int64))
        r = agg_range(agg, r, aggregated) if labels - set(out) else r
        if r.magnitude() > BIG:
            return None
        keywords = {} if join == "mul" else {"join": join, "agg": agg}
        return self.emit("einsum", [x, y, z], self.equation(terms, out), keywords, r)

    def softmax(self):
        """softmax over the last dimension, of a bounded operand."""
        x = self.operand(lambda n: len(self.shape[n]) > 0)
        if x is None or self.nan_safe:
            return None
        x = self.bounded(x)
        return self.emit("softmax", [x], "", {}, Range(0.0, 1.0, True))

    KINDS = ["contraction", "elementwise", "masked", "broadcast", "outer", "reduction", "transpose", "unary", "nary",
             "softmax"]
    WEIGHTS = [5, 3, 2, 2, 1, 2, 1, 3, 1, 1]

    def grow(self, count):
        """Adds `count` vertices of random kinds (plus the guards they need)."""
        made = 0
        for _ in range(count * 20):
            if made == count:
                break
            kind = self.pick(self.KINDS, self.WEIGHTS)
            made += getattr(self, kind)() is not None


# ---------------------------------------------------------------------------------------------------------------
# Random cases: inputs, graph, options, invalid variants.

INPUT_NAMES = ["A", "B", "X", "W", "Z", "M", "Q", "K"]
RANGES = [Range(-1.0, 1.0), Range(0.5, 2.0, True), Range(-2.0, -0.5), Range(-3.0, 3.0)]
MASK_DTYPES = ["uint8", "int8", "int32", "int64", "uint16", "bool"]


def random_case(seed, max_ranks):
    """Case number `seed`: everything drawn from one generator seeded with it."""
    rng = np.random.default_rng(seed)
    dtype = "f32" if rng.random() < 0.4 else "f64"
    random_mode = rng.random() < 0.2
    sparse_case = rng.random() < 0.45
    nan_safe = not random_mode and not sparse_case and rng.random() < 0.15
    pool = [int(e) for e in rng.choice(np.arange(1, 14), size=int(rng.integers(2, 5)), replace=False)]
    gen = GraphGen(rng, nan_safe)
    inputs = []
    for name in rng.choice(INPUT_NAMES, size=int(rng.integers(1, 5)), replace=False):
        rank = int(rng.choice([0, 1, 2, 3], p=[0.05, 0.25, 0.5, 0.2]))
        shape = tuple(int(e) for e in rng.choice(pool, size=rank))
        sparse = sparse_case and rng.random() < 0.6
        inputs.append(Input(str(name), shape, sparse))
    if sparse_case and not any(i.sparse for i in inputs):
        inputs[0].sparse = True
    dense = [i for i in inputs if not i.sparse]
    if sparse_case and dense and rng.random() < 0.6:  # a dense input of a sparse one's shape: masks, products
        partner = next(i for i in inputs if i.sparse)
        dense[0].shape = tuple(int(e) for e in rng.permutation(list(partner.shape)))
    for i in inputs:
        gen.add_input(i.name, i.shape, Range(-1.0, 1.0) if random_mode else RANGES[int(rng.integers(len(RANGES)))],
                      i.sparse)
    count = int(rng.integers(1, 7))
    if sparse_case and rng.random() < 0.5:  # the dense partner's first reader skips absent blocks
        count -= gen.masked() is not None
    gen.grow(count)
    case = Case(seed, dtype, inputs, gen.vertices, choose_outputs(rng, inputs, gen), 1, {},
                garbage_seed=int(rng.integers(2**31)))
    if random_mode:
        case.random_seed = int(rng.choice([int(rng.integers(0, 1000)), int(rng.integers(2**32, 2**40))]))
    else:
        fill_inputs(rng, case, gen.range)
    choose_options(rng, case, max_ranks)
    if nan_safe:
        plant_nonfinite(rng, case)
    if rng.random() < (0.2 if any(i.blocks is not None for i in case.inputs) else 0.08):
        make_invalid(rng, case)
    return case


def choose_outputs(rng, inputs, gen):
    """Every vertex nobody reads, some others, inputs nobody reads and sometimes others."""
    read = set(gen.reads)
    outputs = [v.name for v in gen.vertices if v.name not in read or rng.random() < 0.2]
    outputs += [i.name for i in inputs if i.name not in read or rng.random() < 0.15]
    return [str(n) for n in rng.permutation(outputs)] if rng.random() < 0.3 else outputs


def fill_inputs(rng, case, ranges):
    """Values, block shapes and bindings of the inputs of a file case."""
    for i in case.inputs:
        r = ranges[i.name]
        i.values = rng.uniform(r.lo, r.hi, i.shape).astype(NUMPY_DTYPE[case.dtype]).astype(np.float64)
        if i.sparse:
            i.source = str(rng.choice(["mask", "norms", "both", "drop"], p=[0.4, 0.25, 0.1, 0.25]))
            if i.source == "drop":
                case.options["--drop-zero-blocks"] = None
                tile = case.options.setdefault("--sparse-tile", int(rng.integers(1, 6)))
                blocks = rng.random(tile_parts(i.shape, tile)) < rng.choice([0.0, 0.5, 1.0])
                i.values = i.values * tile_mask(blocks, i.shape, tile)
            else:
                parts = tuple(int(rng.integers(1, min(n, 5) + 1)) for n in i.shape)
                i.blocks = rng.random(parts) < rng.choice([0.0, 0.3, 0.6, 1.0], p=[0.15, 0.35, 0.35, 0.15])
                i.mask_dtype = str(rng.choice(MASK_DTYPES))
        if rng.random() < 0.25:
            i.bind = "ROOT" if rng.random() < 0.3 else "/" + "/".join(["grp", "sub"][:int(rng.integers(1, 3))]) + \
                "/" + i.name.lower()


def choose_options(rng, case, max_ranks):
    """Ranks and `einrel run` options."""
    case.ranks = int(rng.integers(1, max_ranks + 1))
    o = case.options
    if rng.random() < 0.3:
        o["--procs"] = int(rng.choice([p for p in (1, 2, 3, 4, 5, 7, 8, 12, 16, 64) if p != case.ranks]))
    choices = {"--planner": ["eindecomp", "sqrt", "data", "greedy"],
               "--transitions": ["auto", "point-to-point", "collectives"], "--input-reads": ["again", "move"],
               "--objective": ["makespan", "floats", "model"], "--cost-model": ["engine", "paper"]}
    chance = {"--planner": 0.6, "--transitions": 0.35, "--input-reads": 0.3, "--objective": 0.3, "--cost-model": 0.15}
    for flag, values in choices.items():
        if rng.random() < chance[flag]:
            o[flag] = str(rng.choice(values))
    if rng.random() < 0.15:
        o["--memory-limit"] = int(rng.choice([256, 1500, 3000, 20000, 1 << 26]))  # never, sometimes, ... fits
    if rng.random() < 0.1:
        o["--comm-buffer-limit"] = int(rng.choice([64, 512, 4096]))
    if rng.random() < 0.1:
        o["--no-warm-memory"] = None
    if rng.random() < 0.08:
        o["--check"] = None
    if any(i.sparse for i in case.inputs) and rng.random() < 0.5 or rng.random() < 0.05:
        o["--sparse-output"] = None
    if case.random_seed is not None and any(i.sparse for i in case.inputs):
        o["--random-density"] = float(rng.choice([1e-9, 0.3, 0.6, 1.0]))
        o["--sparse-tile"] = int(rng.integers(1, 6))
        for i in case.inputs:
            i.source = "density" if i.sparse else i.source


def plant_nonfinite(rng, case):
    """One to three NaN or +-Inf elements in dense inputs (the graph has no max, min or relu)."""
    candidates = [i for i in case.inputs if not i.sparse and i.values.size]
    for _ in range(int(rng.integers(1, 4)) if candidates else 0):
        i = candidates[int(rng.integers(len(candidates)))]
        case.nonfinite.append((i.name, int(rng.integers(i.values.size)), float(rng.choice([np.nan, np.inf, -np.inf]))))


def make_invalid(rng, case):
    """Breaks the case in a way einrel must refuse with one error line."""
    file_inputs = list(case.inputs) if case.random_seed is None else []
    masked = [i for i in file_inputs if i.source in ("mask", "both")]
    kinds = []
    if masked:  # the checks of mask and norms values four times as often as the others
        kinds += ["mask_negative", "mask_fraction", "mask_nan"] * 4 + ["mask_rank", "mask_parts"]
    if any(i.source == "norms" for i in file_inputs):
        kinds += ["norms_nan"] * 4
    if file_inputs:
        kinds += ["wrong_shape", "wrong_dtype", "missing", "bind_unknown"]
    if any(i.sparse and i.source != "drop" for i in file_inputs):
        kinds.append("no_shape")
    if case.random_seed is not None and any(i.sparse for i in case.inputs):
        kinds.append("random_no_density")
    if not kinds:
        return
    kind = str(rng.choice(kinds))
    targets = {"mask_negative": masked, "mask_fraction": masked, "mask_nan": masked, "mask_rank": masked,
               "mask_parts": masked, "norms_nan": [i for i in file_inputs if i.source == "norms"],
               "no_shape": [i for i in file_inputs if i.sparse and i.source != "drop"],
               "random_no_density": [i for i in case.inputs if i.sparse]}
    target = targets.get(kind, file_inputs or case.inputs)
    case.invalid = (kind, target[int(rng.integers(len(target)))].name)
    if kind == "random_no_density":
        case.options.pop("--random-density", None)


# ---------------------------------------------------------------------------------------------------------------
# Materializing a case: the input values the oracle sees, the HDF5 files einrel reads, the command.

def effective_inputs(case):
    """Each input as einrel must see it (float64): absent blocks zero, planted NaN and Inf in place."""
    values = {}
    for k, i in enumerate(case.inputs):
        if case.random_seed is not None:
            v = counter_random(case.random_seed, k, int(np.prod(i.shape, dtype=np.int64)), case.dtype)
            v = v.astype(np.float64).reshape(i.shape)
            density = case.options.get("--random-density")
            if i.sparse and density is not None:
                tile = case.options.get("--sparse-tile", 256)
                parts = tile_parts(i.shape, tile)
                u = counter_random(case.random_seed, 2**31 + k, int(np.prod(parts, dtype=np.int64)), "f64")
                v = v * tile_mask(((u + 1) / 2 < density).reshape(parts), i.shape, tile)
        else:
            v = i.values.copy()
            if i.sparse and i.blocks is not None:
                v = v * even_mask(i.blocks, i.shape)
        values[i.name] = v
    for name, index, value in case.nonfinite:
        if name in values and index < values[name].size:
            values[name].reshape(-1)[index] = value
    return values


def garbage_like(rng, shape, dtype):
    """What a file may hold in absent blocks: NaN, infinities, huge and ordinary numbers."""
    pool = np.array([np.nan, np.inf, -np.inf, 1e30, -7.5, 123.0])
    return pool[rng.integers(0, len(pool), shape)].astype(dtype)


def mask_array(i):
    """The mask dataset of an input: its present flags in its mask dtype (non-zero entries other than 1 too)."""
    blocks = np.asarray(i.blocks, dtype=bool)
    if i.mask_dtype == "bool":
        return blocks
    scale = {"uint8": 255, "int8": 7, "int32": 2, "int64": 1, "uint16": 300}[i.mask_dtype]
    return (blocks * scale).astype(i.mask_dtype)


def datasets(case, values):
    """The HDF5 files of a file case: {file: {dataset path: array}}."""
    rng = np.random.default_rng(case.garbage_seed)
    files = {"in.h5": {}, "bind.h5": {}}
    dt = NUMPY_DTYPE[case.dtype]
    for i in case.inputs:
        path = "/" + i.name if i.bind in (None, "ROOT") else i.bind
        where = files["in.h5" if i.bind is None else "bind.h5"]
        data = values[i.name].astype(dt)
        if i.sparse and i.blocks is not None:
            absent = ~even_mask(i.blocks, i.shape)
            data = np.where(absent, garbage_like(rng, i.shape, dt), data)
            norms = np.where(i.blocks, rng.choice([1e-30, 0.5, 3.0], i.blocks.shape), 0.0)
            if i.source in ("mask", "both"):
                where[path + ".mask"] = mask_array(i)
            if i.source == "norms":
                where[path + ".norms"] = norms.astype(np.float32 if rng.random() < 0.5 else np.float64)
            if i.source == "both":  # the mask wins: norms that say the opposite
                where[path + ".norms"] = np.where(i.blocks, 0.0, 1.0)
        where[path] = data
        if i.bind is not None and rng.random() < 0.5:
            files["in.h5"]["/" + i.name] = np.full(i.shape, np.nan, dt)  # a decoy the binding overrides
    if case.invalid:
        break_files(case, files)
    used = {"in.h5": not case.inputs or any(i.bind is None for i in case.inputs),
            "bind.h5": any(i.bind is not None for i in case.inputs)}
    return {f: d for f, d in files.items() if used[f] or d}  # a file --input names exists, maybe empty


def dataset_path(case, name):
    """(file, path) of input `name`'s dataset."""
    i = case.input(name)
    return ("in.h5" if i.bind is None else "bind.h5"), ("/" + i.name if i.bind in (None, "ROOT") else i.bind)


def break_files(case, files):
    """Applies a file-breaking `case.invalid` to the datasets."""
    kind, name = case.invalid
    f, path = dataset_path(case, name)
    d = files[f]
    i = case.input(name)
    if kind == "mask_negative":
        m = np.where(i.blocks, 1, 0).astype(np.int32)
        m.reshape(-1)[0] = -1
        d[path + ".mask"] = m
    elif kind in ("mask_fraction", "mask_nan"):
        m = np.asarray(i.blocks, dtype=np.float64).copy()
        m.reshape(-1)[0] = 0.5 if kind == "mask_fraction" else np.nan
        d[path + ".mask"] = m
    elif kind == "norms_nan":
        m = np.asarray(d[path + ".norms"], dtype=np.float64).copy()
        m.reshape(-1)[0] = np.nan
        d[path + ".norms"] = m
    elif kind == "mask_rank":
        d[path + ".mask"] = np.ones(i.blocks.shape + (1,), np.uint8)
    elif kind == "mask_parts":
        parts = list(i.blocks.shape)
        if parts:
            parts[0] = i.shape[0] + 1 if i.shape[0] < 6 else 0
        else:
            parts = [2]
        d[path + ".mask"] = np.ones(parts, np.uint8)
    elif kind == "wrong_shape":
        d[path] = np.zeros(tuple(i.shape[:-1]) + (i.shape[-1] + 1,) if i.shape else (1,), d[path].dtype)
    elif kind == "wrong_dtype":
        d[path] = d[path].astype(np.float64 if case.dtype == "f32" else np.float32)
    elif kind == "missing":
        del d[path]
    elif kind == "no_shape":
        for suffix in (".mask", ".norms"):
            d.pop(path + suffix, None)


def write_files(directory, files):
    """Writes {file: {dataset path: array}} as HDF5 files into `directory`."""
    for fname, content in files.items():
        with h5py.File(os.path.join(directory, fname), "w") as f:
            for path, array in content.items():
                f[path] = array


def command_args(case, einrel, mpiexec):
    """The `mpiexec.mpich -n R einrel run ...` command, with paths relative to the case directory."""
    cmd = [mpiexec, "-n", str(case.ranks), einrel, "run", "g.ein"]
    if case.random_seed is not None:
        cmd += ["--random", str(case.random_seed)]
    else:
        if any(i.bind is None for i in case.inputs) or not case.inputs:
            cmd += ["--input", "in.h5"]
        for i in case.inputs:
            if i.bind == "ROOT":
                cmd += ["--bind", f"{i.name}=bind.h5"]
            elif i.bind is not None:
                cmd += ["--bind", f"{i.name}=bind.h5:{i.bind}"]
        if case.invalid and case.invalid[0] == "bind_unknown":
            cmd += ["--bind", f"nosuch=in.h5:/{case.invalid[1]}"]
    for flag, value in case.options.items():
        if case.invalid and case.invalid[0] == "no_shape" and flag == "--drop-zero-blocks":
            continue
        cmd += [flag] if value is None else [flag, str(value)]
    return cmd + ["--output", "out.h5", "--report", "report.json"]


# ---------------------------------------------------------------------------------------------------------------
# The oracle's verdict on one run.

@dataclasses.dataclass
class Failure:
    """What went wrong with a run, by kind (shrinking keeps the kind)."""
    kind: str  # wrong | crash | contract | message | accepted | mask | report | timeout
    message: str


class Oracle:
    """The expected outputs of a case with a tolerance per element, and which outputs are sparse."""

    def __init__(self, case):
        values = effective_inputs(case)
        eps = EPS[case.dtype]
        with np.errstate(all="ignore"):
            self.ref = evaluate(case, values, Noise())
            noisy = [evaluate(case, values, Noise(eps, case.seed * 7 + k)) for k in (1, 2)]
            self.tol = {name: self.tolerance(name, noisy, eps) for name in case.outputs}
        self.sparse = sparse_values(case)
        self.values = values

    def tolerance(self, name, noisy, eps):
        """16 times the spread of the perturbed evaluations, plus 8 ulp of the value (and a floor far below
        anything the generated graphs compute)."""
        ref = np.asarray(self.ref[name], dtype=np.float64)
        spread = np.zeros(ref.shape)
        for env in noisy:
            d = np.abs(np.asarray(env[name]) - ref)
            spread = np.maximum(spread, np.where(np.isfinite(ref), np.nan_to_num(d, nan=np.inf), 0.0))
        return 16 * spread + 8 * eps * np.abs(np.nan_to_num(ref)) + (1e-30 if eps > 1e-10 else 1e-300)

    def normwise(self):
        """The largest normwise tolerance max(tol) / max|ref| of the outputs."""
        ratios = [np.max(self.tol[n], initial=0) / max(np.max(np.abs(np.nan_to_num(self.ref[n])), initial=0), 1e-300)
                  for n in self.tol]
        return max(ratios, default=0.0)

    def finite(self, case):
        """Whether every output is finite (a generated case must be, unless it planted NaN or Inf)."""
        return all(np.all(np.isfinite(self.ref[name])) for name in case.outputs)


def compare(name, got, ref, tol, dtype):
    """None if `got` matches, else what differs."""
    if got.shape != ref.shape:
        return f"output {name} has shape {list(got.shape)}, numpy {list(ref.shape)}"
    if got.dtype != NUMPY_DTYPE[dtype]:
        return f"output {name} is {got.dtype}, the graph says {dtype}"
    g = got.astype(np.float64)
    same_nonfinite = (np.isnan(g) & np.isnan(ref)) | (np.isinf(ref) & (g == ref))
    finite = np.isfinite(g) & np.isfinite(ref)
    with np.errstate(invalid="ignore"):
        bad = ~same_nonfinite & ~(finite & (np.abs(g - ref) <= tol))
    if not bad.any():
        return None
    where = tuple(int(k) for k in np.argwhere(bad)[0])
    return (f"output {name}{list(where)} = {g[where]!r} but numpy gives {ref[where]!r} (tolerance {tol[where]:.3g}; "
            f"{int(bad.sum())} of {bad.size} elements differ)")


def error_lines(done):
    """The `einrel: error:` lines a run printed."""
    return [line for line in (done.stdout + done.stderr).splitlines() if "einrel: error:" in line]


def check_contract(done, directory, before):
    """None if a failed run kept the contract: one `einrel: error:` line and no output, report or temp file."""
    lines = error_lines(done)
    left = sorted(set(os.listdir(directory)) - before)
    if len(lines) != 1 or not lines[0].startswith("einrel: error:") or left:
        last = (done.stdout + done.stderr).strip().splitlines()[-1:] if not lines else []
        return Failure("contract", f"exit {done.returncode} with {len(lines)} error line(s) {lines[:3] or last} and "
                                   f"files {left} left behind")
    return None


def judge(case, oracle, done, directory, before):
    """(the failure of one run of `case` or None, how it ended)."""
    if done is None:
        return Failure("timeout", "einrel did not finish in time"), "timeout"
    if done.returncode != 0:
        broken = check_contract(done, directory, before)
        if broken:
            return broken, "error"
        line = error_lines(done)[0]
        if case.invalid:
            if not any(name in line for name in invalid_names(case)):
                return Failure("message", f"the error does not name {invalid_names(case)}: {line}"), "error"
            return None, "refused invalid input"
        if "--memory-limit" in case.options and "memory" in line:
            return None, "refused by --memory-limit"
        if "--check" in case.options and check_error(line) <= oracle.normwise():
            return None, "--check stricter than rounding"
        return Failure("crash", f"exit {done.returncode}: {line}"), "error"
    if case.invalid:
        return Failure("accepted", f"exit 0 although the case is invalid ({case.invalid[0]} of {case.invalid[1]})"), \
            "accepted invalid input"
    return check_outputs(case, oracle, directory, before), "ran"


def invalid_names(case):
    """What the error line of an invalid case must name: the input (quoted) or the path of its dataset."""
    kind, name = case.invalid
    if kind == "bind_unknown":
        return ["'nosuch'"]
    if kind in ("no_shape", "random_no_density"):  # any sparse input left without a shape may be named first
        return [f"'{i.name}'" for i in case.inputs if i.sparse]
    bind = case.input(name).bind
    return [f"'{name}"] + ([bind] if bind not in (None, "ROOT") else [])


def check_error(line):
    """The relative difference a failed --check reports, or infinity if the line gives none."""
    m = re.search(r"by (\S+) \(relative\)", line)
    return float(m.group(1)) if m else np.inf


def check_outputs(case, oracle, directory, before):
    """The outputs of a successful run against the oracle, the masks of sparse outputs, the report."""
    stray = sorted(set(os.listdir(directory)) - before - {"out.h5", "report.json"})
    if stray:
        return Failure("contract", f"exit 0 but files {stray} left behind")
    masks = "--sparse-output" in case.options
    with h5py.File(os.path.join(directory, "out.h5"), "r") as f:
        expected = set(case.outputs) | {n + ".mask" for n in case.outputs if masks and n in oracle.sparse}
        if set(f.keys()) != expected:
            return Failure("mask" if masks else "wrong",
                           f"OUT.h5 holds {sorted(f.keys())}, expected {sorted(expected)}")
        for name in case.outputs:
            got = np.asarray(f[name][()])
            problem = compare(name, got, np.asarray(oracle.ref[name], dtype=np.float64), oracle.tol[name], case.dtype)
            if problem:
                return Failure("wrong", problem)
            if name + ".mask" in f:
                problem = check_mask(name, got, np.asarray(f[name + ".mask"][()]))
                if problem:
                    return Failure("mask", problem)
    return check_report(case, os.path.join(directory, "report.json"))


def check_mask(name, got, mask):
    """None if an output mask is a block grid of the output with zeros outside its present blocks."""
    if mask.ndim != got.ndim or any(p < 1 or p > n for p, n in zip(mask.shape, got.shape)):
        return f"output {name}.mask has shape {list(mask.shape)} for a tensor {list(got.shape)}"
    outside = ~even_mask(mask != 0, got.shape)
    if np.any(got[outside] != 0):
        return f"output {name} is non-zero outside the blocks {name}.mask calls present"
    return None


def check_report(case, path):
    """The run report: written, for the ranks started; under the engine cost model (with a dry run) the floats
    moved are those predicted (docs/cli.md)."""
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        return Failure("report", f"no readable report: {e}")
    if report.get("num_ranks") != case.ranks:
        return Failure("report", f"report num_ranks {report.get('num_ranks')}, started {case.ranks}")
    engine = case.options.get("--cost-model", "engine") == "engine" and case.options.get("--objective") != "model"
    if engine and report.get("floats_moved") != report.get("predicted_cost"):
        return Failure("report", f"floats moved {report.get('floats_moved')}, predicted {report.get('predicted_cost')}")
    return None


# ---------------------------------------------------------------------------------------------------------------
# Running einrel.

class Runner:
    """Runs cases in fresh directories under the work directory, one mpiexec at a time."""

    def __init__(self, args):
        self.args = args
        self.runs = 0
        self.outcomes = collections.Counter()  # how the cases' first runs ended
        self.shrink_seconds = args.shrink_seconds  # left for shrinking

    def env(self):
        """One OpenMP thread per rank, unpinned: the ranks share two cores."""
        return dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")

    def prepare(self, case, directory, oracle):
        """Writes the graph and input files of `case` into a fresh `directory`."""
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        with open(os.path.join(directory, "g.ein"), "w") as f:
            f.write("\n".join(graph_text(case)) + "\n")
        if case.random_seed is None:
            write_files(directory, datasets(case, oracle.values))

    def launch(self, cmd, directory, timeout):
        """Runs `cmd` in `directory`; the completed process, or None if it ran out of time (then it is killed)."""
        self.runs += 1
        proc = subprocess.Popen(cmd, cwd=directory, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
            return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # mpiexec and the ranks it started: this run's process group
            proc.communicate()
            return None

    def run(self, case, directory, oracle, timeout=None):
        """The failure of `case` run in `directory` (killed after `timeout` seconds), or None. Runs without a
        timeout of their own (the cases' first runs) count in `outcomes`."""
        self.prepare(case, directory, oracle)
        before = set(os.listdir(directory))
        cmd = command_args(case, self.args.einrel, self.args.mpiexec)
        for _ in range(12):  # a binary being rebuilt cannot be started for a while: wait for it, not a verdict
            done = self.launch(cmd, directory, timeout or self.args.timeout)
            if done is None or done.returncode == 0 or "execvp error" not in done.stderr:
                break
            time.sleep(10)
        failure, outcome = judge(case, oracle, done, directory, before)
        if timeout is None:
            self.outcomes[outcome] += 1
        return failure


# ---------------------------------------------------------------------------------------------------------------
# Shrinking.

def prune(case):
    """Drops vertices no output needs and inputs neither read nor output."""
    needed = set(case.outputs)
    for v in reversed(case.vertices):
        if v.name in needed:
            needed.update(v.args)
    case.vertices = [v for v in case.vertices if v.name in needed]
    dropped = [i.name for i in case.inputs if i.name not in needed]
    case.inputs = [i for i in case.inputs if i.name in needed]
    if case.invalid and case.invalid[1] in dropped:
        case.invalid = None
    return case


def fewer_outputs(case):
    """The case with one output less, or with one tensor (an earlier vertex too) its only output; what no output
    needs is pruned."""
    if len(case.outputs) > 1:
        for name in case.outputs:
            yield prune(dataclasses.replace(case.copy(), outputs=[o for o in case.outputs if o != name]))
    for name in [v.name for v in case.vertices] + [i.name for i in case.inputs]:
        if [name] != case.outputs:
            yield prune(dataclasses.replace(case.copy(), outputs=[name]))


def fewer_ranks(case):
    """The case on 1 rank, half the ranks, one rank less."""
    for ranks in sorted({1, case.ranks // 2, case.ranks - 1}):
        if 1 <= ranks < case.ranks:
            yield dataclasses.replace(case.copy(), ranks=ranks)


def fewer_options(case):
    """The case without one of its options (those that give sparse inputs their shapes stay)."""
    for flag in list(case.options):
        if flag in ("--random-density", "--drop-zero-blocks") and any(i.sparse for i in case.inputs):
            continue
        c = case.copy()
        del c.options[flag]
        yield c


def plainer_inputs(case):
    """The case with a sparse input made dense (holding the zeros it had), or a bound input read by --input."""
    for k, i in enumerate(case.inputs):
        if i.sparse:
            c = case.copy()
            c.inputs[k] = dataclasses.replace(i, sparse=False, source="dense", blocks=None,
                                              values=None if i.values is None else effective_inputs(case)[i.name])
            yield c
        if i.bind is not None:
            c = case.copy()
            c.inputs[k] = dataclasses.replace(i, bind=None)
            yield c


def bypasses(case):
    """The case with a vertex replaced, in its readers and the outputs, by one of its operands of its shape."""
    shapes = shapes_of(case)
    for v in case.vertices:
        for a in dict.fromkeys(v.args):
            if shapes[a] == shapes[v.name]:
                c = case.copy()
                for w in c.vertices:
                    w.args = [a if x == v.name else x for x in w.args]
                c.outputs = list(dict.fromkeys(a if o == v.name else o for o in c.outputs))
                yield prune(c)
                break


def simpler_ops(case):
    """The case with one vertex's ops at their defaults."""
    for k, v in enumerate(case.vertices):
        if v.op == "einsum" and v.keywords:
            c = case.copy()
            c.vertices[k].keywords = {}
            yield c


def smaller_extents(case):
    """The case with every extent halved, then with each extent e (across all tensors) made smaller; equal
    extents stay equal, so every equation stays valid."""
    extents = sorted({e for i in case.inputs for e in i.shape}, reverse=True)
    if any(e > 1 for e in extents):
        yield resize(case, {e: max(1, e // 2) for e in extents})
    for e in extents:
        for smaller in sorted({1, 2, (e + 1) // 2, e - 1}):
            if 1 <= smaller < e:
                yield resize(case, {e: smaller})


def resize(case, new):
    """The case with each dimension of extent e in `new` cut to its first new[e] elements (and mask blocks)."""
    c = case.copy()
    for i in c.inputs:
        cut = tuple(slice(0, new.get(n, n)) for n in i.shape)
        i.shape = tuple(new.get(n, n) for n in i.shape)
        if i.values is not None:
            i.values = i.values[cut]
        if i.blocks is not None:
            i.blocks = i.blocks[cut]
    c.nonfinite = []
    return c


SHRINK_PASSES = [fewer_outputs, bypasses, fewer_ranks, fewer_options, plainer_inputs, simpler_ops, smaller_extents]


def shrink(case, failure, runner, directory):
    """The smallest variant of `case` found that still fails the same way, and its failure: each pass of
    SHRINK_PASSES applied while it finds a smaller failing case, the passes repeated while any does, within
    `--shrink-runs` runs and what is left of `--shrink-seconds`."""
    start = time.time()
    runs = 0

    def budget_left():
        """Whether shrinking may run einrel again."""
        return runs < runner.args.shrink_runs and time.time() - start < runner.shrink_seconds

    changed = True
    while changed and budget_left():
        changed = False
        for shrink_pass in SHRINK_PASSES:
            progress = True
            while progress and budget_left():
                progress = False
                for candidate in shrink_pass(case):
                    if not budget_left():
                        break
                    oracle = Oracle(candidate)
                    if not candidate.nonfinite and not oracle.finite(candidate):
                        continue
                    runs += 1
                    found = runner.run(candidate, directory, oracle, runner.args.shrink_timeout)
                    if found and found.kind == failure.kind:
                        case, failure, progress, changed = candidate, found, True, True
                        break
    runner.shrink_seconds -= time.time() - start
    return case, failure


# ---------------------------------------------------------------------------------------------------------------
# Reproductions.

def array_literal(a):
    """Python source building array `a` exactly."""
    a = np.asarray(a)
    if a.dtype == bool:
        return f"np.array({a.astype(int).tolist()}, dtype=bool)"
    if a.size > 48:
        return f"np.frombuffer(bytes.fromhex(\"{a.tobytes().hex()}\"), \"{a.dtype.str}\").reshape({list(a.shape)})"
    items = ", ".join("nan" if np.isnan(x) else ("inf" if x > 0 else "-inf") if np.isinf(x) else repr(x.item())
                      for x in a.reshape(-1)) if a.dtype.kind == "f" else ", ".join(map(str, a.reshape(-1).tolist()))
    return f"np.array([{items}], dtype=\"{a.dtype.str}\").reshape({list(a.shape)})"


def reproduction(case, args):
    """Shell commands that rebuild the case's files and run it."""
    lines = ["mkdir -p einrel-repro && cd einrel-repro",
             "printf '%s\\n' " + " ".join(f"'{line}'" for line in graph_text(case)) + " > g.ein"]
    if case.random_seed is None:
        oracle = Oracle(case)
        files = datasets(case, oracle.values)
        code = ["import h5py, numpy as np", "nan, inf = np.nan, np.inf"]
        for fname, content in files.items():
            code.append(f"f = h5py.File(\"{fname}\", \"w\")")
            code += [f"f[\"{path}\"] = {array_literal(a)}" for path, a in content.items()]
            code.append("f.close()")
        lines.append(f"{shlex.quote(sys.executable)} -c '" + "\n".join(code) + "'")
    cmd = command_args(case, os.path.abspath(args.einrel), args.mpiexec)
    lines.append("OMP_NUM_THREADS=1 OMP_PROC_BIND=false " + " ".join(shlex.quote(c) for c in cmd))
    return lines


# ---------------------------------------------------------------------------------------------------------------
# Features and the main loop.

def features(case):
    """Labels counted in the summary."""
    o = case.options
    f = [f"R={case.ranks}", f"planner={o.get('--planner', 'eindecomp')}", case.dtype]
    f.append("random" if case.random_seed is not None else "bind" if any(i.bind for i in case.inputs) else "input")
    f += [f"shape:{s}" for s in sorted({i.source for i in case.inputs if i.sparse})]
    if any(i.sparse for i in case.inputs):
        f.append("sparse")
    f += [flag.lstrip("-") + ("" if o[flag] is None else f"={o[flag]}") for flag in
          ("--transitions", "--input-reads", "--objective", "--cost-model") if flag in o]
    f += [flag.lstrip("-") for flag in ("--memory-limit", "--comm-buffer-limit", "--no-warm-memory", "--check",
                                        "--sparse-output", "--drop-zero-blocks") if flag in o]
    if "--procs" in o:
        f.append("procs!=R")
    if case.invalid:
        f.append(f"invalid:{case.invalid[0]}")
    if case.nonfinite:
        f.append("nonfinite")
    f += sorted({"softmax" if v.op == "softmax" else "nary" if len(v.args) > 2 else "" for v in case.vertices} - {""})
    return f


def describe(case):
    """A one-line summary of a case: ranks, dtype, sparse inputs, vertices, options."""
    o = " ".join(f"{k}" + ("" if v is None else f" {v}") for k, v in case.options.items())
    sparse = ",".join(f"{i.name}:{i.source}" for i in case.inputs if i.sparse) or "dense"
    return f"R={case.ranks} {case.dtype} {sparse} {len(case.vertices)} vertices {o}".strip()


def run_case(seed, args, runner):
    """Generates, runs and judges case `seed`: (the case, its failure or None, (the smallest failing variant
    found, its failure) or None)."""
    case = random_case(seed, args.max_ranks)
    oracle = Oracle(case)
    assert case.nonfinite or case.invalid or oracle.finite(case), f"seed {seed}: the oracle is not finite"
    directory = os.path.join(args.work_dir, f"case{seed}")
    failure = runner.run(case, directory, oracle)
    if failure is None:
        shutil.rmtree(directory, ignore_errors=True)
        return case, None, None
    if args.shrink_runs > 0 and runner.shrink_seconds > 0:
        return case, failure, shrink(case, failure, runner, os.path.join(args.work_dir, f"case{seed}-shrunk"))
    return case, failure, (case, failure)


def main():
    """Runs --cases cases from --seed on; prints each failure, the counts and `N passed, M failed`."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-ranks", type=int, default=6)
    ap.add_argument("--timeout", type=float, default=60, help="seconds one einrel run may take")
    ap.add_argument("--shrink-timeout", type=float, default=10, help="seconds one einrel run may take when shrinking")
    ap.add_argument("--shrink-runs", type=int, default=60, help="einrel runs to shrink one failure (0: none)")
    ap.add_argument("--shrink-seconds", type=float, default=120, help="seconds for shrinking, all failures together")
    args = ap.parse_args()
    check_philox()
    check_oracle()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    runner = Runner(args)
    start = time.time()
    counts, passed, failed = collections.Counter(), 0, 0
    for seed in range(args.seed, args.seed + args.cases):
        case, failure, shrunk = run_case(seed, args, runner)
        counts.update(features(case))
        if failure is None:
            passed += 1
            continue
        failed += 1
        small, small_failure = shrunk
        print(f"FAIL seed {seed} [{small_failure.kind}] {small_failure.message} | {describe(small)} "
              f"(rerun: --seed {seed} --cases 1)", flush=True)
        for line in reproduction(small, args):
            print("    " + line.replace("\n", "\n    "))
    print(f"{runner.runs} einrel runs in {time.time() - start:.0f} s; cases that " +
          ", ".join(f"{k}: {n}" for k, n in sorted(runner.outcomes.items())))
    print("features: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
