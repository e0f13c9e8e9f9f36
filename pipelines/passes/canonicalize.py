"""graph-canonicalize: fold constants and simplify identities of graph ops.

Upstream ``canonicalize`` cannot do this: IRDL ops have no folders and count as
side-effecting.  This pass is a set of MLIR rewrite patterns (one Python
callback per graph op name) applied with ``apply_patterns_and_fold_greedily``,
so upstream folding of other dialects and constant deduplication run too
(deduplicated constants move to the top of their function).

Rewrites, all exact for every input (NaN, infinities, -0.0 and integer
wrap-around included):

- constant folding: a graph op whose operands are all ``arith.constant
  dense<...>`` becomes constants holding its reference result
  (:func:`graphfuse.dialect.evaluate.evaluate_op`), unless a result type is
  dynamic, a result has more than ``fold-limit`` elements or the op raises
  (an integer division by zero, an index out of range: it raises when the
  graph runs);
- reshape / broadcast_to / cast whose result type is the operand type -> operand;
  reshape(reshape(x)) and broadcast_to(broadcast_to(x)) -> one op from x;
- transpose with the identity perm -> operand; transpose(transpose(x)) -> one
  transpose with the composed perm (or x);
- slice of the whole operand (start 0, result type = operand type) -> operand
  (concat and split always have at least two pieces, so they never reduce to
  an identity);
- reduce_* with empty ``axes`` (documented as a copy of the operand) -> operand;
- neg(neg(x)), logical_not(logical_not(x)) -> x;
- f(f(x)) -> f(x) for the idempotent abs, relu, sign, floor, ceil, round;
- maximum(x, x), minimum(x, x), logical_and(x, x), logical_or(x, x) -> x;
- select(c, x, x) -> x, and select with a splat true / false constant
  condition -> that branch (when the branch already has the result type).

Arithmetic identities (x + 0, x * 1, x - x, x * 0, ...) are deliberately left
to a later pass: most are not exact for floats (-0.0 + 0.0 is +0.0, NaN * 0 is
NaN, inf - inf is NaN) and the rest would need type-by-type reasoning that
does not belong in a canonicalizer.  Cast chains are not merged either
(cast(cast(x)) rounds twice).

Erasing: a rewritten op is replaced through the rewriter; its graph-op
producer (the inner op of a chain) is erased in the same pattern when nothing
else uses it, since the greedy driver never erases IRDL ops (they count as
side-effecting).  Other dead graph ops are left to graph-dce; dead constants
are erased by the driver.  New ops keep the location of the op they replace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from mlir import ir
from mlir.dialects import arith
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from graphfuse.dialect.catalog import VerifyError, all_ops, infer_results, lookup_op, read_attributes
from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.run_checks import RunCheckError
from graphfuse.dialect.types import TensorSig, sig_from_type
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, option

FOLDED = "num-folded"
SIMPLIFIED = "num-simplified"

# A rule gets the root op and the rewriter; it returns True only after it rewrote the IR.
Rule = Callable[[ir.Operation, Any], bool]

# --------------------------------------------------------------------------
# Helpers.


def _producer(value: ir.Value) -> ir.Operation | None:
    """The op defining ``value``, or None for a block argument."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _producer_named(value: ir.Value, name: str) -> ir.Operation | None:
    op = _producer(value)
    return op if op is not None and op.name == name else None


def _has_uses(op: ir.Operation) -> bool:
    return any(True for result in op.results for _ in result.uses)


def _erase_if_dead(op: ir.Operation, rw: Any) -> None:
    """Erase ``op`` (a graph op the greedy driver would keep) when nothing uses it any more."""
    if not _has_uses(op):
        rw.erase_op(op)


def _same_type(a: ir.Value, b: ir.Value) -> bool:
    return a.type == b.type


def _attrs(op: ir.Operation) -> dict[str, Any] | None:
    """The op's attributes as Python values (defaults filled in), or None when they do not read."""
    spec = lookup_op(op.name)
    if spec is None:
        return None
    try:
        return read_attributes(spec, op)
    except VerifyError:
        return None


def _valid(name: str, operands: Sequence[ir.Value], attrs: dict[str, Any], result_types: Sequence[ir.Type]) -> bool:
    """Whether a ``name`` op with these operands, attributes and result types would verify."""
    spec = lookup_op(name)
    inputs = [sig_from_type(v.type) for v in operands]
    declared = [sig_from_type(t) for t in result_types]
    if spec is None or None in inputs or None in declared:
        return False
    try:
        inferred = infer_results(spec, inputs, spec.with_defaults(attrs), declared)
    except VerifyError:
        return False
    return [(s.shape, s.dtype) for s in inferred] == [(s.shape, s.dtype) for s in declared]


def _replace_with_values(op: ir.Operation, values: Sequence[ir.Value], rw: Any) -> None:
    rw.replace_op(op, list(values))


def _recreate(op: ir.Operation, operand: ir.Value, rw: Any, **new_attrs: ir.Attribute) -> ir.Operation:
    """A copy of one-result ``op`` reading ``operand``, with ``new_attrs`` overriding its attributes."""
    attributes = dict(op.attributes.items())
    attributes.update(new_attrs)
    with rw.ip:
        return ir.Operation.create(
            op.name,
            results=[op.results[0].type],
            operands=[operand],
            attributes=attributes,
            loc=op.location,
        )


# --------------------------------------------------------------------------
# Constant folding.


def _dense_constant(value: ir.Value) -> ir.DenseElementsAttr | None:
    """The attribute of an ``arith.constant dense<...>`` defining ``value``, or None (cheap: no copy)."""
    op = _producer_named(value, "arith.constant")
    if op is None or "value" not in op.attributes:
        return None
    attr = op.attributes["value"]
    return attr if isinstance(attr, ir.DenseElementsAttr) else None


def _constant_array(value: ir.Value) -> np.ndarray | None:
    """The numpy value of an ``arith.constant dense<...>`` result, or None."""
    attr = _dense_constant(value)
    if attr is None:
        return None
    try:
        return attr_to_array(attr)
    except ValueError:
        return None


def _splat_bool(value: ir.Value) -> bool | None:
    """The value of an i1 splat constant, or None."""
    attr = _dense_constant(value)
    if attr is None or not attr.is_splat:
        return None
    element = attr.get_splat_value()
    return bool(element.value) if isinstance(element, ir.BoolAttr | ir.IntegerAttr) else None


def make_fold_constants(fold_limit: int, count: Callable[[str], None]) -> Rule:
    def fold_constants(op: ir.Operation, rw: Any) -> bool:
        """op(constants...) -> constants holding the op's reference result.

        Skipped when a result type is dynamic (or not a ranked tensor), when a
        result has more than ``fold-limit`` elements, and when the reference
        rejects the inputs.
        """
        spec = lookup_op(op.name)
        if spec is None or len(op.operands) == 0:
            return False
        if any(_dense_constant(operand) is None for operand in op.operands):
            return False
        declared: list[TensorSig] = []
        for result in op.results:
            sig = sig_from_type(result.type)
            if sig is None or not sig.is_static or sig.num_elements > fold_limit:
                return False
            declared.append(sig)
        inputs = []
        for operand in op.operands:
            array = _constant_array(operand)
            if array is None:
                return False
            inputs.append(array)
        attrs = _attrs(op)
        if attrs is None:
            return False
        try:
            with np.errstate(all="ignore"):
                outputs = evaluate_op(spec.name, inputs, attrs, declared)
            values = [array_to_attr(out) for out in outputs]
        except (VerifyError, ValueError, RunCheckError):  # a division by zero raises when the graph runs, not here
            return False
        if [v.type for v in values] != [r.type for r in op.results]:
            return False  # e.g. a result type with an encoding
        with rw.ip:
            constants = [arith.ConstantOp(v.type, v, loc=op.location).result for v in values]
        _replace_with_values(op, constants, rw)
        count(FOLDED)
        return True

    return fold_constants


# --------------------------------------------------------------------------
# Simplifications.  Each returns True only after rewriting.


def forward_same_type(op: ir.Operation, rw: Any) -> bool:
    """op(x) -> x when the op's result type is x's type (reshape, broadcast_to, cast).

    A reshape that keeps the shape moves no element, a broadcast_to the
    operand's own shape repeats none, and a cast to the same element type
    converts none; a dynamic dim of the result is the operand's in all three.
    """
    if len(op.operands) != 1 or not _same_type(op.results[0], op.operands[0]):
        return False
    _replace_with_values(op, [op.operands[0]], rw)
    return True


def collapse_chain(op: ir.Operation, rw: Any) -> bool:
    """op(op(x)) -> op(x) for reshape and broadcast_to (or x when the types match).

    Row-major reshapes compose; broadcasting is transitive.  The combined op
    is checked against the catalog before it is built.
    """
    inner = _producer_named(op.operands[0], op.name)
    if inner is None or len(op.operands) > 1 or len(inner.operands) > 1:
        return False  # a reshape's sizes operand sets sizes its operand's type does not tell: it stays
    source = inner.operands[0]
    if _same_type(op.results[0], source):
        _replace_with_values(op, [source], rw)
    else:
        if not _valid(op.name, [source], {}, [op.results[0].type]):
            return False
        _replace_with_values(op, _recreate(op, source, rw).results, rw)
    _erase_if_dead(inner, rw)
    return True


def _perm(op: ir.Operation) -> list[int] | None:
    attrs = _attrs(op)
    return None if attrs is None else list(attrs["perm"])


def transpose_identity(op: ir.Operation, rw: Any) -> bool:
    """transpose(x, perm = 0..rank-1) -> x."""
    perm = _perm(op)
    if perm is None or perm != list(range(len(perm))) or not _same_type(op.results[0], op.operands[0]):
        return False
    _replace_with_values(op, [op.operands[0]], rw)
    return True


def transpose_chain(op: ir.Operation, rw: Any) -> bool:
    """transpose(transpose(x, p1), p2) -> transpose(x, p1[p2]) (or x for the identity)."""
    inner = _producer_named(op.operands[0], "graph.transpose")
    if inner is None:
        return False
    outer_perm, inner_perm = _perm(op), _perm(inner)
    if outer_perm is None or inner_perm is None or len(outer_perm) != len(inner_perm):
        return False
    # result dim i = inner dim outer_perm[i] = x dim inner_perm[outer_perm[i]]
    composed = [inner_perm[p] for p in outer_perm]
    source = inner.operands[0]
    if composed == list(range(len(composed))) and _same_type(op.results[0], source):
        _replace_with_values(op, [source], rw)
    else:
        if not _valid("graph.transpose", [source], {"perm": composed}, [op.results[0].type]):
            return False
        new = _recreate(op, source, rw, perm=ir.DenseI64ArrayAttr.get(composed))
        _replace_with_values(op, new.results, rw)
    _erase_if_dead(inner, rw)
    return True


def slice_whole(op: ir.Operation, rw: Any) -> bool:
    """slice(x) -> x when it starts at 0 everywhere and keeps x's static type.

    With start 0, a result dim equal to the operand dim d means every index
    0..d-1 is taken (a stride > 1 would give fewer unless d <= 1).
    """
    sig = sig_from_type(op.operands[0].type)
    attrs = _attrs(op)
    if sig is None or not sig.is_static or attrs is None or not _same_type(op.results[0], op.operands[0]):
        return False
    if any(s != 0 for s in attrs["start"]):
        return False
    _replace_with_values(op, [op.operands[0]], rw)
    return True


def reduce_nothing(op: ir.Operation, rw: Any) -> bool:
    """reduce_*(x, axes = []) -> x: an empty reduction is a copy of the operand."""
    attrs = _attrs(op)
    if attrs is None or list(attrs["axes"]) or not _same_type(op.results[0], op.operands[0]):
        return False
    _replace_with_values(op, [op.operands[0]], rw)
    return True


def involution(op: ir.Operation, rw: Any) -> bool:
    """f(f(x)) -> x for neg and logical_not (exact: negation flips the sign bit, MIN wraps to MIN)."""
    inner = _producer_named(op.operands[0], op.name)
    if inner is None or not _same_type(op.results[0], inner.operands[0]):
        return False
    _replace_with_values(op, [inner.operands[0]], rw)
    _erase_if_dead(inner, rw)
    return True


def idempotent(op: ir.Operation, rw: Any) -> bool:
    """f(f(x)) -> f(x) for abs, relu, sign, floor, ceil, round: f fixes every value it returns."""
    inner = _producer_named(op.operands[0], op.name)
    if inner is None or not _same_type(op.results[0], op.operands[0]) or _attrs(op) != _attrs(inner):
        return False
    _replace_with_values(op, [op.operands[0]], rw)
    return True


def same_operands(op: ir.Operation, rw: Any) -> bool:
    """g(x, x) -> x for maximum, minimum, logical_and, logical_or."""
    lhs, rhs = op.operands[0], op.operands[1]
    if lhs != rhs or not _same_type(op.results[0], lhs):
        return False
    _replace_with_values(op, [lhs], rw)
    return True


def select_known(op: ir.Operation, rw: Any) -> bool:
    """select(c, x, x) -> x; select(splat true, x, y) -> x; select(splat false, x, y) -> y.

    Only when the chosen branch already has the result type (the condition
    may broadcast it).
    """
    cond, on_true, on_false = op.operands[0], op.operands[1], op.operands[2]
    chosen = None
    if on_true == on_false:
        chosen = on_true
    else:
        known = _splat_bool(cond)
        if known is not None:
            chosen = on_true if known else on_false
    if chosen is None or not _same_type(op.results[0], chosen):
        return False
    _replace_with_values(op, [chosen], rw)
    return True


#: graph op name -> simplification rules tried in order (after constant folding).
SIMPLIFICATIONS: dict[str, tuple[Rule, ...]] = {
    "graph.reshape": (forward_same_type, collapse_chain),
    "graph.broadcast_to": (forward_same_type, collapse_chain),
    "graph.cast": (forward_same_type,),
    "graph.transpose": (transpose_identity, transpose_chain),
    "graph.slice": (slice_whole,),
    "graph.neg": (involution,),
    "graph.logical_not": (involution,),
    **{f"graph.{name}": (idempotent,) for name in ("abs", "relu", "sign", "floor", "ceil", "round")},
    **{f"graph.{name}": (same_operands,) for name in ("maximum", "minimum", "logical_and", "logical_or")},
    **{f"graph.{name}": (reduce_nothing,) for name in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min")},
    "graph.select": (select_known,),
}


def build_patterns(fold_limit: int, count: Callable[[str], None]) -> RewritePatternSet:
    """One callback per graph op name: constant folding first, then the op's simplifications."""
    fold = make_fold_constants(fold_limit, count)
    patterns = RewritePatternSet()
    for spec in all_ops():
        rules = SIMPLIFICATIONS.get(spec.full_name, ())

        def apply(op: ir.OpView, rw: Any, rules: tuple[Rule, ...] = rules) -> bool:
            # The driver reads a falsy return as success, a truthy one as "no match".
            op = op.operation
            if fold(op, rw):
                return False
            for rule in rules:
                if rule(op, rw):
                    count(SIMPLIFIED)
                    return False
            return True

        patterns.add(spec.full_name, apply)
    return patterns


@dataclass(frozen=True)
class GraphCanonicalize(GraphPass):
    name: ClassVar[str] = "graph-canonicalize"
    summary: ClassVar[str] = "Fold constants and simplify identities of graph ops"
    statistics: ClassVar[dict[str, str]] = {
        FOLDED: "Number of graph ops constant-folded",
        SIMPLIFIED: "Number of graph op identities simplified",
    }

    fold_limit: int = option(65536, "do not constant-fold ops with a result of more elements than this")

    def __post_init__(self) -> None:
        if self.fold_limit < 0:
            raise OptionError(f"option 'fold-limit' of pass '{self.name}' must be >= 0, got {self.fold_limit}")

    def run(self, module: ir.Module, context: PassContext) -> None:
        patterns = build_patterns(self.fold_limit, context.count)
        apply_patterns_and_fold_greedily(module, patterns.freeze())
