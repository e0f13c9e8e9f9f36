"""graph-kernel-simplify: arithmetic simplification (MindSpore graph-kernel opt_level 2).

Python rewrite patterns (one callback per graph op name) applied with
``apply_patterns_and_fold_greedily``.  The pass composes with
graph-canonicalize, which folds constants and removes the exact structural
identities (reshape/transpose chains, neg(neg x), ...); this pass does the
arithmetic identities graph-canonicalize deliberately leaves alone.

"A constant c" below is an ``arith.constant dense<...>`` whose elements are
all equal (a splat, or a dense constant of one repeated value), of any dtype.
A rewrite that forwards x or builds a new op only applies when the op's result
type is exactly the replacement's: a constant that broadcasts x to a bigger
shape (x + zeros<4x8> for x : tensor<8xf32>) blocks it.

Always applied (value-preserving; floats in the IEEE sense, integers wrap;
a NaN stays a NaN, though its sign bit, which carries no value, may change):

- x * 1, 1 * x, x / 1 -> x;  x + 0, 0 + x, x - 0 -> x (sign of a zero result
  aside, see :func:`add_zero`);
- x * -1, -1 * x -> neg(x);  0 - x -> neg(x) (sign of a zero result aside,
  see :func:`zero_sub`);  x - neg(y) -> x + y;
- x / c -> x * (1/c) for float c a power of two whose reciprocal the dtype
  holds exactly (c may be any dense constant then, one value per element);
- pow(x, 1) -> x;  pow(x, 2) -> x * x (see :func:`pow_two` on the reference's
  powf);
- cast(cast(x)) -> cast(x) when the first cast holds every value of x's dtype
  exactly (int8 -> bf16 -> f32 is int8 -> f32: an int8 weight cast to a bf16
  model's dtype, then widened for the product).

Only with ``unsafe-math`` (the default, as MindSpore at opt_level 2), because
the value changes:

- exp(log x) -> x, log(exp x) -> x, reciprocal(reciprocal x) -> x;
- x / c -> x * (1/c) in f32 for any finite nonzero c with a normal reciprocal
  (not in bf16 or f16: their reciprocal would round to 8 or 11 significant
  bits, an error PyTorch's division, rounded once, does not have: a bf16
  ``x / 30`` differed from eager's in 60% of the elements);
- pow(x, 0.5) -> sqrt(x).

x * 0 is never rewritten (NaN * 0 and inf * 0 are NaN, a negative x gives -0.0);
neither are sqrt(x) * sqrt(x) or rsqrt -> reciprocal(sqrt).

Erasing: a rewritten op is replaced through the rewriter; an inner graph op it
absorbed (the log of exp(log x)) is erased when nothing else uses it, since the
greedy driver never erases IRDL ops.  Dead constants are erased by the driver,
which also deduplicates constants (they move to the top of their function).
New ops and constants keep the location of the op they replace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from mlir import ir
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
from graphfuse.dialect.matching import constant_array, create_constant, create_op, erase_dead, producer
from graphfuse.dialect.types import FLOAT_DTYPES, holds_exactly, numpy_dtype, sig_from_type, tensor_type
from graphfuse.pipelines.pass_base import GraphPass, PassContext, active_rewrite_budget, option

SIMPLIFIED = "num-simplified"

# A rule gets the root op and the rewriter; it returns True only after it rewrote the IR.
Rule = Callable[[ir.Operation, Any], bool]

# --------------------------------------------------------------------------
# Helpers.


def _dense_attr(value: ir.Value) -> ir.DenseElementsAttr | None:
    op = producer(value, "arith.constant")
    if op is None or "value" not in op.attributes:
        return None
    attr = op.attributes["value"]
    return attr if isinstance(attr, ir.DenseElementsAttr) else None


def uniform_constant(value: ir.Value) -> float | None:
    """The one value of a constant whose elements are all equal (as a float, sign of zero kept), or None.

    Splats are read without expanding them.  NaN constants and empty ones give
    None (a NaN is never equal to anything the rules look for).  Integers are
    returned as floats: the rules only compare them with 0, 1, -1 and 2, which
    no other int64 converts to.
    """
    attr = _dense_attr(value)
    if attr is None:
        return None
    if attr.is_splat:
        element = attr.get_splat_value()
        if isinstance(element, ir.BoolAttr) or not isinstance(element, ir.FloatAttr | ir.IntegerAttr):
            return None
        number = float(element.value)
        return None if math.isnan(number) else number
    array = constant_array(value)
    if array is None or array.size == 0 or array.dtype == np.bool_:
        return None
    flat = array.reshape(-1).astype(np.float64)
    return float(flat[0]) if bool(np.all(flat == flat[0])) else None


def _is_constant(value: ir.Value, target: float) -> bool:
    found = uniform_constant(value)
    return found is not None and found == target


def _dtype(value: ir.Value) -> str | None:
    sig = sig_from_type(value.type)
    return None if sig is None else sig.dtype


def _forward(op: ir.Operation, x: ir.Value, rw: Any) -> bool:
    """Replace one-result ``op`` by ``x`` when x has exactly the op's result type."""
    if op.results[0].type != x.type:
        return False
    rw.replace_op(op, [x])
    return True


def _infers_result(op: ir.Operation, name: str, operands: Sequence[ir.Type]) -> bool:
    """Whether a ``graph.<name>`` of operands of these types verifies and has exactly ``op``'s result type."""
    spec = lookup_op(f"graph.{name}")
    inputs = [sig_from_type(t) for t in operands]
    expected = sig_from_type(op.results[0].type)
    if spec is None or expected is None or any(s is None for s in inputs):
        return False
    try:
        inferred = infer_results(spec, inputs, spec.with_defaults({}), None)
    except VerifyError:
        return False
    # Compare the built types too: a result type with an encoding is not what create_op builds.
    return inferred == [expected] and tensor_type(expected) == op.results[0].type


def _replace_by(op: ir.Operation, rw: Any, name: str, operands: Sequence[ir.Value]) -> bool:
    """Replace one-result ``op`` by a new ``graph.<name>`` of ``operands`` when it has the op's result type.

    Nothing is created unless the catalog accepts the new op and infers
    exactly the old result type; the new op keeps the old op's location.
    """
    if not _infers_result(op, name, [v.type for v in operands]):
        return False
    new = create_op(rw, name, operands, op.location)
    rw.replace_op(op, list(new.results))
    return True


# --------------------------------------------------------------------------
# Exact identities.


def mul_one(op: ir.Operation, rw: Any) -> bool:
    """x * 1 -> x and 1 * x -> x (any dtype).

    Exact: multiplying by one returns every value unchanged, NaN, infinities,
    -0.0 and integer extremes included.
    """
    lhs, rhs = op.operands[0], op.operands[1]
    if _is_constant(rhs, 1.0) and _forward(op, lhs, rw):
        return True
    return _is_constant(lhs, 1.0) and _forward(op, rhs, rw)


def div_one(op: ir.Operation, rw: Any) -> bool:
    """x / 1 -> x (any dtype).

    Exact: IEEE division by one and truncating integer division by one return x.
    """
    return _is_constant(op.operands[1], 1.0) and _forward(op, op.operands[0], rw)


def add_zero(op: ir.Operation, rw: Any) -> bool:
    """x + 0 -> x and 0 + x -> x, for a zero of either sign (any dtype).

    Integers: exact.  Floats: x + (-0.0) is exactly x for every x; x + (+0.0)
    is x except that it maps -0.0 to +0.0, so the rewritten graph returns -0.0
    where the original returned +0.0.  The two compare equal under == and only
    1 / result or copysign can tell them apart; MindSpore applies the rewrite
    all the same.
    """
    lhs, rhs = op.operands[0], op.operands[1]
    if _is_constant(rhs, 0.0) and _forward(op, lhs, rw):
        return True
    return _is_constant(lhs, 0.0) and _forward(op, rhs, rw)


def sub_zero(op: ir.Operation, rw: Any) -> bool:
    """x - 0 -> x, for a zero of either sign (any dtype).

    Integers: exact.  Floats: x - (+0.0) = x + (-0.0) is exactly x; x - (-0.0)
    maps -0.0 to +0.0, so as for :func:`add_zero` only the sign of a zero
    result may change (equal under ==).
    """
    return _is_constant(op.operands[1], 0.0) and _forward(op, op.operands[0], rw)


def mul_minus_one(op: ir.Operation, rw: Any) -> bool:
    """x * -1 -> neg(x) and -1 * x -> neg(x) (any numeric dtype).

    Exact: float negation flips the sign bit as x * -1 does, zeros and
    infinities included; a NaN stays a NaN (x86 keeps a NaN operand's sign in
    x * -1 while neg flips it: the sign of a NaN is no value).  Integer
    x * -1 and neg(x) both wrap MIN to MIN.
    """
    lhs, rhs = op.operands[0], op.operands[1]
    if _is_constant(rhs, -1.0) and _replace_by(op, rw, "neg", [lhs]):
        return True
    return _is_constant(lhs, -1.0) and _replace_by(op, rw, "neg", [rhs])


def zero_sub(op: ir.Operation, rw: Any) -> bool:
    """0 - x -> neg(x), for a zero of either sign (any numeric dtype).

    Integers: exact (0 - MIN wraps to MIN, as neg does).  Floats: (-0.0) - x
    is exactly neg(x); (+0.0) - x differs only for x = +0.0, which gives +0.0
    where neg gives -0.0 (equal under ==, as for :func:`add_zero`).
    """
    return _is_constant(op.operands[0], 0.0) and _replace_by(op, rw, "neg", [op.operands[1]])


def sub_neg(op: ir.Operation, rw: Any) -> bool:
    """x - neg(y) -> x + y (any numeric dtype).

    Exact: IEEE defines x - z as x + (-z), and integer arithmetic wraps the
    same way on both sides.  The neg is erased when nothing else uses it.
    """
    inner = producer(op.operands[1], "graph.neg")
    if inner is None or not _replace_by(op, rw, "add", [op.operands[0], inner.operands[0]]):
        return False
    erase_dead(rw, [inner])
    return True


def pow_one(op: ir.Operation, rw: Any) -> bool:
    """pow(x, 1) -> x (any numeric dtype).

    Exact: x^1 is x for every x (pow(+-0, 1) = +-0, pow(+-inf, 1) = +-inf,
    NaN stays NaN); numpy's integer and float power return x bit for bit.
    """
    return _is_constant(op.operands[1], 1.0) and _forward(op, op.operands[0], rw)


def pow_two(op: ir.Operation, rw: Any) -> bool:
    """pow(x, 2) -> x * x (any numeric dtype).

    Integers: exact (numpy's power and mul wrap alike).  Floats: x * x is the
    correctly rounded square, the value IEEE 754 recommends for pow(x, 2)
    (LLVM rewrites pow(x, 2.0) to fmul without fast-math flags), and it agrees
    with pow on -0.0, infinities, NaN and overflow.  The reference's
    numpy.power takes a square fast path for a one-element exponent (there it
    already is x * x), but a full-size exponent goes to a vectorized powf that
    is not correctly rounded: 1 ULP away from x * x on about 0.07% of
    normally distributed f32 inputs.  So results can change by 1 ULP against
    the reference interpreter, towards the correctly rounded value.
    """
    return _is_constant(op.operands[1], 2.0) and _replace_by(op, rw, "mul", [op.operands[0], op.operands[0]])


def cast_cast(op: ir.Operation, rw: Any) -> bool:
    """cast(cast(x)) -> cast(x) when the inner cast is exact (:func:`graphfuse.dialect.types.holds_exactly`): the
    outer cast then converts x's own value, as a cast of x does (booleans are left alone)."""
    inner = producer(op.operands[0], "graph.cast")
    if inner is None:
        return False
    x = inner.operands[0]
    source, middle, target = _dtype(x), _dtype(inner.results[0]), _dtype(op.results[0])
    if None in (source, middle, target) or "i1" in (source, middle, target):
        return False
    if not holds_exactly(source, middle):
        return False
    if source == target:
        if not _forward(op, x, rw):
            return False
    else:
        new = create_op(rw, "cast", [x], op.location, declared=[sig_from_type(op.results[0].type)])
        rw.replace_op(op, list(new.results))
    erase_dead(rw, [inner])
    return True


# --------------------------------------------------------------------------
# Division by a constant.


_SMALLEST_NORMAL = {"f32": 2.0**-126, "bf16": 2.0**-126, "f16": 2.0**-14}


def _reciprocal(divisor: np.ndarray, dtype: str, unsafe_math: bool) -> np.ndarray | None:
    """1 / divisor in the divisor's dtype when x / divisor -> x * that is allowed, else None.

    Exact (always allowed): every element is +-2^k and 2^-k is representable
    in the dtype (subnormals included), so x / c and x * (1/c) are the same
    real number, rounded once the same way -- also in the f32 computation the
    reference uses for f16/bf16, where it does not round at all.
    Inexact (unsafe-math, f32 only): every element finite and nonzero with a
    finite, normal reciprocal; 1/c rounds once and the product once more, so
    the result is within 2 ULP of the quotient (more when it is subnormal).
    A bf16 or f16 division stays one: the code computes it in f32 and rounds
    once, as PyTorch does.
    """
    target = numpy_dtype(dtype)
    c = divisor.astype(np.float64)
    if c.size == 0 or not bool(np.all(np.isfinite(c) & (c != 0))):
        return None
    with np.errstate(all="ignore"):
        exact = 1.0 / c
        recip = exact.astype(target)
    back = recip.astype(np.float64)
    mantissa, _ = np.frexp(c)
    if bool(np.all((np.abs(mantissa) == 0.5) & (back == exact))):
        return recip
    if not unsafe_math or dtype != "f32":
        return None
    if not bool(np.all(np.isfinite(back) & (np.abs(back) >= _SMALLEST_NORMAL[dtype]))):
        return None
    return recip


def make_div_to_mul(unsafe_math: bool) -> Rule:
    def div_to_mul(op: ir.Operation, rw: Any) -> bool:
        """x / c -> x * (1/c) for a float constant c (one value or one per element).

        Exact when every element of c is a power of two whose reciprocal the
        dtype holds; with unsafe-math also for any finite nonzero c whose
        reciprocal is a finite normal number (within 2 ULP, see
        :func:`_reciprocal`).  The reciprocal constant has c's type, so
        broadcasting is unchanged.
        """
        x, divisor = op.operands[0], op.operands[1]
        dtype = _dtype(divisor)
        if dtype not in FLOAT_DTYPES:
            return False
        array = constant_array(divisor)
        if array is None:
            return False
        recip = _reciprocal(array, dtype, unsafe_math)
        if recip is None or not _infers_result(op, "mul", [x.type, divisor.type]):
            return False
        return _replace_by(op, rw, "mul", [x, create_constant(rw, recip, op.location)])

    return div_to_mul


# --------------------------------------------------------------------------
# Unsafe rewrites (unsafe-math only): they change values.


def exp_log(op: ir.Operation, rw: Any) -> bool:
    """exp(log x) -> x (unsafe-math).

    Changes values: for x < 0 the original gives NaN and for x = -0.0 it
    gives +0.0 (+0.0, +inf and NaN come back unchanged); for positive
    finite x it is within eps * (1 + |log x|) * x of x (eps the dtype's
    machine epsilon: log's rounding is amplified by exp).
    """
    inner = producer(op.operands[0], "graph.log")
    if inner is None or not _forward(op, inner.operands[0], rw):
        return False
    erase_dead(rw, [inner])
    return True


def log_exp(op: ir.Operation, rw: Any) -> bool:
    """log(exp x) -> x (unsafe-math).

    Changes values: exp overflows to inf for x > ~88.7 (f32; ~11.1 for f16)
    and underflows to 0 for x < ~-103 (log gives -inf then); elsewhere the
    original is within eps * (1 + |x|) of x (eps the dtype's machine epsilon:
    exp's rounding becomes an absolute error of log), i.e. a large relative
    error for x near 0.
    """
    inner = producer(op.operands[0], "graph.exp")
    if inner is None or not _forward(op, inner.operands[0], rw):
        return False
    erase_dead(rw, [inner])
    return True


def reciprocal_reciprocal(op: ir.Operation, rw: Any) -> bool:
    """reciprocal(reciprocal x) -> x (unsafe-math).

    Changes values: 1/(1/x) rounds twice (within eps * |x|, i.e. 2 ULP, for
    normal x with a normal reciprocal); subnormal x gives +-inf in the original, huge x
    gives +-inf from a zero reciprocal.
    """
    inner = producer(op.operands[0], "graph.reciprocal")
    if inner is None or not _forward(op, inner.operands[0], rw):
        return False
    erase_dead(rw, [inner])
    return True


def pow_half(op: ir.Operation, rw: Any) -> bool:
    """pow(x, 0.5) -> sqrt(x), float dtypes (unsafe-math).

    Changes values: IEEE pow(-0.0, 0.5) = +0.0 but sqrt(-0.0) = -0.0, and
    pow(-inf, 0.5) = +inf but sqrt(-inf) = NaN; the reference's powf is not
    correctly rounded, so other results may differ by 1 ULP.  (numpy.power
    computes a one-element exponent of 0.5 as sqrt, so there the reference
    already agrees; a full-size exponent gets the IEEE answers.)
    """
    x = op.operands[0]
    if _dtype(x) not in FLOAT_DTYPES or not _is_constant(op.operands[1], 0.5):
        return False
    return _replace_by(op, rw, "sqrt", [x])


# --------------------------------------------------------------------------
# The pass.


def rules(unsafe_math: bool) -> dict[str, tuple[Rule, ...]]:
    """graph op name -> rules tried in order; the unsafe ones only with ``unsafe_math``."""
    unsafe = unsafe_math  # short, for the table
    table: dict[str, tuple[Rule | None, ...]] = {
        "graph.mul": (mul_one, mul_minus_one),
        "graph.add": (add_zero,),
        "graph.sub": (sub_zero, zero_sub, sub_neg),
        "graph.div": (div_one, make_div_to_mul(unsafe_math)),
        "graph.pow": (pow_one, pow_two, pow_half if unsafe else None),
        "graph.exp": (exp_log if unsafe else None,),
        "graph.log": (log_exp if unsafe else None,),
        "graph.reciprocal": (reciprocal_reciprocal if unsafe else None,),
        "graph.cast": (cast_cast,),
    }
    return {name: tuple(r for r in chain if r is not None) for name, chain in table.items()}


def build_patterns(unsafe_math: bool, count: Callable[[str], None]) -> RewritePatternSet:
    patterns = RewritePatternSet()
    # graphfuse-bisect's fuel: with a budget covering this pass, each simplification spends one rewrite.
    budget = active_rewrite_budget()
    if budget is not None and not budget.applies_to(GraphKernelSimplify.name):
        budget = None
    for name, chain in rules(unsafe_math).items():
        if not chain:
            continue

        def apply(op: ir.OpView, rw: Any, chain: tuple[Rule, ...] = chain) -> bool:
            # The driver reads a falsy return as success, a truthy one as "no match".
            op = op.operation
            if len(op.results) != 1:
                return True
            if budget is not None and not budget.has_fuel(GraphKernelSimplify.name):
                return True
            location, op_name = op.location, op.name  # read before a rule erases the op
            for rule in chain:
                if rule(op, rw):
                    count(SIMPLIFIED)
                    if budget is not None:
                        budget.consume(GraphKernelSimplify.name, getattr(rule, "__name__", "rule"), location, op_name)
                    return False
            return True

        patterns.add(name, apply)
    return patterns


@dataclass(frozen=True)
class GraphKernelSimplify(GraphPass):
    name: ClassVar[str] = "graph-kernel-simplify"
    summary: ClassVar[str] = (
        "Simplify arithmetic identities of graph ops: x * 1, x - neg(y), x / c, exp(log x) and more"
    )
    statistics: ClassVar[dict[str, str]] = {SIMPLIFIED: "Number of arithmetic simplifications"}

    unsafe_math: bool = option(
        True,
        "also apply the rewrites that change values: exp(log x), log(exp x), reciprocal(reciprocal x), "
        "pow(x, 0.5) -> sqrt, x / c -> x * (1/c) in f32 for c not a power of two "
        "(MindSpore applies them at opt_level 2)",
    )

    def run(self, module: ir.Module, context: PassContext) -> None:
        with module.context:
            patterns = build_patterns(self.unsafe_math, context.count)
            apply_patterns_and_fold_greedily(module, patterns.freeze())
