"""Operands computed by widening casts of narrower tensors, which a product can read narrow and widen in registers.

A bf16 linear layer arrives as an f32 product of operands cast up from bf16; an int8 weight-only layer (a weight
stored in int8, ``linear(x, weight.to(x.dtype)) * scales``) as one of a weight cast from int8 to bf16 and then to
f32.  Each cast is an elementwise generic of its own, which computes the wide tensor in memory on every call: 4
bytes a weight written and read again, where the product could read the 1 or 2 bytes of the narrow weight and
widen each value as it uses it.  :func:`widening` finds such a chain of casts; :func:`widen` applies it to a
value in a product's body.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from graphfuse.dialect.matching import producer
from graphfuse.dialect.types import dtype_name, holds_exactly

__all__ = ["Widening", "cast_chain", "widen", "widening"]

#: The casts a widening chain may hold: each one's result holds every value of its operand exactly.
_WIDENING_CASTS = frozenset({"arith.extf", "arith.extsi", "arith.extui", "arith.sitofp", "arith.uitofp"})


@dataclass(frozen=True)
class Widening:
    """``source`` (a narrower tensor) cast by ``casts`` ((op name, result element type), in order) gives the
    wide value."""

    source: ir.Value
    casts: tuple[tuple[str, ir.Type], ...]


def widening(value: ir.Value, wide: ir.Type | None = None) -> Widening | None:
    """The chain of widening casts computing ``value``: an all-parallel generic reading one tensor through
    identity maps whose body is a chain of :data:`_WIDENING_CASTS` from that tensor's element (else ``value``
    itself, no cast), then, when ``wide`` is given and ``value`` is a narrower float, its ``arith.extf`` to
    ``wide``; None when that makes no cast.  An integer converted to a float that holds it exactly and then
    widened (int8 -> bf16 -> f32) is one conversion to the wide type."""
    source, casts = cast_chain(value)
    element = ir.RankedTensorType(value.type).element_type
    if wide is not None and element != wide:
        if not isinstance(element, (ir.BF16Type, ir.F16Type)):
            return None
        casts = (*casts, ("arith.extf", wide))
    if not casts:
        return None
    return Widening(source, _folded(list(casts), ir.RankedTensorType(source.type).element_type))


def cast_chain(value: ir.Value) -> tuple[ir.Value, tuple[tuple[str, ir.Type], ...]]:
    """(the tensor ``value`` is cast from, the casts in order) when an all-parallel generic reading one tensor
    through identity maps computes ``value`` by a chain of :data:`_WIDENING_CASTS` from that tensor's element,
    else (value, ())."""
    generic = producer(value, "linalg.generic")
    if generic is None or len(generic.operands) != 2 or len(generic.results) != 1:
        return value, ()
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    if not all(m == ir.AffineMap.get_identity(m.n_dims) for m in maps):
        return value, ()
    body = generic.regions[0].blocks[0]
    ops = list(body.operations)
    current: ir.Value = body.arguments[0]
    casts: list[tuple[str, ir.Type]] = []
    for op in ops[:-1]:
        if op.name not in _WIDENING_CASTS or op.operands[0] != current:
            return value, ()
        current = op.results[0]
        casts.append((op.name, current.type))
    if not casts or ops[-1].operands[0] != current:
        return value, ()
    return generic.operands[0], tuple(casts)


def _folded(casts: list[tuple[str, ir.Type]], element: ir.Type) -> tuple[tuple[str, ir.Type], ...]:
    """``casts`` with an exact integer-to-float conversion followed by ``arith.extf`` made one conversion."""
    if len(casts) == 2 and casts[0][0] in ("arith.sitofp", "arith.uitofp") and casts[1][0] == "arith.extf" \
            and holds_exactly(dtype_name(element), dtype_name(casts[0][1])):
        return ((casts[0][0], casts[1][1]),)
    return tuple(casts)


def widen(value: ir.Value, casts: tuple[tuple[str, ir.Type], ...]) -> ir.Value:
    """``value`` (a scalar of a widening's source element type) cast as the widening casts it."""
    for name, result in casts:
        value = ir.Operation.create(name, results=[result], operands=[value]).results[0]
    return value
