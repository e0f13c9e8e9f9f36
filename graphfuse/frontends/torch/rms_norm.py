"""A hand-written RMSNorm among FX nodes (``x * rsqrt(mean(x * x) + eps) [* w]``), recognized so
that the importer builds one ``graph.rms_norm`` for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import fx


@dataclass
class RmsNormMatch:
    """``x * rsqrt(mean(x^2, -1, keepdim) + eps) [* w]`` in an FX graph (see :func:`find_rms_norms`)."""

    root: fx.Node
    x: fx.Node
    weight: fx.Node | None
    epsilon: float
    #: the nodes the match replaces besides the root (each used only inside the match)
    absorbed: tuple[fx.Node, ...]


def _is_call(node: Any, *targets: Any) -> bool:
    return isinstance(node, fx.Node) and node.op == "call_function" and node.target in targets


def _only_user(node: fx.Node, user: fx.Node) -> bool:
    return list(node.users) == [user]


def _float_tensor(node: Any) -> torch.Tensor | None:
    """The example value of a node holding a float tensor, else None."""
    val = node.meta.get("val") if isinstance(node, fx.Node) else None
    floats = (torch.float32, torch.float16, torch.bfloat16)
    return val if isinstance(val, torch.Tensor) and val.dtype in floats else None


def _match_rms_norm(rsqrt: fx.Node) -> RmsNormMatch | None:
    """The RMSNorm around ``rsqrt``, or None: the square, mean, add and products must be used only in the chain."""
    aten = torch.ops.aten
    add = rsqrt.args[0]
    if not _is_call(add, aten.add.Tensor, aten.add.Scalar) or not isinstance(add.args[1], float):
        return None
    if add.kwargs.get("alpha", 1) != 1 or len(add.args) > 2:
        return None
    mean = add.args[0]
    if not _is_call(mean, aten.mean.dim):
        return None
    if not (mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)):
        return None
    square = mean.args[0]
    x_val = _float_tensor(square)
    if x_val is None or list(mean.args[1]) not in ([-1], [x_val.dim() - 1]) or mean.kwargs.get("dtype"):
        return None
    if _is_call(square, aten.pow.Tensor_Scalar) and square.args[1] == 2:
        x = square.args[0]
    elif _is_call(square, aten.mul.Tensor) and square.args[0] is square.args[1]:
        x = square.args[0]
    else:
        return None
    users = list(rsqrt.users)
    if len(users) != 1 or not _is_call(users[0], aten.mul.Tensor) or set(users[0].args) != {x, rsqrt}:
        return None
    normed = users[0]
    for node, user in ((square, mean), (mean, add), (add, rsqrt)):
        if not _only_user(node, user):
            return None
    if any(_float_tensor(n) is None or _float_tensor(n).dtype != x_val.dtype for n in (x, normed)):
        return None
    root, weight, absorbed = normed, None, (square, mean, add, rsqrt)
    # ``normed.to(x.dtype)`` when x already has that dtype leaves only export's metadata check on ``normed``
    # (HF's RMSNorms in fp32): a check that the weight's product can take over.
    checks = tuple(u for u in normed.users if _is_call(u, aten._assert_tensor_metadata.default))
    scaled = [u for u in normed.users if u not in checks]
    if len(scaled) == 1 and _is_call(scaled[0], aten.mul.Tensor):
        other = next((a for a in scaled[0].args if a is not normed), None)
        w_val = _float_tensor(other)
        out_val = _float_tensor(scaled[0])
        same_shape = out_val is not None and tuple(out_val.shape) == tuple(_float_tensor(normed).shape)
        if w_val is not None and w_val.dim() == 1 and w_val.dtype == x_val.dtype and same_shape:
            root, weight, absorbed = scaled[0], other, (*absorbed, normed, *checks)
    return RmsNormMatch(root, x, weight, float(add.args[1]), absorbed)


def find_rms_norms(graph: fx.Graph) -> dict[fx.Node, RmsNormMatch]:
    """Hand-written RMSNorms, ``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`` optionally ``* weight``
    (either operand order), by the node that produces their result.

    The mean must be over the last dim only, eps a Python float, every
    intermediate used only by the next op of the chain, and all values of
    one float dtype (the mixed-precision form with casts around the
    statistics is not matched); ``weight`` must be 1-D.  Each match becomes
    one ``graph.rms_norm``, so add_rms_norm_fusion sees it.
    """
    matches = {}
    for node in graph.nodes:
        if _is_call(node, torch.ops.aten.rsqrt.default):
            match = _match_rms_norm(node)
            if match is not None:
                matches[match.root] = match
    return matches
