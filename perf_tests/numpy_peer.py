"""The numpy peer the Python benchmarks check their dense einrel side against (docs/benchmarks.md)."""
import os
import subprocess
import sys


def numpy_dgemm_rate(n):
    """numpy's one-thread n³ dgemm in its own process, warm, median of 3: the machine's BLAS rate per core,
    the absolute check on a benchmark's dense einrel side (flop/s)."""
    code = ("import numpy as np, time, statistics\n"
            f"a = np.random.default_rng(1).uniform(-1, 1, ({n}, {n})); b = a.copy(); a @ b\n"
            "t = []\n"
            "for _ in range(3):\n    s = time.perf_counter(); a @ b; t.append(time.perf_counter() - s)\n"
            f"print(2 * {n}**3 / statistics.median(t))")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                check=True).stdout)
