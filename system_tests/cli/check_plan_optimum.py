#!/usr/bin/env python3
"""Checks `einrel plan --format json` against an independent brute force of both cost models.

On random tree-shaped graph files (every EinSum result read at most once; uneven extents), p from 2 to 32
(powers of two and 3, 6, 12: parts are any factorization of p) and
each cost model: eindecomp's total_cost must equal the least total over every combination of viable
partition vectors; every planner's nodes must hold viable vectors whose costs the model reproduces, summing
to total_cost, and no baseline may beat eindecomp. The models are written here from their formulas
(docs/planner.md), sharing no code with einrel: n_X = prod(b / d) with real division, N_X = prod(b),
aggregation (J / n_agg)(n_agg - 1) n_Z in both, edges from graph inputs free in both;
paper (docs/planner.md): join J (n_X + n_Y), repartition (n_c / n_int - 1)(n / n_c)(n_c + n_p)
  + [n_p != n_int] n_p n / n_c;
engine: join sum over operands of J n_X - N_X, repartition n (1 - n_int / n_p).
"""
import argparse
import concurrent.futures
import itertools
import math
import os
import random
import shutil
import sys

import check_common

import numpy as np

PLANNERS = ["eindecomp", "sqrt", "data", "greedy"]
MODELS = ["engine", "paper"]
EXTENTS = [1, 2, 3, 4, 5, 6, 8, 12, 16, 32]
MAX_COMBINATIONS = 2_000_000


class Node:
    def __init__(self, name, shape, equation=None, operands=()):
        self.name, self.shape, self.operands = name, list(shape), list(operands)
        self.equation = equation
        if equation:
            lhs, self.out = equation.split("->")
            self.ins = lhs.split(",")
            self.labels = "".join(dict.fromkeys("".join(self.ins)))
            self.extent = {}
            for labels, op in zip(self.ins, self.operands):
                self.extent.update(zip(labels, op.shape))


def random_tree(rng, n_einsums):
    """A random tree-shaped graph: inputs may be shared, EinSum results are read at most once."""
    nodes, pool = [], []

    def new_input():
        shape = [rng.choice(EXTENTS) for _ in range(rng.randint(1, 3))]
        node = Node(f"I{len(nodes)}", shape)
        nodes.append(node)
        pool.append(node)

    new_input()
    new_input()
    for _ in range(n_einsums):
        if rng.random() < 0.3:
            new_input()
        operands = []
        for _ in range(rng.randint(1, 2)):
            pick = rng.choice(pool)
            operands.append(pick)
            if pick.equation:
                pool.remove(pick)
            if not pool:
                new_input()
        fresh = iter("abcdefgh")
        labels = ["".join(next(fresh) for _ in operands[0].shape)]
        if len(operands) == 2:
            second = ""
            for extent in operands[1].shape:
                shared = [c for c, e in zip(labels[0], operands[0].shape) if e == extent and c not in second]
                second += shared[0] if shared and rng.random() < 0.6 else next(fresh)
            labels.append(second)
        unique = list(dict.fromkeys("".join(labels)))
        rng.shuffle(unique)
        out = "".join(unique[: rng.randint(0, min(3, len(unique)))])
        extent = {c: e for ls, op in zip(labels, operands) for c, e in zip(ls, op.shape)}
        node = Node(f"V{len(nodes)}", [extent[c] for c in out], ",".join(labels) + "->" + out, operands)
        nodes.append(node)
        pool.append(node)
    return nodes


def graph_text(nodes):
    lines = []
    for n in nodes:
        if n.equation is None:
            lines.append(f"input {n.name} f64[{','.join(map(str, n.shape))}]")
        else:
            extra = ", join=add" if len(n.operands) == 2 else ""
            lines.append(f'{n.name} = einsum("{n.equation}", {", ".join(o.name for o in n.operands)}{extra})')
    lines.append("output " + nodes[-1].name)
    return "\n".join(lines) + "\n"


def viable(node, p):
    """Parts per unique label dividing p, at most the extent, product p (else the largest divisor of p that
    some such vector reaches), by brute force over every combination."""
    options = [[k for k in range(1, min(node.extent[c], p) + 1) if p % k == 0] for c in node.labels]
    combos = [parts for parts in itertools.product(*options) if p % math.prod(parts) == 0]
    target = max(math.prod(parts) for parts in combos)
    return [dict(zip(node.labels, parts)) for parts in combos if math.prod(parts) == target]


def block(shape, parts):
    n = 1.0
    for b, d in zip(shape, parts):
        n *= b / d
    return n


def local_cost(node, d, model):
    joins = float(np.prod([d[c] for c in node.labels]))
    copies = [joins * block(op.shape, [d[c] for c in ls]) for ls, op in zip(node.ins, node.operands)]
    if model == "engine":
        copies = [c - float(np.prod(op.shape)) for c, op in zip(copies, node.operands)]
    join = sum(copies)
    n_agg = float(np.prod([d[c] for c in node.labels if c not in node.out]))
    agg = joins / n_agg * (n_agg - 1) * block(node.shape, [d[c] for c in node.out])
    return join, agg


def repartition(shape, producer, consumer, model):
    n_p = block(shape, producer)
    n_c = block(shape, consumer)
    n_int = 1.0
    for b, dp, dc in zip(shape, producer, consumer):
        n_int *= min(b / dp, b / dc)
    n = float(np.prod(shape)) if shape else 1.0
    if model == "engine":
        return max(0.0, n * (1 - n_int / n_p))
    return (n_c / n_int - 1) * (n / n_c) * (n_c + n_p) + (n_p * n / n_c if n_p != n_int else 0.0)


def edge_cost(node, k, d, producer_d, model):
    op = node.operands[k]
    if op.equation is None:
        return 0.0
    return repartition(op.shape, [producer_d[c] for c in op.out], [d[c] for c in node.ins[k]], model)


def optimum(nodes, p, model):
    """Least total over all combinations (numpy broadcasting over one axis per EinSum vertex), or None."""
    einsums = [n for n in nodes if n.equation]
    choices = [viable(n, p) for n in einsums]
    if np.prod([float(len(c)) for c in choices]) > MAX_COMBINATIONS:
        return None
    axis = {n.name: i for i, n in enumerate(einsums)}
    total = np.zeros([len(c) for c in choices])

    def along(*axes_and_values):
        shape = [1] * len(einsums)
        for a, size in axes_and_values:
            shape[a] = size
        return shape

    for i, (n, ds) in enumerate(zip(einsums, choices)):
        local = np.array([sum(local_cost(n, d, model)) for d in ds])
        total = total + local.reshape(along((i, len(ds))))
        for k, op in enumerate(n.operands):
            if op.equation is None:
                continue
            j = axis[op.name]
            # cost[producer choice, consumer choice] laid along axes j < i (producers come first)
            cost = np.array([[edge_cost(n, k, d, dp, model) for d in ds] for dp in choices[j]])
            total = total + cost.reshape(along((j, len(choices[j])), (i, len(ds))))
    return float(total.min())


def plan(args, graph, p, planner, model, launcher=()):
    # --objective model: the planners' own decomposable models, which the dynamic program minimises (the
    # default objective costs plans by the engine's dry run instead, docs/planner.md)
    options = ["--planner", planner, "--cost-model", model, "--objective", "model"]
    if p is not None:
        options += ["--procs", str(p)]
    return check_common.plan_json(args.einrel, graph, options, launcher)


def check_nodes(nodes, p, model, result):
    """The reported vectors are viable and the model reproduces the reported costs."""
    errors = []
    by_name = {n.name: n for n in nodes}
    chosen = {entry["name"]: entry["partition"] for entry in result["nodes"]}
    summed = 0.0
    for entry in result["nodes"]:
        n = by_name[entry["name"]]
        d = entry["partition"]
        if d not in viable(n, p):
            errors.append(f"{n.name}: {d} is not viable for p = {p}")
            continue
        join, agg = local_cost(n, d, model)
        rep = sum(edge_cost(n, k, d, chosen.get(op.name), model) for k, op in enumerate(n.operands))
        for key, want in (("join", join), ("agg", agg), ("repartition", rep)):
            if not np.isclose(entry["cost"][key], want, rtol=1e-12, atol=0):
                errors.append(f"{n.name}: {key} {entry['cost'][key]} but the model gives {want}")
        summed += join + agg + rep
    if not np.isclose(result["total_cost"], summed, rtol=1e-12, atol=0):
        errors.append(f"total_cost {result['total_cost']} but the nodes sum to {summed}")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--graphs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    rng = random.Random(args.seed)
    failures, compared, beaten = [], 0, 0
    # Each `einrel plan` is a short process whose time is mostly start-up; two at a time keep both cores busy.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    for g in range(args.graphs):
        nodes = random_tree(rng, 2 + g % 6)
        path = os.path.join(args.work_dir, f"tree{g}.ein")
        with open(path, "w") as f:
            f.write(graph_text(nodes))
        cases = list(itertools.product((2, 3, 4, 6, 8, 12, 16, 32), MODELS))
        runs = {(p, model, name): pool.submit(plan, args, path, p, name, model)
                for p, model in cases for name in PLANNERS}
        for p, model in cases:
            where = f"{path} p={p} {model} model"
            best = optimum(nodes, p, model)
            results = {name: runs[(p, model, name)].result() for name in PLANNERS}
            for name, result in results.items():
                failures += [f"{where} {name}: {e}" for e in check_nodes(nodes, p, model, result)]
                if result["procs"] != p or result["planner"] != name or result["cost_model"] != model:
                    failures.append(f"{where} {name}: header {result['procs']}, {result['planner']}, "
                                    f"{result['cost_model']}")
                if result["total_cost"] < results["eindecomp"]["total_cost"] * (1 - 1e-12):
                    failures.append(f"{where}: {name} beats eindecomp")
            if best is None:
                continue
            compared += 1
            got = results["eindecomp"]["total_cost"]
            if not np.isclose(got, best, rtol=1e-9, atol=1e-9):
                failures.append(f"{where}: eindecomp total_cost {got}, brute-force optimum {best}")
            beaten += any(results[b]["total_cost"] > best * (1 + 1e-9) for b in PLANNERS[1:])
    # Under mpiexec only rank 0 prints, and p defaults to the ranks (any count); the default model is the
    # engine's.
    result = plan(args, path, None, "eindecomp", "engine", [args.mpiexec, "-n", "3"])
    if result["procs"] != 3:
        failures.append(f"mpiexec -n 3: procs {result['procs']}, expected 3")
    for f in failures:
        print("FAIL", f)
    print(f"{compared} (graph, p, model) triples matched the brute-force optimum; "
          f"in {beaten} of them some baseline was worse; {len(failures)} failures")
    if compared < args.graphs * 6:
        print("FAIL too few pairs small enough for brute force")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
