#!/usr/bin/env python3
"""`einrel grad` then `einrel run` against central finite differences of a numpy forward pass.

Each case is a graph of einsum steps ending in a 0-d loss. The script writes it as a .ein file, asks `einrel grad`
for the gradient graph with respect to some inputs, runs that with `mpiexec.mpich -n R einrel run` on random f64
inputs, and compares every element of every grad_W with (L(W + h e) - L(W - h e)) / 2h, where L is this script's own
numpy evaluation of the forward graph (the conformance test's broadcasting reference, sharing no code with
einrel). The loss that einrel reports must
equal numpy's too. Besides the fixed cases (every join, agg and map op, softmax attention, an MLP with
cross-entropy), --random N adds random graphs of contractions and element-wise ops from --seed.
"""
import argparse
import os
import random
import shutil
import sys

import h5py
import numpy as np

from check_common import run_watched

H = 1e-6  # central differences: truncation ~H^2, rounding ~1e-16/H

# The numpy reference of the conformance test: any join, agg and map by broadcasting.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
from numpy_conformance import generic_einsum  # noqa: E402


def einsum(eq, xs, **ops):
    return generic_einsum(eq, xs, ops)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class Case:
    """inputs: name -> (shape, (lo, hi)); steps: (name, eq, operands, ops) or (name, "softmax", [x], {})."""

    def __init__(self, title, inputs, steps, wrt, loss=None):
        self.title, self.inputs, self.steps, self.wrt = title, inputs, steps, wrt
        self.loss = loss or steps[-1][0]

    def text(self):
        lines = [f"input {n} f64[{','.join(map(str, s))}]" for n, (s, _) in self.inputs.items()]
        for name, eq, operands, ops in self.steps:
            if eq == "softmax":
                lines.append(f"{name} = softmax({operands[0]})")
                continue
            extra = "".join(f", {k}={v}" for k, v in ops.items())
            lines.append(f'{name} = einsum("{eq}", {", ".join(operands)}{extra})')
        lines.append(f"output {self.loss}")
        return "\n".join(lines) + "\n"

    def forward(self, values):
        env = dict(values)
        for name, eq, operands, ops in self.steps:
            xs = [env[o] for o in operands]
            env[name] = softmax(xs[0]) if eq == "softmax" else einsum(eq, xs, **ops)
        return float(env[self.loss])


def S(name, eq, *operands, **ops):
    return (name, eq, list(operands), ops)


U, POS = (-1.0, 1.0), (0.5, 1.5)


def fixed_cases():
    c = []
    c.append(Case("contraction chain", {"A": ((3, 4), U), "B": ((4, 5), U), "C": ((5,), U)},
                  [S("T", "ij,jk->ik", "A", "B"), S("L", "ik,k->", "T", "C")], ["A", "B", "C"]))
    c.append(Case("transposed contraction, squared loss", {"A": ((4, 3), U), "B": ((5, 4), U)},
                  [S("T", "ji,kj->ki", "A", "B"), S("L", "ki->", "T", map="square")], ["A", "B"]))
    c.append(Case("batched contraction with a label only in one operand",
                  {"A": ((2, 3, 4), U), "B": ((2, 4), U)},
                  [S("T", "bij,bj->bj", "A", "B"), S("L", "bj,bj->", "T", "T")], ["A", "B"]))
    c.append(Case("div and tanh", {"X": ((3, 4), U), "Y": ((4,), POS)},
                  [S("T", "ij,j->ij", "X", "Y", join="div", map="tanh"), S("L", "ij->", "T", map="square")],
                  ["X", "Y"]))
    c.append(Case("sigmoid and pow", {"X": ((3, 4), U), "W": ((4, 2), U)},
                  [S("T", "ij,jk->ik", "X", "W", map="sigmoid"), S("P", "ik->ik", "T", map="pow(2.5)"),
                   S("L", "ik->", "P")], ["X", "W"]))
    c.append(Case("exp, log, sqrt chain", {"X": ((5, 3), U), "Y": ((3,), POS)},
                  [S("E", "ij->ij", "X", map="exp"), S("Q", "ij,j->ij", "E", "Y", join="add", map="sqrt"),
                   S("G", "ij->i", "Q", map="log"), S("L", "i->", "G", map="pow(-1.5)")], ["X", "Y"]))
    c.append(Case("sub, neg, scale, shift, abs, relu", {"X": ((4, 3), U), "Y": ((3, 4), U)},
                  [S("D", "ij,ji->ij", "X", "Y", join="sub", map="abs"), S("N", "ij->ij", "D", map="neg"),
                   S("R", "ij,ji->ij", "N", "Y", join="add", map="relu"), S("K", "ij->ji", "R", map="scale(-2.5)"),
                   S("M", "ji->j", "K", map="shift(0.75)"), S("L", "j->", "M", map="square")], ["X", "Y"]))
    c.append(Case("max and min aggregation", {"X": ((4, 6), U), "Y": ((6, 3), U)},
                  [S("M", "ij,jk->ik", "X", "Y", agg="max"), S("N", "ik->k", "M", agg="min"),
                   S("L", "k->", "N", map="exp")], ["X", "Y"]))
    c.append(Case("max-plus and min joins", {"X": ((4, 5), U), "Y": ((5, 3), U)},
                  [S("M", "ij,jk->ik", "X", "Y", join="add", agg="max"),
                   S("N", "ik,ik->ik", "M", "M", join="min", map="square"),
                   S("P", "ij,ij->ij", "X", "X", join="max"), S("Q", "ik,ij->", "N", "P"),
                   S("R", "ik,ik->ik", "M", "N", join="max"), S("L", "ik,->", "R", "Q")],
                  ["X", "Y"], loss="L"))
    c.append(Case("sqdiff and absdiff", {"X": ((4, 3), U), "Y": ((5, 3), U)},
                  [S("D", "ik,jk->ij", "X", "Y", join="sqdiff"), S("A", "ik,jk->ij", "X", "Y", join="absdiff"),
                   S("L", "ij,ij->", "D", "A")], ["X", "Y"]))
    c.append(Case("product aggregation", {"X": ((3, 4), POS), "Y": ((4,), POS)},
                  [S("P", "ij,j->i", "X", "Y", agg="prod"), S("L", "i->", "P", map="log")], ["X", "Y"]))
    c.append(Case("sum broadcast over labels no other operand has", {"X": ((3, 4), U), "Y": ((5,), U)},
                  [S("T", "ij,k->k", "X", "Y", join="add"), S("Z", "ij->", "X", map="sigmoid"),
                   S("L", "k,->", "T", "Z", map="tanh")], ["X", "Y"]))
    c.append(Case("one tensor read by several vertices", {"X": ((3, 3), U), "W": ((3, 3), U)},
                  [S("A", "ij,jk->ik", "X", "W"), S("B", "ij,jk->ik", "A", "X"), S("C", "ij,ji->ij", "B", "W", join="sub"),
                   S("L", "ij,ij->", "C", "A")], ["X", "W"]))
    c.append(Case("softmax over rows", {"X": ((3, 5), U), "Y": ((3, 5), U)},
                  [S("P", "softmax", "X"), S("L", "ij,ij->", "P", "Y")], ["X", "Y"]))
    # Multi-head attention (eindecomp.txt §3) with a squared-output loss.
    s, a, h, d = 4, 6, 2, 3
    c.append(Case("attention with softmax",
                  {"X": ((s, a), U), "WQ": ((a, h, d), U), "WK": ((a, h, d), U), "WV": ((a, h, d), U),
                   "WO": ((a, h, d), U)},
                  [S("Q", "sa,ahd->shd", "X", "WQ"), S("K", "sa,ahd->shd", "X", "WK"),
                   S("V", "sa,ahd->shd", "X", "WV"), S("T1", "shd,thd->hst", "Q", "K"),
                   S("T2", "hst->hst", "T1", map=f"scale({float(1 / np.sqrt(d))!r})"), S("T3", "softmax", "T2"),
                   S("O", "hst,thd->shd", "T3", "V"), S("Y", "shd,ahd->sa", "O", "WO"),
                   S("L", "sa->", "Y", map="square")], ["X", "WQ", "WK", "WV", "WO"]))
    # Two-layer MLP with softmax cross-entropy against one-hot labels (an input not differentiated).
    n, f, hid, k = 5, 4, 6, 3
    c.append(Case("MLP with cross-entropy",
                  {"X": ((n, f), U), "W1": ((f, hid), U), "b1": ((hid,), U), "W2": ((hid, k), U), "b2": ((k,), U),
                   "Y": ((n, k), "onehot")},
                  [S("H0", "nf,fh->nh", "X", "W1"), S("H", "nh,h->nh", "H0", "b1", join="add", map="relu"),
                   S("Z0", "nh,hk->nk", "H", "W2"), S("Z", "nk,k->nk", "Z0", "b2", join="add"), S("P", "softmax", "Z"),
                   S("LP", "nk->nk", "P", map="log"), S("C", "nk,nk->", "Y", "LP"),
                   S("L", "->", "C", map=f"scale({-1 / n!r})")], ["W1", "b1", "W2", "b2"]))
    return c


def random_cases(count, seed):
    """Chains of steps, each reading the previous result and an input: contractions, element-wise joins
    with a map whose domain the values stay in, and reductions; then a sum of squares."""
    rng = random.Random(seed)
    cases = []
    for g in range(count):
        letters = "ijkl"
        ext = {c: rng.randint(2, 4) for c in letters}
        inputs, steps = {}, []
        cur_labels = "".join(rng.sample(letters, 2))
        inputs["X0"] = ((tuple(ext[c] for c in cur_labels)), U)
        cur = "X0"
        for t in range(rng.randint(2, 4)):
            other = "".join(rng.sample(letters, rng.randint(1, 2)))
            name_in = f"X{t + 1}"
            kind = rng.choice(["contract", "join", "reduce"])
            union = "".join(dict.fromkeys(cur_labels + other))
            if kind == "contract":
                out = "".join(c for c in union if c not in (set(cur_labels) & set(other))) or union[:1]
                inputs[name_in] = (tuple(ext[c] for c in other), U)
                steps.append(S(f"T{t}", f"{cur_labels},{other}->{out}", cur, name_in,
                               map=rng.choice(["identity", "tanh", "sigmoid"])))
            elif kind == "join":
                out = union
                join, rng_in = rng.choice([("add", U), ("sub", U), ("mul", U), ("div", POS), ("max", U)])
                inputs[name_in] = (tuple(ext[c] for c in other), rng_in)
                steps.append(S(f"T{t}", f"{cur_labels},{other}->{out}", cur, name_in, join=join,
                               map=rng.choice(["identity", "tanh", "sigmoid", "square"])))
            else:
                out = cur_labels[: rng.randint(0, len(cur_labels) - 1)] or ""
                steps.append(S(f"T{t}", f"{cur_labels}->{out}", cur, agg=rng.choice(["sum", "max", "min"]),
                               map=rng.choice(["identity", "exp", "square"])))
                inputs.pop(name_in, None)
            cur, cur_labels = f"T{len(steps) - 1}", out
            if not cur_labels:
                break
        steps.append(S("L", f"{cur_labels}->", cur, map="square"))
        cases.append(Case(f"random graph {g}", inputs, steps, sorted(inputs)))
    return cases


def make_inputs(case, rng):
    values = {}
    for name, (shape, ranges) in case.inputs.items():
        if ranges == "onehot":
            v = np.zeros(shape)
            v[np.arange(shape[0]), rng.integers(0, shape[1], shape[0])] = 1.0
        else:
            v = rng.uniform(ranges[0], ranges[1], shape)
        values[name] = np.asarray(v, dtype=np.float64)
    return values


def finite_differences(case, values, w):
    grad = np.zeros_like(values[w])
    for idx in np.ndindex(values[w].shape):
        plus, minus = dict(values), dict(values)
        plus[w], minus[w] = values[w].copy(), values[w].copy()
        plus[w][idx] += H
        minus[w][idx] -= H
        grad[idx] = (case.forward(plus) - case.forward(minus)) / (2 * H)
    return grad


def run(cmd):
    r = run_watched(cmd, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


def check_errors(args):
    """Bad requests at 2 ranks: status 1, one `einrel: error:` line naming the problem, no output file."""
    graph = os.path.join(args.work_dir, "errors.ein")
    with open(graph, "w") as f:
        f.write('input A f64[3,4]\nT = einsum("ij->i", A)\nL = einsum("i->", T)\noutput L\n')
    out = os.path.join(args.work_dir, "errors-grad.ein")
    cases = [(["--loss", "T", "--wrt", "A"], "the loss 'T' must be 0-d"),
             (["--loss", "L", "--wrt", "B"], "no input named 'B'"),
             (["--loss", "L", "--wrt", "T"], "'T' is computed by an einsum"),
             (["--loss", "L"], "grad needs --loss L and --wrt"),
             (["--loss", "L", "--wrt", "A,"], "--wrt needs comma-separated names")]
    failures = []
    for extra, expected in cases:
        r = run_watched([args.mpiexec, "-n", "2", args.einrel, "grad", graph, "--output", out] + extra, timeout=120)
        lines = [line for line in r.stderr.splitlines() if line.startswith("einrel: error:")]
        if r.returncode == 0 or len(lines) != 1 or expected not in lines[0] or os.path.exists(out):
            failures.append(f"grad {' '.join(extra)}: status {r.returncode}, stderr {r.stderr!r}, "
                            f"output {'exists' if os.path.exists(out) else 'absent'}")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", default="mpiexec.mpich")
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--ranks", default="1,2,3", help="ranks of `einrel run`, cycled over the cases")
    ap.add_argument("--random", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    ranks = [int(r) for r in args.ranks.split(",")]
    rng = np.random.default_rng(args.seed)
    failures, checked = [], 0
    for n, case in enumerate(fixed_cases() + random_cases(args.random, args.seed)):
        base = os.path.join(args.work_dir, f"case{n}")
        with open(base + ".ein", "w") as f:
            f.write(case.text())
        values = make_inputs(case, rng)
        with h5py.File(base + "-in.h5", "w") as f:
            for name, v in values.items():
                f[name] = v
        r = ranks[n % len(ranks)]
        try:
            run([args.einrel, "grad", base + ".ein", "--loss", case.loss, "--wrt", ",".join(case.wrt),
                 "--output", base + "-grad.ein"])
            run([args.mpiexec, "-n", str(r), args.einrel, "run", base + "-grad.ein", "--input", base + "-in.h5",
                 "--output", base + "-out.h5"])
        except RuntimeError as e:
            failures.append(f"{case.title}: {e}")
            continue
        with h5py.File(base + "-out.h5", "r") as f:
            got = {k: np.array(f[k]) for k in f.keys()}
        loss = case.forward(values)
        if not np.isclose(float(got[case.loss]), loss, rtol=1e-12, atol=1e-14):
            failures.append(f"{case.title}: loss {float(got[case.loss])!r}, numpy {loss!r}")
        for w in case.wrt:
            fd = finite_differences(case, values, w)
            g = got.get("grad_" + w)
            if g is None or g.shape != fd.shape:
                failures.append(f"{case.title}: grad_{w} missing or of shape {None if g is None else g.shape}")
                continue
            scale = max(1.0, float(np.max(np.abs(fd))))
            err = float(np.max(np.abs(g - fd))) / scale
            checked += fd.size
            if not err < 1e-6:
                failures.append(f"{case.title} (np{r}): grad_{w} differs from finite differences by {err:.3g} "
                                f"(relative to max |grad| {scale:.3g})\n  einrel {g.ravel()[:6]}\n  fd     {fd.ravel()[:6]}")
    failures += check_errors(args)
    for f in failures:
        print("FAIL", f)
    print(f"{checked} gradient elements of {len(fixed_cases()) + args.random} graphs matched central finite "
          f"differences; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
