"""graph-to-linalg for resize (nearest and linear taps as constants)."""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from graphfuse.dialect.constants import array_to_attr
from graphfuse.dialect.ops.spatial import resize_taps
from graphfuse.lowering.common import (
    PARALLEL,
    build_generic,
    narrow,
    register_lowering,
    widen,
)
from graphfuse.lowering.structured_ops.builders import _attrs, _dims, _dims_map, _ranked, _replace, _static


def _tap_constant(values: np.ndarray) -> ir.Value:
    """A 1-D constant of a resize's positions (i64) or weights (f32), read per result position."""
    attr = array_to_attr(np.ascontiguousarray(values))
    return arith.constant(attr.type, attr)


@register_lowering("resize")
def lower_resize(op: ir.Operation) -> bool:
    """A generic over the result reading its taps from the operand with ``tensor.extract``.

    The positions and weights along each resized dim are the op's own (``resize_taps``), 1-D constants read
    through the result's index on that dim; the dims before are the generic's ``linalg.index`` es.  Bilinear
    sums the two taps along W, then the two rows along H, in f32, in the reference's order.
    """
    x = op.operands[0]
    xt, rt = _ranked(x), _ranked(op.results[0])
    if xt is None or rt is None:
        return False
    attrs = _attrs(op)
    size, mode = [int(s) for s in attrs["size"]], attrs["mode"]
    first = rt.rank - len(size)
    ratios = (attrs["ratio_h"], attrs["ratio_w"])[2 - len(size):]
    et = rt.element_type
    with op.location, ir.InsertionPoint(op):
        # per resized dim: its taps, each (positions, weights or None) as constants
        taps = [
            [(_tap_constant(positions), None if weights is None else _tap_constant(weights))
             for positions, weights in resize_taps(_static(xt, first + k), out, mode, attrs["align_corners"], ratio)]
            for k, (out, ratio) in enumerate(zip(size, ratios, strict=True))
        ]
        inputs = [v for dim_taps in taps for tap in dim_taps for v in tap if v is not None]
        maps = [_dims_map(rt.rank, [first + k]) for k, dim_taps in enumerate(taps)
                for tap in dim_taps for v in tap if v is not None]
        init = tensor.empty([*_dims(x)[:first], *size], et)

        def body(args: list[ir.Value]) -> list[ir.Value]:
            read = iter(args)
            # per resized dim, per tap: (position as an index, weight or None)
            dim_taps = [[(arith.index_cast(ir.IndexType.get(), next(read)), None if w is None else next(read))
                         for _, w in dim] for dim in taps]
            leading = [linalg.IndexOp(d).result for d in range(first)]
            if mode != "bilinear":
                return [tensor.extract(x, leading + [position for ((position, _),) in dim_taps])]

            def along_w(*row: ir.Value) -> ir.Value:
                (w0, a0), (w1, a1) = dim_taps[-1]
                near = arith.mulf(widen(tensor.extract(x, [*leading, *row, w0])), a0)
                return arith.addf(near, arith.mulf(widen(tensor.extract(x, [*leading, *row, w1])), a1))

            if len(dim_taps) == 1:
                return [narrow(along_w(), et)]
            (h0, b0), (h1, b1) = dim_taps[0]
            return [narrow(arith.addf(arith.mulf(along_w(h0), b0), arith.mulf(along_w(h1), b1)), et)]

        result_type = ir.RankedTensorType.get(rt.shape, et)
        generic = build_generic([result_type], inputs, [init], [*maps, ir.AffineMap.get_identity(rt.rank)],
                                [PARALLEL] * rt.rank, body)
        return _replace(op, generic.results[0])
