"""MindSpore operator names (as the seed's appendices and flags spell them) <-> graph-dialect ops.

Flags such as ``--enable_expand_ops=Square,GeLU`` and
``--disable_cluster_ops=MatMul`` name operators the MindSpore way; this table
maps each to the dialect op it means.  Several MindSpore names may map to one
op (``Div`` and ``RealDiv``; ``GeLU`` and ``Gelu``).
"""

from __future__ import annotations

from graphfuse.dialect.catalog import all_ops
from graphfuse.dialect.ops.derived import DERIVED_OPS
from graphfuse.pipelines import log

#: MindSpore name -> graph-dialect op name (without the "graph." prefix).
MINDSPORE_OPS: dict[str, str] = {
    # Appendix 1 (expanders) that the dialect has, plus MindSpore names for its other composite ops.
    "AddN": "add_n",
    "BiasAdd": "bias_add",
    "GeLU": "gelu",
    "Gelu": "gelu",
    "FastGelu": "fast_gelu",
    "FastGeLU": "fast_gelu",
    "SiLU": "silu",
    "Square": "square",
    "Tile": "tile",
    "Sigmoid": "sigmoid",
    "SquaredDifference": "squared_difference",
    "ReduceMean": "reduce_mean",
    "MeanExt": "reduce_mean",
    "ReLU": "relu",
    "Erf": "erf",
    "Tanh": "tanh",
    "LayerNorm": "layer_norm",
    "LogSoftmax": "log_softmax",
    "Softmax": "softmax",
    "RmsNorm": "rms_norm",
    "BatchNorm": "batch_norm",
    "GroupNorm": "group_norm",
    "MatMul": "matmul",
    "BatchMatMul": "matmul",
    # Appendix 2 (cluster ops).
    "Abs": "abs",
    "Add": "add",
    "BroadcastTo": "broadcast_to",
    "Cast": "cast",
    "Exp": "exp",
    "Log": "log",
    "Maximum": "maximum",
    "Minimum": "minimum",
    "Mul": "mul",
    "Neg": "neg",
    "Pow": "pow",
    "Div": "div",
    "RealDiv": "div",
    "Reciprocal": "reciprocal",
    "Rsqrt": "rsqrt",
    "Sqrt": "sqrt",
    "Sub": "sub",
    "Equal": "equal",
    "NotEqual": "not_equal",
    "Greater": "greater",
    "GreaterEqual": "greater_equal",
    "Less": "less",
    "LessEqual": "less_equal",
    "LogicalAnd": "logical_and",
    "LogicalOr": "logical_or",
    "LogicalNot": "logical_not",
    "Select": "select",
    "ReduceSum": "reduce_sum",
    "ReduceMax": "reduce_max",
    "ReduceMin": "reduce_min",
    "IsFinite": "isfinite",
    "Reshape": "reshape",
    "Transpose": "transpose",
    "Floor": "floor",
    "Ceil": "ceil",
    "Round": "round",
    "Cos": "cos",
    "Sin": "sin",
    "Sign": "sign",
    "StridedSlice": "slice",
    "Trunc": "trunc",
    "ACos": "acos",
    "Acosh": "acosh",
    "Asin": "asin",
    "Asinh": "asinh",
    "Atan": "atan",
    "Atan2": "atan2",
    "Expm1": "expm1",
    "FloorDiv": "floor_div",
    "FloorMod": "floor_mod",
    "IsInf": "isinf",
    "IsNan": "isnan",
    "Mod": "mod",
    "CumSum": "cumsum",
    "Assign": "assign",
    "ArgMax": "argmax",
    "Argmin": "argmin",
    "OneHot": "one_hot",
    # Appendix 1 names of ops the dialect has under its own name (no expander: they lower directly)
    "AcoshExt": "acosh",
    "AsinhExt": "asinh",
    "Slice": "slice",
}

# Appendix 1's gradients and activations that are ops defined by their expansion (dialect/ops/derived.py).
for _op, _names in DERIVED_OPS.items():
    for _name in _names:
        MINDSPORE_OPS.setdefault(_name, _op)

_BY_LOWER = {name.lower(): op for name, op in MINDSPORE_OPS.items()}


def resolve_ops(names: tuple[str, ...], flag: str) -> set[str]:
    """Dialect op names for the MindSpore names of a flag; an unknown name warns and is skipped.

    Dialect names of any op of the catalog (``gelu``, ``safe_softmax``) are accepted too, and MindSpore names
    case-insensitively.
    """
    known_ops = {spec.name for spec in all_ops()}
    ops = set()
    for name in names:
        op = MINDSPORE_OPS.get(name) or _BY_LOWER.get(name.lower()) or (name if name in known_ops else None)
        if op is None:
            log.warning(f"{flag}: unknown operator '{name}' is ignored (operators are named as in MindSpore, "
                        f"e.g. {', '.join(list(MINDSPORE_OPS)[:6])}, ...)")
            continue
        ops.add(op)
    return ops
