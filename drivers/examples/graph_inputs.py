"""The `input` lines of a graph file, for the example data generators (llama_inputs.py, ffnn_data.py)."""
import re

import numpy as np

INPUT = re.compile(r"\s*input\s+(\w+)\s+(f32|f64)\[([0-9,\s]*)\]")


def read_inputs(graph):
    """name -> (dtype, shape) of every `input` line of the graph file, in file order."""
    inputs = {}
    with open(graph) as fh:
        for line in fh:
            m = INPUT.match(line)
            if m:
                inputs[m.group(1)] = (m.group(2), tuple(int(x) for x in m.group(3).split(",") if x.strip()))
    return inputs


def numpy_dtype(dtype):
    return np.float32 if dtype == "f32" else np.float64
