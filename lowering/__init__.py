"""Lowering of graph-dialect kernels through linalg to CPU code, and the emulated NPU target."""
