#!/usr/bin/env python3
"""Hostile graph files through the `einrel` program (standard library only). Each of --count graphs is a
seeded random mutation of a seed graph (bytes flipped, inserted, deleted; lines duplicated, dropped or
swapped; numbers and tokens replaced by others, huge ones included); every one goes through
`einrel plan` and `einrel run --random 1 --output OUT.h5 --memory-limit 268435456`, every --every-mpi-th one
under `mpiexec.mpich -n 3`. Each run must end within --timeout seconds with status 0 or 1; status 1
must come with exactly one line on stdout and stderr together, starting `einrel: error: `, and no
OUT.h5. A failure prints the graph and the output and the graph is kept in --work-dir.

  check_mutated_graphs.py --einrel build/drivers/einrel --mpiexec mpiexec.mpich --seeds a.ein b.ein \\
      --count 500 --seed 7 --work-dir /tmp/mutated
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys

TOKENS = ["input", "output", "einsum(", "softmax(", "f32", "f64", "->", ",", "join=", "agg=", "map=", "mul",
          "add", "sub", "div", "max", "min", "sqdiff", "absdiff", "eq", "first", "sum", "prod", "exp", "log", "relu",
          "sqrt", "sign",
          "scale(", "shift(", "pow(", "...", "#", "\"", "(", ")", "[", "]", "=", "\n", " ", "\t", "\r", "\x1c",
          "\x00", "\xff", "é", "ij", "ijk", "i", ""]
NUMBERS = ["0", "1", "-1", "3", "1e308", "1e-320", "nan", "inf", "4294967297", "9223372036854775807",
           "18446744073709551617", "99999999999999999999999", "65536", "0.5", "-0"]


def mutate(text, rng):
    for _ in range(rng.randint(1, 2)):
        kind = rng.randrange(7)
        if kind == 0 and text:  # flip a byte
            i = rng.randrange(len(text))
            text = text[:i] + chr(rng.randrange(1, 256)) + text[i + 1:]
        elif kind == 1:  # insert a token
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        elif kind == 2 and text:  # delete a span
            i = rng.randrange(len(text))
            text = text[:i] + text[i + rng.randint(1, 8):]
        elif kind == 3:  # replace a number
            numbers = list(re.finditer(r"\d+(\.\d+)?", text))
            if numbers:
                m = rng.choice(numbers)
                text = text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
        else:  # duplicate, drop or swap lines
            lines = text.split("\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if kind == 4:
                lines.insert(j, lines[i])
            elif kind == 5:
                del lines[i]
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


def check(args, graph_path, command, mpi):
    """Runs one command on graph_path; returns a description of what is wrong, or None."""
    work = os.path.dirname(graph_path)
    out = os.path.join(work, "out.h5")
    if os.path.exists(out):
        os.remove(out)
    cmd = [args.einrel, command, graph_path]
    if command == "run":
        cmd += ["--random", "1", "--output", out, "--memory-limit", str(256 << 20)]
    if mpi:
        cmd = [args.mpiexec, "-n", "3"] + cmd
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        return f"{' '.join(cmd)}: no end within {args.timeout} s"
    stdout = p.stdout.decode("utf-8", "replace")
    stderr = p.stderr.decode("utf-8", "replace")
    if p.returncode not in (0, 1):
        return f"{' '.join(cmd)}: status {p.returncode}\n{stdout}{stderr}"
    if p.returncode == 1:
        lines = (stdout + stderr).splitlines()
        if len(lines) != 1 or not lines[0].startswith("einrel: error: "):
            return f"{' '.join(cmd)}: status 1 without exactly one 'einrel: error:' line:\n{stdout}{stderr}"
        if os.path.exists(out):
            return f"{' '.join(cmd)}: failed but wrote {out}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--einrel", required=True)
    parser.add_argument("--mpiexec", default="mpiexec.mpich")
    parser.add_argument("--seeds", nargs="+", required=True, help="graph files to mutate")
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--every-mpi-th", type=int, default=6, help="every Nth graph also runs on 3 ranks")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    seeds = [open(s, encoding="utf-8").read() for s in args.seeds]
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    failures, succeeded = 0, 0
    for n in range(args.count):
        text = mutate(rng.choice(seeds), rng)
        work = os.path.join(args.work_dir, f"g{n}")
        os.makedirs(work)
        graph_path = os.path.join(work, "g.ein")
        with open(graph_path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        runs = [("plan", False), ("run", False)]
        if args.every_mpi_th and n % args.every_mpi_th == 0:
            runs.append(("run", True))
        problems = [p for p in (check(args, graph_path, c, mpi) for c, mpi in runs) if p]
        if problems:
            failures += 1
            print(f"FAIL graph {n} ({graph_path}):\n{text}\n---\n" + "\n".join(problems) + "\n")
        else:
            succeeded += os.path.exists(os.path.join(work, "out.h5"))
            shutil.rmtree(work)
    print(f"{args.count} mutated graphs, {succeeded} of them ran to an output, {failures} failed the contract")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
