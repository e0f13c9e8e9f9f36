"""Shared pieces of graph-to-linalg: element types, constants, broadcasting maps and the two registries.

Every graph op is lowered by exactly one of:

- a *decomposition* (``register_decomposition``): the op is rewritten into
  simpler graph ops (``softmax`` into reductions and elementwise ops,
  ``matmul_gelu`` into ``matmul`` + ``gelu``), which are lowered in turn.  A
  decomposition runs with a rewriter and returns True when it replaced the op;
- a *lowering* (``register_lowering``): the op is replaced by linalg / tensor
  / arith ops on tensors.  A lowering returns True when it replaced the op and
  False, with the IR untouched, when it does not handle that instance.

The elementwise ops are lowered in ``graph_to_linalg`` itself; the other
modules of this package register theirs at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mlir import ir
from mlir.dialects import arith, linalg, tensor
from mlir.rewrite import (
    GreedyRewriteConfig,
    GreedySimplifyRegionLevel,
    RewritePatternSet,
    apply_patterns_and_fold_greedily,
)

from graphfuse.dialect.matching import graph_op_names

__all__ = [
    "DECOMPOSITIONS",
    "LOWERINGS",
    "PARALLEL",
    "REDUCTION",
    "broadcast_map",
    "build_generic",
    "compute_type",
    "const",
    "cube_convolutions",
    "decompose_graph_ops",
    "dynamic_sizes",
    "element_type",
    "host_cpu_forms",
    "is_bool",
    "is_float",
    "is_int",
    "is_narrow_float",
    "narrow",
    "register_decomposition",
    "register_lowering",
    "string_attr",
    "widen",
]

Lowering = Callable[[ir.Operation], bool]
Decomposition = Callable[[ir.Operation, Any], bool]

#: "graph.<name>" -> lowering to linalg/tensor ops.
LOWERINGS: dict[str, Lowering] = {}
#: "graph.<name>" -> decomposition into simpler graph ops (given the op and a PatternRewriter).
DECOMPOSITIONS: dict[str, Decomposition] = {}


def _register(table: dict[str, Any], what: str, names: tuple[str, ...]) -> Callable[[Any], Any]:
    """A decorator entering the function under each of ``names`` (``graph.`` prefix optional) in ``table``."""

    def wrap(fn: Any) -> Any:
        for name in names:
            key = name if name.startswith("graph.") else f"graph.{name}"
            assert key not in table, f"two {what} for {key}"
            table[key] = fn
        return fn

    return wrap


def register_lowering(*names: str) -> Callable[[Lowering], Lowering]:
    return _register(LOWERINGS, "lowerings", names)


def register_decomposition(*names: str) -> Callable[[Decomposition], Decomposition]:
    return _register(DECOMPOSITIONS, "decompositions", names)


_CUBE_CONVOLUTIONS: ContextVar[bool] = ContextVar("graphfuse_cube_convolutions", default=False)


@contextmanager
def cube_convolutions(enabled: bool) -> Iterator[None]:
    """Lower the convolutions inside the block as ``linalg.conv_2d_nchw_fchw`` (True: for a cube unit, which
    npu-buffer-assign tiles) or in the CPU's forms chosen for the host's registers (False)."""
    token = _CUBE_CONVOLUTIONS.set(enabled)
    try:
        yield
    finally:
        _CUBE_CONVOLUTIONS.reset(token)


def host_cpu_forms() -> bool:
    """Whether ops take the forms chosen for the host CPU (its registers, its dot products): not under
    :func:`cube_convolutions`, which the NPU's graph-to-linalg sets."""
    return not _CUBE_CONVOLUTIONS.get()


# --------------------------------------------------------------------------
# Element types.


def is_float(t: ir.Type) -> bool:
    return isinstance(t, ir.F32Type | ir.F16Type | ir.BF16Type | ir.F64Type)


def is_narrow_float(t: ir.Type) -> bool:
    return isinstance(t, ir.F16Type | ir.BF16Type)


def is_int(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType)


def is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def element_type(v: ir.Value) -> ir.Type:
    return ir.RankedTensorType(v.type).element_type


def element_bytes(t: ir.Type) -> int:
    """Bytes an element of type ``t`` takes in a buffer: booleans and other sub-byte integers one, index 8."""
    if isinstance(t, ir.IndexType):
        return 8
    return max(1, t.width // 8)


def const(t: ir.Type, value: float | int | bool) -> ir.Value:
    """An ``arith.constant`` of type ``t``: a float, integer or i1 scalar, or a vector of them all ``value``."""
    if isinstance(t, ir.VectorType):
        scalar = ir.VectorType(t).element_type
        return arith.constant(t, ir.DenseElementsAttr.get_splat(t, const(scalar, value).owner.attributes["value"]))
    if is_float(t):
        return arith.constant(t, ir.FloatAttr.get(t, float(value)))
    if is_bool(t):
        return arith.constant(t, ir.IntegerAttr.get(t, 1 if value else 0))
    return arith.constant(t, ir.IntegerAttr.get(t, int(value)))


def compute_type(t: ir.Type) -> ir.Type:
    """f16/bf16 arithmetic is done in f32 (as the reference interpreter does)."""
    return ir.F32Type.get() if is_narrow_float(t) else t


def widen(v: ir.Value) -> ir.Value:
    return arith.extf(ir.F32Type.get(), v) if is_narrow_float(v.type) else v


def narrow(v: ir.Value, t: ir.Type) -> ir.Value:
    return arith.truncf(t, v) if v.type != t else v


def string_attr(op: ir.Operation, name: str, default: str) -> str:
    if name in op.attributes:
        return ir.StringAttr(op.attributes[name]).value
    return default


# --------------------------------------------------------------------------
# Broadcasting and linalg.generic.

PARALLEL = "#linalg.iterator_type<parallel>"
REDUCTION = "#linalg.iterator_type<reduction>"


def broadcast_map(operand: ir.RankedTensorType, result: ir.RankedTensorType) -> ir.AffineMap | None:
    """The indexing map reading ``operand`` numpy-broadcast to ``result``; None when they do not broadcast.

    A missing leading dimension is dropped from the map; a static size-1
    dimension broadcast to a larger (or dynamic) one reads index 0.
    """
    rank = result.rank
    offset = rank - operand.rank
    if offset < 0:
        return None
    exprs = []
    for k in range(operand.rank):
        i = offset + k
        size = operand.get_dim_size(k) if not operand.is_dynamic_dim(k) else None
        out = result.get_dim_size(i) if not result.is_dynamic_dim(i) else None
        if size == 1 and out != 1:
            exprs.append(ir.AffineConstantExpr.get(0))
        elif size is None or out is None or size == out:
            exprs.append(ir.AffineDimExpr.get(i))
        else:
            return None
    return ir.AffineMap.get(rank, 0, exprs)


def dynamic_sizes(operands: list[ir.Value], result: ir.RankedTensorType) -> list[int | ir.Value] | None:
    """Sizes of ``result`` for ``tensor.empty``: static ones as ints, dynamic ones from a broadcast operand."""
    sizes: list[int | ir.Value] = []
    for i in range(result.rank):
        if not result.is_dynamic_dim(i):
            sizes.append(result.get_dim_size(i))
            continue
        for v in operands:
            t = ir.RankedTensorType(v.type)
            k = i - (result.rank - t.rank)
            if k >= 0 and t.is_dynamic_dim(k):
                sizes.append(tensor.dim(v, arith.constant(ir.IndexType.get(), k)))
                break
        else:
            return None
    return sizes


def build_generic(
    result_types: list[ir.Type],
    inputs: list[ir.Value],
    inits: list[ir.Value],
    maps: list[ir.AffineMap],
    iterators: list[str],
    body: Callable[[list[ir.Value]], list[ir.Value]],
) -> linalg.GenericOp:
    """A ``linalg.generic``; ``body`` gets the block arguments (inputs then inits) and returns the yielded values.

    Call it under an insertion point and a location.
    """
    generic = linalg.GenericOp(
        result_types,
        inputs,
        inits,
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
        ir.ArrayAttr.get([ir.Attribute.parse(it) for it in iterators]),
    )
    arg_types = [element_type(v) for v in (*inputs, *inits)]
    block = generic.regions[0].blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        linalg.YieldOp(body(list(block.arguments)))
    return generic


def decompose_graph_ops(module: ir.Module, count: Callable[[str], None]) -> None:
    """Rewrite every op that has a decomposition into simpler graph ops, to a fixed point."""
    if not set(graph_op_names(module)) & DECOMPOSITIONS.keys():
        return
    patterns = RewritePatternSet()
    for name in sorted(DECOMPOSITIONS):  # all of them: a decomposition may create ops that decompose further
        rule = DECOMPOSITIONS[name]

        def apply(op: ir.OpView, rw: Any, rule: Callable[[ir.Operation, Any], bool] = rule) -> bool:
            # The driver reads a falsy return as success, a truthy one as "no match".
            if rule(op.operation, rw):
                count("num-decomposed")
                return False
            return True

        patterns.add(name, apply)
    config = GreedyRewriteConfig()
    config.enable_folding = False
    config.enable_constant_cse = False
    config.region_simplification_level = GreedySimplifyRegionLevel.DISABLED
    apply_patterns_and_fold_greedily(module, patterns.freeze(), config)


def padded_rows(value: ir.Value, rows: ir.Value, block: int) -> ir.Value:
    """The [rows, W] tensor ``value`` (``rows`` known at run time, at most ``block``) padded with zero rows to a
    static [block, W]: a tile of a size known when compiling for the rows a loop of whole tiles leaves."""
    t = ir.RankedTensorType(value.type)
    missing = arith.subi(arith.constant(ir.IndexType.get(), block), rows)
    padded = tensor.PadOp(ir.RankedTensorType.get([block, t.shape[1]], t.element_type), value, [], [missing],
                          [0, 0], [ir.ShapedType.get_dynamic_size(), 0])
    body = padded.regions[0].blocks.append(ir.IndexType.get(), ir.IndexType.get())
    with ir.InsertionPoint(body):
        tensor.YieldOp(const(t.element_type, 0.0))
    return padded.result
