"""The numpy peer the Python benchmarks check their dense einrel side against (docs/benchmarks.md)."""
import os
import statistics
import subprocess
import sys
import time


def one_thread_env():
    """The environment of a numpy peer process: its BLAS on one thread, as each einrel rank runs."""
    return dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def numpy_dgemm_rate(n):
    """numpy's one-thread n³ dgemm in its own process, warm, median of 3: the machine's BLAS rate per core,
    the absolute check on a benchmark's dense einrel side (flop/s)."""
    code = ("import numpy as np, time, statistics\n"
            f"a = np.random.default_rng(1).uniform(-1, 1, ({n}, {n})); b = a.copy(); a @ b\n"
            "t = []\n"
            "for _ in range(3):\n    s = time.perf_counter(); a @ b; t.append(time.perf_counter() - s)\n"
            f"print(2 * {n}**3 / statistics.median(t))")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=one_thread_env(),
                                check=True).stdout)


def numpy_tile_rate(tile, processes, count=6, rounds=41):
    """numpy's one-thread rate on tile³ products, in `processes` processes at once (one per rank, as the
    ranks of a block-sparse run share the machine's caches and memory): each process multiplies `count`
    distinct warm operand pairs into distinct results per round, starting at the same instant; the median
    round of each process, then the median over the processes (flop/s per core). The ceiling a run made of
    tile³ block products can reach against the large-GEMM rate: the BLAS packs both operands for every call."""
    code = ("import numpy as np, sys, time, statistics\n"
            f"t, c = {tile}, {count}\n"
            "rng = np.random.default_rng(1)\n"
            "a = [rng.uniform(-1, 1, (t, t)) for _ in range(c)]; b = [x.copy() for x in a]\n"
            "r = [np.empty((t, t)) for _ in range(c)]\n"
            "for i in range(c): np.matmul(a[i], b[i], out=r[i])\n"
            "while time.time() < float(sys.argv[1]): pass\n"
            "s = []\n"
            f"for _ in range({rounds}):\n"
            "    t0 = time.perf_counter()\n"
            "    for i in range(c): np.matmul(a[i], b[i], out=r[i])\n"
            "    s.append(time.perf_counter() - t0)\n"
            "print(2 * t**3 * c / statistics.median(s))")
    start = str(time.time() + 1.0)
    runs = [subprocess.Popen([sys.executable, "-c", code, start], stdout=subprocess.PIPE, text=True,
                             env=one_thread_env())
            for _ in range(processes)]
    rates = []
    for p in runs:
        out, _ = p.communicate()
        if p.returncode:
            raise subprocess.CalledProcessError(p.returncode, p.args)
        rates.append(float(out))
    return statistics.median(rates)
