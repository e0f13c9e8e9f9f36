"""The patterns the fusion passes look for, planted in random graphs (:data:`MOTIFS`, which passes
each exercises: :data:`MOTIF_PASSES`), and the structure family: the data flow of real models
(:data:`STRUCTURE_STEPS`).
"""


from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from graphfuse.dialect.types import FLOAT_DTYPES
from graphfuse.tools.random_graph_cases import FLOATS, Chooser, Reject, _as_f64, _broadcasts, _refactor

if TYPE_CHECKING:
    from graphfuse.tools.random_graph_generator import Generator


def _norm_input(g: Generator, dtype: str | None = None) -> tuple[int, int]:
    """(x1, x2) to add before a normalization: x1 a [rows, h] or [b, rows, h] value, x2 broadcasting to it."""
    dtype = dtype or g.float_dtype()
    shape = (*((g.c.choice((1, 2)),) if g.c.boolean() else ()), g.c.choice((2, 3, 4)), g.c.choice((4, 8)))
    x1 = g.pick(lambda v: v.sig.dtype == dtype and v.sig.shape == shape) if g.c.boolean(0.3) else None
    x1 = x1 if x1 is not None else g.leaf(shape, dtype)
    x2 = g.leaf(shape if g.c.boolean(0.7) else g.broadcast_partner(shape), dtype)
    return (x1, x2) if g.c.boolean(0.7) else (x2, x1)


def motif_add_layer_norm(g: Generator) -> None:
    """add or bias_add -> layer_norm (add_layer_norm_fusion, _v3_, _ext_)."""
    x1, x2 = _norm_input(g)
    v = g.value(x1) if g.value(x1).sig.rank >= g.value(x2).sig.rank else g.value(x2)
    dtype, shape = v.sig.dtype, v.sig.shape
    if g.c.boolean(0.3):
        base = x1 if g.value(x1).sig.shape == shape else x2
        total = g.op1("bias_add", [base, g.leaf((shape[-1],), dtype)], axis=g.choice_last_axis(len(shape)))
    else:
        total = g.op1("add", [x1, x2])
    g.maybe_reuse(total)
    begin = g.c.choice((-1, len(shape) - 1, len(shape) - 2)) if len(shape) >= 2 else -1
    normalized = shape[begin:] if begin != -1 else shape[-1:]
    g._require_spread_axes(total, tuple(range(len(shape) - len(normalized), len(shape))))
    g.op1("layer_norm", [total, g.leaf(normalized, dtype), g.leaf(normalized, dtype)], begin_norm_axis=begin,
          epsilon=g.c.choice((1e-5, 1e-6)))


def motif_add_rms_norm(g: Generator) -> None:
    """add -> rms_norm [-> quantize], or rms_norm -> quantize (add_rms_norm_, add_rms_norm_quant_, rms_norm_quant_)."""
    x1, x2 = _norm_input(g)
    dtype = g.value(x1).sig.dtype
    wide = x1 if g.value(x1).sig.rank >= g.value(x2).sig.rank else x2
    total = g.op1("add", [x1, x2]) if g.c.boolean(0.8) else wide
    g.maybe_reuse(total)
    g._require_spread(total, -1, statistic="rms")
    last = g.value(total).sig.shape[-1]
    gamma_dtype = dtype if g.c.boolean(0.7) else "f32"
    y = g.op1("rms_norm", [total, g.leaf((last,), gamma_dtype, positive=True)], epsilon=1e-6)
    if g.c.boolean(0.5):
        g.maybe_reuse(y, 0.2)
        scale = g.leaf((g.c.choice((1, last)),), "f32", const=True, array=g.rng.uniform(8.0, 30.0, 1))
        if g.value(scale).sig.shape[0] != 1:
            g.value(scale).array = g.rng.uniform(8.0, 30.0, last).astype(np.float32)
        offset = g.leaf((1,), "f32", const=True, array=np.zeros(1))
        g.op("quantize", [y, scale, offset])


def motif_cast_rms_norm(g: Generator) -> None:
    """cast(x1), cast(x2) f16/bf16 -> f32 -> add -> rms_norm -> cast back (add_cast_rms_norm_cast_fusion)."""
    low = g.c.choice(("f16", "bf16"))
    x1, x2 = _norm_input(g, low)
    up1 = g.op1("cast", [x1], "f32")
    up2 = up1 if x1 == x2 else g.op1("cast", [x2], "f32")
    g.maybe_reuse(up2, 0.15)
    total = g.op1("add", [up1, up2])
    g.maybe_reuse(total, 0.2)
    g._require_spread(total, -1, statistic="rms")
    last = g.value(total).sig.shape[-1]
    y = g.op1("rms_norm", [total, g.leaf((last,), "f32", positive=True)], epsilon=1e-6)
    g.maybe_reuse(y, 0.1)
    g.op1("cast", [y], low if g.c.boolean(0.85) else g.c.choice(("f16", "bf16")))


def motif_add_rms_norm_quant(g: Generator) -> None:
    """add_rms_norm -> dynamic_quant [smooth], flatten -> dynamic_quant -> view, [view ->] cast (TorchAir's)."""
    dtype = g.c.choice(("f16", "bf16", "f32"))
    shape = (g.c.choice((1, 2)), g.c.choice((2, 3)), g.c.choice((4, 8)))
    x1, x2 = g.leaf(shape, dtype), g.leaf(shape, dtype)
    gamma = g.leaf((shape[-1],), dtype, positive=True)
    total = _as_f64(g.value(x1).array) + _as_f64(g.value(x2).array)  # the sum the fused op normalizes
    if np.sqrt(np.mean(total * total, axis=-1)).min() < 0.2:
        raise Reject("rows too flat to normalize")
    y, total = g.op("add_rms_norm", [x1, x2, gamma], epsilon=1e-6)
    g.maybe_reuse(total, 0.3)
    g._require_spread(y, -1, statistic="max")
    kind = g.c.integer(0, 2)
    if kind == 0:
        operands = [y] + ([g.leaf((shape[-1],), dtype, positive=True)] if g.c.boolean(0.7) else [])
        g.op("dynamic_quant", operands)
    elif kind == 1:
        flat = g.op1("reshape", [y], (shape[0] * shape[1], shape[-1]))
        _, scale = g.op("dynamic_quant", [flat])
        g.op1("reshape", [scale], (shape[0] * shape[1], 1))
    else:
        source = g.op1("reshape", [y], (shape[0] * shape[1], shape[-1])) if g.c.boolean() else y
        g.op1("cast", [source], "f32" if g.c.boolean(0.8) else "f16")


def motif_matmul_epilogue(g: Generator) -> None:
    """matmul -> bias_add / add / relu / gelu / split (matmul_elem_*, MatMulBiasAddFusionPass, matmul_split)."""
    dtype = g.c.choice(("f32", "f32", "f16", "bf16"))
    m, k, n = g.c.choice((1, 2, 4)), g.c.choice((2, 4, 8)), g.c.choice((2, 4, 6, 8))
    batch = (g.c.choice((1, 2)),) if g.c.boolean(0.3) else ()
    transpose_a, transpose_b = g.c.boolean(0.15), g.c.boolean(0.3)
    a = g.leaf((*batch, k, m) if transpose_a else (*batch, m, k), dtype)
    b = g.leaf((n, k) if transpose_b else (k, n), dtype, const=g.c.boolean(0.4))
    flags = {name: True for name, on in (("transpose_a", transpose_a), ("transpose_b", transpose_b)) if on}
    mm = g.op1("matmul", [a, b], **flags)
    g.maybe_reuse(mm, 0.2)
    shape = g.value(mm).sig.shape
    kind = g.c.choice(("bias_add", "add_bias", "add", "relu", "gelu", "split"))
    if kind == "bias_add":
        g.op1("bias_add", [mm, g.leaf((n,), dtype)], axis=g.choice_last_axis(len(shape)) if g.c.boolean(0.8) else 0)
    elif kind == "add_bias":
        bias = g.leaf((n,), dtype)
        g.op1("add", [mm, bias] if g.c.boolean() else [bias, mm])
    elif kind == "add":
        other = g.leaf(shape if g.c.boolean(0.6) else g.broadcast_partner(shape), dtype)
        g.op1("add", [mm, other] if g.c.boolean() else [other, mm])
    elif kind == "relu":
        g.op1("relu", [mm])
    elif kind == "gelu":
        g.op1("gelu", [mm], approximate=g.c.choice(("none", "tanh")))
    elif n >= 2:
        cut = g.c.integer(1, n - 1)
        axis = g.choice_last_axis(len(shape)) if g.c.boolean(0.8) else 0
        if shape[axis] >= 2:
            cut = min(cut, shape[axis] - 1)
            g.op("split", [mm], axis=axis, sizes=[cut, shape[axis] - cut])


def motif_attention(g: Generator) -> None:
    """softmax(q k^T * c [+ mask]) @ v and its variants (FlashAttentionFusionV1, V2)."""
    dtype = g.c.choice(("f32", "f32", "f16"))
    lead = (g.c.choice((1, 2)),) + ((g.c.choice((1, 2)),) if g.c.boolean(0.4) else ())
    s, d = g.c.choice((2, 4, 5)), g.c.choice((2, 4, 8))
    q, k, v = (g.leaf((*lead, s, d), dtype) for _ in range(3))
    rank = len(lead) + 2
    scale = g.c.choice((0.5, 0.25, 0.3))
    how = g.c.choice(("mul", "div", "q_mul", "q_div", "none"))
    if how in ("q_mul", "q_div"):
        c = g.scalar_const(scale if how == "q_mul" else 1 / scale, dtype, g.c.choice(((), (1,))))
        q = g.op1("mul" if how == "q_mul" else "div", [q, c] if how == "q_div" or g.c.boolean() else [c, q])
    if g.c.boolean(0.6):
        scores = g.op1("matmul", [q, k], transpose_b=True)
    else:
        perm = [*range(rank - 2), rank - 1, rank - 2]
        scores = g.op1("matmul", [q, g.op1("transpose", [k], perm=perm)])
    if how in ("mul", "div"):
        c = g.scalar_const(scale if how == "mul" else 1 / scale, dtype)
        scores = g.op1(how, [scores, c] if how == "div" or g.c.boolean() else [c, scores])
    g.maybe_reuse(scores, 0.1)
    if g.c.boolean(0.4):
        mask = g.leaf((s, s), dtype)
        scores = g.op1("add", [scores, mask] if g.c.boolean() else [mask, scores])
    probs = g.op1("softmax", [scores], axis=g.c.choice((-1, -1, -1, rank - 2)))
    g.maybe_reuse(probs, 0.1)
    g.op1("matmul", [probs, v])


def motif_swiglu(g: Generator) -> None:
    """silu(first half) * second half, halves by split or two slices (inference_swiglu_fusion)."""
    dtype = g.float_dtype()
    h = g.c.choice((2, 3, 4))
    shape = (g.c.choice((1, 2, 4)), 2 * h + (1 if g.c.boolean(0.1) else 0))
    x = g.leaf(shape, dtype)
    if g.c.boolean(0.6):
        sizes = [h, shape[1] - h] if g.c.boolean(0.9) else [shape[1] - h, h]
        first, second = g.op("split", [x], axis=g.c.choice((1, -1)), sizes=sizes)
        if g.c.boolean(0.1):
            first, second = second, first
    else:
        first = g.op1("slice", [x], start=[0, 0], limit=[shape[0], h])
        second = g.op1("slice", [x], start=[0, h], limit=[shape[0], 2 * h])
    g.maybe_reuse(second, 0.1)
    gate = g.op1("silu", [first])
    g.maybe_reuse(gate, 0.1)
    g.op1("mul", [gate, second] if g.c.boolean() else [second, gate])


def _conv_weight(g: Generator, out_channels: int, in_channels: int, kh: int, kw: int) -> int:
    array = g.rng.uniform(-1.0, 1.0, (out_channels, in_channels, kh, kw)) / math.sqrt(in_channels * kh * kw)
    return g.leaf(array.shape, "f32", const=True, array=array)


def motif_conv_batch_norm(g: Generator) -> None:
    """conv2d [+ bias] -> batch_norm [-> bias] with constants (ConvBatchnormFusionPass, BatchNormSplitFusionPass)."""
    n, c, o = g.c.choice((1, 2)), g.c.choice((1, 2, 3)), g.c.choice((1, 2, 4))
    x = g.leaf((n, c, g.c.integer(3, 6), g.c.integer(3, 6)), "f32")
    kh, kw = g.c.integer(1, 3), g.c.integer(1, 3)
    attrs: dict[str, Any] = {}
    if g.c.boolean(0.3):
        attrs["pads"] = [g.c.integer(0, 1) for _ in range(4)]
    if g.c.boolean(0.3):
        attrs["strides"] = [g.c.integer(1, 2), g.c.integer(1, 2)]
    y = g.op1("conv2d", [x, _conv_weight(g, o, c, kh, kw)], **attrs)
    g.maybe_reuse(y, 0.1)
    if g.c.boolean(0.3):
        y = g.op1("bias_add", [y, g.leaf((o,), "f32", const=True)], axis=1)
    params = [g.leaf((o,), "f32", const=g.c.boolean(0.9), positive=i == 3) for i in range(4)]
    y = g.op1("batch_norm", [y, *params], epsilon=g.c.choice((1e-5, 0.0)))
    if g.c.boolean(0.5):
        g.maybe_reuse(y, 0.1)
        if g.c.boolean():
            g.op1("bias_add", [y, g.leaf((o,), "f32", const=g.c.boolean(0.9))], axis=1)
        else:
            g.op1("add", [y, g.leaf((o, 1, 1), "f32", const=True)])


def motif_conv_layout(g: Generator) -> None:
    """A conv2d covering its whole input (ConvToFullyConnectionFusionPass), split -> convs -> concat (SplitConv...)."""
    n, h, w = g.c.choice((1, 2)), g.c.integer(2, 4), g.c.integer(2, 4)
    if g.c.boolean():
        c, o = g.c.choice((1, 2, 3)), g.c.choice((2, 4))
        x = g.leaf((n, c, h, w), "f32")
        weight = _conv_weight(g, o, c, h, w) if g.c.boolean(0.7) else g.leaf((o, c, h, w), "f32", const=False)
        g.op1("conv2d", [x, weight])
        return
    pieces, c, o = g.c.choice((2, 3)), g.c.choice((1, 2)), g.c.choice((1, 2))
    x = g.leaf((n, pieces * c, h + 2, w + 2), "f32")
    parts = g.op("split", [x], axis=1, sizes=[c] * pieces)
    kernel = (g.c.integer(1, 3), g.c.integer(1, 3))
    convs = [g.op1("conv2d", [part, _conv_weight(g, o, c, *kernel)]) for part in parts]
    g.maybe_reuse(convs[-1], 0.1)
    g.op1("concat", convs, axis=1)


def motif_reshape_chain(g: Generator) -> None:
    """reshape -> reshape, [reshape ->] transpose -> reshape (shape_reshape, shape_reshape_2)."""
    x = g.pick(lambda v: v.sig.rank >= 1 and v.sig.num_elements > 1) if g.c.boolean(0.5) else None
    x = x if x is not None else g.leaf(g.shape(low_rank=2, high_rank=3), g.float_dtype())
    shape = g.value(x).sig.shape
    first = g.op1("reshape", [x], _refactor(shape, g.c))
    g.maybe_reuse(first, 0.15)
    if g.c.boolean():
        g.op1("reshape", [first], _refactor(g.value(first).sig.shape, g.c) if g.c.boolean(0.7) else shape)
        return
    dims = list(g.value(first).sig.shape)
    where = g.c.integer(0, len(dims))
    unit = g.op1("reshape", [first], (*dims[:where], 1, *dims[where:]))
    rank = len(dims) + 1
    perm = list(range(rank))
    target = g.c.integer(0, rank - 1)
    perm.insert(target, perm.pop(where))  # move the unit dim (another dim when the choice is unlucky)
    if g.c.boolean(0.2) and rank >= 2:
        perm[0], perm[-1] = perm[-1], perm[0]
    moved = g.op1("transpose", [unit], perm=perm)
    g.op1("reshape", [moved], _refactor(g.value(moved).sig.shape, g.c))


def motif_split_concat(g: Generator) -> None:
    """split -> concat of a run of its pieces (split_concat_fusion); nested concats (ZConcatv2dFusionPass)."""
    dtype = g.c.choice((*FLOATS, "i32"))
    shape = list(g.shape(low_rank=1, high_rank=3))
    axis = g.c.integer(0, len(shape) - 1)
    if g.c.boolean():
        shape[axis] = 3 * g.c.choice((1, 2))
        x = g.leaf(shape, dtype)
        third = shape[axis] // 3
        pieces = g.op("split", [x], axis=axis, sizes=[third] * 3)
        start = g.c.integer(0, 1)
        run = list(pieces[start : start + g.c.integer(2, 3 - start)])
        if g.c.boolean(0.15):
            run.reverse()
        g.maybe_reuse(pieces[0], 0.1)
        g.op1("concat", run, axis=axis - len(shape) if g.c.boolean(0.3) else axis)
        return
    a, b, c = (g.leaf(shape, dtype) for _ in range(3))
    inner = g.op1("concat", [a, b], axis=axis)
    g.maybe_reuse(inner, 0.15)
    other_axis = axis if g.c.boolean(0.85) else (axis + 1) % len(shape)
    g.op1("concat", [inner, c] if g.c.boolean() else [c, inner], axis=other_axis - len(shape)
          if g.c.boolean(0.3) else other_axis)


def motif_small_op_softmax(g: Generator) -> None:
    """reduce_max, sub, exp, reduce_sum, div on one axis (SoftmaxSmallOpFusionPass)."""
    x = g.leaf(g.shape(low_rank=1, high_rank=3), g.float_dtype())
    rank = g.value(x).sig.rank
    axis = g.c.integer(0, rank - 1)
    keep = g.c.boolean(0.9)
    top = g.op1("reduce_max", [x], axes=[axis], keep_dims=keep)
    if not keep:
        top = g.op1("reshape", [top], tuple(1 if i == axis else d for i, d in enumerate(g.value(x).sig.shape)))
    e = g.op1("exp", [g.op1("sub", [x, top])])
    g.maybe_reuse(e, 0.1)
    total = g.op1("reduce_sum", [e], axes=[axis], keep_dims=True)
    g.op1("div", [e, total])


MOTIFS: tuple[Callable[[Generator], None], ...] = (
    motif_add_layer_norm,
    motif_add_rms_norm,
    motif_cast_rms_norm,
    motif_add_rms_norm_quant,
    motif_matmul_epilogue,
    motif_attention,
    motif_swiglu,
    motif_conv_batch_norm,
    motif_conv_layout,
    motif_reshape_chain,
    motif_split_concat,
    motif_small_op_softmax,
)


#: The fusion passes each motif is shaped for (the test checks each one fires on some planted instance).
#: MatMulBiasAddFusionPass shares its rewrite with matmul_elem_biasadd_fusion, which runs first in graph-fusion.
MOTIF_PASSES: dict[str, tuple[str, ...]] = {
    "add_layer_norm": ("add_layer_norm_fusion", "add_layer_norm_v3_fusion", "add_layer_norm_ext_fusion"),
    "add_rms_norm": ("add_rms_norm_fusion", "add_rms_norm_quant_fusion", "rms_norm_quant_fusion"),
    "cast_rms_norm": ("add_cast_rms_norm_cast_fusion",),
    "add_rms_norm_quant": ("pattern_fusion_pass",),
    "matmul_epilogue": ("matmul_elem_biasadd_fusion", "matmul_elem_add_fusion", "matmul_elem_relu_fusion",
                        "matmul_elem_gelu_fusion", "inference_matmul_split_fusion"),
    "attention": ("FlashAttentionFusionV1", "FlashAttentionFusionV2"),
    "swiglu": ("inference_swiglu_fusion",),
    "conv_batch_norm": ("ConvBatchnormFusionPass", "BatchNormSplitFusionPass"),
    "conv_layout": ("ConvToFullyConnectionFusionPass", "SplitConvConcatFusionPass"),
    "reshape_chain": ("shape_reshape", "shape_reshape_2"),
    "split_concat": ("split_concat_fusion", "ZConcatv2dFusionPass"),
    "small_op_softmax": ("SoftmaxSmallOpFusionPass",),
}


# by many ops, diamonds and residual blocks, wide fan-out and fan-in, long chains, over tens to thousands of ops.
# The graph-kernel clustering builds invalid IR (a kernel called before an operand's definition) on such graphs.


def structure_chain(g: Generator) -> None:
    """A long chain: each op reads the one before (its other operand a hub, a recent value or a weight)."""
    x = g.pick()
    if x is None:
        return
    for _ in range(g.c.integer(3, 24)):
        try:
            x = g.elementwise(x)
        except Reject:
            continue


def structure_hub(g: Generator) -> None:
    """A value already read often read again, by several ops next to recent values."""
    hub = g.read_often()
    hub = hub if hub is not None else g.pick()
    if hub is None:
        return
    h = g.value(hub)
    for _ in range(g.c.integer(2, 6)):
        recent = g.pick(lambda v: v.sig.dtype == h.sig.dtype and _broadcasts(h.sig.shape, v.sig.shape))
        try:
            if recent is not None and recent != hub and g.c.boolean(0.7):
                g.elementwise(recent, hub)
            else:
                g.elementwise(hub)
        except Reject:
            continue


def structure_diamond(g: Generator) -> None:
    """x -> two short branches -> one op joining them; a residual block (x + f(x)) when one branch is x itself."""
    x = g.pick()
    if x is None:
        return
    branches = []
    for _ in range(2):
        tip = x
        for _ in range(0 if branches and g.c.boolean(0.35) else g.c.integer(1, 3)):
            tip = g.elementwise(tip)
        branches.append(tip)
    left, right = branches
    a, b = g.value(left), g.value(right)
    if a.sig.dtype != b.sig.dtype or left == right:
        return  # a select turned one branch into another type: the two stay a fan-out
    if not _broadcasts(b.sig.shape, a.sig.shape):
        left, right = right, left
    if _broadcasts(g.value(right).sig.shape, g.value(left).sig.shape):
        g.elementwise(left, right)


def structure_fan_out(g: Generator) -> None:
    """One value read by many ops at once, as by the heads of a layer."""
    x = g.pick()
    if x is None:
        return
    for _ in range(g.c.integer(3, 12)):
        try:
            g.elementwise(x)
        except Reject:
            continue


def structure_fan_in(g: Generator) -> None:
    """Many values combined into one: a left-deep chain or a balanced tree of binary ops, add_n or concat."""
    first = g.pick()
    if first is None:
        return
    v = g.value(first)
    wanted = g.c.integer(2, 15)
    group = [first]
    for index in reversed(g.usable):  # the newest values that combine with the first
        w = g.value(index)
        if index != first and w.sig.dtype == v.sig.dtype and _broadcasts(w.sig.shape, v.sig.shape):
            group.append(index)
            if len(group) > wanted:
                break
    if len(group) < 3:
        return
    kind = g.c.choice(("chain", "tree", "add_n", "concat"))
    same_shape = [i for i in group if g.value(i).sig.shape == v.sig.shape]
    if kind == "add_n" and v.sig.dtype in FLOAT_DTYPES and len(same_shape) >= 3:
        g.op1("add_n", same_shape)
    elif kind == "concat" and v.sig.rank >= 1 and len(same_shape) >= 3:
        g.op1("concat", same_shape, axis=g.c.integer(0, v.sig.rank - 1))
    elif kind == "tree":  # pairs, then pairs of pairs: the shape of a reduction written out
        level = group
        while len(level) > 1:
            level = [g.elementwise(level[k], level[k + 1]) if k + 1 < len(level) else level[k]
                     for k in range(0, len(level), 2)]
    else:
        total = first
        for other in group[1:]:
            try:
                total = g.elementwise(total, other)
            except Reject:
                continue


def structure_mixed(g: Generator) -> None:
    """The op families of :meth:`Generator.generate` (reductions, layout ops, matmuls, norms, casts, compares) and
    planted patterns, reading the structure's recent values."""
    if g.c.boolean(0.2):
        g.plant_motif()
    else:
        g.generic_step()


#: The steps of the structure family; each graph weighs them differently (a chain-heavy graph, a hub-heavy one...).
STRUCTURE_STEPS: tuple[Callable[[Generator], None], ...] = (
    structure_chain,
    structure_hub,
    structure_diamond,
    structure_fan_out,
    structure_fan_in,
    structure_mixed,
)
#: The main dtype of a structure graph's values; the others come in through casts, compares and the mixed steps.
STRUCTURE_DTYPES = ("f32", "f32", "f16", "bf16", "i32", "i64", "i1")
#: Op counts of the structure family as (low, high, weight): mostly small, so that a long run stays affordable.
STRUCTURE_SIZES: tuple[tuple[int, int, int], ...] = ((40, 80, 60), (80, 200, 25), (200, 600, 11), (600, 2000, 4))
#: Most results of a structure graph (the folds of :meth:`Generator._close_structure` come first).
STRUCTURE_OUTPUTS = 8


def structure_size(chooser: Chooser, most: int = 2000) -> int:
    """An op count for a structure graph: from :data:`STRUCTURE_SIZES`, at most ``most`` (and at least 40)."""
    tiers = [(low, min(high, most), weight) for low, high, weight in STRUCTURE_SIZES if low <= most] or [(40, 40, 1)]
    draw = chooser.integer(0, sum(weight for _, _, weight in tiers) - 1)
    for low, high, weight in tiers:
        if draw < weight:
            return chooser.integer(low, high)
        draw -= weight
    raise AssertionError("unreachable")
