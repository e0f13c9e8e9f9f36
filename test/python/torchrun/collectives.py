"""Run by test_distributed.py under torchrun: each collective compiled by graphfuse.distributed against the
reference over all ranks (graphfuse.run_function_ranks), in f32 and f16; exits 1 on a mismatch."""

import sys

import numpy as np
import torch.distributed as dist

import graphfuse
from graphfuse import distributed
from graphfuse.frontends.torch import import_module

GRAPH = """func.func @f(%x: tensor<64x32xDT>, %w: tensor<32x48xDT>, %bias: tensor<48xDT>)
    -> (tensor<64x48xDT>, tensor<128x32xDT>, tensor<32x32xDT>, tensor<64x48xDT>, tensor<64x32xDT>, tensor<4xDT>) {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xDT>
  %cr = "graph.all_reduce"(%c) {group_size = 2 : i64} : (tensor<4xDT>) -> tensor<4xDT>
  %e = "graph.exp"(%x) : (tensor<64x32xDT>) -> tensor<64x32xDT>
  %m = "graph.matmul"(%e, %w) : (tensor<64x32xDT>, tensor<32x48xDT>) -> tensor<64x48xDT>
  %r = "graph.all_reduce"(%m) {group_size = 2 : i64} : (tensor<64x48xDT>) -> tensor<64x48xDT>
  %t = "graph.tanh"(%r) : (tensor<64x48xDT>) -> tensor<64x48xDT>
  %g = "graph.all_gather"(%x) {group_size = 2 : i64} : (tensor<64x32xDT>) -> tensor<128x32xDT>
  %s = "graph.reduce_scatter"(%x) {group_size = 2 : i64} : (tensor<64x32xDT>) -> tensor<32x32xDT>
  %f = "graph.matmul_all_reduce"(%x, %w, %bias) {group_size = 2 : i64, chunks = 3 : i64}
      : (tensor<64x32xDT>, tensor<32x48xDT>, tensor<48xDT>) -> tensor<64x48xDT>
  %mx = "graph.all_reduce"(%x) {group_size = 2 : i64, reduction = "max"} : (tensor<64x32xDT>) -> tensor<64x32xDT>
  return %t, %g, %s, %f, %mx, %cr : tensor<64x48xDT>, tensor<128x32xDT>, tensor<32x32xDT>, tensor<64x48xDT>,
                                    tensor<64x32xDT>, tensor<4xDT>
}
"""

QUANTIZED = """func.func @q(%x: tensor<48x32xi8>, %w: tensor<32x16xi8>, %scale: tensor<16xf32>, %r: tensor<48x16xf16>)
    -> (tensor<48x16xf16>, tensor<48x16xf16>) {
  %0 = "graph.quant_batch_matmul_all_reduce"(%x, %w, %scale, %r) {group_size = 2 : i64, chunks = 2 : i64}
      : (tensor<48x32xi8>, tensor<32x16xi8>, tensor<16xf32>, tensor<48x16xf16>) -> tensor<48x16xf16>
  %1 = "graph.quant_batch_matmul"(%x, %w, %scale)
      : (tensor<48x32xi8>, tensor<32x16xi8>, tensor<16xf32>) -> tensor<48x16xf16>
  %2 = "graph.all_reduce"(%1) {group_size = 2 : i64} : (tensor<48x16xf16>) -> tensor<48x16xf16>
  return %0, %2 : tensor<48x16xf16>, tensor<48x16xf16>
}
"""


def _functional_model(rank: int):
    import torch
    import torch.distributed._functional_collectives as funcol

    class RowParallel(torch.nn.Module):
        def forward(self, x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
            y = funcol.all_reduce(x @ w, "sum", dist.group.WORLD)
            ops = torch.ops._c10d_functional
            scattered = ops.wait_tensor(ops.reduce_scatter_tensor(x, "max", 2, dist.group.WORLD.group_name))
            return torch.tanh(y), funcol.all_gather_tensor(x, 0, dist.group.WORLD), scattered

    torch.manual_seed(rank)
    return RowParallel(), torch.randn(4, 8), torch.randn(8, 6)


def main() -> int:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    status, report = 0, []
    for dtype, numpy_dtype, tolerance in (("f32", np.float32, 1e-5), ("f16", np.float16, 2e-3)):
        module = graphfuse.parse_module(GRAPH.replace("DT", dtype), "collectives.mlir")
        inputs = [[(np.random.default_rng(10 * r + k).standard_normal(shape) * 0.5).astype(numpy_dtype)
                   for k, shape in enumerate([(64, 32), (32, 48), (48,)])] for r in range(2)]
        got = distributed.compile(module)(*inputs[rank])
        want = graphfuse.run_function_ranks(module, inputs)[rank]
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            error = float(np.abs(g.astype(np.float64) - w).max() / max(np.abs(w).max(), 1e-30))
            ok = g.dtype == w.dtype and g.shape == w.shape and error <= tolerance
            report.append(f"rank {rank} {dtype} result {k} {g.shape}: relative error {error:.2e} "
                          f"{'ok' if ok else 'MISMATCH'}\n")
            status |= not ok
    # The quantized batch matmul's all-reduce, fused (in row blocks) and not.
    module = graphfuse.parse_module(QUANTIZED, "quantized.mlir")
    inputs = [[np.random.default_rng(7 * r).integers(-8, 8, (48, 32)).astype(np.int8),
               np.random.default_rng(7 * r + 1).integers(-8, 8, (32, 16)).astype(np.int8),
               np.full(16, 0.01, np.float32), np.random.default_rng(3).standard_normal((48, 16)).astype(np.float16)]
              for r in range(2)]
    got = distributed.compile(module)(*inputs[rank])
    want = graphfuse.run_function_ranks(module, inputs)[rank]
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        error = float(np.abs(g.astype(np.float64) - w).max() / max(np.abs(w).max(), 1e-30))
        ok = g.dtype == w.dtype and error <= 2e-3
        report.append(f"rank {rank} quantized result {k} {g.shape}: relative error {error:.2e} "
                      f"{'ok' if ok else 'MISMATCH'}\n")
        status |= not ok
    # A model written with torch.distributed's functional collectives, imported by the PyTorch front end.
    model, x, w = _functional_model(rank)
    imported = import_module(model, (x, w))
    got = distributed.compile(imported.module)(x.numpy(), w.numpy())
    want = [t.numpy() for t in model(x, w)]
    for k, (g, w_) in enumerate(zip(got, want, strict=True)):
        error = float(np.abs(g - w_).max() / max(np.abs(w_).max(), 1e-30))
        ok = g.shape == w_.shape and error <= 1e-5
        report.append(f"rank {rank} imported result {k} {g.shape}: relative error {error:.2e} "
                      f"{'ok' if ok else 'MISMATCH'}\n")
        status |= not ok
    sys.stdout.write("".join(report))  # one write per rank: the two ranks share the pipe
    sys.stdout.flush()
    dist.destroy_process_group()
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
