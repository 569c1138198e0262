#!/usr/bin/env python3
"""Checks `einrel reshard --format json` against the paper's model, written here from its text.

array-redistribution-collectives.txt: types `[3{x}12,2{y}12]` with mesh axes minor first (§2.1), the
collectives of §2.6 on several axes at once (§7.1), the costs of Fig. 11 (allgather the local size after,
alltoall and allpermute the local size before, dynslice 0), the memory height bound (4) and the near
optimality of Theorem 6.7 (cost <= optimum + the target's local size). Sharing no code with einrel, on the
paper's Examples 3.1 and 4.9 and Fig. 12, on pending reductions, and on seeded random problems like the
paper's §8 (meshes of 1-3 axes, types of 1-4 dimensions), every plan must be a sequence of legal collectives
on the local tiles whose axes move as the step says, ending on the target's local shape, with the totals it
prints, at most one allpermute, and a cost within the bound of the optimum found by a Dijkstra over
syntactic types on the prime-factored mesh (where the problem is small enough).
"""
import argparse
import heapq
import itertools
import json
import math
import random
import re
import sys
from collections import defaultdict

from check_common import run_watched

SIZES = [1, 2, 3, 4, 6, 8]


def prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


class Mesh:
    """Axes (name, size) minor first, and their prime factorization (x=4 -> x.0=2 (minor), x.1=2)."""

    def __init__(self, axes):
        self.axes = axes
        self.primes = {}  # prime axis name -> size, minor first
        self.factors = {}  # user axis name -> its prime axis names
        for name, size in axes:
            ps = prime_factors(size)
            names = [name] if len(ps) == 1 else [f"{name}.{k}" for k in range(len(ps))]
            self.factors[name] = names
            self.primes.update(zip(names, ps))

    def text(self):
        return ",".join(f"{n}={s}" for n, s in self.axes)

    def expand(self, axes):
        """Axes as JSON writes them (an axis whose prime factors all move, or a single prime factor) as
        prime axes."""
        out = []
        for a in axes:
            out += self.factors[a] if a in self.factors and a not in self.primes else [a]
        return out


class Type:
    """dims: [(global, [axes minor first])]; partial: [axes] of a pending `op` reduction."""

    def __init__(self, dims, partial=(), op="sum"):
        self.dims, self.partial, self.op = [(g, list(a)) for g, a in dims], list(partial), op

    def parts(self, i, sizes):
        return math.prod(sizes[a] for a in self.dims[i][1])

    def local_shape(self, sizes):
        return [g // self.parts(i, sizes) for i, (g, _) in enumerate(self.dims)]

    def text(self, sizes):
        dims = [f"{g // self.parts(i, sizes)}{{{','.join(a)}}}{g}" if a else str(g)
                for i, (g, a) in enumerate(self.dims)]
        pending = f" {self.op}{{{','.join(self.partial)}}}" if self.partial else ""
        return "[" + ",".join(dims) + "]" + pending

    def on_primes(self, mesh):
        return Type([(g, mesh.expand(a)) for g, a in self.dims], mesh.expand(self.partial), self.op)


def parse_type(text):
    m = re.fullmatch(r"\[(.*)\](?: (\w+)\{([^}]*)\})?", text)
    assert m, f"type {text!r}"
    dims = [(int(g or t), a.split(",") if a else [])
            for t, a, g in re.findall(r"(\d+)(?:\{([^}]*)\}(\d+))?", m.group(1))]
    return Type(dims, m.group(3).split(",") if m.group(3) else [], m.group(2) or "sum")


def size_of(shape):
    return math.prod(shape)


def step_cost(op, before, after):
    return {"allgather": size_of(after), "dynslice": 0, "allreduce": 2 * size_of(before)}.get(op, size_of(before))


def check_plan(mesh, src, dst, plan):
    """The failures of one plan (an empty list when it is right)."""
    fail = []
    sizes = mesh.primes
    psrc, pdst = src.on_primes(mesh), dst.on_primes(mesh)
    expected = {"mesh": [{"axis": n, "size": s} for n, s in mesh.axes], "from": src.text(dict(mesh.axes)),
                "to": dst.text(dict(mesh.axes)), "source_local_size": size_of(psrc.local_shape(sizes)),
                "target_local_size": size_of(pdst.local_shape(sizes)), "dtype": "f64"}
    for key, value in expected.items():
        if plan.get(key) != value:
            fail.append(f"{key} {plan.get(key)!r}, expected {value!r}")
    shape, state = psrc.local_shape(sizes), psrc

    def sets(t):
        return [set(a) for _, a in t.dims], set(t.partial)

    total, height, permutes = 0, size_of(shape), 0
    for k, step in enumerate(plan["steps"]):
        where = f"step {k} {step['op']} {step['axes']} {step['dims']}"
        op, dims, axes = step["op"], step["dims"], mesh.expand(step["axes"])
        factor = math.prod(sizes.get(a, 0) for a in axes)
        after = parse_type(step["type"])
        (dim_sets, pending), (next_sets, next_pending) = sets(state), sets(after)
        used = set().union(pending, *dim_sets)
        new, moved = list(shape), dict(enumerate(dim_sets))
        if len(set(axes)) != len(axes) or factor < 2 and op != "allpermute" or any(d >= len(shape) for d in dims):
            fail.append(f"{where}: not distinct axes of the mesh, or dims beyond the array's {len(shape)}")
            break
        if op == "allgather" and len(dims) == 1 and set(axes) <= dim_sets[dims[0]]:
            new[dims[0]] *= factor
            moved[dims[0]] = dim_sets[dims[0]] - set(axes)
        elif op == "dynslice" and len(dims) == 1 and not set(axes) & used and shape[dims[0]] % factor == 0:
            new[dims[0]] //= factor
            moved[dims[0]] = dim_sets[dims[0]] | set(axes)
        elif (op == "alltoall" and len(dims) == 2 and dims[0] != dims[1] and set(axes) <= dim_sets[dims[0]]
              and shape[dims[1]] % factor == 0):
            new[dims[0]] *= factor
            new[dims[1]] //= factor
            moved[dims[0]] = dim_sets[dims[0]] - set(axes)
            moved[dims[1]] = dim_sets[dims[1]] | set(axes)
        elif op == "reducescatter" and len(dims) == 1 and set(axes) <= pending and shape[dims[0]] % factor == 0:
            new[dims[0]] //= factor
            moved[dims[0]] = dim_sets[dims[0]] | set(axes)
            pending = pending - set(axes)
        elif op == "allreduce" and not dims and set(axes) <= pending:
            pending = pending - set(axes)
        elif op == "allpermute" and not dims and not axes:
            permutes += 1
            moved, pending = dict(enumerate(next_sets)), next_pending
        else:
            fail.append(f"{where}: not a legal collective on {state.text(sizes)} (local shape {shape})")
            break
        if step["local_shape"] != new:
            fail.append(f"{where}: local_shape {step['local_shape']}, the collective gives {new}")
        if ([g for g, _ in after.dims] != [g for g, _ in psrc.dims] or after.local_shape(sizes) != new
                or [moved[i] for i in range(len(dim_sets))] != next_sets or pending != next_pending):
            fail.append(f"{where}: type {step['type']} is not where the collective leaves {state.text(sizes)}")
        cost = step_cost(op, shape, new)
        if step["cost"] != cost:
            fail.append(f"{where}: cost {step['cost']}, Fig. 11 gives {cost}")
        total, height = total + step["cost"], max(height, size_of(new))
        shape, state = new, after
    if shape != pdst.local_shape(sizes) or sets(state)[1] != set(pdst.partial):
        fail.append(f"ends on local shape {shape}, pending {state.partial}; the target is {pdst.text(sizes)}")
    if permutes > 1:
        fail.append(f"{permutes} allpermutes")
    if plan["cost"] != total:
        fail.append(f"cost {plan['cost']}, the steps add up to {total}")
    if plan["memory_height"] != height:
        fail.append(f"memory_height {plan['memory_height']}, the steps reach {height}")
    if height > max(expected["source_local_size"], expected["target_local_size"]):
        fail.append(f"memory height {height} above the bound (4)")
    if plan["naive_cost"] != naive_cost(psrc, pdst, sizes):
        fail.append(f"naive_cost {plan['naive_cost']}, allgather+slice costs {naive_cost(psrc, pdst, sizes)}")
    return fail


def naive_cost(src, dst, sizes):
    """Paper eq. (2): gather each partitioned dimension in turn (after an allreduce of a pending reduction
    the target does not keep), then slice."""
    size = size_of(src.local_shape(sizes))
    cost = 2 * size if src.partial and not dst.partial else 0
    for i in range(len(src.dims)):
        if src.parts(i, sizes) > 1:
            size *= src.parts(i, sizes)
            cost += size
    return cost


def optimum(sizes, src, dst):
    """The least cost of the paper's model from src to dst (no pending reductions), Dijkstra over syntactic
    types: multi-axis allgather and alltoall of a dimension's minor-most axes, dynslice of free axes,
    allpermute to any type of the same local shape, every type within the memory height."""
    glob = [g for g, _ in src.dims]
    r = len(glob)

    def shape(key):
        return [g // math.prod(sizes[a] for a in axes) for g, axes in zip(glob, key)]

    src_key, dst_key = (tuple(tuple(a) for _, a in t.dims) for t in (src, dst))
    height = max(size_of(shape(src_key)), size_of(shape(dst_key)))
    by_shape = defaultdict(list)
    for places in itertools.product(range(r + 1), repeat=len(sizes)):
        lists = [[a for a, p in zip(sizes, places) if p == i] for i in range(r)]
        for key in itertools.product(*(itertools.permutations(a) for a in lists)):
            if all(g % math.prod(sizes[a] for a in axes) == 0 for g, axes in zip(glob, key)):
                s = shape(key)
                if size_of(s) <= height:
                    by_shape[tuple(s)].append(key)

    def neighbours(key):
        s = shape(key)
        n = size_of(s)
        free = [a for a in sizes if not any(a in axes for axes in key)]
        for i in range(r):
            for m in range(1, len(key[i]) + 1):
                head, f = key[i][:m], math.prod(sizes[a] for a in key[i][:m])
                gathered = key[:i] + (key[i][m:],) + key[i + 1:]
                yield gathered, n * f
                for j in range(r):
                    if j != i and s[j] % f == 0:
                        yield gathered[:j] + (head + gathered[j],) + gathered[j + 1:], n
            for m in range(1, len(free) + 1):
                for seq in itertools.permutations(free, m):
                    if s[i] % math.prod(sizes[a] for a in seq) == 0:
                        yield key[:i] + (seq + key[i],) + key[i + 1:], 0
        for other in by_shape[tuple(s)]:
            yield other, n

    dist, queue = {src_key: 0}, [(0, src_key)]
    while queue:
        c, key = heapq.heappop(queue)
        if key == dst_key:
            return c
        if c > dist[key]:
            continue
        for nxt, w in neighbours(key):
            if size_of(shape(nxt)) <= height and c + w < dist.get(nxt, math.inf):
                dist[nxt] = c + w
                heapq.heappush(queue, (c + w, nxt))
    return None


def random_problem(rng):
    mesh = Mesh([(name, rng.choice(SIZES)) for name in "xyz"[:rng.randint(1, 3)]])
    rank = rng.randint(1, 4)

    def random_axes():
        dims = [[] for _ in range(rank)]
        for name, _ in mesh.axes:
            d = rng.randint(0, rank)  # rank: replicated
            if d < rank:
                dims[d].insert(rng.randint(0, len(dims[d])), name)
        return dims

    a, b = random_axes(), random_axes()
    sizes = dict(mesh.axes)
    glob = [math.lcm(math.prod(sizes[n] for n in x), math.prod(sizes[n] for n in y)) *
            rng.choice([1, 2, 3, math.prod(sizes.values())]) for x, y in zip(a, b)]
    return mesh, Type(zip(glob, a)), Type(zip(glob, b))


def reshard(args, mesh, src, dst, launcher=(), extra=()):
    cmd = [*launcher, args.einrel, "reshard", "--mesh", mesh.text(), "--from", src.text(dict(mesh.axes)),
           "--to", dst.text(dict(mesh.axes)), "--format", "json", *extra]
    r = run_watched(cmd, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20260301)
    ap.add_argument("--execute-problems", type=int, default=0,
                    help="random problems on meshes of 2-6 devices also run with --execute under mpiexec")
    args = ap.parse_args()
    failures = []

    def check(mesh, src, dst, launcher=(), extra=()):
        where = f"{mesh.text()} {src.text(dict(mesh.axes))} -> {dst.text(dict(mesh.axes))}"
        plan = reshard(args, mesh, src, dst, launcher, extra)
        failures.extend(f"{where}: {f}" for f in check_plan(mesh, src, dst, plan))
        return where, plan

    def near_optimal(mesh, src, dst, where, plan):
        best = optimum(mesh.primes, src.on_primes(mesh), dst.on_primes(mesh))
        if best is None:
            failures.append(f"{where}: the reference search finds no sequence")
        elif plan["cost"] > best + plan["target_local_size"]:
            failures.append(f"{where}: cost {plan['cost']} > optimum {best} + target local size "
                            f"{plan['target_local_size']}")
        return best

    # Example 3.1: no full gather (height 6, the local size of both), near optimal.
    mesh = Mesh([("x", 4), ("y", 6)])
    src, dst = parse_type("[3{x}12,2{y}12]"), parse_type("[2{y}12,3{x}12]")
    where, plan = check(mesh, src, dst)
    near_optimal(mesh, src, dst, where, plan)
    if plan["memory_height"] != 6:
        failures.append(f"{where}: memory height {plan['memory_height']}, expected 6")
    # Example 4.9 / 7.1: one alltoall of the whole axis a, cost 8.
    where, plan = check(Mesh([("a", 8)]), parse_type("[1{a}8,8]"), parse_type("[8,1{a}8]"))
    if [(s["op"], s["axes"], s["dims"], s["cost"]) for s in plan["steps"]] != [("alltoall", ["a"], [0, 1], 8)]:
        failures.append(f"{where}: expected one alltoall of axis a, dims [0, 1], cost 8: {plan['steps']}")
    # Fig. 12: over-partitioning on z gives 384 rather than 512.
    where, plan = check(Mesh([("x", 4), ("y", 2), ("z", 4)]), parse_type("[1{y,x}8,8,8,4]"),
                        parse_type("[8,4{y}8,2{x}8,4]"))
    if plan["cost"] != 384:
        failures.append(f"{where}: cost {plan['cost']}, Fig. 12 gives 384")
    # Pending reductions: settled by reducescatter or allreduce, or kept.
    mesh = Mesh([("x", 2), ("y", 3)])
    for src, dst in [("[6,2{x}4] sum{y}", "[2{y}6,2{x}4]"), ("[6,2{x}4] max{y}", "[6,4]"),
                     ("[6,4] sum{y,x}", "[1{x,y}6,4]"), ("[6,4] sum{x}", "[6,2{x}4]"),
                     ("[6,2{x}4] sum{y}", "[6,4] sum{y}")]:
        check(mesh, parse_type(src), parse_type(dst))
    # Under mpiexec every rank plans and rank 0 alone prints the one JSON object.
    check(Mesh([("x", 2)]), parse_type("[1{x}2]"), parse_type("[2]"), [args.mpiexec, "-n", "2"])

    rng, compared = random.Random(args.seed), 0
    for _ in range(args.problems):
        mesh, src, dst = random_problem(rng)
        where, plan = check(mesh, src, dst)
        if len(mesh.primes) <= 4 and len(src.dims) <= 3:
            near_optimal(mesh, src, dst, where, plan)
            compared += 1
    # --execute: every rank runs the plan on real data and einrel checks every element of every target tile
    # (a mismatch exits 1, which reshard() reports); the JSON says how many differ.
    executed = 0
    while executed < args.execute_problems:
        mesh, src, dst = random_problem(rng)
        devices = math.prod(size for _, size in mesh.axes)
        if not 2 <= devices <= 6:
            continue
        where, plan = check(mesh, src, dst, [args.mpiexec, "-n", str(devices)], ["--execute", "--reps", "1"])
        run = plan.get("execute", {})
        if run.get("mismatches") != 0 or run.get("ranks") != devices:
            failures.append(f"{where}: --execute reports {run}")
        executed += 1
    for f in failures:
        print("FAIL", f)
    print(f"{args.problems} random problems legal; {compared} within optimum + target local size; "
          f"{executed} executed under mpiexec; {len(failures)} failures")
    if compared < args.problems // 3:
        print("FAIL too few problems small enough for the reference search")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
