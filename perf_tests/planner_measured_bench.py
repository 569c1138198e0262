#!/usr/bin/env python3
"""Every planner measured against the model it was chosen by (issue 30, docs/planner.md "The objective").

On the matrix chains (square and skewed, `einrel matrix-chain`), the FFNN training step (`einrel train
drivers/examples/ffnn.ein`) and the LLaMA prefill (`einrel run` on einrel_llama_graph's layer with
llama_inputs.py's data), runs EinDecomp and every baseline that applies, alternately, --reps times each, at
each rank count R with ranks x threads = the machine's cores (OMP_NUM_THREADS = cores / R, at least 1;
--extra-ranks are oversubscribed and printed for information). Before the runs at each R, `einrel calibrate`
measures the machine model on those ranks and every run reads it (--machine), so the estimates are the
model's at the measured rates. Prints per planner the median measured seconds (the chains and the LLaMA run:
the report's total_seconds; FFNN: the median seconds_per_step after the first step), the plan's estimated
seconds, measured / estimated, floats moved = predicted (the dry run's count, checked equal), and for
EinDecomp its measured seconds over the fastest baseline's (<= 1.03 is the bar of issue 30; "proposed_by"
names the planner whose partitions it chose). The peers are einrel's own baselines on the same ranks; the
chains' independent peer is ScaLAPACK (matrix_chain_bench.py), the LLaMA layer's numpy
(llama_prefill_bench.py), the FFNN step's numpy (ffnn_train_bench.py).

  OMP_PROC_BIND=false /usr/bin/python3 perf_tests/planner_measured_bench.py --einrel build/drivers/einrel \\
      --graph-tool build/perf_tests/einrel_llama_graph --ranks 1 2 --extra-ranks 3 4 --reps 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "drivers", "examples")
BASELINES = ["sqrt", "data", "greedy"]
LLM_BASELINES = ["megatron", "sequence", "attention"]


def run(cmd, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS="1", OMP_PROC_BIND="false")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    return out.stdout


class Bench:
    """One benchmark: how to run it under a planner and read (measured s, estimated s, moved, predicted,
    proposed_by) from its report."""

    def __init__(self, name, planners, command, read):
        self.name, self.planners, self.command, self.read = name, planners, command, read


def run_report(path):
    rep = json.load(open(path))
    return rep["total_seconds"], rep["estimated_seconds"], rep["floats_moved"], rep["predicted_cost"], \
        rep.get("proposed_by", "")


def train_report(path):
    rep = json.load(open(path))
    moved = statistics.median(rep["floats_moved_per_step"])
    return statistics.median(rep["seconds_per_step"][1:]), rep["estimated_seconds_per_step"], moved, \
        rep["predicted_cost_per_step"], rep["proposed_by"]


def benches(args, work):
    chain = [args.einrel, "matrix-chain", "--scale", str(args.scale)]
    ffnn_data = os.path.join(work, "ffnn.h5")
    ffnn = os.path.join(EXAMPLES, "ffnn.ein")
    subprocess.run([sys.executable, os.path.join(EXAMPLES, "ffnn_data.py"), ffnn, ffnn_data], check=True,
                   capture_output=True)
    llama, llama_data = os.path.join(work, "llama.ein"), os.path.join(work, "llama.h5")
    s, a, h, d, f = args.llama_shape
    with open(llama, "w") as fh:
        subprocess.run([args.graph_tool, "--sequence", str(s), "--model", str(a), "--heads", str(h), "--head-dim",
                        str(d), "--hidden", str(f)], stdout=fh, check=True)
    subprocess.run([sys.executable, os.path.join(EXAMPLES, "llama_inputs.py"), llama, llama_data], check=True,
                   capture_output=True)
    return [
        Bench(f"chain square S={args.scale}", ["eindecomp"] + BASELINES,
              lambda p, rep: chain + ["--planner", p, "--report", rep], run_report),
        Bench(f"chain skewed S={args.scale}", ["eindecomp"] + BASELINES,
              lambda p, rep: chain + ["--skewed", "--planner", p, "--report", rep], run_report),
        Bench("FFNN step", ["eindecomp"] + BASELINES,
              lambda p, rep: [args.einrel, "train", ffnn, "--loss", "L", "--params", "W1,b1,W2,b2", "--lr", "0.5",
                              "--steps", "4", "--input", ffnn_data, "--output", os.path.join(work, "params.h5"),
                              "--planner", p, "--report", rep], train_report),
        Bench(f"LLaMA prefill s={s} a={a}", ["eindecomp"] + BASELINES + LLM_BASELINES,
              lambda p, rep: [args.einrel, "run", llama, "--input", llama_data, "--planner", p, "--report", rep],
              run_report),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einrel", required=True)
    ap.add_argument("--graph-tool", required=True, help="einrel_llama_graph")
    ap.add_argument("--mpiexec", default="/usr/bin/mpiexec.mpich")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--extra-ranks", type=int, nargs="*", default=[3, 4], help="oversubscribed, for information")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scale", type=int, default=2048, help="the matrix chains' S")
    ap.add_argument("--llama-shape", type=int, nargs=5, default=[1024, 1024, 16, 64, 2816],
                    metavar=("S", "A", "H", "D", "F"), help="sequence, model, heads, head width, FFN hidden")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="einrel-planners-")
    cores = os.cpu_count() or 1
    print(f"{cores} cores; medians of {args.reps}; measured / estimated per planner, eindecomp / fastest baseline")
    print("R  bench                      planner      proposed_by   measured s  estimated s  meas/est  "
          "floats moved (= predicted)  eindecomp/fastest")
    for R in args.ranks + args.extra_ranks:
        threads = max(1, cores // R)
        machine = os.path.join(work, f"machine-{R}.json")
        launch = [args.mpiexec, "-n", str(R)]
        run(launch + [args.einrel, "calibrate", "--output", machine], threads)
        note = " (oversubscribed)" if R in args.extra_ranks else ""
        for bench in benches(args, work):
            runs = {p: [] for p in bench.planners}
            for _ in range(args.reps):
                for p in bench.planners:  # alternating
                    report = os.path.join(work, f"report-{R}-{p}.json")
                    run(launch + bench.command(p, report) + ["--machine", machine], threads)
                    runs[p].append(bench.read(report))
            measured = {p: statistics.median(r[0] for r in v) for p, v in runs.items()}
            fastest = min(measured[p] for p in bench.planners[1:])
            for p, v in runs.items():
                estimated, moved, predicted, proposed = v[0][1], v[0][2], v[0][3], v[0][4]
                same = "" if moved == predicted else f" != {predicted:.0f}"
                ratio = f"{measured[p] / fastest:8.3f}" if p == "eindecomp" else ""
                print(f"{R}{note[:1]:1s} {bench.name:26s} {p:12s} {proposed:13s} {measured[p]:10.4f}  "
                      f"{estimated:11.4f}  {measured[p] / estimated:8.2f}  {moved:14.0f}{same:12s}  {ratio}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
