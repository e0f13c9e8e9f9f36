"""graph-to-linalg: rewrite graph ops into linalg, tensor, arith and math ops on tensors.

The pass first rewrites fused and compound ops into simpler graph ops
(``lowering/decompose.py``), then lowers each remaining op with its
registered lowering: shape ops in ``lowering/shape_ops.py``, reductions,
matmul, convolution and pooling in ``lowering/structured_ops/``, the
mixture-of-experts product in ``lowering/grouped_matmul.py``, and the
elementwise ops here.

Every elementwise graph op becomes one ``linalg.generic`` whose init is a
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
  the reference (``exp(-|x|)``); ``gelu`` uses erf or tanh;
- f32 (and so f16/bf16) ``exp``, ``tanh`` and ``erf`` are the vectorizable
  arith forms of ``lowering/fast_math.py``; f64 uses the ``math`` ops;
- integer ``pow`` is ``math.ipowi`` (wrapping, like numpy) for exponents
  >= 0; a negative exponent gives the truncated 1 / a^-e (1, -1 or 0);
- integer ``div`` is ``arith.divsi`` on a divisor made safe first: x / 0 = 0
  and x / -1 = 0 - x (MIN / -1 wraps to MIN), so no undefined behaviour; with
  the option ``checks`` (the CPU compile pipeline's) a division by zero is
  reported by a run-time check before the op (``lowering/run_checks.py``), as
  are indices out of range;
- ``cast`` follows every documented rule (float -> int truncates and
  saturates, NaN -> 0; anything -> i1 is x != 0; i1 -> number is 0 or 1;
  int -> int sign-extends or keeps the low bits).

An op no lowering handles (e.g. a decomposition that needs a static size
meets a dynamic one) stays a graph op; with ``strict`` the pass fails naming
the op and its location.  Each new op gets the location of the graph op it replaces.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, tensor
from mlir.dialects import math as mmath

from graphfuse.dialect.matching import as_operation, constant_scalar, nested_ops
from graphfuse.lowering.common import (
    LOWERINGS,
    PARALLEL,
    broadcast_map,
    build_generic,
    compute_type,
    const,
    cube_convolutions,
    decompose_graph_ops,
    dynamic_sizes,
    is_bool,
    is_float,
    is_int,
    is_narrow_float,
    narrow,
    string_attr,
    widen,
)
from graphfuse.lowering.fast_math import (
    coarse_exp,
    fadd,
    fast_erf,
    fast_exp,
    fast_math,
    fast_math_enabled,
    fast_tanh,
    fmul,
    fsub,
    is_f32,
)
from graphfuse.lowering.run_checks import CheckEmitter
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["LOWERED_OPS", "GraphToLinalg", "lower_elementwise", "lower_op"]

# --------------------------------------------------------------------------
# Scalar bodies: (block arguments, result element type) -> yielded value, or
# None when the op/type combination is not lowered.  Float bodies get widened
# values (f32 for f16/bf16) and return values of the compute type.

Body = Callable[[list[ir.Value], ir.Type], "ir.Value | None"]


def _exp(x: ir.Value, nonpositive: bool = False) -> ir.Value:
    return fast_exp(x, nonpositive) if is_f32(x.type) else mmath.exp(x)


#: Marks a graph.exp whose operand is <= 0 by construction (set before lowering: see _mark_nonpositive_exps).
_NONPOSITIVE = "graph.nonpositive_operand"


def _nonpositive(value: ir.Value) -> bool:
    """Whether a graph value is <= 0 (or NaN) by how it is built: ``-|y|`` or ``y - reduce_max(y)``."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    op = as_operation(owner)
    if op.name == "graph.neg":
        inner = op.operands[0].owner
        return not isinstance(inner, ir.Block) and as_operation(inner).name == "graph.abs"
    if op.name == "graph.sub":
        subtrahend = op.operands[1].owner
        if isinstance(subtrahend, ir.Block) or as_operation(subtrahend).name != "graph.reduce_max":
            return False
        return as_operation(subtrahend).operands[0] == op.operands[0]
    return False


def _mark_nonpositive_exps(func: ir.Operation) -> None:
    """Tag the exps of ``-|y|`` (sigmoid's) and ``y - max(y)`` (softmax's): their lowering scales once."""
    for op in nested_ops(func):
        if op.name == "graph.exp" and _nonpositive(op.operands[0]):
            op.attributes[_NONPOSITIVE] = ir.UnitAttr.get()


def _tanh(x: ir.Value) -> ir.Value:
    return fast_tanh(x) if is_f32(x.type) else mmath.tanh(x)


def _erf(x: ir.Value) -> ir.Value:
    return fast_erf(x) if is_f32(x.type) else mmath.erf(x)


def _sigmoid(x: ir.Value) -> ir.Value:
    t = x.type
    one = const(t, 1.0)
    e = _exp(arith.negf(mmath.absf(x)), nonpositive=True)
    denom = fadd(one, e)
    positive = arith.cmpf(arith.CmpFPredicate.OGE, x, const(t, 0.0))
    if fast_math_enabled():
        # one division, not two: e / d as e * (1 / d) adds one rounding (within 2 ulp, test_fast_math)
        r = arith.divf(one, denom)
        return arith.select(positive, r, fmul(e, r))
    return arith.select(positive, arith.divf(one, denom), arith.divf(e, denom))


def _gelu(x: ir.Value, approximate: str) -> ir.Value:
    t = x.type
    half = const(t, 0.5)
    one = const(t, 1.0)
    if approximate == "tanh":
        cube = fmul(fmul(x, x), x)
        inner = fadd(x, fmul(const(t, 0.044715), cube))
        g = _tanh(fmul(const(t, math.sqrt(2.0 / math.pi)), inner))
    else:
        g = _erf(fmul(x, const(t, 1.0 / math.sqrt(2.0))))
    return fmul(fmul(half, x), fadd(one, g))


def _expm1(x: ir.Value) -> ir.Value:
    """exp(x) - 1; at +-0 x itself (the expansion's quotient loses the sign of -0)."""
    return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, const(x.type, 0.0)), x, mmath.expm1(x))


def _float_floor_div(a: ir.Value, b: ir.Value) -> ir.Value:
    """PyTorch's float floor_divide (the reference's ``_float_floor_div``): from fmod's remainder, not floor(a / b),
    which is -0 for -7 // inf (PyTorch: -1) and inf for inf // 2 (PyTorch: NaN)."""
    t = a.type
    zero, one = const(t, 0.0), const(t, 1.0)
    r = arith.remf(a, b)
    quotient = arith.divf(fsub(a, r), b)
    signs_differ = arith.xori(arith.cmpf(arith.CmpFPredicate.OLT, r, zero),
                              arith.cmpf(arith.CmpFPredicate.OLT, b, zero))
    away = arith.andi(arith.cmpf(arith.CmpFPredicate.ONE, r, zero), signs_differ)
    quotient = arith.select(away, fsub(quotient, one), quotient)
    floored = mmath.floor(quotient)
    floored = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, fsub(quotient, floored), const(t, 0.5)),
                           fadd(floored, one), floored)
    ratio = arith.divf(a, b)
    floored = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, quotient, zero), mmath.copysign(zero, ratio), floored)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, b, zero), ratio, floored)


def _float_sign(x: ir.Value) -> ir.Value:
    t = x.type
    zero = const(t, 0.0)
    neg = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, x, zero), const(t, -1.0), zero)  # +0 for NaN, +-0
    return arith.select(arith.cmpf(arith.CmpFPredicate.OGT, x, zero), const(t, 1.0), neg)


def _int_sign(x: ir.Value) -> ir.Value:
    t = x.type
    zero = const(t, 0)
    neg = arith.select(arith.cmpi(arith.CmpIPredicate.slt, x, zero), const(t, -1), zero)
    return arith.select(arith.cmpi(arith.CmpIPredicate.sgt, x, zero), const(t, 1), neg)


def _int_pow(a: ir.Value, e: ir.Value) -> ir.Value:
    """a ** e wrapping like numpy for e >= 0 (``math.ipowi``); for e < 0 the truncated 1 / a^-e (1, +-1 or 0)."""
    t = a.type
    zero, one, minus_one = const(t, 0), const(t, 1), const(t, -1)
    negative = arith.cmpi(arith.CmpIPredicate.slt, e, zero)
    power = mmath.ipowi(a, arith.select(negative, zero, e))
    odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(e, one), zero)
    of_minus_one = arith.select(odd, minus_one, one)
    reciprocal = arith.select(
        arith.cmpi(arith.CmpIPredicate.eq, a, one),
        one,
        arith.select(arith.cmpi(arith.CmpIPredicate.eq, a, minus_one), of_minus_one, zero),
    )
    return arith.select(negative, reciprocal, power)


def _int_div(a: ir.Value, b: ir.Value) -> ir.Value:
    t = a.type
    zero, one, minus_one = const(t, 0), const(t, 1), const(t, -1)
    b_zero = arith.cmpi(arith.CmpIPredicate.eq, b, zero)
    b_minus_one = arith.cmpi(arith.CmpIPredicate.eq, b, minus_one)
    safe = arith.select(arith.ori(b_zero, b_minus_one), one, b)
    q = arith.divsi(a, safe)
    q = arith.select(b_minus_one, arith.subi(zero, a), q)
    return arith.select(b_zero, zero, q)


def _int_fmod(a: ir.Value, b: ir.Value) -> ir.Value:
    """C's remainder (the sign of ``a``); x % 0 = 0 and x % -1 = 0 (arith.remsi traps on both)."""
    t = a.type
    zero, one, minus_one = const(t, 0), const(t, 1), const(t, -1)
    special = arith.ori(arith.cmpi(arith.CmpIPredicate.eq, b, zero),
                        arith.cmpi(arith.CmpIPredicate.eq, b, minus_one))
    return arith.select(special, zero, arith.remsi(a, arith.select(special, one, b)))


def _floor_mod_float(a: ir.Value, b: ir.Value) -> ir.Value:
    """PyTorch's remainder on floats: fmod, plus ``b`` when a non-zero remainder's sign is not ``b``'s; a zero
    remainder is fmod's (4.0 % -2.0 is 0.0, Python's -0.0); x % 0 is NaN (frem's)."""
    zero = const(a.type, 0.0)
    r = arith.remf(a, b)
    signs_differ = arith.xori(arith.cmpf(arith.CmpFPredicate.OLT, r, zero),
                              arith.cmpf(arith.CmpFPredicate.OLT, b, zero))
    return arith.select(arith.andi(arith.cmpf(arith.CmpFPredicate.ONE, r, zero), signs_differ), fadd(r, b), r)


def _int_adjust(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(C's remainder of a / b, whether it is non-zero with a sign other than b's)."""
    zero = const(a.type, 0)
    r = _int_fmod(a, b)
    nonzero = arith.cmpi(arith.CmpIPredicate.ne, r, zero)
    signs_differ = arith.xori(arith.cmpi(arith.CmpIPredicate.slt, r, zero),
                              arith.cmpi(arith.CmpIPredicate.slt, b, zero))
    return r, arith.andi(nonzero, signs_differ)


def _int_floor_mod(a: ir.Value, b: ir.Value) -> ir.Value:
    r, adjust = _int_adjust(a, b)
    return arith.select(adjust, arith.addi(r, b), r)


def _int_floor_div(a: ir.Value, b: ir.Value) -> ir.Value:
    _, adjust = _int_adjust(a, b)
    q = _int_div(a, b)
    return arith.select(adjust, arith.subi(q, const(a.type, 1)), q)


# name -> (float body on one widened value, integer body or None, bool body or None)
_UNARY_FLOAT: dict[str, Callable[[ir.Value], ir.Value]] = {
    "abs": mmath.absf,
    "neg": arith.negf,
    "exp": _exp,
    "coarse_exp": coarse_exp,
    "log": mmath.log,
    "sqrt": mmath.sqrt,
    "rsqrt": lambda x: arith.divf(const(x.type, 1.0), mmath.sqrt(x)),
    "reciprocal": lambda x: arith.divf(const(x.type, 1.0), x),
    "tanh": _tanh,
    "sigmoid": _sigmoid,
    "erf": _erf,
    # x unless below 0, as PyTorch's: NaN and -0 pass (maximumf would make -0 into +0)
    "relu": lambda x: arith.select(arith.cmpf(arith.CmpFPredicate.OLT, x, const(x.type, 0.0)), const(x.type, 0.0), x),
    "fast_gelu": lambda x: fmul(x, _sigmoid(fmul(const(x.type, 1.702), x))),
    "silu": lambda x: fmul(x, _sigmoid(x)),
    "square": lambda x: fmul(x, x),
    "floor": mmath.floor,
    "ceil": mmath.ceil,
    "round": mmath.roundeven,
    "sign": _float_sign,
    "sin": mmath.sin,
    "cos": mmath.cos,
    "trunc": mmath.trunc,
    "expm1": _expm1,
    "acos": mmath.acos,
    "asin": mmath.asin,
    "atan": mmath.atan,
    "acosh": mmath.acosh,
    "asinh": mmath.asinh,
}
_UNARY_INT: dict[str, Callable[[ir.Value], ir.Value]] = {
    # max(x, -x), not math.absi: LLVM's lowering of math.absi takes 1-D vectors only, and row tiles vectorize
    # to vector<1xNxi32>.  The minimum integer stays itself, as numpy's abs gives it.
    "abs": lambda x: arith.maxsi(x, arith.subi(const(x.type, 0), x)),
    "neg": lambda x: arith.subi(const(x.type, 0), x),
    "relu": lambda x: arith.maxsi(x, const(x.type, 0)),
    "square": lambda x: arith.muli(x, x),
    "sign": _int_sign,
}

_BINARY_FLOAT: dict[str, Callable[[ir.Value, ir.Value], ir.Value]] = {
    "add": fadd,
    "sub": fsub,
    "mul": fmul,
    "div": arith.divf,
    "pow": mmath.powf,
    "maximum": arith.maximumf,
    "minimum": arith.minimumf,
    "atan2": mmath.atan2,
    "mod": arith.remf,
    "floor_mod": _floor_mod_float,
    "floor_div": _float_floor_div,
}
_BINARY_INT: dict[str, Callable[[ir.Value, ir.Value], ir.Value]] = {
    "add": arith.addi,
    "sub": arith.subi,
    "mul": arith.muli,
    "div": _int_div,
    "pow": _int_pow,
    "maximum": arith.maxsi,
    "minimum": arith.minsi,
    "mod": _int_fmod,
    "floor_mod": _int_floor_mod,
    "floor_div": _int_floor_div,
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
#: integer and boolean bits; bitwise_not is an xor with all ones (-1, or true)
_BITWISE = {"bitwise_and": arith.andi, "bitwise_or": arith.ori, "bitwise_xor": arith.xori}


def _cast_body(x: ir.Value, target: ir.Type) -> ir.Value | None:
    source = x.type
    if source == target:
        return x
    if is_bool(target):
        if is_float(source):
            return arith.cmpf(arith.CmpFPredicate.UNE, x, const(source, 0.0))
        return arith.cmpi(arith.CmpIPredicate.ne, x, const(source, 0))
    if is_float(target):
        if is_float(source):
            if is_narrow_float(source) and is_narrow_float(target):
                x = widen(x)  # f16 <-> bf16 through f32 (exact widening, one rounding)
            if ir.FloatType(x.type).width < ir.FloatType(target).width:
                return arith.extf(target, x)
            return arith.truncf(target, x)
        if is_bool(source):
            return arith.uitofp(target, x)
        return arith.sitofp(target, x)
    if not is_int(target):
        return None
    width = ir.IntegerType(target).width
    if is_int(source):
        if is_bool(source):
            return arith.extui(target, x)
        if ir.IntegerType(source).width < width:
            return arith.extsi(target, x)
        return arith.trunci(target, x)
    # float -> int: truncate toward zero, saturate, NaN -> 0 (compute in f32 or f64).
    x = widen(x)
    t = x.type
    low, high = -(2.0 ** (width - 1)), 2.0 ** (width - 1)
    truncated = mmath.trunc(x)
    ge_low = arith.cmpf(arith.CmpFPredicate.OGE, truncated, const(t, low))
    lt_high = arith.cmpf(arith.CmpFPredicate.OLT, truncated, const(t, high))
    in_range = arith.andi(ge_low, lt_high)  # false for NaN
    safe = arith.select(in_range, truncated, const(t, 0.0))
    out = arith.fptosi(target, safe)
    too_high = arith.cmpf(arith.CmpFPredicate.OGE, truncated, const(t, high))
    out = arith.select(too_high, const(target, 2 ** (width - 1) - 1), out)
    too_low = arith.cmpf(arith.CmpFPredicate.OLT, truncated, const(t, low))
    return arith.select(too_low, const(target, -(2 ** (width - 1))), out)


#: Float ``pow`` by a constant integer exponent up to this is products (gelu's tanh form cubes its input).
MAX_PRODUCT_EXPONENT = 4


def _small_integer_exponent(op: ir.Operation) -> int | None:
    """The exponent of a float ``pow`` when it is a constant integer in [1, MAX_PRODUCT_EXPONENT] (every element)."""
    exponent = constant_scalar(op.operands[1])
    if exponent is None or exponent != int(exponent) or not 1 <= exponent <= MAX_PRODUCT_EXPONENT:
        return None
    return int(exponent)


def _integer_power(x: ir.Value, exponent: int) -> ir.Value:
    """x ** exponent as products (a libm ``powf`` call per element otherwise: 256x2048 gelu_new 4.6 ms)."""
    result = x
    for _ in range(exponent - 1):
        result = fmul(result, x)
    return result


def _body_builder(op: ir.Operation) -> Callable[[list[ir.Value]], ir.Value] | None:
    """A callable building the scalar body of ``op`` (given its block arguments), or None if not lowered."""
    name = op.name[len("graph.") :]
    operand_types = [ir.RankedTensorType(v.type).element_type for v in op.operands]
    result_type = ir.RankedTensorType(op.results[0].type).element_type
    if not operand_types:
        return None
    et = operand_types[0]

    def in_float(fn: Callable[..., ir.Value]) -> Callable[[list[ir.Value]], ir.Value]:
        return lambda args: narrow(fn(*[widen(a) for a in args]), result_type)

    if name == "gelu" and is_float(et):
        approximate = string_attr(op, "approximate", "none")
        return in_float(lambda x: _gelu(x, approximate))
    if name == "exp" and is_float(et) and _NONPOSITIVE in op.attributes:
        return in_float(lambda x: _exp(x, nonpositive=True))
    if name in _UNARY_FLOAT or name in _UNARY_INT:
        if is_float(et) and name in _UNARY_FLOAT:
            return in_float(_UNARY_FLOAT[name])
        if is_int(et) and not is_bool(et) and name in _UNARY_INT:
            return lambda args: _UNARY_INT[name](args[0])
        return None
    if name == "logical_not" and is_bool(et):
        return lambda args: arith.xori(args[0], const(et, True))
    if name in ("isfinite", "isinf") and is_float(et):  # |x| < inf, |x| == inf (both false for NaN)
        predicate = arith.CmpFPredicate.OLT if name == "isfinite" else arith.CmpFPredicate.OEQ
        inf = float("inf")
        return lambda args: arith.cmpf(predicate, mmath.absf(widen(args[0])), const(compute_type(et), inf))
    if name == "isnan" and is_float(et):
        return lambda args: arith.cmpf(arith.CmpFPredicate.UNO, args[0], args[0])
    if name == "pow" and is_float(et) and (exponent := _small_integer_exponent(op)) is not None:
        return in_float(lambda x, _: _integer_power(x, exponent))
    if name in _BINARY_FLOAT or name in _BINARY_INT:
        if is_float(et) and name in _BINARY_FLOAT:
            return in_float(_BINARY_FLOAT[name])
        if is_int(et) and not is_bool(et) and name in _BINARY_INT:
            return lambda args: _BINARY_INT[name](args[0], args[1])
        return None
    if name in _COMPARE:
        fpred, ipred = _COMPARE[name]
        if is_float(et):
            return lambda args: arith.cmpf(fpred, args[0], args[1])
        if is_int(et):
            return lambda args: arith.cmpi(ipred, args[0], args[1])
        return None
    if name in _LOGICAL and is_bool(et):
        return lambda args: _LOGICAL[name](args[0], args[1])
    if name in _BITWISE and is_int(et):
        return lambda args: _BITWISE[name](args[0], args[1])
    if name == "bitwise_not" and is_int(et):
        return lambda args: arith.xori(args[0], const(et, True if is_bool(et) else -1))
    if name == "select":
        return lambda args: arith.select(args[0], args[1], args[2])
    if name == "cast":
        if (is_float(et) or is_int(et)) and (is_float(result_type) or is_int(result_type)):
            return lambda args: _cast_body(args[0], result_type)
        return None
    return None


#: The graph ops this pass lowers (for some or all element types).
LOWERED_OPS = frozenset(
    ["graph." + n for n in (*_UNARY_FLOAT, *_UNARY_INT, *_BINARY_FLOAT, *_BINARY_INT, *_COMPARE, *_LOGICAL,
                            *_BITWISE)]
    + ["graph.gelu", "graph.logical_not", "graph.bitwise_not", "graph.isfinite", "graph.isinf", "graph.isnan",
       "graph.select", "graph.cast"]
)

# --------------------------------------------------------------------------
# Broadcasting and the generic op.


def _row_divisor(op: ir.Operation, maps: list[ir.AffineMap], result_type: ir.RankedTensorType) -> bool:
    """True for a float ``div`` whose divisor is the same along the innermost loop (a keep_dims row sum).

    Such a division is cheaper as one reciprocal per row (LLVM hoists or
    scalarizes ``1 / d``) and a multiply per element, instead of a vdivps per
    vector.  x * (1 / d) rounds twice: at most 1.5 ulp against 0.5 for x / d.
    """
    if op.name != "graph.div" or not fast_math_enabled() or result_type.rank == 0:
        return False
    if not is_float(ir.RankedTensorType(op.operands[1].type).element_type) or result_type.shape[-1] == 1:
        return False
    inner = result_type.rank - 1
    return not any(isinstance(e, ir.AffineDimExpr) and e.position == inner for e in maps[1].results)


def _reciprocal_div_body(result_type: ir.Type) -> Callable[[list[ir.Value]], ir.Value]:
    def body(args: list[ir.Value]) -> ir.Value:
        x, d = widen(args[0]), widen(args[1])
        return narrow(fmul(x, arith.divf(const(d.type, 1.0), d)), result_type)

    return body


#: The generics lowered so far in a graph-to-linalg run (:func:`_reused_generics`), by what their op computes:
#: an op computing the same thing again is lowered as a clone of one (building a scalar body in Python costs
#: about 0.4 ms per op; a 5,000-op graph holds a few kinds of them).
_LOWERED_GENERICS: contextvars.ContextVar[dict[tuple, ir.Operation] | None] = contextvars.ContextVar(
    "lowered_generics", default=None)
#: Ops whose body depends on the value of an operand (a constant exponent), not only on its type.
_VALUE_DEPENDENT_BODIES = frozenset(["graph.pow"])


@contextlib.contextmanager
def _reused_generics() -> Iterator[None]:
    """Within the block, lower_elementwise clones the generic of an op it lowered before with the same name,
    attributes and types (and fast-math setting) instead of building it again."""
    token = _LOWERED_GENERICS.set({})
    try:
        yield
    finally:
        _LOWERED_GENERICS.reset(token)


def _reuse_key(op: ir.Operation) -> tuple | None:
    """What the generic of ``op`` depends on, or None when it is not reused (dynamic shapes, value-dependent
    bodies)."""
    result_type = ir.RankedTensorType(op.results[0].type)
    if op.name in _VALUE_DEPENDENT_BODIES or not result_type.has_static_shape:
        return None
    attributes = tuple(sorted((name, str(op.attributes[name])) for name in op.attributes))
    return (op.name, attributes, tuple(str(v.type) for v in op.operands), str(result_type), fast_math_enabled())


def _clone_generic(lowered: ir.Operation, op: ir.Operation) -> ir.Operation:
    """A clone of ``lowered`` computing ``op``: its operands, a new init, its location (the body's ops too)."""
    result_type = ir.RankedTensorType(op.results[0].type)
    with op.location, ir.InsertionPoint(op):
        init = tensor.empty(result_type.shape, result_type.element_type)
        generic = lowered.clone(ir.InsertionPoint(op))
    for k, operand in enumerate(op.operands):
        generic.operands[k] = operand
    generic.operands[len(op.operands)] = init
    generic.location = op.location
    body = generic.regions[0].blocks[0]
    for argument in body.arguments:
        argument.set_location(op.location)
    for body_op in body.operations:
        body_op.location = op.location
    return generic


def lower_elementwise(op: ir.Operation) -> bool:
    """Replace elementwise graph ``op`` by a linalg.generic; False (IR untouched) when not lowered."""
    if len(op.results) != 1 or len(op.regions) > 0:
        return False
    if not all(isinstance(v.type, ir.RankedTensorType) for v in (*op.operands, op.results[0])):
        return False
    lowered = _LOWERED_GENERICS.get()
    key = _reuse_key(op) if lowered is not None else None
    if key is not None and key in lowered:
        generic = _clone_generic(lowered[key], op)
        op.results[0].replace_all_uses_with(generic.results[0])
        op.erase()
        return True
    body = _body_builder(op)
    if body is None:
        return False
    result_type = ir.RankedTensorType(op.results[0].type)
    operands = list(op.operands)
    maps = [broadcast_map(ir.RankedTensorType(v.type), result_type) for v in operands]
    if any(m is None for m in maps):
        return False
    if _row_divisor(op, maps, result_type):
        body = _reciprocal_div_body(result_type.element_type)
    maps.append(ir.AffineMap.get_identity(result_type.rank))
    with op.location, ir.InsertionPoint(op):
        sizes = dynamic_sizes(operands, result_type)
        if sizes is None:
            return False
        init = tensor.empty(sizes, result_type.element_type)
        generic = build_generic(
            [result_type],
            operands,
            [init],
            maps,
            [PARALLEL] * result_type.rank,
            lambda args: [body(args[: len(operands)])],
        )
    if key is not None:
        lowered[key] = generic.operation
    op.results[0].replace_all_uses_with(generic.results[0])
    op.erase()
    return True


def lower_op(op: ir.Operation) -> bool:
    """Lower one graph op (not a decomposed one) to linalg; False (IR untouched) when it is not lowered."""
    lowering = LOWERINGS.get(op.name)
    if lowering is not None:
        return lowering(op)
    return lower_elementwise(op)


@dataclass(frozen=True)
class GraphToLinalg(GraphPass):
    name: ClassVar[str] = "graph-to-linalg"
    summary: ClassVar[str] = "Lower graph ops to linalg, tensor, arith and math ops on tensors"
    statistics: ClassVar[dict[str, str]] = {
        "num-decomposed": "Number of graph ops rewritten into simpler graph ops first",
        "num-lowered": "Number of graph ops lowered to linalg",
        "num-unlowered": "Number of graph ops left as they were",
        "num-checks": "Number of run-time checks emitted (integer divisors that may be 0, indices that may be out "
                      "of range)",
    }
    strict: bool = option(False, "fail on a graph op that cannot be lowered")
    fast_math: bool = option(True, "contract float mul/add into FMAs, divide by row scalars through a reciprocal")
    cube_convolutions: bool = option(
        False, "keep each convolution of one group a linalg.conv_2d_nchw_fchw for a cube unit (the NPU), not "
        "the CPU's direct or im2col forms sized for the host's registers")
    checks: bool = option(False, "check integer divisors and gather indices at run time: a division by zero or an "
                                 "index out of range sets the status word the runtime raises on "
                                 "(lowering/run_checks.py; the CPU compile pipeline turns it on)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        with module.context:
            decompose_graph_ops(module, context.count)
        with fast_math(self.fast_math), cube_convolutions(self.cube_convolutions), _reused_generics():
            self._lower(module, context)

    def _lower(self, module: ir.Module, context: PassContext) -> None:
        checks = CheckEmitter(module) if self.checks else None
        for func in list(module.body.operations):  # the checks add functions
            _mark_nonpositive_exps(func)
            for op in [op for op in nested_ops(func) if op.name.startswith("graph.")]:
                if checks is not None and checks.before(op):
                    context.count("num-checks")
                if lower_op(op):
                    context.count("num-lowered")
                    continue
                context.count("num-unlowered")
                if self.strict:
                    types = ", ".join(str(v.type) for v in op.operands)
                    context.fail(f"graph-to-linalg: cannot lower '{op.name}' with operands ({types})", op.location)


# The modules below register their lowerings and decompositions (import order does not matter).
from graphfuse.lowering import (  # noqa: E402, F401
    decompose,
    grouped_matmul,
    indexing_ops,
    shape_ops,
    sorting,
    structured_ops,
)
