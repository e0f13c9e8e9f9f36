"""graph-to-linalg: rewrite graph ops into linalg on tensors (first step: elementwise ops).

Every lowered graph op becomes one ``linalg.generic`` whose init is a
``tensor.empty`` of the result type and whose iterators are all parallel.
Operands broadcast like numpy through the indexing maps: a missing leading
dimension is dropped from the operand's map, a static size-1 dimension that
is broadcast to a larger (or dynamic) result dimension reads index 0
(``affine_map<(d0, d1) -> (0, d1)>``).  Dynamic result sizes come from
``tensor.dim`` of an operand whose dimension is dynamic.

The body is built from ``arith`` and ``math`` ops and follows the semantics
the op catalog documents (``graphfuse.dialect.ops.elementwise``):

- f16/bf16 are computed in f32 (``arith.extf`` ... ``arith.truncf``), except
  for comparisons and ``select``, which are exact in the narrow type;
- ``maximum``/``minimum``/``relu`` on floats use ``arith.maximumf`` /
  ``arith.minimumf`` (NaN propagates); integers ``arith.maxsi``/``minsi``;
- ``round`` is ``math.roundeven``; ``sigmoid`` is the overflow-free form of
  the reference (``exp(-|x|)``); ``gelu`` uses ``math.erf`` or ``math.tanh``;
- integer ``div`` is ``arith.divsi`` on a divisor made safe first: x / 0 = 0
  and x / -1 = 0 - x (MIN / -1 wraps to MIN), so no undefined behaviour;
- ``cast`` follows every documented rule (float -> int truncates and
  saturates, NaN -> 0; anything -> i1 is x != 0; i1 -> number is 0 or 1;
  int -> int sign-extends or keeps the low bits).

Not lowered yet (they stay graph ops; with ``strict`` the pass fails naming
the op and its location): integer ``pow`` and every non-elementwise op.
Each new op gets the location of the graph op it replaces.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, linalg, tensor
from mlir.dialects import math as mmath

from graphfuse.pipelines.pass_base import GraphPass, PassContext, option
from graphfuse.pipelines.registry import register_pass

__all__ = ["LOWERED_OPS", "GraphToLinalg", "lower_op"]

# --------------------------------------------------------------------------
# Element types.


def _is_float(t: ir.Type) -> bool:
    return isinstance(t, ir.F32Type | ir.F16Type | ir.BF16Type | ir.F64Type)


def _is_narrow_float(t: ir.Type) -> bool:
    return isinstance(t, ir.F16Type | ir.BF16Type)


def _is_int(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType)


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def _int_width(t: ir.Type) -> int:
    return ir.IntegerType(t).width


def _const(t: ir.Type, value: float | int | bool) -> ir.Value:
    if _is_float(t):
        return arith.constant(t, ir.FloatAttr.get(t, float(value)))
    if _is_bool(t):
        return arith.constant(t, ir.IntegerAttr.get(t, 1 if value else 0))
    return arith.constant(t, ir.IntegerAttr.get(t, int(value)))


def _compute_type(t: ir.Type) -> ir.Type:
    return ir.F32Type.get() if _is_narrow_float(t) else t


def _widen(v: ir.Value) -> ir.Value:
    return arith.extf(ir.F32Type.get(), v) if _is_narrow_float(v.type) else v


def _narrow(v: ir.Value, t: ir.Type) -> ir.Value:
    return arith.truncf(t, v) if v.type != t else v


# --------------------------------------------------------------------------
# Scalar bodies: (block arguments, result element type) -> yielded value, or
# None when the op/type combination is not lowered.  Float bodies get widened
# values (f32 for f16/bf16) and return values of the compute type.

Body = Callable[[list[ir.Value], ir.Type], "ir.Value | None"]


def _sigmoid(x: ir.Value) -> ir.Value:
    t = x.type
    one = _const(t, 1.0)
    e = mmath.exp(arith.negf(mmath.absf(x)))
    denom = arith.addf(one, e)
    positive = arith.cmpf(arith.CmpFPredicate.OGE, x, _const(t, 0.0))
    return arith.select(positive, arith.divf(one, denom), arith.divf(e, denom))


def _gelu(x: ir.Value, approximate: str) -> ir.Value:
    t = x.type
    half = _const(t, 0.5)
    one = _const(t, 1.0)
    if approximate == "tanh":
        cube = arith.mulf(arith.mulf(x, x), x)
        inner = arith.addf(x, arith.mulf(_const(t, 0.044715), cube))
        g = mmath.tanh(arith.mulf(_const(t, math.sqrt(2.0 / math.pi)), inner))
    else:
        g = mmath.erf(arith.mulf(x, _const(t, 1.0 / math.sqrt(2.0))))
    return arith.mulf(arith.mulf(half, x), arith.addf(one, g))


def _float_sign(x: ir.Value) -> ir.Value:
    t = x.type
    zero = _const(t, 0.0)
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    rest = arith.select(is_nan, x, zero)
    neg = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, x, zero), _const(t, -1.0), rest)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OGT, x, zero), _const(t, 1.0), neg)


def _int_sign(x: ir.Value) -> ir.Value:
    t = x.type
    zero = _const(t, 0)
    neg = arith.select(arith.cmpi(arith.CmpIPredicate.slt, x, zero), _const(t, -1), zero)
    return arith.select(arith.cmpi(arith.CmpIPredicate.sgt, x, zero), _const(t, 1), neg)


def _int_div(a: ir.Value, b: ir.Value) -> ir.Value:
    t = a.type
    zero, one, minus_one = _const(t, 0), _const(t, 1), _const(t, -1)
    b_zero = arith.cmpi(arith.CmpIPredicate.eq, b, zero)
    b_minus_one = arith.cmpi(arith.CmpIPredicate.eq, b, minus_one)
    safe = arith.select(arith.ori(b_zero, b_minus_one), one, b)
    q = arith.divsi(a, safe)
    q = arith.select(b_minus_one, arith.subi(zero, a), q)
    return arith.select(b_zero, zero, q)


# name -> (float body on one widened value, integer body or None, bool body or None)
_UNARY_FLOAT: dict[str, Callable[[ir.Value], ir.Value]] = {
    "abs": mmath.absf,
    "neg": arith.negf,
    "exp": mmath.exp,
    "log": mmath.log,
    "sqrt": mmath.sqrt,
    "rsqrt": lambda x: arith.divf(_const(x.type, 1.0), mmath.sqrt(x)),
    "reciprocal": lambda x: arith.divf(_const(x.type, 1.0), x),
    "tanh": mmath.tanh,
    "sigmoid": _sigmoid,
    "erf": mmath.erf,
    "relu": lambda x: arith.maximumf(x, _const(x.type, 0.0)),
    "fast_gelu": lambda x: arith.mulf(x, _sigmoid(arith.mulf(_const(x.type, 1.702), x))),
    "silu": lambda x: arith.mulf(x, _sigmoid(x)),
    "square": lambda x: arith.mulf(x, x),
    "floor": mmath.floor,
    "ceil": mmath.ceil,
    "round": mmath.roundeven,
    "sign": _float_sign,
    "sin": mmath.sin,
    "cos": mmath.cos,
}
_UNARY_INT: dict[str, Callable[[ir.Value], ir.Value]] = {
    "abs": mmath.absi,
    "neg": lambda x: arith.subi(_const(x.type, 0), x),
    "relu": lambda x: arith.maxsi(x, _const(x.type, 0)),
    "square": lambda x: arith.muli(x, x),
    "sign": _int_sign,
}

_BINARY_FLOAT: dict[str, Callable[[ir.Value, ir.Value], ir.Value]] = {
    "add": arith.addf,
    "sub": arith.subf,
    "mul": arith.mulf,
    "div": arith.divf,
    "pow": mmath.powf,
    "maximum": arith.maximumf,
    "minimum": arith.minimumf,
}
_BINARY_INT: dict[str, Callable[[ir.Value, ir.Value], ir.Value]] = {
    "add": arith.addi,
    "sub": arith.subi,
    "mul": arith.muli,
    "div": _int_div,
    "maximum": arith.maxsi,
    "minimum": arith.minsi,
}
_COMPARE = {
    # name -> (float predicate, integer predicate)
    "equal": (arith.CmpFPredicate.OEQ, arith.CmpIPredicate.eq),
    "not_equal": (arith.CmpFPredicate.UNE, arith.CmpIPredicate.ne),
    "greater": (arith.CmpFPredicate.OGT, arith.CmpIPredicate.sgt),
    "greater_equal": (arith.CmpFPredicate.OGE, arith.CmpIPredicate.sge),
    "less": (arith.CmpFPredicate.OLT, arith.CmpIPredicate.slt),
    "less_equal": (arith.CmpFPredicate.OLE, arith.CmpIPredicate.sle),
}
_LOGICAL = {"logical_and": arith.andi, "logical_or": arith.ori}


def _cast_body(x: ir.Value, target: ir.Type) -> ir.Value | None:
    source = x.type
    if source == target:
        return x
    if _is_bool(target):
        if _is_float(source):
            return arith.cmpf(arith.CmpFPredicate.UNE, x, _const(source, 0.0))
        return arith.cmpi(arith.CmpIPredicate.ne, x, _const(source, 0))
    if _is_float(target):
        if _is_float(source):
            if _is_narrow_float(source) and _is_narrow_float(target):
                x = _widen(x)  # f16 <-> bf16 through f32 (exact widening, one rounding)
            if ir.FloatType(x.type).width < ir.FloatType(target).width:
                return arith.extf(target, x)
            return arith.truncf(target, x)
        if _is_bool(source):
            return arith.uitofp(target, x)
        return arith.sitofp(target, x)
    if not _is_int(target):
        return None
    width = _int_width(target)
    if _is_int(source):
        if _is_bool(source):
            return arith.extui(target, x)
        if _int_width(source) < width:
            return arith.extsi(target, x)
        return arith.trunci(target, x)
    # float -> int: truncate toward zero, saturate, NaN -> 0 (compute in f32 or f64).
    x = _widen(x)
    t = x.type
    low, high = -(2.0 ** (width - 1)), 2.0 ** (width - 1)
    truncated = mmath.trunc(x)
    ge_low = arith.cmpf(arith.CmpFPredicate.OGE, truncated, _const(t, low))
    lt_high = arith.cmpf(arith.CmpFPredicate.OLT, truncated, _const(t, high))
    in_range = arith.andi(ge_low, lt_high)  # false for NaN
    safe = arith.select(in_range, truncated, _const(t, 0.0))
    out = arith.fptosi(target, safe)
    too_high = arith.cmpf(arith.CmpFPredicate.OGE, truncated, _const(t, high))
    out = arith.select(too_high, _const(target, 2 ** (width - 1) - 1), out)
    too_low = arith.cmpf(arith.CmpFPredicate.OLT, truncated, _const(t, low))
    return arith.select(too_low, _const(target, -(2 ** (width - 1))), out)


def _string_attr(op: ir.Operation, name: str, default: str) -> str:
    if name in op.attributes:
        return ir.StringAttr(op.attributes[name]).value
    return default


def _body_builder(op: ir.Operation) -> Callable[[list[ir.Value]], ir.Value] | None:
    """A callable building the scalar body of ``op`` (given its block arguments), or None if not lowered."""
    name = op.name[len("graph.") :]
    operand_types = [ir.RankedTensorType(v.type).element_type for v in op.operands]
    result_type = ir.RankedTensorType(op.results[0].type).element_type
    if not operand_types:
        return None
    et = operand_types[0]

    def in_float(fn: Callable[..., ir.Value]) -> Callable[[list[ir.Value]], ir.Value]:
        return lambda args: _narrow(fn(*[_widen(a) for a in args]), result_type)

    if name == "gelu" and _is_float(et):
        approximate = _string_attr(op, "approximate", "none")
        return in_float(lambda x: _gelu(x, approximate))
    if name in _UNARY_FLOAT or name in _UNARY_INT:
        if _is_float(et) and name in _UNARY_FLOAT:
            return in_float(_UNARY_FLOAT[name])
        if _is_int(et) and not _is_bool(et) and name in _UNARY_INT:
            return lambda args: _UNARY_INT[name](args[0])
        return None
    if name == "logical_not" and _is_bool(et):
        return lambda args: arith.xori(args[0], _const(et, True))
    if name == "isfinite" and _is_float(et):
        inf = float("inf")
        return lambda args: arith.cmpf(
            arith.CmpFPredicate.OLT, mmath.absf(_widen(args[0])), _const(_compute_type(et), inf)
        )
    if name in _BINARY_FLOAT or name in _BINARY_INT:
        if _is_float(et) and name in _BINARY_FLOAT:
            return in_float(_BINARY_FLOAT[name])
        if _is_int(et) and not _is_bool(et) and name in _BINARY_INT:
            return lambda args: _BINARY_INT[name](args[0], args[1])
        return None
    if name in _COMPARE:
        fpred, ipred = _COMPARE[name]
        if _is_float(et):
            return lambda args: arith.cmpf(fpred, args[0], args[1])
        if _is_int(et):
            return lambda args: arith.cmpi(ipred, args[0], args[1])
        return None
    if name in _LOGICAL and _is_bool(et):
        return lambda args: _LOGICAL[name](args[0], args[1])
    if name == "select":
        return lambda args: arith.select(args[0], args[1], args[2])
    if name == "cast":
        if (_is_float(et) or _is_int(et)) and (_is_float(result_type) or _is_int(result_type)):
            return lambda args: _cast_body(args[0], result_type)
        return None
    return None


#: The graph ops this pass lowers (for some or all element types).
LOWERED_OPS = frozenset(
    ["graph." + n for n in (*_UNARY_FLOAT, *_UNARY_INT, *_BINARY_FLOAT, *_BINARY_INT, *_COMPARE, *_LOGICAL)]
    + ["graph.gelu", "graph.logical_not", "graph.isfinite", "graph.select", "graph.cast"]
)

# --------------------------------------------------------------------------
# Broadcasting and the generic op.


def _indexing_map(operand: ir.RankedTensorType, result: ir.RankedTensorType) -> ir.AffineMap | None:
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


def _result_sizes(operands: list[ir.Value], result: ir.RankedTensorType) -> list[int | ir.Value] | None:
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


def lower_op(op: ir.Operation) -> bool:
    """Replace elementwise graph ``op`` by a linalg.generic; False (IR untouched) when not lowered."""
    if len(op.results) != 1 or len(op.regions) > 0:
        return False
    if not all(isinstance(v.type, ir.RankedTensorType) for v in (*op.operands, op.results[0])):
        return False
    body = _body_builder(op)
    if body is None:
        return False
    result_type = ir.RankedTensorType(op.results[0].type)
    operands = list(op.operands)
    maps = [_indexing_map(ir.RankedTensorType(v.type), result_type) for v in operands]
    if any(m is None for m in maps):
        return False
    maps.append(ir.AffineMap.get_identity(result_type.rank))
    with op.location, ir.InsertionPoint(op):
        sizes = _result_sizes(operands, result_type)
        if sizes is None:
            return False
        init = tensor.empty(sizes, result_type.element_type)
        parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
        generic = linalg.GenericOp(
            [result_type],
            operands,
            [init],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            ir.ArrayAttr.get([parallel] * result_type.rank),
        )
        arg_types = [ir.RankedTensorType(v.type).element_type for v in operands] + [result_type.element_type]
        block = generic.regions[0].blocks.append(*arg_types)
        with ir.InsertionPoint(block):
            value = body(list(block.arguments)[: len(operands)])
            linalg.YieldOp([value])
    op.results[0].replace_all_uses_with(generic.results[0])
    op.erase()
    return True


@register_pass
@dataclass(frozen=True)
class GraphToLinalg(GraphPass):
    name: ClassVar[str] = "graph-to-linalg"
    summary: ClassVar[str] = "Lower graph ops to linalg on tensors (elementwise ops so far)"
    statistics: ClassVar[dict[str, str]] = {
        "num-lowered": "Number of graph ops lowered to linalg",
        "num-unlowered": "Number of graph ops left as they were",
    }
    strict: bool = option(False, "fail on a graph op that cannot be lowered")

    def run(self, module: ir.Module, context: PassContext) -> None:
        for func in module.body.operations:
            func_op = func.operation
            for op in _graph_ops_in(func_op):
                if lower_op(op):
                    context.count("num-lowered")
                    continue
                context.count("num-unlowered")
                if self.strict:
                    types = ", ".join(str(v.type) for v in op.operands)
                    context.fail(f"graph-to-linalg: cannot lower '{op.name}' with operands ({types})", op.location)


def _graph_ops_in(root: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("graph."):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found
