"""graph-to-linalg for conv2d (im2col, grouped, direct) and the 2-D poolings."""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor
from mlir.dialects import math as mlir_math

from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.matching import producer
from graphfuse.lowering.common import (
    PARALLEL,
    REDUCTION,
    build_generic,
    compute_type,
    const,
    element_type,
    host_cpu_forms,
    is_float,
    narrow,
    register_lowering,
)
from graphfuse.lowering.contraction import DIRECT_CONV, FILTER_LANES, register_tile
from graphfuse.lowering.host import vector_bits
from graphfuse.lowering.structured_ops.builders import (
    Size,
    _accumulator,
    _as_value,
    _attrs,
    _collapse,
    _dim,
    _dims,
    _dims_map,
    _elementwise,
    _expand,
    _filled,
    _index,
    _lowest,
    _numeric,
    _pad,
    _ranked,
    _replace,
    _round_to,
    _static,
    _window_count,
)


def _spatial_out(
    padded: ir.Value, rt: ir.RankedTensorType, kernel: list[int], strides: list[int], dilations: list[int]
) -> list[Size]:
    """Output OH, OW: static from the result type, else computed from the padded input."""
    sizes: list[Size] = []
    for d in range(2):
        size = _static(rt, 2 + d)
        if size is None:
            size = _window_count(_dim(padded, 2 + d), dilations[d] * (kernel[d] - 1) + 1, strides[d])
        sizes.append(size)
    return sizes


def _hw_pads(pads: list[int]) -> tuple[list[int], list[int]]:
    top, left, bottom, right = pads
    return [0, 0, top, left], [0, 0, bottom, right]


#: Largest im2col buffer (bytes) a conv2d is lowered through; beyond it the named convolution is kept.
IM2COL_MAX_BYTES = 64 * 2**20


def _im2col_fits(xp: ir.Value, w: ir.Value, rt: ir.RankedTensorType) -> bool:
    """Static shapes and an im2col buffer (C*KH*KW x N*OH*OW, 4 bytes each) of at most ``IM2COL_MAX_BYTES``."""
    xt, wt = ir.RankedTensorType(xp.type), ir.RankedTensorType(w.type)
    if not (xt.has_static_shape and wt.has_static_shape and rt.has_static_shape):
        return False
    n, _, oh, ow = rt.shape
    _, c, kh, kw = wt.shape
    return c * kh * kw * n * oh * ow * 4 <= IM2COL_MAX_BYTES


def _conv_as_matmul(
    xp: ir.Value,
    w: ir.Value,
    rt: ir.RankedTensorType,
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    acc: ir.Type,
    bias: ir.Value | None,
) -> ir.Value:
    """A plain convolution of the padded input as im2col + one contraction (static shapes).

    ``linalg.conv_2d_nchw_fchw`` as loops has the reduction innermost (7
    loops, strided reads), which LLVM does not vectorize.  Here a parallel
    generic gathers the windows into ``cols[c, kh, kw, n, oh, ow] = xp[n, c,
    oh * sh + kh * dh, ow * sw + kw * dw]`` (contiguous rows for stride 1),
    and ``linalg.contract`` multiplies the weights as a ``[F, C*KH*KW]``
    matrix with it, writing ``[N, F, OH, OW]`` directly; the runtime turns
    that into a blocked matmul.  A 1x1 kernel with stride 1 reads the input
    itself as the matrix (no gather).
    """
    n, f, oh, ow = rt.shape
    c = ir.RankedTensorType(w.type).shape[1]
    et = element_type(xp)
    d = [ir.AffineDimExpr.get(i) for i in range(5)]
    if kernel == [1, 1] and strides == [1, 1] and ir.RankedTensorType(xp.type).shape[2:] == [oh, ow]:
        cols = xp  # [N, C, OH, OW]: reduction dim C
        cols_map = ir.AffineMap.get(5, 0, [d[1], d[4], d[2], d[3]])
    else:
        kh, kw = kernel
        loops = [ir.AffineDimExpr.get(i) for i in range(6)]  # c, kh, kw, n, oh, ow
        row = loops[4] * strides[0] + loops[1] * dilations[0]
        col = loops[5] * strides[1] + loops[2] * dilations[1]
        gather = build_generic(
            [ir.RankedTensorType.get([c, kh, kw, n, oh, ow], et)],
            [xp],
            [tensor.empty([c, kh, kw, n, oh, ow], et)],
            [ir.AffineMap.get(6, 0, [loops[3], loops[0], row, col]), ir.AffineMap.get_identity(6)],
            [PARALLEL] * 6,
            lambda args: [args[0]],
        )
        cols = _collapse(gather.results[0], [[0, 1, 2], [3], [4], [5]])  # [C*KH*KW, N, OH, OW]
        cols_map = ir.AffineMap.get(5, 0, [d[4], d[1], d[2], d[3]])
    # loops: f, n, oh, ow, then the reduction k over C*KH*KW
    weights = _collapse(w, [[0], [1, 2, 3]])
    maps = [ir.AffineMap.get(5, 0, [d[0], d[4]]), cols_map, ir.AffineMap.get(5, 0, [d[1], d[0], d[2], d[3]])]
    init = _accumulator([n, f, oh, ow], acc, bias, [1])
    return linalg.contract(weights, cols, outs=[init], indexing_maps=maps)


def _grouped_conv_as_matmul(
    xp: ir.Value,
    w: ir.Value,
    rt: ir.RankedTensorType,
    groups: int,
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    acc: ir.Type,
    bias: ir.Value | None,
) -> ir.Value:
    """A grouped convolution (static shapes) as :func:`_conv_as_matmul` does a plain one, with the group as a
    batch dim: ``cols[g, c, kh, kw, n, oh, ow] = xp[n, g * C + c, oh * sh + kh * dh, ow * sw + kw * dw]`` (C
    input channels per group) and one contraction of the weights as ``[G, F, C*KH*KW]`` (F filters per group)
    with it, writing ``[N, G, F, OH, OW]``; the runtime makes it a batched blocked matmul.  (The named grouped
    convolution runs as scalar loops: 1.5 GFLOP/s.)"""
    n, filters, oh, ow = rt.shape
    per_group_in = ir.RankedTensorType(w.type).shape[1]
    per_group_out = filters // groups
    kh, kw = kernel
    et = element_type(xp)
    loops = [ir.AffineDimExpr.get(i) for i in range(7)]  # g, c, kh, kw, n, oh, ow
    row = loops[5] * strides[0] + loops[2] * dilations[0]
    col = loops[6] * strides[1] + loops[3] * dilations[1]
    channel = loops[0] * per_group_in + loops[1]
    sizes = [groups, per_group_in, kh, kw, n, oh, ow]
    gather = build_generic(
        [ir.RankedTensorType.get(sizes, et)],
        [xp],
        [tensor.empty(sizes, et)],
        [ir.AffineMap.get(7, 0, [loops[4], channel, row, col]), ir.AffineMap.get_identity(7)],
        [PARALLEL] * 7,
        lambda args: [args[0]],
    )
    cols = _collapse(gather.results[0], [[0], [1, 2, 3], [4], [5], [6]])  # [G, C*KH*KW, N, OH, OW]
    weights = _collapse(_expand(w, [[0, 1], [2], [3], [4]], [groups, per_group_out, per_group_in, kh, kw]),
                        [[0], [1], [2, 3, 4]])  # [G, F, C*KH*KW]
    d = [ir.AffineDimExpr.get(i) for i in range(6)]  # g, f, n, oh, ow, then the reduction k
    maps = [ir.AffineMap.get(6, 0, [d[0], d[1], d[5]]), ir.AffineMap.get(6, 0, [d[0], d[5], d[2], d[3], d[4]]),
            ir.AffineMap.get(6, 0, [d[2], d[0], d[1], d[3], d[4]])]
    grouped_bias = None if bias is None else _expand(bias, [[0, 1]], [groups, per_group_out])
    init = _accumulator([n, groups, per_group_out, oh, ow], acc, grouped_bias, [1, 2])
    product = linalg.contract(weights, cols, outs=[init], indexing_maps=maps)
    return _collapse(product, [[0], [1, 2], [3], [4]])


def _direct_conv_fits(
    x: ir.Value, w: ir.Value, rt: ir.RankedTensorType, strides: list[int], dilations: list[int],
    depthwise: bool = False,
) -> bool:
    """f32, static shapes, unit strides and dilations, output rows at least one register tile wide (narrower
    ones with many channels are im2col + matmul: 256 channels at 14x14, filters in the lanes, reading the 2.4
    MB of weights for every task of rows, ran at 180 GFLOP/s on 2 cores, im2col at 340).  A depthwise
    convolution has no matmul form: any width (narrow rows take the column ladder's narrower tiles)."""
    static = all(ir.RankedTensorType(v.type).has_static_shape for v in (x, w)) and rt.has_static_shape
    if not (static and isinstance(rt.element_type, ir.F32Type)):
        return False
    wide = depthwise or rt.shape[3] >= register_tile(vector_bits())[1]
    return strides == [1, 1] and dilations == [1, 1] and wide


def _direct_conv(xp: ir.Value, w: ir.Value, rt: ir.RankedTensorType, bias: ir.Value | None,
                 depthwise: bool = False) -> ir.Value:
    """A unit-stride convolution of the padded input as one generic, read in place by the runtime's register
    tiles (no im2col matrix, no copy of the input into panels): ``out[n, f, oh, ow] += w[f, c, kh, kw] *
    xp[n, c, oh + kh, ow + kw]``.

    With at least a register tile's columns of filters (:data:`FILTER_LANES`), the filters are the vector
    lanes: the generic runs over (n, oh, ow, f, c, kh, kw) and reads the weights as ``[C, KH, KW, F]`` (a
    constant transposed now, else a ``linalg.transpose``), so that a tile of MR output columns x NR
    filters is MR broadcast input floats times NR contiguous weights for each (c, kh, kw), whatever the
    row's width.  Else over (n, f, oh, ow, c, kh, kw), the output columns the lanes: MR broadcast weights
    times NR contiguous input floats of one row.

    ``depthwise`` (weights ``[C, 1, KH, KW]``, filter f reads input channel f alone): the same generic with
    the channel loop of extent 1 added to the filter, ``xp[n, f + c, ...]``, and the output columns the lanes
    (each filter of a tile reads its own input row).
    """
    d = [ir.AffineDimExpr.get(i) for i in range(7)]
    if bias is None or ir.RankedTensorType(bias.type).element_type != rt.element_type:
        init = _accumulator(list(rt.shape), rt.element_type, bias, [1])
    else:  # a named broadcast, not a generic: the schedule vectorizes the generics of a task, whose last task
        # of rows may have a dynamic size
        empty = tensor.empty(list(rt.shape), rt.element_type)
        init = linalg.broadcast(bias, outs=[empty], dimensions=[0, 2, 3]).results[0]
    filter_lanes = not depthwise and rt.shape[1] >= register_tile(vector_bits())[1]
    if filter_lanes:  # n, oh, ow, f, c, kh, kw
        w = _filters_last(w)
        maps = [
            ir.AffineMap.get(7, 0, [d[0], d[4], d[1] + d[5], d[2] + d[6]]),
            ir.AffineMap.get(7, 0, [d[4], d[5], d[6], d[3]]),
            ir.AffineMap.get(7, 0, [d[0], d[3], d[1], d[2]]),
        ]
    else:  # n, f, oh, ow, c, kh, kw
        channel = d[1] + d[4] if depthwise else d[4]
        maps = [
            ir.AffineMap.get(7, 0, [d[0], channel, d[2] + d[5], d[3] + d[6]]),
            ir.AffineMap.get(7, 0, [d[1], d[4], d[5], d[6]]),
            ir.AffineMap.get(7, 0, [d[0], d[1], d[2], d[3]]),
        ]
    conv = build_generic([rt], [xp, w], [init], maps, [PARALLEL] * 4 + [REDUCTION] * 3,
                         lambda args: [mlir_math.fma(args[0], args[1], args[2])])
    conv.attributes[DIRECT_CONV] = ir.UnitAttr.get()
    if filter_lanes:
        conv.attributes[FILTER_LANES] = ir.UnitAttr.get()
    return conv.results[0]


def _filters_last(w: ir.Value) -> ir.Value:
    """Weights ``[F, C, KH, KW]`` as ``[C, KH, KW, F]``: transposed now when they are a constant (a model's
    weight), else by a ``linalg.transpose`` (one pass over the weights per call)."""
    wt = ir.RankedTensorType(w.type)
    f, c, kh, kw = wt.shape
    transposed = ir.RankedTensorType.get([c, kh, kw, f], wt.element_type)
    constant = producer(w, "arith.constant")
    if constant is not None:
        attr = ir.DenseElementsAttr(constant.attributes["value"])
        if attr.is_splat:
            return arith.constant(transposed, ir.DenseElementsAttr.get_splat(transposed, attr.get_splat_value()))
        array = np.ascontiguousarray(attr_to_array(attr).transpose(1, 2, 3, 0))
        return arith.constant(transposed, array_to_attr(array))
    destination = tensor.empty([c, kh, kw, f], wt.element_type)
    return linalg.transpose(w, outs=[destination], permutation=[1, 2, 3, 0]).results[0]


@register_lowering("conv2d")
def lower_conv2d(op: ir.Operation) -> bool:
    """Zero padding, then im2col + a contraction or a named convolution (depthwise, grouped), accumulating in f32
    from zero or from the bias."""
    x, w = op.operands[:2]
    bias = op.operands[2] if len(op.operands) == 3 else None
    xt, wt, rt = _ranked(x), _ranked(w), _ranked(op.results[0])
    if xt is None or wt is None or rt is None or not is_float(xt.element_type):
        return False
    attrs = _attrs(op)
    strides, dilations = list(attrs["strides"]), list(attrs["dilations"])
    groups = int(attrs["groups"])
    kernel = [_static(wt, 2), _static(wt, 3)]
    if None in kernel:
        return False
    et = rt.element_type
    acc = compute_type(et)
    o_static, i_static = _static(wt, 0), _static(wt, 1)
    with op.location, ir.InsertionPoint(op):
        low, high = _hw_pads(list(attrs["pads"]))
        xp = _pad(x, low, high, 0.0)
        oh, ow = _spatial_out(xp, rt, kernel, strides, dilations)
        n = _dim(x, 0)
        named = {"strides": strides, "dilations": dilations}
        cpu_forms = host_cpu_forms()
        if groups == 1 and cpu_forms and _direct_conv_fits(xp, w, rt, strides, dilations):
            r = _direct_conv(xp, w, rt, bias)
        elif groups == 1 and cpu_forms and _im2col_fits(xp, w, rt):
            r = _conv_as_matmul(xp, w, rt, kernel, strides, dilations, acc, bias)
        elif groups == 1:
            init = _accumulator([n, _dim(w, 0), oh, ow], acc, bias, [1])
            r = linalg.conv_2d_nchw_fchw(xp, w, outs=[init], **named)
        elif i_static == 1 and o_static == groups and cpu_forms and \
                _direct_conv_fits(xp, w, rt, strides, dilations, depthwise=True):
            r = _direct_conv(xp, w, rt, bias, depthwise=True)
        elif i_static == 1 and o_static == groups:
            # Depthwise: channel c is convolved with filter w[c, 0] alone.
            init = _accumulator([n, groups, oh, ow], acc, bias, [1])
            r = linalg.depthwise_conv_2d_nchw_chw(xp, _collapse(w, [[0, 1], [2], [3]]), outs=[init], **named)
        elif cpu_forms and _im2col_fits(xp, w, rt):
            r = _grouped_conv_as_matmul(xp, w, rt, groups, kernel, strides, dilations, acc, bias)
        else:
            per_group_in = _dim(w, 1)
            per_group_out: Size = (
                o_static // groups if o_static is not None else arith.divui(_dim(w, 0), _index(groups))
            )
            xg = _expand(xp, [[0], [1, 2], [3], [4]], [n, groups, per_group_in, _dim(xp, 2), _dim(xp, 3)])
            wg = _expand(w, [[0, 1], [2], [3], [4]], [groups, per_group_out, per_group_in, *kernel])
            grouped_bias = None if bias is None else _expand(bias, [[0, 1]], [groups, per_group_out])
            init = _accumulator([n, groups, per_group_out, oh, ow], acc, grouped_bias, [1, 2])
            r = linalg.conv_2d_ngchw_gfchw(xg, wg, outs=[init], **named)
            r = _collapse(r, [[0], [1, 2], [3], [4]])
        return _replace(op, _round_to(r, et))


def _static_counts(size: int, kernel: int, stride: int, lo: int, out: int) -> np.ndarray:
    """Cells of each window inside the unpadded input along one dim."""
    starts = np.arange(out, dtype=np.int64) * stride - lo
    return np.minimum(starts + kernel, size) - np.maximum(starts, 0)


def _dynamic_count(pos: ir.Value, size: Size, kernel: int, stride: int, lo: int) -> ir.Value:
    """The same count at output index ``pos`` (index arithmetic, inside a generic body)."""
    start = arith.muli(pos, _index(stride)) if stride != 1 else pos
    start = arith.subi(start, _index(lo)) if lo else start
    end = arith.minsi(arith.addi(start, _index(kernel)), _as_value(size))
    return arith.subi(end, arith.maxsi(start, _index(0)))


@register_lowering("max_pool2d", "avg_pool2d")
def lower_pool2d(op: ir.Operation) -> bool:
    """Padding and ``linalg.pooling_nchw_max``/``_sum``; the average divides by the reference's window count."""
    x = op.operands[0]
    xt, rt = _ranked(x), _ranked(op.results[0])
    if xt is None or rt is None or not _numeric(xt.element_type):
        return False
    is_max = op.name == "graph.max_pool2d"
    et = rt.element_type
    if not is_max and not is_float(et):
        return False
    attrs = _attrs(op)
    kernel, strides, pads = list(attrs["kernel"]), list(attrs["strides"]), list(attrs["pads"])
    named = {"strides": strides, "dilations": [1, 1]}
    with op.location, ir.InsertionPoint(op):
        low, high = _hw_pads(pads)
        if is_max:
            xp = _pad(x, low, high, _lowest(et))
            oh, ow = _spatial_out(xp, rt, kernel, strides, [1, 1])
            init = _filled([_dim(x, 0), _dim(x, 1), oh, ow], et, _lowest(et))
            window = tensor.empty(kernel, et)
            return _replace(op, linalg.pooling_nchw_max(xp, window, outs=[init], **named))
        acc = compute_type(et)
        xp = _pad(x, low, high, 0.0)
        oh, ow = _spatial_out(xp, rt, kernel, strides, [1, 1])
        init = _filled([_dim(x, 0), _dim(x, 1), oh, ow], acc, 0)
        total = linalg.pooling_nchw_sum(xp, tensor.empty(kernel, et), outs=[init], **named)
        return _replace(op, _average(total, x, et, kernel, strides, pads, bool(attrs["count_include_pad"])))


def _average(
    total: ir.Value, x: ir.Value, et: ir.Type, kernel: list[int], strides: list[int], pads: list[int], include: bool
) -> ir.Value:
    """``total / count`` in the accumulator type, rounded to ``et``."""
    acc = element_type(total)
    top, left = pads[0], pads[1]  # the window's first cell; bottom/right padding only shortens the last windows
    if include or not any(pads):
        divisor = const(acc, float(kernel[0] * kernel[1]))
        return _elementwise(total, et, lambda s: narrow(arith.divf(s, divisor), et))
    xt, tt = ir.RankedTensorType(x.type), ir.RankedTensorType(total.type)
    h, w, oh, ow = _static(xt, 2), _static(xt, 3), _static(tt, 2), _static(tt, 3)
    rank4 = ir.AffineMap.get_identity(4)
    init = tensor.empty(_dims(total), et)
    result_type = ir.RankedTensorType.get(tt.shape, et)
    if None not in (h, w, oh, ow):
        counts = np.outer(
            _static_counts(h, kernel[0], strides[0], top, oh), _static_counts(w, kernel[1], strides[1], left, ow)
        ).astype(np.float32)
        attr = ir.DenseElementsAttr.get(counts, type=ir.RankedTensorType.get(list(counts.shape), acc))
        count = arith.constant(attr.type, attr)
        generic = build_generic(
            [result_type],
            [total, count],
            [init],
            [rank4, _dims_map(4, [2, 3]), rank4],
            [PARALLEL] * 4,
            lambda args: [narrow(arith.divf(args[0], args[1]), et)],
        )
        return generic.results[0]
    height, width = _dim(x, 2), _dim(x, 3)

    def body(args: list[ir.Value]) -> list[ir.Value]:
        rows = _dynamic_count(linalg.IndexOp(2).result, height, kernel[0], strides[0], top)
        cols = _dynamic_count(linalg.IndexOp(3).result, width, kernel[1], strides[1], left)
        cells = arith.index_cast(ir.IntegerType.get_signless(64), arith.muli(rows, cols))
        return [narrow(arith.divf(args[0], arith.sitofp(acc, cells)), et)]

    return build_generic([result_type], [total], [init], [rank4, rank4], [PARALLEL] * 4, body).results[0]
