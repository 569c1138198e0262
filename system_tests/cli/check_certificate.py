#!/usr/bin/env python3
"""Checks the lower-bound certificate of `einrel plan --format json` (docs/planner.md).

The bound is recomputed here from its closed form (Al Daas, Ballard, Grigori, Kumar, Rouse 2022: with sorted
dimensions d1 >= d2 >= d3 of a product on P ranks, the least data one rank touches is 3 (d1 d2 d3 / P)^(2/3)
when P >= d1 d2 / d3^2, d1 d2 / P + 2 (d1 d2 d3^2 / P)^(1/2) when P >= d1 / d2, d1 d2 / P + d2 d3 + d1 d3 / P
otherwise, less the even share (d1 d2 + d1 d3 + d2 d3) / P; a batch of B products is one product on P / B
ranks, or nothing to receive when B >= P). Where the plan has one part per rank, the elements the busiest
rank touches are recomputed from the partition vector: one block of X, Y and Z each.

1. Square, tall-skinny and flat products at P = 2, 4, 8, 16, 64: the certificate's bound and touched
   elements agree with the recomputation, touched >= bound, and eindecomp's ratio is at most 1.15 wherever
   a brick-shaped schedule reaches it (every P here but 2 for square and flat, where the best brick is at
   1.28 and 1.21).
2. Random graphs of contractions (batch labels, several vertices) at random p and R: every certificate
   vertex has touched >= bound and the bound of the closed form.
"""
import argparse
import math
import os
import random
import sys

import check_common


def bound(m, n, k, batch, p):
    if p <= batch:
        return 0.0
    p = p / batch
    d1, d2, d3 = sorted((m, n, k), reverse=True)
    if p >= d1 * d2 / (d3 * d3):
        touched = 3 * (d1 * d2 * d3 / p) ** (2 / 3)
    elif p >= d1 / d2:
        touched = d1 * d2 / p + 2 * math.sqrt(d1 * d2 * d3 * d3 / p)
    else:
        touched = d1 * d2 / p + d2 * d3 + d1 * d3 / p
    return max(0.0, touched - (d1 * d2 + d1 * d3 + d2 * d3) / p)


def groups(equation, extent):
    """(rows, cols, inner, batch) of a binary equation, extents multiplied."""
    lhs, out = equation.split("->")
    x, y = lhs.split(",")
    g = {"rows": 1, "cols": 1, "inner": 1, "batch": 1}
    for label in dict.fromkeys(x + y):
        key = ("batch" if label in out else "inner") if label in x and label in y else ("rows" if label in x else "cols")
        g[key] *= extent[label]
    return g


def plan(args, path, procs, ranks=None):
    return check_common.plan_json(args.einrel, path, ["--procs", str(procs)] + (["--ranks", str(ranks)] if ranks else []))


def write_graph(path, inputs, einsums, outputs):
    with open(path, "w") as f:
        for name, shape in inputs:
            f.write(f"input {name} f64[{','.join(map(str, shape))}]\n")
        for name, equation, operands in einsums:
            f.write(f'{name} = einsum("{equation}", {", ".join(operands)})\n')
        f.write(f"output {', '.join(outputs)}\n")


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=3)
    args = check_common.parse_args(ap)
    failures = []

    products = {"square": (4096, 4096, 4096), "tall": (65536, 256, 256), "flat": (4096, 4096, 64)}
    unreachable = {("square", 2), ("flat", 2)}
    for name, (m, n, k) in products.items():
        path = os.path.join(args.work_dir, f"{name}.ein")
        write_graph(path, [("A", (m, k)), ("B", (k, n))], [("C", "ik,kj->ij", ["A", "B"])], ["C"])
        for p in (2, 4, 8, 16, 64):
            result = plan(args, path, p)
            cert = result["certificate"]
            row = next(v for v in cert["vertices"] if v["name"] == "C")
            where = f"{name} P={p}"
            want = bound(m, n, k, 1, p)
            if not close(row["lower_bound"], want):
                failures.append(f"{where}: bound {row['lower_bound']}, closed form {want}")
            parts = next(v for v in result["nodes"] if v["name"] == "C")["partition"]
            if math.prod(parts.values()) == cert["ranks"] == p:
                touched = m * k / (parts["i"] * parts["k"]) + k * n / (parts["k"] * parts["j"]) + \
                    m * n / (parts["i"] * parts["j"]) - (m * k + k * n + m * n) / p
                if not close(row["touched"], touched):
                    failures.append(f"{where} {parts}: touched {row['touched']}, from the partition {touched}")
            if row["touched"] < want * (1 - 1e-9):
                failures.append(f"{where}: touched {row['touched']} below the bound {want}")
            ratio = row["touched"] / want
            print(f"{where}: {parts} ratio {ratio:.3f}")
            if (name, p) not in unreachable and ratio > 1.15:
                failures.append(f"{where}: ratio {ratio:.3f} > 1.15")

    rng = random.Random(args.seed)
    checked = 0
    for g in range(12):
        letters = "abcdefgh"
        extent = {c: rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 32]) for c in letters}
        x = "".join(rng.sample(letters, rng.randint(2, 4)))
        y = "".join(rng.sample([c for c in letters if c not in x], rng.randint(1, 2))) + "".join(
            rng.sample(x, rng.randint(1, len(x))))
        out = "".join(c for c in dict.fromkeys(x + y) if (c not in x or c not in y) or rng.random() < 0.3)
        z = "".join(rng.sample(out, len(out))) if out else ""
        w = "".join(rng.sample([c for c in letters if c not in z], 1)) + (z[:1] if z else "")
        second = f"{z},{w}->" + "".join(c for c in dict.fromkeys(z + w) if (c in z) != (c in w))
        inputs = [("X", [extent[c] for c in x]), ("Y", [extent[c] for c in y]), ("W", [extent[c] for c in w])]
        path = os.path.join(args.work_dir, f"random{g}.ein")
        write_graph(path, inputs, [("Z", f"{x},{y}->{z}", ["X", "Y"]), ("V", second, ["Z", "W"])], ["V"])
        p = rng.choice([2, 3, 4, 6, 8, 12])
        ranks = rng.choice([p, max(1, p // 2), p + 1])
        result = plan(args, path, p, ranks)
        # The plan may run the two products as one n-ary einsum in another order, with its own letters: each
        # node's extents come from its operands' shapes.
        shapes = dict(inputs)
        shapes.update({v["name"]: v["shape"] for v in result["nodes"]})
        nodes = {v["name"]: v for v in result["nodes"]}
        for row in result["certificate"]["vertices"]:
            node = nodes[row["name"]]
            ops = node["equation"].split("->")[0].split(",")
            labels = {c: n for op, operand in zip(ops, node["inputs"]) for c, n in zip(op, shapes[operand])}
            gr = groups(node["equation"], labels)
            want = bound(gr["rows"], gr["cols"], gr["inner"], gr["batch"], ranks)
            where = f"{path} {row['name']} = {node['equation']} p={p} R={ranks}"
            if not close(row["lower_bound"], want):
                failures.append(f"{where}: bound {row['lower_bound']}, closed form {want}")
            if row["touched"] < row["lower_bound"] * (1 - 1e-9) - 1e-9:
                failures.append(f"{where}: touched {row['touched']} below the bound {row['lower_bound']}")
            checked += 1
    print(f"{checked} certificate vertices of random graphs checked")
    if checked < 12:
        failures.append("too few random vertices with a certificate")
    return check_common.finish(failures, "plan certificate")


if __name__ == "__main__":
    sys.exit(main())
