#!/usr/bin/env python3
"""numpy conformance of `mpiexec -n R einrel run`: every case of the table below (plain contractions, every join,
agg and map op, n-ary einsums, softmax, chains of vertices) goes into one graph per dtype, einrel runs it once per
(dtype, --procs P), and each output is compared with a float64 numpy reference computed from the very same input
values. The reference side checks itself on every run (--self-test stops there, before einrel)."""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import time

import h5py
import numpy as np

# Uniform input ranges: the default, positive operands (log, sqrt, pow, denominators), factors near 1 (prod).
U, POS, NEAR1 = (-1.0, 1.0), (0.5, 2.0), (0.9, 1.1)

# Default extent of each label: uneven, mostly odd; cases override some (extents of 1, larger tensors).
EXTENTS = dict(zip("abcdefghijklmnopqrstuvwxyz",
                   [3, 4, 5, 2, 6, 3, 2, 4, 7, 13, 5, 6, 3, 4, 5, 2, 3, 4, 6, 5, 2, 3, 4, 5, 3, 2]))
EXTENTS.update(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", [2, 6, 3, 5] * 7))

DTYPES = {"f64": np.float64, "f32": np.float32}
# Normwise tolerances max|got-ref| / max(1, max|ref|). A case sums at most ~4000 terms of size O(1), so rounding
# errors stay near sqrt(terms) * unit roundoff: ~1e-14 in f64, where 1e-11 leaves room for any summation order,
# blocking and libm's exp/log/pow; ~2e-6 in f32 (the worst case, a 5-matrix chain, measured by the emulation
# below), where 2e-5 leaves room for a blocked or less lucky order. The self-check evaluates every case in the
# target dtype with naive sequential accumulation and requires it to stay within a quarter of its tolerance, so
# no case needs a looser tolerance of its own.
TOL = {"f64": 1e-11, "f32": 2e-5}

JOINS = {
    "mul": np.multiply, "add": np.add, "sub": np.subtract, "div": np.divide, "max": np.maximum, "min": np.minimum,
    "sqdiff": lambda x, y: np.square(x - y), "absdiff": lambda x, y: np.abs(x - y),
    "eq": lambda x, y: np.equal(x, y).astype(np.result_type(x, y)), "first": lambda x, y: np.broadcast_arrays(x, y)[0],
}
REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}
ACCUMULATE = {"sum": np.add.accumulate, "prod": np.multiply.accumulate}
MAPS = {
    "identity": lambda x, c: x, "exp": lambda x, c: np.exp(x), "log": lambda x, c: np.log(x),
    "neg": lambda x, c: -x, "abs": lambda x, c: np.abs(x), "relu": lambda x, c: np.maximum(x, 0),
    "square": lambda x, c: x * x, "sqrt": lambda x, c: np.sqrt(x), "tanh": lambda x, c: np.tanh(x),
    "sigmoid": lambda x, c: 1 / (1 + np.exp(-x)), "scale": lambda x, c: c * x, "shift": lambda x, c: x + c,
    "pow": lambda x, c: np.power(x, c), "sign": lambda x, c: np.sign(x),
}
CONSTANT = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
MAP_RE = re.compile(rf"(scale|shift|pow)\(({CONSTANT})\)")
NARY_OPS = {("mul", "sum"), ("add", "max"), ("add", "min")}

Step = collections.namedtuple("Step", "name kind eq args ops")  # kind: einsum | softmax; ops: keywords as written


class Case:
    """An independent subgraph: inputs [(name, shape, range)], steps in order, and the names it outputs."""

    def __init__(self, inputs, steps, outputs):
        self.inputs, self.steps, self.outputs = inputs, steps, outputs

    def title(self):
        shapes = " ".join(f"[{','.join(map(str, shape))}]" for _, shape, _ in self.inputs)
        if len(self.steps) > 1:
            return f"chain {'; '.join(s.name + '=' + (s.eq or 'softmax') for s in self.steps)} on {shapes}"
        s = self.steps[0]
        if s.kind == "softmax":
            return f"softmax on {shapes}"
        kw = "".join(f", {k}={v}" for k, v in s.ops.items())
        return f'einsum("{s.eq}"{kw}) on {shapes}'


def split_equation(eq):
    """Operand labels and output labels; implicit output: labels seen once, sorted by ASCII code (numpy's rule)."""
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:
        counts = collections.Counter("".join(terms))
        rhs = "".join(sorted(label for label, n in counts.items() if n == 1))
    return terms, rhs


def step(name, eq, *args, **ops):
    return Step(name, "einsum", eq, list(args), ops)


def softmax_step(name, x):
    return Step(name, "softmax", None, [x], {})


def ein(eq, ext=None, ranges=U, **ops):
    """A one-vertex case Z = einsum(eq, A, B, ...) with the given keyword ops (join=, agg=, map=)."""
    extents = {**EXTENTS, **(ext or {})}
    terms, _ = split_equation(eq)
    names = "ABCDEFG"[: len(terms)]
    ranges = ranges if isinstance(ranges, list) else [ranges] * len(terms)
    inputs = [(n, tuple(extents[label] for label in t), r) for n, t, r in zip(names, terms, ranges)]
    return Case(inputs, [step("Z", eq, *names, **ops)], ["Z"])


def softmax(shape, ranges=U):
    return Case([("X", shape, ranges)], [softmax_step("S", "X")], ["S"])


CASES = [
    # transposes, identity
    ein("ij->ji"), ein("abc->cab"), ein("abcd->dcba"), ein("ij->ij"), ein("i->i"), ein("->"),
    ein("ij->ji", ext=dict(i=1)),
    # reductions
    ein("ij->i"), ein("ij->j"), ein("ijk->"), ein("ijk->ik"), ein("ijk->kj"), ein("i->"), ein("ij->", ext=dict(i=1)),
    ein("ij->i", ext=dict(j=1)),
    # outer products
    ein("i,j->ij"), ein("ij,k->ikj"), ein("i,j->ji"), ein("a,bc->cab"), ein("ij,kl->ijkl"),
    ein("i,j->ij", ext=dict(i=1)),
    # inner products
    ein("i,i->"), ein("ij,ij->"), ein("ijk,ijk->"), ein("ij,jk->"),
    # matrix products, transposed operands and results
    ein("ij,jk->ik"), ein("ij,kj->ik"), ein("ji,jk->ik"), ein("ji,kj->ki"), ein("ij,jk->ki"), ein("ij,j->i"),
    ein("j,jk->k"), ein("ij,jk->ik", ext=dict(i=64, j=48, k=40)), ein("ij,jk->ik", ext=dict(j=1)),
    ein("ij,jk->ik", ext=dict(i=1, k=1)),
    # batched
    ein("bij,bjk->bik"), ein("bij,bkj->bki"), ein("bij,jk->bik"), ein("bhij,bhjk->bhik"),
    ein("bij,bjk->bik", ext=dict(b=8, i=16, j=24, k=12)), ein("bij,bjk->bik", ext=dict(b=1)),
    # several contracted / kept labels
    ein("abcd,cdef->feba"), ein("ijk,jil->kl"), ein("shd,thd->hst", ext=dict(s=16, t=12, h=4, d=8)),
    ein("bi,oi->bo", ext=dict(b=16, i=32, o=24)), ein("abc,cbd->da"), ein("ijkl,jl->ik"), ein("bsi,io->bos"),
    ein("abcde,edc->ab"),
    # elementwise and broadcasting-like
    ein("ij,ij->ij"), ein("ij,ji->ij"), ein("abc,abc->cba"), ein("ijk,kji->jik"), ein("ij,j->ij"), ein("ij,i->ij"),
    ein("ijk,j->kij"), ein("i,ij->ji"),
    # operands without labels
    ein(",ij->ij"), ein("i,->i"), ein(",->"), ein(",ij->j"),
    # uppercase labels are distinct from lowercase ones
    ein("aB,Bc->ac"), ein("AB,BC->CA"), ein("zZ,Zz->zZ"),
    # implicit output
    ein("ij,jk"), ein("ba"), ein("ij,ij"), ein("iJ,Jk"), ein("ia,aB"), ein("kji"), ein("i"), ein("i,i"), ein("ij,k"),
    ein("b,a"), ein("Zab,bc"), ein(",i"), ein("ij,jk,kl"),
    # n-ary: chains, stars, cycles
    ein("ij,jk,kl->il"), ein("ab,bc,cd,de->ae"), ein("ij,jk,kl,lm,mn->in"), ein("ab,bc,cd,de,ef,fg->ag"),
    ein("ab,bc,cd,de,ef,fg,gh->ah"), ein("ai,bi,ci->abc"), ein("ij,jk,ki->"), ein("i,i,i->i"), ein("i,ij,j->"),
    ein("bij,bjk,bkl->bil"), ein("ab,ac,ad,ae->bcde"), ein(",ij,jk->ik"), ein("ai,bi,ci,di,ei,fi,gi->i"),
    ein("ab,bc,ca,ad,be,cf->def"),
    # default ops spelled out
    ein("ij,jk->ik", join="mul", agg="sum"), ein("ij->i", agg="sum"), ein("ij->ij", map="identity"),
    ein("ij,jk,kl->il", join="mul", agg="sum"), ein("ij,jk,kl->il", map="identity"),
    # join ops
    ein("ij,ij->ij", join="add"), ein("ij,jk->ik", join="add", agg="max"), ein("ij,i->ij", join="sub"),
    ein("ij,jk->ik", join="sub", agg="min"), ein("ij,->ij", join="sub"),
    ein("ij,j->ij", join="div", ranges=[U, POS]), ein("ij,kj->ik", join="div", ranges=[U, POS]),
    ein(",ij->ij", join="div", ranges=[U, POS]),
    ein("ij,ij->ij", join="max"), ein("ik,kj->ij", join="max", agg="min"), ein("ij,ji->ij", join="min"),
    ein("ik,kj->ij", join="min", agg="max"), ein("ik,jk->ij", join="sqdiff"), ein("ij,ij->", join="sqdiff"),
    ein("ik,jk->ij", join="sqdiff", ext=dict(i=40, j=36, k=24)), ein("ik,jk->ij", join="absdiff"),
    ein("ik,jk->ij", join="absdiff", agg="max"), ein("bij,bkj->bik", join="absdiff", agg="min"),
    # agg ops
    ein("ij->i", agg="max"), ein("ij->j", agg="min"), ein("ijk->", agg="max"), ein("ijk->j", agg="min"),
    ein("ij,jk->ik", agg="max"), ein("ij,jk->ik", agg="min"), ein("ij->i", agg="prod", ranges=NEAR1),
    ein("ijk->j", agg="prod", ranges=NEAR1), ein("i->", agg="prod", ranges=NEAR1),
    ein("ij,jk->ik", agg="prod", ranges=NEAR1), ein("ij,jk->ik", join="div", agg="prod", ranges=NEAR1),
    ein("ij,ij->ij", join="sub", agg="prod"),  # nothing aggregated: agg must not matter
    # map ops, unary (map, then agg) and binary (join, map, agg)
    ein("ij->i", map="exp"), ein("ij->i", map="log", ranges=POS), ein("ij->ji", map="neg"), ein("ij->j", map="abs"),
    ein("ij,jk->ik", map="relu"), ein("ij->i", map="square"), ein("ik,jk->ij", join="sqdiff", map="sqrt"),
    ein("ij,ij->ij", join="add", map="tanh"), ein("ij->ij", map="sigmoid"), ein("i->", map="sigmoid"),
    ein("ij->ij", map="scale(0.125)"), ein("ij,jk->ik", map="scale(-2.5e-1)"), ein("ij->j", map="scale(3)"),
    ein("ij->ij", map="shift(-3)"), ein("ij->i", map="shift(1e-3)"), ein("ij,ij->", map="shift(1.5e2)"),
    ein("ij->ij", map="pow(2)"), ein("ij->i", map="pow(0.5)", ranges=POS),
    ein("ij->ij", map="pow(-1.5)", ranges=POS),
    ein("ij->ij", map="pow(3)"),  # negative bases: x**3 is defined for an integral exponent
    ein("ij->ij", map="sign"), ein("ij,jk->ik", map="sign"), ein("ij,j->ij", join="first"),
    ein("j,ij->ij", join="first"), ein("i,ij->ij", join="first", map="exp"), ein("ij,jk->ik", join="first", agg="max"),
    ein("ij,ij->ij", map="log", ranges=POS), ein("ij,jk->ik", join="add", map="exp"),
    ein("ij->i", map="abs", agg="max"),
    ein("ik,jk->ij", join="sub", map="square"), ein("ij,jk->ik", map="abs", agg="min"),
    ein("ij,jk->ik", join="div", map="pow(2)", agg="max", ranges=[U, POS]),
    # extended ops with implicit outputs, uppercase labels, operands without labels
    ein("iJ,Jk", join="add", agg="max"), ein("ij", map="exp"), ein("Ab,bC", join="absdiff", agg="min"),
    ein(",i", join="max"), ein("i,->", join="sub", map="relu", agg="max"),
    # n-ary max-plus and min-plus
    ein("ij,jk,kl->il", join="add", agg="max"), ein("ab,bc,cd,de->ae", join="add", agg="max"),
    ein("ai,bi,ci->abc", join="add", agg="max"), ein("ij,jk,kl,lm,mn,no,op->ip", join="add", agg="max"),
    ein(",ij,jk->ik", join="add", agg="max"), ein("ij,jk,kl->il", join="add", agg="min"),
    ein("ij,jk,ki->", join="add", agg="min"), ein("ab,bc,cd,de,ef->af", join="add", agg="min"),
    ein("i,i,i->i", join="add", agg="min"), ein("ij,jk,kl", join="add", agg="min"),
    # softmax over the last dimension
    softmax((13,)), softmax((7, 13)), softmax((3, 5, 7)), softmax((6, 1)), softmax((1,)), softmax((2, 1, 9)),
    # chains of vertices
    Case([("A", (24, 16), U), ("B", (16, 20), U)],  # the graph-format example
         [step("T", "ij,jk->ik", "A", "B"), step("R", "ij->i", "T", map="exp"),
          step("E", "ij,i->ij", "T", "R", join="sub"), softmax_step("S", "T"),
          step("W", "ij->ij", "T", map="scale(0.125)")],
         ["T", "R", "E", "S", "W"]),
    Case([("Q", (9, 3, 16), U), ("K", (11, 3, 16), U), ("V", (11, 3, 16), U)],  # attention
         [step("L", "shd,thd->hst", "Q", "K", map="scale(0.25)"), softmax_step("P", "L"),
          step("O", "hst,thd->shd", "P", "V")],
         ["P", "O"]),
    Case([("X", (40, 24), U), ("Y", (36, 24), U)],  # euclidean distances and each point's nearest neighbour
         [step("D", "ik,jk->ij", "X", "Y", join="sqdiff"), step("R", "ij->ij", "D", map="sqrt"),
          step("m", "ij->i", "R", agg="min")],
         ["R", "m"]),
    Case([("X", (12, 17), (-20.0, 20.0))],  # log-sum-exp of rows, shifted by their max
         [step("M", "ij->i", "X", agg="max"), step("E", "ij,i->ij", "X", "M", join="sub", map="exp"),
          step("s", "ij->i", "E"), step("L", "i->i", "s", map="log"), step("Y", "i,i->i", "L", "M", join="add")],
         ["Y"]),
    # logits up to 1024 overflow exp() in f32 and f64: softmax must subtract the row max first
    Case([("X", (5, 33), (-2.0, 2.0))],
         [step("T", "ij->ij", "X", map="scale(512)"), softmax_step("S", "T")],
         ["S"]),
    Case([("X", (16, 12), U), ("W", (10, 12), U), ("b", (10,), U), ("V", (6, 10), U)],  # dense layer, relu, softmax
         [step("H", "bi,oi->bo", "X", "W"), step("A", "bo,o->bo", "H", "b", join="add", map="relu"),
          step("Y", "bo,ko->bk", "A", "V"), softmax_step("S", "Y")],
         ["A", "S"]),
    Case([("X", (14, 11), U)],  # where each row's max is, and how often (the mask of a max's gradient)
         [step("M", "ij->i", "X", agg="max"), step("E", "ij,i->ij", "X", "M", join="eq"),
          step("c", "ij->i", "E"), step("F", "i,ij->ij", "M", "X", join="eq", map="scale(2)")],
         ["E", "c", "F"]),
    Case([("X", (9, 13), U)],  # rows scaled to unit norm
         [step("n", "ij->i", "X", map="square"), step("r", "i->i", "n", map="pow(-0.5)"),
          step("Y", "ij,i->ij", "X", "r")],
         ["Y"]),
]


def is_plain(ops):
    return (ops.get("join", "mul"), ops.get("agg", "sum"), ops.get("map", "identity")) == ("mul", "sum", "identity")


def generic_einsum(eq, xs, ops, sequential=False):
    """Reference for any ops by broadcasting: operands aligned on (output labels, aggregated labels), joined
    left to right, mapped, then reduced over the aggregated axes. `sequential` accumulates sum and prod one
    term at a time in the operands' dtype, as a naive kernel does."""
    terms, out = split_equation(eq)
    order = list(out) + [label for label in dict.fromkeys("".join(terms)) if label not in out]
    aligned = []
    for x, t in zip(xs, terms):
        present = [label for label in order if label in t]
        x = np.transpose(x, [t.index(label) for label in present])
        aligned.append(x.reshape([x.shape[present.index(label)] if label in t else 1 for label in order]))
    v = aligned[0]
    for y in aligned[1:]:
        v = JOINS[ops.get("join", "mul")](v, y)
    v = apply_map(ops.get("map", "identity"), v)
    agg = ops.get("agg", "sum")
    if v.ndim == len(out):
        return v
    flat = v.reshape(v.shape[: len(out)] + (-1,))
    if sequential and agg in ACCUMULATE:
        return ACCUMULATE[agg](flat, axis=-1)[..., -1]
    return REDUCE[agg](flat, axis=-1)


def apply_map(spec, v):
    m = MAP_RE.fullmatch(spec)
    name, c = (m.group(1), v.dtype.type(float(m.group(2)))) if m else (spec, None)
    return MAPS[name](v, c).astype(v.dtype)


def softmax_reference(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def reference_einsum(eq, xs, ops):
    return np.einsum(eq, *xs) if is_plain(ops) else generic_einsum(eq, xs, ops)


def naive_einsum(eq, xs, ops):
    return generic_einsum(eq, xs, ops, sequential=True)


def evaluate(case, values, einsum_fn):
    """Every input and step of a case, in the dtype of `values`."""
    env = dict(values)
    for s in case.steps:
        xs = [env[a] for a in s.args]
        env[s.name] = np.asarray(softmax_reference(xs[0]) if s.kind == "softmax" else einsum_fn(s.eq, xs, s.ops))
    return env


def rel_error(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape or not np.all(np.isfinite(got)):
        return np.inf
    return float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))


def prefix(n):
    return f"c{n:03d}_"


def graph_text(cases, dtype):
    lines = [f"# numpy conformance cases, {dtype}: generated by numpy_conformance.py"]
    for n, case in enumerate(cases):
        p = prefix(n)
        lines.append(f"# {p[:-1]}: {case.title()}")
        lines += [f"input {p}{name} {dtype}[{','.join(map(str, shape))}]" for name, shape, _ in case.inputs]
        for s in case.steps:
            args = ", ".join(p + a for a in s.args)
            if s.kind == "softmax":
                lines.append(f"{p}{s.name} = softmax({args})")
            else:
                kw = "".join(f", {k}={v}" for k, v in s.ops.items())
                lines.append(f'{p}{s.name} = einsum("{s.eq}", {args}{kw})')
        lines.append("output " + ", ".join(p + o for o in case.outputs))
    return "\n".join(lines) + "\n"


NAME = r"[A-Za-z_][A-Za-z0-9_]*"
INPUT_RE = re.compile(rf"input ({NAME}) (f32|f64)\[((?:[1-9]\d*(?:,[1-9]\d*)*)?)\]")
KEYWORD = rf"(?:join|agg|map)=[a-z]+(?:\({CONSTANT}\))?"
EINSUM_RE = re.compile(rf'({NAME}) = einsum\("([A-Za-z,]*(?:->[A-Za-z]*)?)"((?:, {NAME})+)((?:, {KEYWORD})*)\)')
SOFTMAX_RE = re.compile(rf"({NAME}) = softmax\(({NAME})\)")
OUTPUT_RE = re.compile(rf"output ({NAME}(?:, {NAME})*)")


def check_graph(text):
    """Problems of a graph text against the .ein grammar and rules; returns them and every vertex's (shape, dtype)."""
    problems, tensors = [], {}

    def define(name, shape, dtype, where):
        if "__" in name:
            problems.append(f"{where}: reserved name '{name}'")
        if name in tensors:
            problems.append(f"{where}: '{name}' defined twice")
        if len(shape) > 8:
            problems.append(f"{where}: more than 8 dimensions")
        tensors[name] = (shape, dtype)

    for number, line in enumerate(text.splitlines(), 1):
        where = f"line {number}"
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if m := INPUT_RE.fullmatch(line):
            define(m.group(1), tuple(int(e) for e in m.group(3).split(",") if e), m.group(2), where)
        elif m := SOFTMAX_RE.fullmatch(line):
            if m.group(2) not in tensors or not tensors[m.group(2)][0]:
                problems.append(f"{where}: softmax of an undefined or 0-d tensor")
            else:
                define(m.group(1), *tensors[m.group(2)], where)
        elif m := EINSUM_RE.fullmatch(line):
            args = m.group(3)[2:].split(", ")
            ops = dict(kv.split("=") for kv in m.group(4)[2:].split(", ") if kv)
            found = check_einsum(m.group(2), args, ops, tensors)
            problems += [f"{where}: {p}" for p in found]
            if not found:
                terms, out = split_equation(m.group(2))
                extents = {label: tensors[a][0][i] for a, t in zip(args, terms) for i, label in enumerate(t)}
                define(m.group(1), tuple(extents[label] for label in out), tensors[args[0]][1], where)
        elif m := OUTPUT_RE.fullmatch(line):
            problems += [f"{where}: output of undefined '{o}'" for o in m.group(1).split(", ") if o not in tensors]
        else:
            problems.append(f"{where}: not a statement of the grammar: {line}")
    return problems, tensors


def check_einsum(eq, args, ops, tensors):
    problems = []
    terms, out = split_equation(eq)
    if len(terms) != len(args):
        return [f"{len(terms)} operand(s) in '{eq}' but {len(args)} given"]
    if any(a not in tensors for a in args):
        return [f"undefined operand in {args}"]
    if len({tensors[a][1] for a in args}) > 1:
        problems.append("operands of different dtypes")
    extents = {}
    for a, t in zip(args, terms):
        if len(set(t)) != len(t) or len(t) != len(tensors[a][0]):
            problems.append(f"operand '{a}' labels '{t}' repeat or do not match its rank")
        for label, e in zip(t, tensors[a][0]):
            if extents.setdefault(label, e) != e:
                problems.append(f"label '{label}' has extents {extents[label]} and {e}")
    if len(set(out)) != len(out) or not set(out) <= set("".join(terms)):
        problems.append(f"output labels '{out}' repeat or are not in an operand")
    join, agg, mapping = ops.get("join", "mul"), ops.get("agg", "sum"), ops.get("map", "identity")
    constant_free = mapping in MAPS and mapping not in ("scale", "shift", "pow")
    if join not in JOINS or agg not in REDUCE or not (constant_free or MAP_RE.fullmatch(mapping)):
        problems.append(f"unknown op in {ops}")
    if len(args) == 1 and "join" in ops:
        problems.append("join= on a unary einsum")
    if len(args) > 2 and ((join, agg) not in NARY_OPS or mapping != "identity"):
        problems.append(f"n-ary einsum with {ops}")
    return problems


def self_check(cases, inputs, refs, graphs):
    """Problems of the reference side: grammar and shapes of the graphs, the generic reference against np.einsum,
    the implicit-output rule against numpy's, softmax rows, finiteness, and each case's rounding margin; also the
    largest emulated error / tolerance per dtype."""
    problems = []
    for dtype, text in graphs.items():
        found, tensors = check_graph(text)
        problems += [f"{dtype} graph {p}" for p in found]
        for n, case in enumerate(cases):
            for s in case.steps:
                shape, expected = tensors.get(prefix(n) + s.name, (None,))[0], refs[dtype][n][s.name].shape
                if shape != expected:
                    problems.append(f"{dtype} graph {prefix(n)}{s.name}: shape {shape}, numpy's {expected}")
    for n, case in enumerate(cases):
        env = refs["f64"][n]
        for s in case.steps:
            xs = [env[a] for a in s.args]
            where = f"{prefix(n)}{s.name} {s.eq or 'softmax'}"
            if not np.all(np.isfinite(env[s.name])):
                problems.append(f"{where}: reference is not finite")
            if s.kind == "softmax":
                rows = np.sum(env[s.name], axis=-1)
                if rel_error(rows, np.ones_like(rows)) > 1e-14 or np.min(env[s.name]) < 0:
                    problems.append(f"{where}: softmax rows do not sum to 1")
                continue
            if is_plain(s.ops) and rel_error(generic_einsum(s.eq, xs, s.ops), env[s.name]) > 1e-13:
                problems.append(f"{where}: generic reference differs from np.einsum")
            if "->" not in s.eq:
                terms, out = split_equation(s.eq)
                ours, numpys = np.einsum(",".join(terms) + "->" + out, *xs), np.einsum(s.eq, *xs)
                if np.shape(ours) != np.shape(numpys) or rel_error(ours, numpys) > 1e-13:
                    problems.append(f"{where}: implicit output '{out}' differs from numpy's")
    worst = {}
    for dtype in DTYPES:
        for n, case in enumerate(cases):
            emulated = evaluate(case, inputs[dtype][n], naive_einsum)
            ratio = max(rel_error(emulated[o], refs[dtype][n][o]) for o in case.outputs) / TOL[dtype]
            worst[dtype] = max(worst.get(dtype, (0.0, "")), (ratio, prefix(n)[:-1]))
            if ratio > 0.25:
                problems.append(f"{prefix(n)[:-1]} {case.title()}: {dtype} emulation uses {ratio:.2f} of the tolerance")
    return problems, worst


def compare(cases, refs, dtype, out_path):
    """Failure lines of one einrel output file, one per failing case."""
    failures = []
    with h5py.File(out_path, "r") as f:
        for n, case in enumerate(cases):
            why = []
            for o in case.outputs:
                name, expected = prefix(n) + o, refs[n][o]
                if name not in f:
                    why.append(f"{o}: no dataset")
                    continue
                ds = f[name]
                if ds.shape != expected.shape or ds.dtype != DTYPES[dtype]:
                    why.append(f"{o}: {ds.dtype}{list(ds.shape)}, expected {dtype}{list(expected.shape)}")
                    continue
                err = rel_error(ds[()], expected)
                if not err <= TOL[dtype]:
                    why.append(f"{o}: rel err {err:.2e} > {TOL[dtype]:.0e}")
            if why:
                failures.append(f"{prefix(n)[:-1]} {case.title()}: {'; '.join(why)}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--einrel")
    ap.add_argument("--mpiexec")
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--procs", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--self-test", action="store_true", help="check the reference side and write the graphs only")
    args = ap.parse_args()
    if not args.self_test and not (args.einrel and args.mpiexec):
        ap.error("--einrel and --mpiexec are required unless --self-test")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)

    rng = np.random.default_rng(20240611)
    values = [{name: np.asarray(rng.uniform(*r, shape)) for name, shape, r in case.inputs} for case in CASES]
    # The f32 reference starts from the rounded f32 inputs, so it measures einrel's arithmetic only.
    inputs = {dtype: [{k: v.astype(t) for k, v in vs.items()} for vs in values] for dtype, t in DTYPES.items()}
    refs = {dtype: [evaluate(case, {k: v.astype(np.float64) for k, v in inputs[dtype][n].items()}, reference_einsum)
                    for n, case in enumerate(CASES)] for dtype in DTYPES}
    graphs = {dtype: graph_text(CASES, dtype) for dtype in DTYPES}
    for dtype in DTYPES:
        with open(os.path.join(args.work_dir, f"{dtype}.ein"), "w") as f:
            f.write(graphs[dtype])
        with h5py.File(os.path.join(args.work_dir, f"{dtype}_in.h5"), "w") as f:
            for n, vs in enumerate(inputs[dtype]):
                for name, v in vs.items():
                    f.create_dataset(prefix(n) + name, data=v)

    problems, worst = self_check(CASES, inputs, refs, graphs)
    for p in problems:
        print(f"self-check: {p}")
    margins = ", ".join(f"{d} {r:.3f} ({c})" for d, (r, c) in worst.items())
    print(f"self-check: {len(CASES)} cases, {len(problems)} problem(s); largest emulated error / tolerance: {margins}")
    if problems or args.self_test:
        return 1 if problems else 0

    failures = 0
    for dtype in DTYPES:
        for p in args.procs:
            out = f"{dtype}_out_p{p}.h5"
            cmd = [args.mpiexec, "-n", str(args.ranks), args.einrel, "run", f"{dtype}.ein", "--input", f"{dtype}_in.h5",
                   "--output", out, "--procs", str(p)] + (["--check"] if p > 1 else [])
            start = time.time()
            try:
                run = subprocess.run(cmd, cwd=args.work_dir, capture_output=True, text=True, timeout=240)
                error = run.returncode and f"exited with {run.returncode}:\n{run.stderr.strip()}"
            except subprocess.TimeoutExpired:
                error = "did not finish in 240 s"
            if error:
                print(f"{dtype} procs={p}: {' '.join(cmd)} {error}")
                failures += len(CASES)  # none of its cases was checked
                continue
            lines = compare(CASES, refs[dtype], dtype, os.path.join(args.work_dir, out))
            for line in lines:
                print(f"FAIL {dtype} procs={p} {line}")
            print(f"{dtype} procs={p}: {len(CASES) - len(lines)}/{len(CASES)} cases ok ({time.time() - start:.1f} s)")
            failures += len(lines)
    print(f"{len(CASES)} cases x {len(DTYPES)} dtypes x {len(args.procs)} procs: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
