"""Sorting ops: topk and sort, each returning the values and their positions along one axis.

Of equal values (ties), PyTorch's CPU kernels do not say which comes first: they run libstdc++'s
``std::nth_element`` + ``std::sort`` (top-k, ``k * 64 > n``), ``std::partial_sort`` (top-k, ``k * 64 <= n``)
and ``std::sort`` (sort) on (value, position) pairs, none of them stable.  The references below replay
those algorithms step by step (median-of-three quickselect and introsort, heap select, insertion sort), so
the positions of ties are PyTorch's; ``lowering/sorting.py`` builds the same steps in IR.  Checked against
``torch.topk`` and ``torch.sort`` (test_ops_sorting.py) on rows full of ties and NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import REQUIRED, AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.shape_utils import normalize_axis, require_dtype
from graphfuse.dialect.types import NUMERIC_DTYPES, TensorSig

__all__ = ["INTROSORT_THRESHOLD", "PARTIAL_SORT_RATIO", "libstdcxx_sort", "libstdcxx_topk"]

_GROUP = "sorting"

#: libstdc++'s std::sort leaves ranges of at most this many elements to its final insertion sort
INTROSORT_THRESHOLD = 16
#: PyTorch's top-k takes std::partial_sort when k * PARTIAL_SORT_RATIO <= n, else std::nth_element + std::sort
PARTIAL_SORT_RATIO = 64

#: A (value, position) pair of a row; the algorithms move pairs and compare values.
Pair = tuple[Any, int]
Before = Callable[[Pair, Pair], bool]


# --------------------------------------------------------------------------
# libstdc++'s algorithms (bits/stl_algo.h, bits/stl_heap.h) on a list of pairs, as PyTorch's kernels run them.


def _linear_insert(a: list[Pair], last: int, before: Before) -> None:
    """__unguarded_linear_insert: move a[last] left past the elements it goes before (a sentinel stops it)."""
    value = a[last]
    while before(value, a[last - 1]):
        a[last] = a[last - 1]
        last -= 1
    a[last] = value


def _insertion_sort(a: list[Pair], first: int, last: int, before: Before) -> None:
    """__insertion_sort: a value before a[first] moves to first; any other is inserted linearly (stable)."""
    for i in range(first + 1, last):
        if before(a[i], a[first]):
            value = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            _linear_insert(a, i, before)


def _partition_pivot(a: list[Pair], first: int, last: int, before: Before) -> int:
    """__unguarded_partition_pivot: the median of a[first + 1], the middle and a[last - 1] moved to first, then
    Hoare's partition of [first + 1, last) around it; returns the cut."""
    mid = first + (last - first) // 2
    x, y, z = first + 1, mid, last - 1
    if before(a[x], a[y]):
        median = y if before(a[y], a[z]) else z if before(a[x], a[z]) else x
    else:
        median = x if before(a[x], a[z]) else z if before(a[y], a[z]) else y
    a[first], a[median] = a[median], a[first]
    low, high, pivot = first + 1, last, a[first]
    while True:
        while before(a[low], pivot):
            low += 1
        high -= 1
        while before(pivot, a[high]):
            high -= 1
        if not low < high:
            return low
        a[low], a[high] = a[high], a[low]
        low += 1


def _push_heap(a: list[Pair], first: int, hole: int, top: int, value: Pair, before: Before) -> None:
    parent = (hole - 1) // 2
    while hole > top and before(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _adjust_heap(a: list[Pair], first: int, hole: int, length: int, value: Pair, before: Before) -> None:
    """__adjust_heap: sift the hole down to a leaf along the larger children, then push ``value`` up from it."""
    top = second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if before(a[first + second], a[first + second - 1]):
            second -= 1
        a[first + hole] = a[first + second]
        hole = second
    if length % 2 == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        a[first + hole] = a[first + second - 1]
        hole = second - 1
    _push_heap(a, first, hole, top, value, before)


def _make_heap(a: list[Pair], first: int, last: int, before: Before) -> None:
    length = last - first
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(a, first, parent, length, a[first + parent], before)


def _pop_heap(a: list[Pair], first: int, last: int, result: int, before: Before) -> None:
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, before)


def _heap_select(a: list[Pair], first: int, middle: int, last: int, before: Before) -> None:
    """__heap_select: a heap of [first, middle) keeping the ``middle - first`` elements that go first."""
    _make_heap(a, first, middle, before)
    for i in range(middle, last):
        if before(a[i], a[first]):
            _pop_heap(a, first, middle, i, before)


def _sort_heap(a: list[Pair], first: int, last: int, before: Before) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(a, first, last, last, before)


def _depth_limit(length: int) -> int:
    """2 * floor(log2(length)): the partitions quickselect and introsort make before they turn to heaps."""
    return 2 * (length.bit_length() - 1)


def _nth_element(a: list[Pair], first: int, nth: int, last: int, before: Before) -> None:
    """__introselect: partition until the range holding ``nth`` has at most 3 elements, then insertion sort."""
    depth = _depth_limit(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, before)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, before)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, before)


def _introsort_loop(a: list[Pair], first: int, last: int, depth: int, before: Before) -> None:
    while last - first > INTROSORT_THRESHOLD:
        if depth == 0:  # std::__partial_sort(first, last, last): heapsort
            _heap_select(a, first, last, last, before)
            _sort_heap(a, first, last, before)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, before)
        _introsort_loop(a, cut, last, depth, before)
        last = cut


def _std_sort(a: list[Pair], first: int, last: int, before: Before) -> None:
    """std::sort: introsort down to ranges of 16, then one insertion sort of the whole range (the guarded one
    on its first 16 elements and the unguarded one after them give the same moves)."""
    if last - first > 1:
        _introsort_loop(a, first, last, _depth_limit(last - first), before)
        _insertion_sort(a, first, last, before)


def _comparator(first_if_largest: bool) -> Before:
    """PyTorch's comparators: NaN goes before numbers when the largest come first, after them otherwise."""
    if first_if_largest:
        return lambda x, y: (x[0] != x[0] and y[0] == y[0]) or x[0] > y[0]
    return lambda x, y: (x[0] == x[0] and y[0] != y[0]) or x[0] < y[0]


def _stable(before: Before) -> Before:
    """``before`` with ties ordered by position: std::stable_sort's order, reached by any correct sort."""
    return lambda x, y: before(x, y) or (not before(y, x) and x[1] < y[1])


def libstdcxx_topk(row: list[Any], k: int, largest: bool, sort: bool) -> list[Pair]:
    """The first ``k`` (value, position) pairs PyTorch's CPU top-k leaves in its queue for one row."""
    a = list(zip(row, range(len(row)), strict=True))
    before = _comparator(largest)
    if k == 0:
        return []
    if k * PARTIAL_SORT_RATIO <= len(a):
        _heap_select(a, 0, k, len(a), before)
        _sort_heap(a, 0, k, before)
    else:
        _nth_element(a, 0, k - 1, len(a), before)
        if sort:
            _std_sort(a, 0, k - 1, before)  # nth_element put the k-th in place already
    return a[:k]


def libstdcxx_sort(row: list[Any], descending: bool, stable: bool) -> list[Pair]:
    """The (value, position) pairs of one row in the order PyTorch's CPU sort gives them."""
    a = list(zip(row, range(len(row)), strict=True))
    before = _comparator(descending)
    _std_sort(a, 0, len(a), _stable(before) if stable else before)
    return a


# --------------------------------------------------------------------------
# The ops.


def _rows(x: np.ndarray, axis: int) -> tuple[np.ndarray, list[list[Any]]]:
    """x with ``axis`` last, and its rows as Python lists (floats or ints) for the algorithms."""
    moved = np.moveaxis(x, axis, -1)
    rows = math.prod(moved.shape[:-1])  # not -1: an empty axis leaves it undefined
    return moved, moved.reshape(rows, moved.shape[-1]).tolist()


def _from_rows(pairs: list[list[Pair]], moved: np.ndarray, width: int, axis: int, dtype: np.dtype
               ) -> list[np.ndarray]:
    shape = (*moved.shape[:-1], width)
    values = np.array([[v for v, _ in row] for row in pairs], dtype=dtype).reshape(shape)
    positions = np.array([[p for _, p in row] for row in pairs], dtype=np.int64).reshape(shape)
    return [np.ascontiguousarray(np.moveaxis(values, -1, axis)), np.ascontiguousarray(np.moveaxis(positions, -1, axis))]


def _infer_topk(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                ) -> list[TensorSig]:
    (sig,) = inputs
    require_dtype(sig, NUMERIC_DTYPES, "operand")
    if sig.rank == 0:
        raise VerifyError(f"operand {sig} must have at least one dimension")
    axis = normalize_axis(attrs["axis"], sig.rank)
    k, size = attrs["k"], sig.shape[axis]
    if k < 0 or (size is not None and k > size):
        raise VerifyError(f"k = {k} must be in [0, {size if size is not None else '?'}], the size of axis {axis}")
    shape = (*sig.shape[:axis], k, *sig.shape[axis + 1:])
    return [TensorSig(shape, sig.dtype), TensorSig(shape, "i64")]


def _topk_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    axis = normalize_axis(attrs["axis"], x.ndim)
    moved, rows = _rows(x, axis)
    k = attrs["k"]
    pairs = [libstdcxx_topk(row, k, attrs["largest"], attrs["sorted"]) for row in rows]
    return _from_rows(pairs, moved, k, axis, x.dtype)


register_op(
    OpSpec(
        name="topk",
        group=_GROUP,
        summary="The k largest (or smallest) elements along an axis and their positions (torch.topk).",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("values"), ValueSpec("indices")),
        attrs=(
            AttrSpec("k", AttrKind.I64, default=REQUIRED, doc="how many elements each row keeps"),
            AttrSpec("axis", AttrKind.I64, default=-1, doc="the axis searched; negative counts from the end"),
            AttrSpec("largest", AttrKind.BOOL, default=True, doc="the largest (else the smallest) elements"),
            AttrSpec("sorted", AttrKind.BOOL, default=True, doc="the k elements in order (largest first)"),
        ),
        infer=_infer_topk,
        reference=_topk_reference,
        doc=(
            "`values` keeps the operand's shape with `axis` of size k; `indices` (i64) are the positions along "
            "`axis` the values come from. NaN counts as larger than every number (first when `largest`, last "
            "otherwise), as in PyTorch. Of equal values, the positions are the ones PyTorch's CPU kernel gives "
            "(libstdc++'s std::partial_sort when k * 64 <= n, else std::nth_element then std::sort of the first "
            "k - 1, replayed exactly; not the lowest position first). Unsorted (`sorted` false) leaves "
            "nth_element's order. Numeric element types; 0 <= k <= the axis' size."
        ),
        example=((TensorSig((4, 8), "f32"),), {"k": 3}),
    )
)


def _infer_sort(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                ) -> list[TensorSig]:
    (sig,) = inputs
    require_dtype(sig, NUMERIC_DTYPES, "operand")
    if sig.rank == 0:
        raise VerifyError(f"operand {sig} must have at least one dimension")
    normalize_axis(attrs["axis"], sig.rank)
    return [sig, TensorSig(sig.shape, "i64")]


def _sort_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    axis = normalize_axis(attrs["axis"], x.ndim)
    moved, rows = _rows(x, axis)
    pairs = [libstdcxx_sort(row, attrs["descending"], attrs["stable"]) for row in rows]
    return _from_rows(pairs, moved, x.shape[axis], axis, x.dtype)


register_op(
    OpSpec(
        name="sort",
        group=_GROUP,
        summary="The elements sorted along an axis and the positions they come from (torch.sort).",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("values"), ValueSpec("indices")),
        attrs=(
            AttrSpec("axis", AttrKind.I64, default=-1, doc="the axis sorted; negative counts from the end"),
            AttrSpec("descending", AttrKind.BOOL, default=False, doc="largest first"),
            AttrSpec("stable", AttrKind.BOOL, default=False, doc="equal values keep their order"),
        ),
        infer=_infer_sort,
        reference=_sort_reference,
        doc=(
            "`values` is the operand sorted along `axis`, `indices` (i64) the position each value comes from. "
            "NaN counts as larger than every number (last ascending, first descending), as in PyTorch. Equal "
            "values keep their order when `stable`; otherwise they come in the order PyTorch's CPU kernel gives "
            "(libstdc++'s std::sort, introsort with median-of-three pivots, replayed exactly). Numeric element "
            "types."
        ),
        example=((TensorSig((4, 8), "f32"),), {"descending": True}),
    )
)
