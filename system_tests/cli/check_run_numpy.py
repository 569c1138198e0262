#!/usr/bin/env python3
"""Runs `mpiexec.mpich -n R einrel run` on graphs with HDF5 inputs and checks, at one R:
- every output against numpy (for p = R, whatever R, and for a p below and above R);
- the report: schema_version, num_ranks, the per-rank list, computing_ranks = R when p >= R, floats moved
  between ranks within the predicted cost when p = R under the paper cost model (an upper bound; the cases
  alternate between the two models), and the per-rank list equal to `einrel plan --ranks R`;
- `--bind` of datasets inside groups; `--random` equal bit for bit to the documented generator (numpy) at
  every p;
- the error contract: bad input files, an output directory that fills up, and a failure injected on the last rank, or on every rank, in every phase end the run
  with a non-zero exit, exactly one `einrel: error:` line in all, and no output or report file.
At 5 ranks and more (oversubscribed on a 2-core runner): the outputs and reports at p = R only.
With --transitions collectives: the cases only, every run forcing synthesized collectives wherever layouts
are distributed types (the floats-moved bound is the point-to-point exchange's, so it is not checked), and
some operand moved by collectives and some reduction deferred to them when R is a power of two > 1."""
import argparse
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

import counter_random
from check_common import run_watched


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


F64, F32 = np.float64, np.float32
# (name, graph text, {input: (shape, dtype, (lo, hi))}, {output: numpy expression over the inputs in f64})
CASES = [
    ("uneven_matmul",
     "input A f64[37,23]\ninput B f64[23,29]\nT = einsum(\"ij,jk->ik\", A, B)\noutput T\n",
     {"A": ((37, 23), F64, (-1, 1)), "B": ((23, 29), F64, (-1, 1))},
     {"T": lambda v: v["A"] @ v["B"]}),
    ("batched_f32",
     "input X f32[6,5,4]\ninput W f32[4,3]\n"
     "Y = einsum(\"bsi,io->bos\", X, W)\ns = einsum(\"bos->\", Y)\nr = einsum(\"bos\", Y)\noutput Y, s, r\n",
     {"X": ((6, 5, 4), F32, (-1, 1)), "W": ((4, 3), F32, (-1, 1))},
     {"Y": lambda v: np.einsum("bsi,io->bos", v["X"], v["W"]),
      "s": lambda v: np.einsum("bsi,io->", v["X"], v["W"]),
      "r": lambda v: np.einsum("bsi,io->bos", v["X"], v["W"])}),
    ("skewed_chain",  # (A×B)+(C×(D×E)) at S = 40
     "input A f64[40,4]\ninput B f64[4,40]\ninput C f64[40,4]\ninput D f64[4,400]\ninput E f64[400,40]\n"
     "AB = einsum(\"ij,jk->ik\", A, B)\nDE = einsum(\"ij,jk->ik\", D, E)\nCDE = einsum(\"ij,jk->ik\", C, DE)\n"
     "Y = einsum(\"ij,ij->ij\", AB, CDE, join=add)\noutput Y\n",
     {"A": ((40, 4), F64, (-1, 1)), "B": ((4, 40), F64, (-1, 1)), "C": ((40, 4), F64, (-1, 1)),
      "D": ((4, 400), F64, (-1, 1)), "E": ((400, 40), F64, (-1, 1))},
     {"Y": lambda v: v["A"] @ v["B"] + v["C"] @ (v["D"] @ v["E"])}),
    ("attention",
     "input Q f32[12,8]\ninput K f32[10,8]\ninput V f32[10,6]\n"
     "S = einsum(\"id,jd->ij\", Q, K)\nZ = einsum(\"ij->ij\", S, map=scale(0.353553))\nP = softmax(Z)\n"
     "O = einsum(\"ij,jd->id\", P, V)\noutput O, P\n",
     {"Q": ((12, 8), F32, (-1, 1)), "K": ((10, 8), F32, (-1, 1)), "V": ((10, 6), F32, (-1, 1))},
     {"P": lambda v: softmax(0.353553 * v["Q"] @ v["K"].T),
      "O": lambda v: softmax(0.353553 * v["Q"] @ v["K"].T) @ v["V"]}),
    ("every_aggregation",
     "input A f64[9,31]\ninput B f64[31,7]\n"
     "smax = einsum(\"ij,jk->ik\", A, B, join=sqdiff, agg=max)\nsmin = einsum(\"ij,jk->ik\", A, B, join=add, agg=min)\n"
     "prd = einsum(\"ij->i\", A, agg=prod)\ntot = einsum(\"ij,jk->\", A, B)\nabsd = einsum(\"ij->j\", A, map=abs, agg=max)\n"
     "output smax, smin, prd, tot, absd\n",
     {"A": ((9, 31), F64, (0.8, 1.2)), "B": ((31, 7), F64, (0.8, 1.2))},
     {"smax": lambda v: ((v["A"][:, :, None] - v["B"][None, :, :]) ** 2).max(axis=1),
      "smin": lambda v: (v["A"][:, :, None] + v["B"][None, :, :]).min(axis=1),
      "prd": lambda v: v["A"].prod(axis=1),
      "tot": lambda v: np.einsum("ij,jk->", v["A"], v["B"]),
      "absd": lambda v: np.abs(v["A"]).max(axis=0)}),
    ("outer_transpose_nary",
     "input u f64[13]\ninput w f64[11]\ninput M f64[5,6,7]\ninput A f64[10,9]\ninput B f64[9,8]\ninput C f64[8,6]\n"
     "O = einsum(\"i,j->ij\", u, w)\nT = einsum(\"ijk->kij\", M)\nN = einsum(\"ij,jk,kl->il\", A, B, C)\n"
     "X = einsum(\"ij,i->ij\", O, u, join=sub, map=exp)\noutput O, T, N, X\n",
     {"u": ((13,), F64, (-1, 1)), "w": ((11,), F64, (-1, 1)), "M": ((5, 6, 7), F64, (-1, 1)),
      "A": ((10, 9), F64, (-1, 1)), "B": ((9, 8), F64, (-1, 1)), "C": ((8, 6), F64, (-1, 1))},
     {"O": lambda v: np.outer(v["u"], v["w"]), "T": lambda v: v["M"].transpose(2, 0, 1),
      "N": lambda v: v["A"] @ v["B"] @ v["C"],
      "X": lambda v: np.exp(np.outer(v["u"], v["w"]) - v["u"][:, None])}),
]


def run(cmd, env=None, **kw):
    full_env = dict(os.environ, **(env or {}))
    return run_watched(cmd, timeout=120, env=full_env, **kw)  # each run takes seconds; the test's limit is 300


class Checker:
    def __init__(self, args):
        self.args = args
        self.failures = 0
        self.moved_somewhere = False
        self.paths = set()  # the operand paths and deferred reductions the reports list
        self.transitions = ["--transitions", args.transitions] if args.transitions else []

    def expect(self, ok, what):
        print(f"{what} {'ok' if ok else 'FAIL'}")
        self.failures += not ok

    def graph_dir(self, name, graph):
        """A fresh work directory `name` holding the graph file g.ein."""
        d = os.path.join(self.args.work_dir, name)
        os.makedirs(d)
        with open(os.path.join(d, "g.ein"), "w") as f:
            f.write(graph)
        return d

    def einrel(self, *arguments, cwd, env=None):
        return run([self.args.mpiexec, "-n", str(self.args.ranks), self.args.einrel, *arguments], cwd=cwd, env=env)

    def dry_run(self, graph, procs, model, cwd, extra=()):
        p = run([self.args.einrel, "plan", graph, "--procs", str(procs), "--ranks", str(self.args.ranks),
                 "--cost-model", model, "--format", "json", *self.transitions, *extra], cwd=cwd)
        return json.loads(p.stdout) if p.returncode == 0 else None

    def check_report(self, label, report, dry):
        R = self.args.ranks
        self.expect(report.get("schema_version") == 2 and report.get("num_ranks") == R
                    and len(report.get("ranks", [])) == R, f"{label}: report schema_version, num_ranks, ranks")
        procs = report["procs"]
        if procs >= R:
            self.expect(report["computing_ranks"] == R, f"{label}: p={procs} >= R: computing_ranks "
                        f"{report['computing_ranks']} of {R}")
        self.expect(dry is not None and report["predicted_cost"] == dry["total_cost"]
                    and report["cost_model"] == dry["cost_model"], f"{label}: predicted cost = einrel plan's")
        for v in report["vertices"]:
            self.paths |= {o["path"] for o in v["operands"]}
            if v["deferred_reduction"]:
                self.paths.add("deferred")
        if procs == R and report["cost_model"] == "paper" and not self.transitions:
            self.expect(report["floats_moved"] <= report["predicted_cost"],
                        f"{label}: p = R: floats moved {report['floats_moved']} <= predicted {report['predicted_cost']}")
        if report["cost_model"] == "engine":  # the plan is costed by the engine's dry run on these R ranks
            self.expect(report["floats_moved"] == report["predicted_cost"],
                        f"{label}: floats moved {report['floats_moved']} = predicted {report['predicted_cost']}")
        self.expect(all(r["peak_allocated_bytes"] >= r["peak_block_bytes"] for r in report["ranks"]),
                    f"{label}: every rank's peak_allocated_bytes >= its peak_block_bytes")
        self.moved_somewhere |= report["floats_moved"] > 0
        fields = ("floats_sent", "floats_received", "peak_block_bytes")
        measured = [{k: r[k] for k in fields} for r in report["ranks"]]
        predicted = [{k: r[k] for k in fields} for r in dry["ranks"]] if dry else None
        self.expect(measured == predicted, f"{label}: dry run = measured per rank")

    def check_outputs(self, label, path, outputs, values):
        with h5py.File(path, "r") as f:
            for name, expr in outputs.items():
                expected = np.asarray(expr({k: v.astype(np.float64) for k, v in values.items()}))
                got = f[name][()]
                tol = 1e-4 if got.dtype == np.float32 else 1e-11
                err = np.max(np.abs(got - expected)) / max(1.0, np.max(np.abs(expected)))
                self.expect(got.shape == expected.shape and err <= tol,
                            f"{label} output {name}: shape {got.shape} {got.dtype} max rel err {err:.2e}")

    def cases(self, rng):
        R = self.args.ranks
        default_procs = R  # p = R for any R: at 3, 5 or 6 ranks the vectors multiply to R
        for n, (name, graph, inputs, outputs) in enumerate(CASES):
            d = os.path.join(self.args.work_dir, name)
            os.makedirs(d)
            with open(os.path.join(d, "g.ein"), "w") as f:
                f.write(graph)
            values = {k: rng.uniform(lo, hi, shape).astype(dt) for k, (shape, dt, (lo, hi)) in inputs.items()}
            with h5py.File(os.path.join(d, "in.h5"), "w") as f:
                for k, v in values.items():
                    f[k] = v
            # R > p and R < p alternate between the cases; at 5 ranks and more (oversubscribed on a 2-core
            # runner, where every run costs seconds) p = R only, what those rank counts add.
            model = ("paper", "engine")[n % 2]
            other = () if R >= 5 else (1 if n % 2 == 0 else 16,)
            for procs in (default_procs, *other):
                label = f"{name} R={R} p={procs} {model} model"
                p = self.einrel("run", "g.ein", "--input", "in.h5", "--output", f"out{procs}.h5", "--report",
                                f"r{procs}.json", "--procs", str(procs), "--cost-model", model, *self.transitions,
                                cwd=d)
                if p.returncode != 0:
                    self.expect(False, f"{label}: einrel failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
                    continue
                self.check_outputs(label, os.path.join(d, f"out{procs}.h5"), outputs, values)
                self.check_report(label, json.load(open(os.path.join(d, f"r{procs}.json"))),
                                  self.dry_run("g.ein", procs, model, d))

    def input_reads(self, rng):
        """An input read by three consumers that cut it three ways: under the floats objective the later
        consumers read it again from the file (operand path "read") rather than move it, and what moves is
        exactly what the plan predicts."""
        R = self.args.ranks
        d = self.graph_dir("input_reads",
                           "input X f32[64,48,40]\na = einsum(\"ijk->k\", X)\nb = einsum(\"ijk->ij\", X, agg=max)\n"
                           "c = einsum(\"ijk->\", X, map=square)\noutput a, b, c\n")
        values = {"X": rng.uniform(-1, 1, (64, 48, 40)).astype(F32)}
        with h5py.File(os.path.join(d, "in.h5"), "w") as f:
            f["X"] = values["X"]
        outputs = {"a": lambda v: v["X"].sum(axis=(0, 1)), "b": lambda v: v["X"].max(axis=2),
                   "c": lambda v: (v["X"] ** 2).sum()}
        for reads in ("again", "move"):
            label = f"input reads {reads} R={R}"
            extra = ("--objective", "floats", "--input-reads", reads)
            p = self.einrel("run", "g.ein", "--input", "in.h5", "--output", "out.h5", "--report", "r.json", *extra,
                            cwd=d)
            if p.returncode != 0:
                self.expect(False, f"{label}: einrel failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
                continue
            self.check_outputs(label, os.path.join(d, "out.h5"), outputs, values)
            report = json.load(open(os.path.join(d, "r.json")))
            self.check_report(label, report, self.dry_run("g.ein", R, "engine", d, extra))
            read = any(o["path"] == "read" for v in report["vertices"] for o in v["operands"])
            self.expect(read == (reads == "again" and R > 1), f"{label}: an operand read again: {read}")

    def bind(self, rng):
        d = os.path.join(self.args.work_dir, "bind")
        os.makedirs(d)
        name, graph, inputs, outputs = CASES[0]
        with open(os.path.join(d, "g.ein"), "w") as f:
            f.write(graph)
        values = {k: rng.uniform(-1, 1, shape).astype(dt) for k, (shape, dt, _) in inputs.items()}
        with h5py.File(os.path.join(d, "a.h5"), "w") as f:
            f["/layer/weights/left"] = values["A"]
        with h5py.File(os.path.join(d, "b.h5"), "w") as f:
            f["B"] = values["B"]
        p = self.einrel("run", "g.ein", "--bind", "A=a.h5:/layer/weights/left", "--bind", "B=b.h5", "--output",
                        "out.h5", cwd=d)
        self.expect(p.returncode == 0, f"--bind from a group and a root dataset: exit {p.returncode} {p.stderr}")
        if p.returncode == 0:
            self.check_outputs("--bind", os.path.join(d, "out.h5"), outputs, values)

    def random_inputs(self):
        d = self.graph_dir("random",
                           "input A f64[7,9,5]\ninput x f32[33]\nY = einsum(\"ijk->kji\", A)\noutput A, x, Y\n")
        seed = 2**40 + 12345
        A = counter_random.random_tensor(seed, 0, (7, 9, 5), np.float64)
        x = counter_random.random_tensor(seed, 1, (33,), np.float32)
        for procs in (1, 4, 16):
            p = self.einrel("run", "g.ein", "--random", str(seed), "--procs", str(procs), "--output",
                            f"out{procs}.h5", cwd=d)
            ok = p.returncode == 0
            if ok:
                with h5py.File(os.path.join(d, f"out{procs}.h5"), "r") as f:
                    ok = (np.array_equal(f["A"][()], A) and np.array_equal(f["x"][()], x)
                          and f["x"].dtype == np.float32 and np.array_equal(f["Y"][()], A.transpose(2, 1, 0)))
            self.expect(ok, f"--random at p={procs}: bit-identical to the documented generator")

    def expect_one_error(self, label, d, before, p, expected):
        lines = [line for line in (p.stdout + p.stderr).splitlines() if "einrel: error:" in line]
        ok = (p.returncode != 0 and len(lines) == 1 and lines[0].startswith("einrel: error:")
              and expected in lines[0] and sorted(os.listdir(d)) == before)
        self.expect(ok, f"{label}: exit {p.returncode}, error lines {lines}, files {sorted(os.listdir(d))}")

    def bad_inputs(self):
        graph = CASES[0][1]
        bad = [
            ("missing", {"A": np.zeros((37, 23))}, "has no dataset 'B'"),
            ("misshaped", {"A": np.zeros((37, 22)), "B": np.zeros((23, 29))}, "'A'"),
            ("mistyped", {"A": np.zeros((37, 23), np.float32), "B": np.zeros((23, 29))}, "'A'"),
        ]
        for name, datasets, expected in bad:
            d = os.path.join(self.args.work_dir, name)
            os.makedirs(d)
            with open(os.path.join(d, "g.ein"), "w") as f:
                f.write(graph)
            with h5py.File(os.path.join(d, "in.h5"), "w") as f:
                for k, v in datasets.items():
                    f[k] = v
            p = self.einrel("run", "g.ein", "--input", "in.h5", "--output", "out.h5", "--report", "r.json", cwd=d)
            self.expect_one_error(f"{name} input", d, ["g.ein", "in.h5"], p, expected)
        self.damaged_inputs(graph)

    def damaged_inputs(self, graph):
        """Damaged files: one error line naming the file, on every rank count."""
        d = self.graph_dir("damaged", graph)
        path = os.path.join(d, "in.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("A", data=np.arange(37 * 23.0).reshape(37, 23), chunks=(8, 8), compression="gzip")
            f["B"] = np.ones((23, 29))
            chunk = f["A"].id.get_chunk_info(0).byte_offset
        whole = open(path, "rb").read()
        flipped = bytearray(whole)
        for i in range(96, 800, 7):  # object headers and the B-tree
            flipped[i] ^= 0x5A
        bad_chunk = bytearray(whole)
        for i in range(chunk + 4, chunk + 40):  # inside A's first compressed chunk
            bad_chunk[i] ^= 0xA5
        damaged = [("truncated", whole[:len(whole) // 2], "is not a readable HDF5 file"),
                   ("not HDF5", b"not an hdf5 file\n" * 10, "is not a readable HDF5 file"),
                   ("empty", b"", "is not a readable HDF5 file"),
                   ("flipped metadata", bytes(flipped), "in.h5"),
                   ("corrupt chunk", bytes(bad_chunk), "reading dataset 'A' failed")]
        for name, data, expected in damaged:
            with open(path, "wb") as f:
                f.write(data)
            p = self.einrel("run", "g.ein", "--input", "in.h5", "--output", "out.h5", "--report", "r.json", cwd=d)
            self.expect_one_error(f"{name} input file", d, ["g.ein", "in.h5"], p, expected)

    def full_output_directory(self):
        """Regression (issue 41): an output directory that fills up while the output is written (a 96 KiB tmpfs
        for a 1.2 MB output) ends with one error line and nothing left there. Needs root for the mount; says so
        and skips otherwise."""
        d = self.graph_dir("full_disk", "input A f64[400,400]\nB = einsum(\"ij->ji\", A, map=scale(2))\noutput B\n")
        out_dir = os.path.join(d, "out")
        os.makedirs(out_dir)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", out_dir], capture_output=True)
        if mounted.returncode != 0:
            print(f"full output directory: skipped, no tmpfs mount ({mounted.stderr.decode().strip()})")
            return
        try:
            p = self.einrel("run", "g.ein", "--random", "1", "--output", "out/o.h5", cwd=d)
            lines = [line for line in (p.stdout + p.stderr).splitlines() if "einrel: error:" in line]
            left = os.listdir(out_dir)
            # refused before HDF5 writes: a disk filling inside its collective close hung 1 run in 10 or so
            self.expect(p.returncode != 0 and len(lines) == 1 and not left
                        and "cannot write output file 'out/o.h5' (" in lines[0]
                        and "No space left on device" in lines[0],
                        f"full output directory: exit {p.returncode}, error lines {lines}, left {left}")
        finally:
            subprocess.run(["umount", out_dir])

    def injected_collective_failures(self):
        """A rank failing at the last step of a synthesized collective sequence: one error line, no output."""
        # j split (the dynamic program's plan: --objective model): T's partial sums reach U by a
        # reduce-scatter
        d = self.graph_dir("inject_collective",
                           "input A f64[16,512]\ninput B f64[512,16]\nT = einsum(\"ij,jk->ik\", A, B)\n"
                           "U = einsum(\"ik->ik\", T, map=relu)\noutput U\n")
        R = self.args.ranks
        p = self.einrel("run", "g.ein", "--random", "1", "--procs", str(R), "--report", "r.json", "--objective",
                        "model", *self.transitions, cwd=d)
        report = json.load(open(os.path.join(d, "r.json"))) if p.returncode == 0 else {"vertices": []}
        moved = [v["name"] for v in report["vertices"] if any(o["path"] == "collectives" for o in v["operands"])]
        self.expect(bool(moved), f"inject collective: some operand moves by collectives ({p.returncode})")
        os.remove(os.path.join(d, "r.json"))
        for who, rank in ((str(R - 1), f"on rank {R - 1}"), ("all", "on rank ")):
            spec = f"{who}:{moved[0] if moved else 'U'}:collective"
            p = self.einrel("run", "g.ein", "--random", "1", "--procs", str(R), "--output", "out.h5", "--report",
                            "r.json", "--objective", "model", *self.transitions, cwd=d,
                            env={"EINREL_TEST_INJECT_FAILURE": spec})
            self.expect_one_error(f"injected {spec}", d, ["g.ein"], p, f"injected failure {rank}")

    def injected_failures(self):
        R = self.args.ranks
        d = self.graph_dir("inject",
                           "input A f64[24,16]\ninput B f64[16,20]\nT = einsum(\"ij,jk->ik\", A, B)\nS = softmax(T)\n"
                           "output T, S\n")
        # Phase and the vertex it is injected at; at p = 8 T moves data and reduces on R > 1; S, the last
        # vertex, element-wise, moves no partials, so its kernels' failure is agreed at the end of the execution.
        # On the last rank, then on every rank at once (still one line in all).
        for who, rank in ((str(R - 1), f"on rank {R - 1}"), ("all", "on rank ")):
            for phase, vertex in (("read", "B"), ("redistribute", "T"), ("kernels", "T"), ("reduce", "T"),
                                  ("kernels", "S"), ("write", "S")):
                spec = f"{who}:{vertex}:{phase}"
                p = self.einrel("run", "g.ein", "--random", "1", "--procs", "8", "--output", "out.h5", "--report",
                                "r.json", cwd=d, env={"EINREL_TEST_INJECT_FAILURE": spec})
                self.expect_one_error(f"injected {spec}", d, ["g.ein"], p, f"injected failure {rank}")
                self.expect(f" at {phase} of '{vertex}'" in (p.stdout + p.stderr), f"injected {spec}: the phase named")
        # T's partial blocks of 512 KiB (j cut 4 ways): past MPICH's eager limit, so a failed rank's peers wait in
        # their sends until it takes their messages (it stands in for its reduction's messages)
        d = self.graph_dir("inject_large",
                           "input A f64[256,8192]\ninput B f64[8192,256]\nT = einsum(\"ij,jk->ik\", A, B)\n"
                           "S = softmax(T)\noutput T, S\n")
        for who, rank in ((str(R - 1), f"on rank {R - 1}"), ("0", "on rank 0"), ("all", "on rank 0")):
            for phase in ("kernels", "reduce"):
                spec = f"{who}:T:{phase}"
                p = self.einrel("run", "g.ein", "--random", "1", "--procs", "4", "--output", "out.h5", cwd=d,
                                env={"EINREL_TEST_INJECT_FAILURE": spec})
                self.expect_one_error(f"injected {spec}, large partials", d, ["g.ein"], p,
                                      f"injected failure {rank} at {phase} of 'T'")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--transitions", choices=("auto", "point-to-point", "collectives"))
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    counter_random.self_test()
    c = Checker(args)
    rng = np.random.default_rng(2024 + args.ranks)
    c.cases(rng)
    if args.ranks > 1:
        c.expect(c.moved_somewhere, f"R={args.ranks}: floats moved between ranks in some case")
    if args.transitions == "collectives":
        if args.ranks > 1 and args.ranks & (args.ranks - 1) == 0:
            c.expect({"collectives", "deferred"} <= c.paths, f"collectives and deferred reductions used: {c.paths}")
            c.injected_collective_failures()
        print(f"{c.failures} failure(s) at {args.ranks} rank(s)")
        return 1 if c.failures else 0
    c.input_reads(rng)
    if args.ranks <= 4:  # inputs, bad files and failures at 5 and 6 ranks add nothing to 1-4 but minutes
        c.bind(rng)
        c.random_inputs()
        c.bad_inputs()
        c.full_output_directory()
        c.injected_failures()
    print(f"{c.failures} failure(s) at {args.ranks} rank(s)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
