"""Matmul tiling with each product outlined while its transform script runs (lowering/isolation.py): the IR it
leaves is the IR the script leaves in place, and clusters that cannot be outlined exactly stay where they are."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.context import new_context
from graphfuse.lowering import compiler, contraction, isolation, runtime
from graphfuse.lowering.codegen.cpu import apply_contraction_schedules as apply_pass
from graphfuse.lowering.contraction import application, strategy


def _layers() -> ir.Module:
    """Three linear layers with bias and activation epilogues, one product whose result two ops read."""
    b = GraphBuilder("f")
    x = b.arg((64, 128))
    h = x
    for width, activation in ((256, "relu"), (128, "gelu"), (128, "relu")):
        w, bias = b.arg((h.shape[1], width)), b.arg((width,))
        h = getattr(b, activation)(b.add(b.matmul(h, w), bias))
    shared = b.matmul(h, b.arg((128, 64)))
    b.ret(b.add(b.relu(shared), b.sigmoid(shared)))
    return b.module


def _tiled_text(monkeypatch: pytest.MonkeyPatch, isolate: bool) -> tuple[str, list[int], Any]:
    """The module after the contraction schedules are applied (and the compiled function), with or without
    isolation."""
    texts: list[str] = []
    counts: list[int] = []
    original_apply, original_isolated = contraction.apply_schedules, isolation.isolated

    def recorded(module: ir.Module) -> None:
        original_apply(module)
        texts.append(str(module))

    @contextlib.contextmanager
    def counted(module: ir.Module, clusters: Any, prefix: str = "__isolated") -> Any:
        with original_isolated(module, clusters, prefix) as outlined:
            counts.append(outlined)
            yield outlined

    monkeypatch.setattr(apply_pass, "apply_schedules", recorded)
    for module in (application, strategy):
        monkeypatch.setattr(module, "isolated",
                            counted if isolate else lambda *args, **kwargs: contextlib.nullcontext(0))
    compiler.clear_cache()
    runtime.clear_cache()
    exe = graphfuse.compile(_layers(), opt_level=2, num_threads=2)
    monkeypatch.setattr(apply_pass, "apply_schedules", original_apply)
    return texts[-1], counts, exe


def test_isolated_tiling_leaves_the_ir_of_tiling_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    in_place, _, _ = _tiled_text(monkeypatch, isolate=False)
    isolated_text, counts, exe = _tiled_text(monkeypatch, isolate=True)
    assert sum(counts) >= 3, counts  # the products with their fills and epilogues were outlined
    assert isolated_text == in_place
    assert "__isolated" not in isolated_text
    rng = np.random.default_rng(0)
    shapes = [(64, 128), (128, 256), (256,), (256, 128), (128,), (128, 128), (128,), (128, 64)]
    args = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    for want, got in zip(exe.reference(*args), exe(*args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * float(np.abs(want).max()))


_READ_BETWEEN = """
func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %product = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<8x8xf32>)
    -> tensor<8x8xf32>
  %between = linalg.matmul ins(%product, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<8x8xf32>)
    -> tensor<8x8xf32>
  %out = tensor.empty() : tensor<8x8xf32>
  %epilogue = linalg.add ins(%product, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%out : tensor<8x8xf32>)
    -> tensor<8x8xf32>
  return %epilogue, %between : tensor<8x8xf32>, tensor<8x8xf32>
}
"""


def _ops_named(module: ir.Module, *names: str) -> list[ir.Operation]:
    body = module.body.operations[0].regions[0].blocks[0]
    return [op.operation for op in body.operations if op.operation.name in names]


def test_clusters_are_outlined_and_inlined_back_exactly() -> None:
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(_READ_BETWEEN)
        before = str(module)
        fill, product, _, epilogue = _ops_named(module, "linalg.fill", "linalg.matmul", "linalg.add")
        # the product alone (read after it by two ops): outlined, then back where it was
        with isolation.isolated(module, [[fill, product]]) as outlined:
            assert outlined == 1
            inside = str(module)
            assert "func.func private @__isolated0" in inside and "call @__isolated0" in inside
            module.operation.verify()
        assert str(module) == before
        # product and epilogue: the second product reads the first between them, so the cluster stays
        fill, product, _, epilogue = _ops_named(module, "linalg.fill", "linalg.matmul", "linalg.add")
        with isolation.isolated(module, [[fill, product, epilogue]]) as outlined:
            assert outlined == 0
        assert str(module) == before


_SHARED_FILL = """
func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %first = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<8x8xf32>)
    -> tensor<8x8xf32>
  %second = linalg.matmul ins(%b, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<8x8xf32>)
    -> tensor<8x8xf32>
  return %first, %second : tensor<8x8xf32>, tensor<8x8xf32>
}
"""


def test_shared_fills_are_copied_and_other_shared_ops_stay_in_place() -> None:
    """Two products starting from one fill: outlined with either, the other's script would find a call where
    it fuses its fill (bloom's and DeBERTa-v2's batched products failed so).  Each cluster gets a copy of the
    fill and both are outlined; the original is left unread (the schedules erase it).  Clusters sharing an op
    that is not a fill stay where they are."""
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(_SHARED_FILL)
        before = str(module)
        fill, first, second = _ops_named(module, "linalg.fill", "linalg.matmul")
        with isolation.isolated(module, [[first, second], [second]]) as outlined:
            assert outlined == 0
        assert str(module) == before
        with isolation.isolated(module, [[fill, first], [fill, second]]) as outlined:
            assert outlined == 2
            module.operation.verify()
        module.operation.verify()
        fills = _ops_named(module, "linalg.fill")
        first, second = _ops_named(module, "linalg.matmul")
        assert len(fills) == 3 and not list(fill.results[0].uses)
        inits = {first.operands[2].owner.operation, second.operands[2].owner.operation}
        assert len(inits) == 2 and fill not in inits and inits <= set(fills)
