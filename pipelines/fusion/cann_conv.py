"""Rewrites of the CANN convolution passes (see :mod:`graphfuse.pipelines.fusion.cann` for the passes).

- :func:`conv_batchnorm` / :func:`conv_bias_batchnorm`: ConvBatchnormFusionPass;
- :func:`batchnorm_split`: BatchNormSplitFusionPass (split fusion);
- :func:`conv_to_fully_connection`: ConvToFullyConnectionFusionPass;
- :func:`split_conv_concat`: SplitConvConcatFusionPass;
- :func:`conv_concat`: ConvConcatFusionPass;
- :func:`conv_bias_add`: ConvBiasAddFusionPass (the bias becomes the conv2d's own, accumulated in place).

A conv2d with a bias operand is taken by every rewrite: the batch_norm folds
fold its (constant) bias too, the joins concatenate the biases (a conv
without one adds zeros), and ConvToFullyConnection adds it to the matmul.

Folding batch_norm into a conv is the one rewrite here that changes rounding:
the folded weights ``w * s`` and bias are computed in float64 and rounded once
to the weight dtype.  With ``u`` the unit roundoff of that dtype (2^-24 for
f32, 2^-11 for f16, 2^-8 for bf16) and ``K = I * kh * kw`` products per output,
the fused and unfused results of one output element differ by at most about
``(K + 4) * u * (|s| * sum|x * w| + |s * (bias - mean)| + |offset| + |bias2|)``
(standard accumulation error bounds for the two conv sums, plus one rounding
of each folded weight and of every intermediate of the unfused chain); the
tests check that with a tolerance scaled by the magnitude of the terms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir

from graphfuse.dialect.catalog import infer_results, lookup_op
from graphfuse.dialect.matching import (
    attributes,
    constant_array,
    create_constant,
    create_op,
    erase_dead,
    fused_location,
    has_one_use,
    producer,
    sig,
)
from graphfuse.dialect.shape_utils import normalize_axis
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig

_BN_PARAMS = ("scale", "offset", "mean", "var")


# --------------------------------------------------------------------------
# Helpers.


def written_attrs(op: ir.Operation) -> dict[str, Any]:
    """The graph attributes written on ``op`` (defaults left implicit, as in the input)."""
    values = attributes(op)
    return {name: values[name] for name, _ in op.attributes.items() if "." not in name}


def inferred_conv(inputs: list[TensorSig], attrs: dict[str, Any]) -> TensorSig:
    """The result type a new conv2d would get (raises VerifyError, before any IR is built)."""
    spec = lookup_op("graph.conv2d")
    assert spec is not None
    return infer_results(spec, inputs, spec.with_defaults(attrs), None)[0]


def channel_bias(op: ir.Operation, data: ir.Value, channels: int) -> np.ndarray | str | None:
    """The per-channel constant that ``op`` adds to the NCHW value ``data``, as a 1-D array of ``channels``.

    Accepts ``bias_add(data, c)`` along axis 1 and ``add(data, c)`` / ``add(c,
    data)`` where ``c`` broadcasts per channel without growing ``data``
    (shapes ``(C, 1, 1)``, ``(1, C, 1, 1)``, or one value).  Returns None when
    ``op`` does not add anything to ``data`` and a reason when it does, but not
    a constant per-channel bias.
    """
    if op.name == "graph.bias_add":
        if op.operands[0] != data:
            return None
        axis = normalize_axis(attributes(op)["axis"], 4)
        if axis != 1:
            return f"the bias_add adds along axis {axis}, not the channel axis 1"
        bias = constant_array(op.operands[1])
        if bias is None:
            return "the bias of the bias_add is not a constant"
        return bias
    if op.name != "graph.add":
        return None
    lhs, rhs = op.operands[0], op.operands[1]
    other = rhs if lhs == data else lhs if rhs == data else None
    if other is None:
        return None
    if op.results[0].type != data.type:
        return "the add broadcasts its other operand to a larger shape"
    bias = constant_array(other)
    if bias is None:
        return "the other operand of the add is not a constant"
    shape = (1,) * (4 - bias.ndim) + bias.shape
    if bias.ndim > 4 or shape[0] != 1 or shape[2:] != (1, 1) or shape[1] not in (1, channels):
        return f"the added constant of shape {bias.shape} is not a per-channel bias"
    return np.broadcast_to(bias.reshape(-1), (channels,))


def batchnorm_affine(bn: ir.Operation) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
    """``(s, mean, offset)`` in float64 with ``bn(y) = (y - mean) * s + offset``, or why it cannot be folded."""
    params = [constant_array(v) for v in bn.operands[1:]]
    missing = [name for name, p in zip(_BN_PARAMS, params, strict=True) if p is None]
    if missing:
        return f"batch_norm parameters {', '.join(missing)} are not constants"
    scale, offset, mean, var = (p.astype(np.float64) for p in params)
    eps = float(attributes(bn)["epsilon"])
    with np.errstate(all="ignore"):
        denom = var + eps
        bad = np.flatnonzero(~(denom > 0))
        if bad.size:
            return f"var + epsilon is not positive for channel {int(bad[0])}: the batch_norm result is not finite"
        s = scale / np.sqrt(denom)
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(mean)) and np.all(np.isfinite(offset))):
        return "the batch_norm parameters are not finite"
    return s, mean, offset


def fold_into_conv(w: np.ndarray, s: np.ndarray, bias: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray] | str:
    """``(w * s[:, None, None, None], bias)`` rounded once from float64 to ``dtype``, or why not (overflow)."""
    target = NUMPY_DTYPES[dtype]
    with np.errstate(all="ignore"):
        folded_w = (w.astype(np.float64) * s[:, None, None, None]).astype(target)
        folded_b = bias.astype(target)
    if not (np.all(np.isfinite(folded_w.astype(np.float64))) and np.all(np.isfinite(folded_b.astype(np.float64)))):
        return f"the folded weights or bias are not finite in {dtype}"
    return folded_w, folded_b


_DYNAMIC_CHANNELS = "the conv2d output channel count is dynamic (its weights cannot be a constant)"


def _channels(conv: ir.Operation) -> int | None:
    """The conv's output channel count, None when dynamic."""
    return sig(conv.results[0]).shape[1]


def conv_bias(conv: ir.Operation) -> ir.Value | None:
    """The bias operand of a conv2d, None when it has none."""
    return conv.operands[2] if len(conv.operands) == 3 else None


def _constant_bias(conv: ir.Operation, channels: int) -> np.ndarray | str:
    """The conv2d's bias as a constant array of ``channels`` (zeros without one), or why not."""
    bias = conv_bias(conv)
    if bias is None:
        return np.zeros(channels, np.float64)
    array = constant_array(bias)
    if array is None:
        return "the conv2d bias is not a constant"
    return array


def _conv_weights(conv: ir.Operation) -> np.ndarray | str:
    w = constant_array(conv.operands[1])
    if w is None:
        return "the conv2d weights are not a constant"
    return w


def _fold_batchnorm(
    rw: Any,
    conv: ir.Operation,
    bn: ir.Operation,
    pre_bias: np.ndarray,
    post_bias: np.ndarray,
    replaced: ir.Operation,
    absorbed: list[ir.Operation],
) -> bool | str:
    """Replace ``replaced`` by ``bias_add(conv2d(x, w * s), (pre_bias - mean) * s + offset + post_bias)``.

    ``absorbed`` lists the ops that die with it, consumers first (``replaced``
    excluded); they are erased once unused.
    """
    w = _conv_weights(conv)
    if isinstance(w, str):
        return w
    affine = batchnorm_affine(bn)
    if isinstance(affine, str):
        return affine
    s, mean, offset = affine
    own = _constant_bias(conv, len(s))
    if isinstance(own, str):
        return own
    pre_bias = pre_bias.astype(np.float64) + own.astype(np.float64)
    bias = (pre_bias - mean) * s + offset + post_bias.astype(np.float64)
    dtype = sig(conv.results[0]).dtype
    folded = fold_into_conv(w, s, bias, dtype)
    if isinstance(folded, str):
        return folded
    new_w, new_b = folded
    x = conv.operands[0]
    attrs = written_attrs(conv)
    if inferred_conv([sig(x), sig(conv.operands[1])], attrs) != sig(replaced.results[0]):
        return "the new conv2d's result type would differ from the replaced result's"
    loc = fused_location([conv, *reversed(absorbed), replaced])
    w_value = create_constant(rw, new_w, loc)
    new_conv = create_op(rw, "conv2d", [x, w_value], loc, **attrs)
    b_value = create_constant(rw, new_b, loc)
    out = create_op(rw, "bias_add", [new_conv.results[0], b_value], loc, axis=1)
    rw.replace_op(replaced, [out.results[0]])
    erase_dead(rw, absorbed)
    return True


# --------------------------------------------------------------------------
# ConvBatchnormFusionPass


def conv_batchnorm(bn: ir.Operation, rw: Any) -> bool | str:
    """batch_norm(conv2d(x, w)) -> bias_add(conv2d(x, w * s), (0 - mean) * s + offset)."""
    conv = producer(bn.operands[0], "graph.conv2d")
    if conv is None:
        return False
    if not has_one_use(conv.results[0]):
        return "the conv2d result has other users"
    channels = _channels(conv)
    if channels is None:
        return _DYNAMIC_CHANNELS
    zeros = np.zeros(channels, np.float64)
    return _fold_batchnorm(rw, conv, bn, zeros, zeros, bn, [conv])


def conv_bias_batchnorm(bn: ir.Operation, rw: Any) -> bool | str:
    """batch_norm(bias_add(conv2d(x, w), b)) -> bias_add(conv2d(x, w * s), (b - mean) * s + offset).

    The bias may also be an ``add`` of a per-channel constant.
    """
    mid = producer(bn.operands[0])
    if mid is None or mid.name not in ("graph.bias_add", "graph.add"):
        return False
    conv = next((p for p in (producer(v, "graph.conv2d") for v in mid.operands) if p is not None), None)
    if conv is None:
        return False
    channels = _channels(conv)
    if channels is None:
        return _DYNAMIC_CHANNELS
    bias = channel_bias(mid, conv.results[0], channels)
    if bias is None:
        return False
    if isinstance(bias, str):
        return bias
    if not has_one_use(conv.results[0]):
        return "the conv2d result has other users"
    if not has_one_use(mid.results[0]):
        return f"the {mid.name[len('graph.') :]} result has other users"
    zeros = np.zeros(channels, np.float64)
    return _fold_batchnorm(rw, conv, bn, bias, zeros, bn, [mid, conv])


# --------------------------------------------------------------------------
# BatchNormSplitFusionPass


def batchnorm_split(root: ir.Operation, rw: Any) -> bool | str:
    """bias_add(batch_norm(conv2d(x, w)), c) -> bias_add(conv2d(x, w * s), c + offset - mean * s).

    The batch_norm splits into its scale (folded into the producer conv's
    weights) and its shift (folded into the consumer's constant bias).
    """
    bn = next((p for p in (producer(v, "graph.batch_norm") for v in root.operands) if p is not None), None)
    if bn is None:
        return False
    conv = producer(bn.operands[0], "graph.conv2d")
    if conv is None:
        return False
    channels = _channels(conv)
    if channels is None:
        return _DYNAMIC_CHANNELS
    bias = channel_bias(root, bn.results[0], channels)
    if bias is None:
        return False
    if isinstance(bias, str):
        return bias
    if not has_one_use(bn.results[0]):
        return "the batch_norm result has other users: its shift cannot move into the consumer's bias"
    if not has_one_use(conv.results[0]):
        return "the conv2d result has other users: its weights cannot absorb the batch_norm scale"
    zeros = np.zeros(channels, np.float64)
    return _fold_batchnorm(rw, conv, bn, zeros, bias, root, [bn, conv])


# --------------------------------------------------------------------------
# ConvToFullyConnectionFusionPass


def conv_to_fully_connection(conv: ir.Operation, rw: Any) -> bool | str:
    """conv2d(x, w [, b]) whose kernel covers all of x -> reshape(matmul(reshape(x), reshape(w), transpose_b) [+ b]).

    With ``kh = H``, ``kw = W`` and no padding the conv has one output
    position; it is the dot product of each flattened image ``x[n]`` (C*H*W,
    row-major) with each flattened filter ``w[o]`` (same order).  The stride
    does not matter (one position whatever it is), and the verifier already
    forces dilation 1 when the kernel spans the input.
    """
    x, w = conv.operands[0], conv.operands[1]
    xs, ws = sig(x), sig(w)
    n, _, h, wd = xs.shape
    o, i, kh, kw = ws.shape
    if (kh, kw) != (h, wd):
        return False
    attrs = attributes(conv)
    if any(attrs["pads"]):
        return f"the conv2d pads its input ({list(attrs['pads'])})"
    if attrs["groups"] != 1:
        return f"the conv2d has {attrs['groups']} groups"
    if o is None or i is None:
        return "the weight's channel dims are dynamic"
    k = i * kh * kw
    dtype = xs.dtype
    loc = conv.location
    x2 = create_op(rw, "reshape", [x], loc, declared=[TensorSig((n, k), dtype)])
    w_const = constant_array(w)
    if w_const is not None:
        w2 = create_constant(rw, w_const.reshape(o, k), loc)
    else:
        w2 = create_op(rw, "reshape", [w], loc, declared=[TensorSig((o, k), dtype)]).results[0]
    product = create_op(rw, "matmul", [x2.results[0], w2], loc, transpose_b=True).results[0]
    bias = conv_bias(conv)
    if bias is not None:  # [N, O] + bias[O]: MatMulBiasAddFusionPass may fuse it next
        product = create_op(rw, "bias_add", [product, bias], loc, axis=1).results[0]
    out = create_op(rw, "reshape", [product], loc, declared=[sig(conv.results[0])])
    rw.replace_op(conv, [out.results[0]])
    return True


# --------------------------------------------------------------------------
# SplitConvConcatFusionPass


def _result_number(value: ir.Value) -> int:
    return ir.OpResult(value).result_number


def _unlike_convs(convs: list[ir.Operation]) -> str | None:
    """Why convs cannot become one (a result used elsewhere, a grouped conv, other strides, pads or
    dilations), or None."""
    for c in convs:
        if not has_one_use(c.results[0]):
            return "a conv2d result has other users"
    conv_attrs = [attributes(c) for c in convs]
    if any(a["groups"] != 1 for a in conv_attrs):
        return "a conv2d is already grouped (groups != 1)"
    for name in ("strides", "pads", "dilations"):
        if len({tuple(a[name]) for a in conv_attrs}) > 1:
            return f"the convs differ in {name}"
    return None


def _joined_bias(convs: list[ir.Operation], outs: list[int]) -> np.ndarray | str | None:
    """The biases of convs joined into one (``outs`` output channels each), in order: None when none has a
    bias, zeros for those without one, or why not (a bias that is not a constant)."""
    if all(conv_bias(c) is None for c in convs):
        return None
    parts = [_constant_bias(c, o) for c, o in zip(convs, outs, strict=True)]
    problem = next((p for p in parts if isinstance(p, str)), None)
    if problem is not None:
        return problem
    dtype = NUMPY_DTYPES[sig(convs[0].results[0]).dtype]
    return np.concatenate(parts).astype(dtype)


def _joined_conv(rw: Any, x: ir.Value, weights: np.ndarray, bias: np.ndarray | None, loc: ir.Location,
                 attrs: dict[str, Any]) -> ir.Operation:
    """conv2d(x, weights [, bias]) with the weights and bias as new constants."""
    operands = [x, create_constant(rw, weights, loc)]
    if bias is not None:
        operands.append(create_constant(rw, bias, loc))
    return create_op(rw, "conv2d", operands, loc, **attrs)


def split_conv_concat(concat: ir.Operation, rw: Any) -> bool | str:
    """concat(conv2d(split(x)[0], w0), ..., conv2d(split(x)[n-1], wn-1), axis=1) -> conv2d(x, concat(w), groups=n).

    Biases (constants) are concatenated likewise, zeros standing for a conv without one.

    Group g of a grouped conv reads input channels ``[g*I, (g+1)*I)`` and
    writes output channels ``[g*O, (g+1)*O)`` with filters ``w[g*O:(g+1)*O]``:
    exactly piece g convolved with ``w_g`` when every piece has I channels and
    every conv O filters, in split = concat order.
    """
    convs = [producer(v, "graph.conv2d") for v in concat.operands]
    if any(c is None for c in convs):
        return False
    sources = [producer(c.operands[0], "graph.split") for c in convs]
    split = sources[0]
    if split is None or any(s is None or s != split for s in sources):
        return False
    rank = sig(concat.results[0]).rank
    if normalize_axis(attributes(concat)["axis"], rank) != 1:
        return "the concat does not join the channel axis 1"
    if normalize_axis(attributes(split)["axis"], rank) != 1:
        return "the split does not cut the channel axis 1"
    pieces = len(split.results)
    if len(convs) != pieces:
        return f"the concat joins {len(convs)} convs but the split has {pieces} pieces"
    order = [_result_number(c.operands[0]) for c in convs]
    if order != list(range(pieces)):
        return f"the concat takes the convs of split pieces in order {order}, not in split order"
    for result in split.results:
        if not has_one_use(result):
            return f"split piece {_result_number(result)} has other users"
    problem = _unlike_convs(convs)
    if problem is not None:
        return problem
    sizes = list(attributes(split)["sizes"])
    if len(set(sizes)) > 1:
        return f"the split pieces have different channel counts {sizes}: a grouped conv needs equal groups"
    weights = [constant_array(c.operands[1]) for c in convs]
    if any(w is None for w in weights):
        return "the conv2d weights are not all constants"
    if len({w.shape[2:] for w in weights}) > 1:
        return f"the convs have different kernel sizes {[w.shape[2:] for w in weights]}"
    outs = [w.shape[0] for w in weights]
    if len(set(outs)) > 1:
        return f"the convs have different output channel counts {outs}: a grouped conv needs equal groups"
    bias = _joined_bias(convs, outs)
    if isinstance(bias, str):
        return bias
    new_w = np.concatenate(weights, axis=0)
    attrs = written_attrs(convs[0])
    attrs["groups"] = pieces
    x = split.operands[0]
    w_sig = TensorSig(new_w.shape, sig(x).dtype)
    if inferred_conv([sig(x), w_sig], attrs) != sig(concat.results[0]):
        # Dynamic dims may be written differently; never change a result type.
        return "the grouped conv's result type would differ from the concat's"
    loc = fused_location([split, *convs, concat])
    new_conv = _joined_conv(rw, x, new_w, bias, loc, attrs)
    rw.replace_op(concat, [new_conv.results[0]])
    erase_dead(rw, [*convs, split])
    return True


# --------------------------------------------------------------------------
# ConvConcatFusionPass


def conv_concat(concat: ir.Operation, rw: Any) -> bool | str:
    """concat(conv2d(x, w0), ..., conv2d(x, wn-1), axis=1) -> conv2d(x, concat(w, axis 0)).

    Convolutions of one input that differ only in their filters are one convolution with all the filters:
    output channel block i is conv2d(x, w_i).  The convs must share the input, strides, pads, dilations and
    groups (1), their weights (and biases, if any) be constants of one kernel size, and their results have no
    other users.
    """
    convs = [producer(v, "graph.conv2d") for v in concat.operands]
    if len(convs) < 2 or any(c is None for c in convs):
        return False
    x = convs[0].operands[0]
    if any(c.operands[0] != x for c in convs):
        return "the convs read different inputs"
    rank = sig(concat.results[0]).rank
    if normalize_axis(attributes(concat)["axis"], rank) != 1:
        return "the concat does not join the channel axis 1"
    problem = _unlike_convs(convs)
    if problem is not None:
        return problem
    weights = [constant_array(c.operands[1]) for c in convs]
    if any(w is None for w in weights):
        return "the conv2d weights are not all constants"
    if len({w.shape[1:] for w in weights}) > 1:
        return f"the convs have different kernel shapes {[w.shape[1:] for w in weights]}"
    bias = _joined_bias(convs, [w.shape[0] for w in weights])
    if isinstance(bias, str):
        return bias
    new_w = np.concatenate(weights, axis=0)
    attrs = written_attrs(convs[0])
    w_sig = TensorSig(new_w.shape, sig(x).dtype)
    if inferred_conv([sig(x), w_sig], attrs) != sig(concat.results[0]):
        return "the joined conv's result type would differ from the concat's"
    loc = fused_location([*convs, concat])
    new_conv = _joined_conv(rw, x, new_w, bias, loc, attrs)
    rw.replace_op(concat, [new_conv.results[0]])
    erase_dead(rw, convs)
    return True


# --------------------------------------------------------------------------
# ConvBiasAddFusionPass


def _channel_shaped(op: ir.Operation, data: ir.Value, channels: int) -> ir.Value | None:
    """The other operand of ``add(data, b)`` when it holds one value per channel as ``[C, 1, 1]`` or
    ``[1, C, 1, 1]`` (any value, not only a constant), else None."""
    lhs, rhs = op.operands[0], op.operands[1]
    other = rhs if lhs == data else lhs if rhs == data else None
    if other is None or other == data:
        return None
    shape = sig(other).shape
    if len(shape) not in (3, 4) or (len(shape) == 4 and shape[0] != 1):
        return None
    return other if tuple(shape[-3:]) == (channels, 1, 1) else None


def conv_bias_add(op: ir.Operation, rw: Any) -> bool | str:
    """bias_add(conv2d(x, w), b, axis 1) -> conv2d(x, w, b); also add(conv2d(x, w), c) with ``c`` one value
    per channel: shaped ``[C, 1, 1]`` or ``[1, C, 1, 1]`` (any value, reshaped to ``[C]``), or a constant that
    broadcasts per channel (a scalar included).

    The seed's conv + biasAdd fusion: the bias starts the conv's accumulator (on the NPU, in L0C; on the CPU,
    in the register tile) instead of a second pass over the output.  The conv must not have a bias already,
    its result no other user, and the add must not grow the result.
    """
    conv = next((p for p in (producer(v, "graph.conv2d") for v in op.operands) if p is not None), None)
    if conv is None:
        return False
    if op.name == "graph.bias_add":
        if op.operands[0] != conv.results[0]:
            return False
        axis = normalize_axis(attributes(op)["axis"], 4)
        if axis != 1:
            return f"the bias_add adds along axis {axis}, not the channel axis 1"
        bias = op.operands[1]
    else:
        channels = _channels(conv)
        if channels is None:
            return _DYNAMIC_CHANNELS
        array = channel_bias(op, conv.results[0], channels)  # a constant becomes a 1-D constant
        if array is None:
            return False
        if isinstance(array, str):  # else a [C, 1, 1] / [1, C, 1, 1] value is reshaped
            bias = _channel_shaped(op, conv.results[0], channels)
            if bias is None:
                return array
        else:
            bias = None
    if conv_bias(conv) is not None:
        return "the conv2d already has a bias"
    if not has_one_use(conv.results[0]):
        return "the conv2d result has other users"
    if sig(op.results[0]) != sig(conv.results[0]):
        return "the bias changes the result type"
    loc = fused_location([conv, op])
    if bias is None:
        dtype = NUMPY_DTYPES[sig(conv.results[0]).dtype]
        bias = create_constant(rw, np.ascontiguousarray(array, dtype=dtype), loc)
    elif sig(bias).rank != 1:
        bias = create_op(rw, "reshape", [bias], loc, declared=[TensorSig((channels,), sig(bias).dtype)]).results[0]
    new_conv = create_op(rw, "conv2d", [*conv.operands, bias], loc, **written_attrs(conv))
    rw.replace_op(op, [new_conv.results[0]])
    erase_dead(rw, [conv])
    return True
