"""Collective communication: all_reduce, all_gather, reduce_scatter, and the fused matmul_all_reduce
(MatMulAllReduce) and quant_batch_matmul_all_reduce (QuantBatchMatmulAllReduce).

Every rank of a group runs the same graph (SPMD) on its own values; a
collective combines one operand from each rank.  ``group`` names the process
group (``"world"``: all ranks) and ``group_size`` is how many ranks it has:
it is part of the op because all_gather and reduce_scatter change a
dimension by that factor, and a run on a group of another size is an error
rather than a wrong shape.  Sums are taken in rank order, in the operand's
type (f16 and bf16 in f32, rounded once at the end; integers wrap); a
communication engine may add in another order (ring algorithms do), so
compiled results can differ from the reference in the last bits.

The reference semantics run every rank as a thread of one process
(:mod:`graphfuse.dialect.collectives`, ``graphfuse.run_function_ranks``); the
compiled form calls ``torch.distributed`` (:mod:`graphfuse.distributed`).
Collectives are never erased by dead-code elimination (:data:`COLLECTIVE_OPS`),
so every rank keeps calling the same collectives in the same order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphfuse.dialect.catalog import REQUIRED, AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.collectives import current_rank, gathered
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.shape_utils import dims_equal, normalize_axis, require_dtype, same_dtype
from graphfuse.dialect.types import FLOAT_DTYPES, NUMERIC_DTYPES, TensorSig

__all__ = ["COLLECTIVE_OPS", "REDUCTIONS"]

_GROUP = "collective"
#: The graph ops that communicate between ranks.
COLLECTIVE_OPS = frozenset({"graph.all_reduce", "graph.all_gather", "graph.reduce_scatter",
                            "graph.matmul_all_reduce", "graph.quant_batch_matmul_all_reduce"})
REDUCTIONS = ("sum", "max", "min")

_GROUP_ATTRS = (
    AttrSpec("group", AttrKind.STRING, default="world", doc="the process group (\"world\": every rank)"),
    AttrSpec("group_size", AttrKind.I64, default=REQUIRED, doc="how many ranks the group has (>= 1)"),
)
_REDUCTION_ATTR = AttrSpec("reduction", AttrKind.STRING, default="sum", choices=REDUCTIONS,
                           doc="how the ranks' values combine")


def _check_group(attrs: dict[str, Any]) -> int:
    size = attrs["group_size"]
    if size < 1:
        raise VerifyError(f"attribute 'group_size' must be at least 1, got {size}")
    if not attrs["group"]:
        raise VerifyError("attribute 'group' must name a process group, got an empty string")
    return size


def _exchange(x: np.ndarray, attrs: dict[str, Any]) -> list[np.ndarray]:
    """Every rank's ``x`` in rank order (just ``x`` on a one-rank group)."""
    try:
        values = gathered(x, attrs["group"], attrs["group_size"])
    except ValueError as error:
        raise VerifyError(str(error)) from None
    return [x] if values is None else list(values)


def _reduce(values: list[np.ndarray], reduction: str) -> np.ndarray:
    combine = {"sum": np.add, "max": np.maximum, "min": np.minimum}[reduction]
    total = np.array(values[0], copy=True)
    for value in values[1:]:
        total = combine(total, value).astype(total.dtype, copy=False)  # integers wrap, as they do when compiled
    return total


# --------------------------------------------------------------------------
# all_reduce


def _infer_all_reduce(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                      ) -> list[TensorSig]:
    (x,) = inputs
    require_dtype(x, NUMERIC_DTYPES, "operand")
    _check_group(attrs)
    return [x]


def _all_reduce_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
                          ) -> list[np.ndarray]:
    return [_reduce(_exchange(xs[0], attrs), attrs["reduction"])]


register_op(OpSpec(
    name="all_reduce", group=_GROUP, summary="Every rank gets the sum (max, min) of all ranks' operands.",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(_REDUCTION_ATTR, *_GROUP_ATTRS),
    infer=_infer_all_reduce, reference=_all_reduce_reference,
    doc=("`result = x_0 + x_1 + ... + x_{n-1}` (or the elementwise max / min) over the `group_size` ranks of "
         "`group`, the same on every rank; sums in rank order in the operand type (f16/bf16 in f32, rounded once "
         "at the end), integers wrap. Tensor parallelism sums the partial products of a row-parallel matmul with it."),
    example=((TensorSig((4, 8), "f32"),), {"group_size": 1}),
))

# --------------------------------------------------------------------------
# all_gather


def _infer_all_gather(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                      ) -> list[TensorSig]:
    (x,) = inputs
    size = _check_group(attrs)
    if x.rank == 0:
        raise VerifyError(f"operand {x} has no axis to gather along")
    axis = normalize_axis(attrs["axis"], x.rank)
    shape = list(x.shape)
    shape[axis] = None if shape[axis] is None else shape[axis] * size
    return [TensorSig(tuple(shape), x.dtype)]


def _all_gather_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
                          ) -> list[np.ndarray]:
    values = _exchange(xs[0], attrs)
    axis = normalize_axis(attrs["axis"], xs[0].ndim)
    shapes = {v.shape for v in values}
    if len(shapes) != 1:
        raise VerifyError(f"gets operands of different shapes from the ranks: {sorted(shapes)}")
    return [np.concatenate(values, axis=axis)]


register_op(OpSpec(
    name="all_gather", group=_GROUP, summary="The ranks' operands concatenated along an axis, on every rank.",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(AttrSpec("axis", AttrKind.I64, default=0, doc="axis to concatenate along; negative counts from the end"),
           *_GROUP_ATTRS),
    infer=_infer_all_gather, reference=_all_gather_reference,
    doc=("`result = concat([x_0, ..., x_{n-1}], axis)`: rank k's operand is the k-th block, so `axis` grows "
         "`group_size` times. Every rank's operand has the same shape. A column-parallel matmul's sharded "
         "result becomes whole with it."),
    example=((TensorSig((4, 8), "f32"),), {"axis": 1, "group_size": 1}),
))

# --------------------------------------------------------------------------
# reduce_scatter


def _infer_reduce_scatter(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                          ) -> list[TensorSig]:
    (x,) = inputs
    require_dtype(x, NUMERIC_DTYPES, "operand")
    size = _check_group(attrs)
    if x.rank == 0:
        raise VerifyError(f"operand {x} has no axis to scatter along")
    axis = normalize_axis(attrs["axis"], x.rank)
    shape = list(x.shape)
    if shape[axis] is not None:
        if shape[axis] % size:
            raise VerifyError(f"axis {axis} of operand {x} ({shape[axis]}) does not divide into {size} ranks")
        shape[axis] //= size
    return [TensorSig(tuple(shape), x.dtype)]


def _reduce_scatter_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
                              ) -> list[np.ndarray]:
    values = _exchange(xs[0], attrs)
    total = _reduce(values, attrs["reduction"])
    axis = normalize_axis(attrs["axis"], xs[0].ndim)
    if total.shape[axis] % len(values):
        raise VerifyError(f"axis {axis} ({total.shape[axis]}) does not divide into {len(values)} ranks")
    rank = _rank_of(attrs)
    return [np.split(total, len(values), axis=axis)[rank]]


def _rank_of(attrs: dict[str, Any]) -> int:
    context = current_rank()
    return 0 if context is None else context.rank


register_op(OpSpec(
    name="reduce_scatter", group=_GROUP, summary="The ranks' operands reduced, rank k keeping the k-th block.",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(AttrSpec("axis", AttrKind.I64, default=0, doc="axis to split the result along"),
           _REDUCTION_ATTR, *_GROUP_ATTRS),
    infer=_infer_reduce_scatter, reference=_reduce_scatter_reference,
    doc=("`result = split(x_0 + ... + x_{n-1}, group_size, axis)[rank]`: the all_reduce result, of which each "
         "rank keeps its own block along `axis` (which `group_size` must divide). all_gather of the results is "
         "the all_reduce."),
    example=((TensorSig((4, 8), "f32"),), {"axis": 0, "group_size": 1}),
))

# --------------------------------------------------------------------------
# matmul_all_reduce


def _infer_matmul_all_reduce(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                             ) -> list[TensorSig]:
    from graphfuse.dialect.catalog import OPS

    a, b, *bias = inputs
    for sig, name in ((a, "a"), (b, "b"), *((s, "bias") for s in bias)):
        require_dtype(sig, FLOAT_DTYPES, f"operand {name}")
    same_dtype(inputs)
    _check_group(attrs)
    if attrs["chunks"] < 0:
        raise VerifyError(f"attribute 'chunks' must be >= 0 (0: chosen when compiled), got {attrs['chunks']}")
    (result,) = OPS["matmul"].infer([a, b], {"transpose_a": attrs["transpose_a"],
                                             "transpose_b": attrs["transpose_b"]}, None)
    if result.rank < 2:
        raise VerifyError(f"the matmul result {result} must have rank >= 2 (its rows are split into chunks)")
    if bias and (bias[0].rank != 1 or not dims_equal(bias[0].shape[0], result.shape[-1])):
        raise VerifyError(f"operand bias {bias[0]} must be 1-D of the length of the result's last dim ({result})")
    return [result]


def _matmul_all_reduce_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
                                 ) -> list[np.ndarray]:
    from graphfuse.dialect.ops.fused_matmul import _narrow

    a, b, *bias = _narrow(xs, results[0].dtype)
    (partial,) = evaluate_op("matmul", [a, b], {"transpose_a": attrs["transpose_a"],
                                                "transpose_b": attrs["transpose_b"]})
    (total,) = evaluate_op("all_reduce", [partial], {"reduction": "sum", "group": attrs["group"],
                                                     "group_size": attrs["group_size"]})
    if bias:
        (total,) = evaluate_op("bias_add", [total, bias[0]], {"axis": -1})
    return [total]


register_op(OpSpec(
    name="matmul_all_reduce", group=_GROUP,
    summary="A matmul whose partial products are summed over the ranks (MatMulAllReduce), optional bias after.",
    operands=(ValueSpec("a"), ValueSpec("b"), ValueSpec("bias", "optional")), results=(ValueSpec("result"),),
    attrs=(AttrSpec("transpose_a", AttrKind.BOOL, default=False, doc="as matmul"),
           AttrSpec("transpose_b", AttrKind.BOOL, default=False, doc="as matmul"),
           *_GROUP_ATTRS,
           AttrSpec("chunks", AttrKind.I64, default=0,
                    doc="row blocks the compiled form splits the matmul into, each block's all-reduce overlapping "
                        "the next block's compute (0: chosen when compiled)")),
    infer=_infer_matmul_all_reduce, reference=_matmul_all_reduce_reference,
    doc=("`result = all_reduce(matmul(a, b), sum) (+ bias along the last axis)`: the row-parallel linear layer of "
         "tensor parallelism, whose ranks each hold a slice of the contraction. The matmul result is rounded to "
         "the operand type before the sum, and the bias is added once, after it, as in the unfused graph "
         "`matmul -> all_reduce -> bias_add` that MatMulAllReduce replaces. `chunks` changes the schedule, not "
         "the result."),
    example=((TensorSig((8, 4), "f32"), TensorSig((4, 16), "f32"), TensorSig((16,), "f32")), {"group_size": 1}),
))

# --------------------------------------------------------------------------
# quant_batch_matmul_all_reduce


def _infer_qbmm_all_reduce(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                           ) -> list[TensorSig]:
    from graphfuse.dialect.catalog import OPS

    x1, x2, scale, *x3 = inputs
    _check_group(attrs)
    if attrs["chunks"] < 0:
        raise VerifyError(f"attribute 'chunks' must be >= 0 (0: chosen when compiled), got {attrs['chunks']}")
    qbmm_attrs = {k: attrs[k] for k in ("transpose_x1", "transpose_x2", "dtype")}
    (result,) = OPS["quant_batch_matmul"].infer([x1, x2, scale], qbmm_attrs, None)
    if result.rank < 2:
        raise VerifyError(f"the product {result} must have rank >= 2 (its rows are split into chunks)")
    if x3:
        require_dtype(x3[0], {result.dtype}, "operand x3")
        (added,) = OPS["add"].infer([result, x3[0]], {}, None)
        if added.shape != result.shape:
            raise VerifyError(f"operand x3 {x3[0]} broadcasts the result {result} to a larger {added}")
    return [result]


def _qbmm_all_reduce_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
                               ) -> list[np.ndarray]:
    x1, x2, scale, *x3 = xs
    qbmm_attrs = {k: attrs[k] for k in ("transpose_x1", "transpose_x2", "dtype")}
    (partial,) = evaluate_op("quant_batch_matmul", [x1, x2, scale], qbmm_attrs)
    (total,) = evaluate_op("all_reduce", [partial], {"reduction": "sum", "group": attrs["group"],
                                                     "group_size": attrs["group_size"]})
    if x3:
        (total,) = evaluate_op("add", [total, x3[0]])
    return [total]


register_op(OpSpec(
    name="quant_batch_matmul_all_reduce", group=_GROUP,
    summary="A quantized batch matmul summed over the ranks, then an add (QuantBatchMatmulAllReduce).",
    operands=(ValueSpec("x1"), ValueSpec("x2"), ValueSpec("scale"), ValueSpec("x3", "optional")),
    results=(ValueSpec("result"),),
    attrs=(AttrSpec("transpose_x1", AttrKind.BOOL, default=False, doc="as quant_batch_matmul"),
           AttrSpec("transpose_x2", AttrKind.BOOL, default=False, doc="as quant_batch_matmul"),
           AttrSpec("dtype", AttrKind.STRING, default="f16", choices=("f16", "bf16", "f32"),
                    doc="as quant_batch_matmul"),
           *_GROUP_ATTRS,
           AttrSpec("chunks", AttrKind.I64, default=0,
                    doc="row blocks of the compiled form, as matmul_all_reduce's (0: chosen when compiled)")),
    infer=_infer_qbmm_all_reduce, reference=_qbmm_all_reduce_reference, widen_inputs=False,
    doc=("`result = all_reduce(quant_batch_matmul(x1, x2, scale), sum) (+ x3)`: each rank's dequantized partial "
         "product (rounded to `dtype`), summed over the ranks (in f32, rounded once), then `x3` (the result type, "
         "broadcasting to the result without enlarging it: a bias or a residual) added once. What "
         "inference_qbmm_allreduce_add_fusion makes of `quant_batch_matmul -> all_reduce -> add`."),
    example=((TensorSig((4, 16), "i8"), TensorSig((16, 8), "i8"), TensorSig((8,), "f32"),
              TensorSig((8,), "f16")), {"group_size": 1}),
))
