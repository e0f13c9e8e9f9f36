"""Shared checks for op inference: broadcasting, axes, element types.

Every helper raises :class:`VerifyError` with a message that reads after the op
name (the verifier prefixes ``'graph.X' ``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from graphfuse.dialect.catalog import VerifyError
from graphfuse.dialect.types import (
    BOOL_DTYPE,
    FLOAT_DTYPES,
    NUMERIC_DTYPES,
    Dim,
    Shape,
    TensorSig,
)


def broadcast_shapes(*sigs: TensorSig) -> Shape:
    """The numpy broadcast of the operands' shapes (dynamic dims allowed)."""
    rank = max(s.rank for s in sigs)
    out: list[Dim] = []
    for i in range(rank):
        dims = [s.shape[s.rank - rank + i] for s in sigs if s.rank - rank + i >= 0]
        static = {d for d in dims if d is not None and d != 1}
        if len(static) > 1:
            names = " and ".join(str(s) for s in sigs)
            raise VerifyError(f"operands {names} are not broadcast-compatible")
        if static:
            out.append(static.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def can_broadcast_to(source: Shape, target: Shape) -> bool:
    """True when numpy.broadcast_to(source, target) is legal."""
    if len(source) > len(target):
        return False
    for s, t in zip(reversed(source), reversed(target), strict=False):
        if s is None or t is None:
            continue
        if s != 1 and s != t:
            return False
    return True


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in [0, rank), accepting numpy's negative axes."""
    if not -rank <= axis < rank:
        raise VerifyError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes: Iterable[int], rank: int, what: str = "axes") -> list[int]:
    """Sorted, normalized, duplicate-free axes."""
    out = [normalize_axis(a, rank, what) for a in axes]
    if len(set(out)) != len(out):
        raise VerifyError(f"{what} {list(axes)} contain a duplicate axis")
    return sorted(out)


def same_dtype(sigs: Sequence[TensorSig], what: str = "operands") -> str:
    """The common element type of ``sigs``; mixed types are an error (no implicit promotion)."""
    dtypes = {s.dtype for s in sigs}
    if len(dtypes) != 1:
        names = ", ".join(str(s) for s in sigs)
        raise VerifyError(f"{what} {names} must have the same element type")
    return sigs[0].dtype


def require_dtype(sig: TensorSig, allowed: Iterable[str], what: str) -> None:
    allowed = frozenset(allowed)
    if sig.dtype not in allowed:
        if allowed == FLOAT_DTYPES:
            kind = "a floating-point element type (f32, f16, bf16)"
        elif allowed == NUMERIC_DTYPES:
            kind = "a numeric element type (not i1)"
        elif allowed == {BOOL_DTYPE}:
            kind = "element type i1"
        else:
            kind = "element type " + " or ".join(sorted(allowed))
        raise VerifyError(f"{what} {sig} must have {kind}")


def require_rank(sig: TensorSig, ranks: int | Iterable[int], what: str) -> None:
    allowed = {ranks} if isinstance(ranks, int) else set(ranks)
    if sig.rank not in allowed:
        expected = " or ".join(str(r) for r in sorted(allowed))
        raise VerifyError(f"{what} {sig} must have rank {expected}")


def dims_equal(a: Dim, b: Dim) -> bool:
    """Equal, or unknown (a dynamic dimension matches anything)."""
    return a is None or b is None or a == b


def require_declared(declared: list[TensorSig] | None, count: int = 1) -> list[TensorSig]:
    """The declared result types of an op whose results cannot be inferred."""
    if declared is None or len(declared) != count:
        raise VerifyError(f"needs its {count} result type(s) given explicitly")
    return declared




def reshape_units(source: Shape, result: Shape) -> list[tuple[list[int], list[int]]] | None:
    """A reshape whose result has several dynamic dims, as units of (operand dims, result dims): each dynamic
    result dim is one dynamic operand dim, and the static dims between two of them (or before the first, after
    the last) are reshaped among themselves, one element count on both sides (``[b, s, h * d] -> [b, s, h, d]``,
    ``[b, kv, s, d] -> [b, kv, 1, s, d]``).  None when the shapes do not pair up so.

    Both shapes are read in order: a run of static result dims takes the static operand dims up to the next
    dynamic one, which must give the same element count, and the dynamic result dim after the run that
    dynamic operand dim.  A unit with dims on one side only (static dims of count 1) joins the next unit with
    a dynamic dim (the one before it, at the end).
    """
    if sum(d is None for d in source) != sum(d is None for d in result):
        return None
    units: list[tuple[list[int], list[int]]] = []
    position = 0
    run: list[int] = []
    for j, d in enumerate([*result, None]):
        if d is not None:
            run.append(j)
            continue
        taken: list[int] = []
        while position < len(source) and source[position] is not None:
            taken.append(position)
            position += 1
        if math.prod(source[k] for k in taken) != math.prod(result[k] for k in run):  # type: ignore[misc]
            return None
        units.append((taken, run))
        run = []
        if j == len(result):
            break
        units.append(([position], [j]))  # the count of dynamic dims matches: source[position] is dynamic
        position += 1
    merged: list[tuple[list[int], list[int]]] = []
    pending: tuple[list[int], list[int]] = ([], [])
    for taken, dims in units:
        if taken and dims:
            merged.append((pending[0] + taken, pending[1] + dims))
            pending = ([], [])
        else:
            pending = (pending[0] + taken, pending[1] + dims)
    if pending != ([], []):
        merged[-1] = (merged[-1][0] + pending[0], merged[-1][1] + pending[1])
    return merged


def paired_sizes(source: Shape, sizes: Sequence[int], result: Shape) -> tuple[int, ...]:
    """The sizes of a reshape's result with several dynamic dims (:func:`reshape_units` of the declared types
    ``source`` and ``result``) for an operand of sizes ``sizes``: each dynamic result dim its operand dim's."""
    units = reshape_units(source, result)
    assert units is not None, (source, result)
    out = list(result)
    for taken, dims in units:
        for j in dims:
            if out[j] is None:
                out[j] = sizes[next(k for k in taken if source[k] is None)]
    return tuple(out)  # type: ignore[arg-type]


def sized_at_call(op_name: str, declared_operands: Sequence[Shape], sizes: Sequence[Sequence[int]],
                  declared: TensorSig) -> TensorSig:
    """The declared result of a reshape or broadcast_to with the dynamic dims that its operands' sizes at a call
    give and the catalog's inference cannot tell (it sees the sizes, not which of them were dynamic).

    ``declared_operands`` are the operands' declared shapes, ``sizes`` their sizes at the call. A reshape's
    dynamic dims take the sizes of its ``sizes`` operand's dynamic dims, or without one, when it has several,
    those of their paired operand dims (:func:`paired_sizes`); broadcast_to's take the operand's, 1 included
    (the verifier rejects only an operand dim declared 1).
    """
    shape = declared.shape
    if op_name == "graph.reshape" and len(sizes) == 2:
        given = declared_operands[1]
        return declared.with_shape(tuple(sizes[1][i] if given[i] is None else d for i, d in enumerate(shape)))
    if op_name == "graph.reshape" and shape.count(None) > 1:
        return declared.with_shape(paired_sizes(declared_operands[0], sizes[0], shape))
    if op_name == "graph.broadcast_to" and None in shape:
        offset = declared.rank - len(sizes[0])
        return declared.with_shape(tuple(sizes[0][i - offset] if d is None else d for i, d in enumerate(shape)))
    return declared
