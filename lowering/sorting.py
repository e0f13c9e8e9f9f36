"""graph-to-linalg for ``graph.topk`` and ``graph.sort``: PyTorch's CPU algorithms, step by step, on each row.

PyTorch's kernels run libstdc++'s ``std::partial_sort``, ``std::nth_element`` and ``std::sort`` on
(value, position) pairs; none is stable, so which of several equal values comes first is whatever those
algorithms leave.  To give the same positions, the lowering builds the very steps the op catalog's
references replay (``dialect/ops/sorting.py``, one function here per function there): median-of-three
partitions, heap select and heapsort, insertion sort.

Each row (every position of the other dims, an ``scf.for`` nest) gets a permutation ``perm`` (a
``tensor<n x index>`` of positions, 0..n-1) that the algorithm reorders with ``tensor.extract`` /
``tensor.insert`` inside ``scf.while`` / ``scf.for`` / ``scf.if``; the comparator reads the operand at the
positions it compares (f16/bf16 widened to f32, which orders them alike).  Then the first k (topk) or n
(sort) positions and the values at them are written into the two results.  Bufferization makes every
insert an in-place store.

The libstdc++ loops that rely on a sentinel to stop (the unguarded partition and insertion) also test a
bound here: the bound never changes a result, it keeps every read inside the row.  Recursion (introsort's
right halves) becomes a stack of (first, last, depth) ranges; the ranges are disjoint, so the order they
are sorted in does not matter.  Sort's axis may be dynamic (the introsort's depth limit is then computed
at run time); topk's must be static (its size and k pick the algorithm).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from graphfuse.dialect.catalog import lookup_op, read_attributes
from graphfuse.dialect.ops.sorting import INTROSORT_THRESHOLD, PARTIAL_SORT_RATIO
from graphfuse.lowering.common import PARALLEL, build_generic, is_bool, is_float, is_int, register_lowering, widen

__all__ = ["lower_sorting"]

Size = int | ir.Value
State = list[ir.Value]
#: ``before(p, q)``: whether the element at position ``p`` of the row goes before the one at ``q`` (an i1)
Before = Callable[[ir.Value, ir.Value], ir.Value]


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _add(a: ir.Value, b: int | ir.Value) -> ir.Value:
    return arith.addi(a, _index(b) if isinstance(b, int) else b)


def _sub(a: ir.Value, b: int | ir.Value) -> ir.Value:
    return arith.subi(a, _index(b) if isinstance(b, int) else b)


def _half(a: ir.Value) -> ir.Value:
    """a / 2 truncated toward zero, as C's integer division (-1 / 2 is 0)."""
    return arith.divsi(a, _index(2))


def _cmp(predicate: arith.CmpIPredicate, a: ir.Value, b: int | ir.Value) -> ir.Value:
    return arith.cmpi(predicate, a, _index(b) if isinstance(b, int) else b)


_LT, _LE, _GT, _GE, _EQ = (arith.CmpIPredicate.slt, arith.CmpIPredicate.sle, arith.CmpIPredicate.sgt,
                           arith.CmpIPredicate.sge, arith.CmpIPredicate.eq)


def _flag(value: bool) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(1), int(value))


def _not(flag: ir.Value) -> ir.Value:
    return arith.xori(flag, _flag(True))


# --------------------------------------------------------------------------
# Structured control flow threading a list of values (call under an insertion point and a location).


def _while(state: State, keep_going: Callable[[State], ir.Value], step: Callable[[State], State]) -> State:
    """``while keep_going(state): state = step(state)``."""
    types = [v.type for v in state]
    loop = scf.WhileOp(types, state)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        scf.ConditionOp(keep_going(list(before.arguments)), list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        scf.YieldOp(step(list(after.arguments)))
    return list(loop.results)


def _for(lower: Size, upper: Size, state: State, step: Callable[[ir.Value, State], State]) -> State:
    """``for i in range(lower, upper): state = step(i, state)`` (no iteration when upper <= lower)."""
    loop = scf.ForOp(lower if isinstance(lower, ir.Value) else _index(lower),
                     upper if isinstance(upper, ir.Value) else _index(upper), _index(1), state)
    with ir.InsertionPoint(loop.body):
        scf.YieldOp(step(loop.induction_variable, list(loop.inner_iter_args)))
    return list(loop.results)


def _if(condition: ir.Value, state: State, then: Callable[[State], State],
        otherwise: Callable[[State], State] | None = None) -> State:
    """``state = then(state) if condition else otherwise(state)`` (``otherwise`` keeps the state)."""
    op = scf.IfOp(condition, [v.type for v in state], has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.YieldOp(then(state))
    with ir.InsertionPoint(op.else_block):
        scf.YieldOp(otherwise(state) if otherwise is not None else state)
    return list(op.results)


# --------------------------------------------------------------------------
# libstdc++'s algorithms on a permutation (the references' functions of the same names).


class _RowAlgorithms:
    """The algorithms over ``perm`` (a ``tensor<n x i64>`` of positions); each takes and returns the permutation."""

    def __init__(self, before: Before):
        self.before = before

    @staticmethod
    def get(perm: ir.Value, i: ir.Value) -> ir.Value:
        return _load(perm, [i])

    @staticmethod
    def put(perm: ir.Value, i: ir.Value, position: ir.Value) -> ir.Value:
        return _store(position, perm, [i])

    def swap(self, perm: ir.Value, i: ir.Value, j: ir.Value) -> ir.Value:
        a, b = self.get(perm, i), self.get(perm, j)
        return self.put(self.put(perm, i, b), j, a)

    def linear_insert(self, perm: ir.Value, last: ir.Value, guard: ir.Value) -> ir.Value:
        """Move perm[last] left past the elements it goes before, never below ``guard``."""
        value = self.get(perm, last)

        def keep_going(s: State) -> ir.Value:
            perm, hole = s
            previous = arith.maxsi(_sub(hole, 1), guard)  # a valid read even where the bound stops the loop
            return arith.andi(_cmp(_GT, hole, guard), self.before(value, self.get(perm, previous)))

        def step(s: State) -> State:
            perm, hole = s
            previous = _sub(hole, 1)
            return [self.put(perm, hole, self.get(perm, previous)), previous]

        perm, hole = _while([perm, last], keep_going, step)
        return self.put(perm, hole, value)

    def insertion_sort(self, perm: ir.Value, first: ir.Value, last: ir.Value) -> ir.Value:
        """Insert each element after ``first`` into the sorted run before it: libstdc++'s move of an element
        that goes before perm[first] straight to ``first`` ends where the guarded insertion ends."""
        return _for(_add(first, 1), last, [perm], lambda i, s: [self.linear_insert(s[0], i, first)])[0]

    def partition_pivot(self, perm: ir.Value, first: ir.Value, last: ir.Value) -> tuple[ir.Value, ir.Value]:
        """The median of perm[first + 1], the middle and perm[last - 1] moved to ``first``, then Hoare's partition
        of [first + 1, last) around it: (perm, cut)."""
        x, y, z = _add(first, 1), _add(first, _half(_sub(last, first))), _sub(last, 1)
        px, py, pz = self.get(perm, x), self.get(perm, y), self.get(perm, z)
        xy, yz, xz = self.before(px, py), self.before(py, pz), self.before(px, pz)
        median = arith.select(xy, arith.select(yz, y, arith.select(xz, z, x)),
                              arith.select(xz, x, arith.select(yz, z, y)))
        perm = self.swap(perm, first, median)
        pivot = self.get(perm, first)
        final = _sub(last, 1)

        def scan(s: State) -> State:
            perm, low, high, _ = s
            low = _while([low], lambda t: arith.andi(_cmp(_LT, t[0], final),
                                                      self.before(self.get(perm, t[0]), pivot)),
                         lambda t: [_add(t[0], 1)])[0]
            high = _while([_sub(high, 1)], lambda t: arith.andi(_cmp(_GT, t[0], first),
                                                                 self.before(pivot, self.get(perm, t[0]))),
                          lambda t: [_sub(t[0], 1)])[0]
            crossed = _cmp(_GE, low, high)
            # the swap of perm[low] and perm[high] unless they crossed (then each is written back)
            a, b = self.get(perm, low), self.get(perm, high)
            perm = self.put(self.put(perm, low, arith.select(crossed, a, b)), high, arith.select(crossed, b, a))
            return [perm, arith.select(crossed, low, _add(low, 1)), high, crossed]

        perm, cut, _, _ = _while([perm, _add(first, 1), last, _flag(False)], lambda s: _not(s[3]), scan)
        return perm, cut

    def push_heap(self, perm: ir.Value, first: ir.Value, hole: ir.Value, top: ir.Value, value: ir.Value
                  ) -> ir.Value:
        def keep_going(s: State) -> ir.Value:
            perm, hole = s
            parent = _half(_sub(hole, 1))
            return arith.andi(_cmp(_GT, hole, top), self.before(self.get(perm, _add(first, parent)), value))

        def step(s: State) -> State:
            perm, hole = s
            parent = _half(_sub(hole, 1))
            return [self.put(perm, _add(first, hole), self.get(perm, _add(first, parent))), parent]

        perm, hole = _while([perm, hole], keep_going, step)
        return self.put(perm, _add(first, hole), value)

    def adjust_heap(self, perm: ir.Value, first: ir.Value, hole: ir.Value, length: ir.Value, value: ir.Value
                    ) -> ir.Value:
        """Sift the hole down to a leaf along the children that go first, then push ``value`` up from it."""
        top = hole
        inner = _half(_sub(length, 1))

        def step(s: State) -> State:
            perm, hole, second = s
            right = arith.muli(_add(second, 1), _index(2))
            left = _sub(right, 1)
            child = arith.select(self.before(self.get(perm, _add(first, right)), self.get(perm, _add(first, left))),
                                 left, right)
            return [self.put(perm, _add(first, hole), self.get(perm, _add(first, child))), child, child]

        perm, hole, second = _while([perm, hole, hole], lambda s: _cmp(_LT, s[2], inner), step)
        # an even length leaves one last node with a left child only
        even = _cmp(_EQ, arith.andi(length, _index(1)), 0)
        lone = arith.andi(even, _cmp(_EQ, second, _half(_sub(length, 2))))
        child = _sub(arith.muli(_add(second, 1), _index(2)), 1)
        source = arith.select(lone, child, hole)  # the hole itself (a no-op write) when there is no lone child
        perm = self.put(perm, _add(first, hole), self.get(perm, _add(first, source)))
        return self.push_heap(perm, first, arith.select(lone, child, hole), top, value)

    def make_heap(self, perm: ir.Value, first: ir.Value, last: ir.Value) -> ir.Value:
        length = _sub(last, first)
        start = _half(_sub(length, 2))
        count = arith.select(_cmp(_GE, length, 2), _add(start, 1), _index(0))

        def step(i: ir.Value, s: State) -> State:
            parent = _sub(start, i)
            return [self.adjust_heap(s[0], first, parent, length, self.get(s[0], _add(first, parent)))]

        return _for(0, count, [perm], step)[0]

    def pop_heap(self, perm: ir.Value, first: ir.Value, last: ir.Value, result: ir.Value) -> ir.Value:
        value = self.get(perm, result)
        perm = self.put(perm, result, self.get(perm, first))
        return self.adjust_heap(perm, first, _index(0), _sub(last, first), value)

    def heap_select(self, perm: ir.Value, first: ir.Value, middle: ir.Value, last: ir.Value) -> ir.Value:
        perm = self.make_heap(perm, first, middle)

        def step(i: ir.Value, s: State) -> State:
            goes_first = self.before(self.get(s[0], i), self.get(s[0], first))
            return _if(goes_first, s, lambda t: [self.pop_heap(t[0], first, middle, i)])

        return _for(middle, last, [perm], step)[0]

    def sort_heap(self, perm: ir.Value, first: ir.Value, last: ir.Value) -> ir.Value:
        count = arith.maxsi(_sub(_sub(last, first), 1), _index(0))

        def step(j: ir.Value, s: State) -> State:
            end = _sub(_sub(last, 1), j)
            return [self.pop_heap(s[0], first, end, end)]

        return _for(0, count, [perm], step)[0]

    def nth_element(self, perm: ir.Value, first: int, nth: int, last: int) -> ir.Value:
        """Quickselect until the range holding ``nth`` has at most 3 elements (a heap select once the depth
        runs out), then an insertion sort of that range."""
        nth_at = _index(nth)

        def heap_case(s: State) -> State:
            perm, low, high, depth, _ = s
            perm = self.heap_select(perm, low, _add(nth_at, 1), high)
            return [self.swap(perm, low, nth_at), low, high, depth, _flag(True)]

        def partition_case(s: State) -> State:
            perm, low, high, depth, done = s
            perm, cut = self.partition_pivot(perm, low, high)
            left = _cmp(_LE, cut, nth_at)
            return [perm, arith.select(left, cut, low), arith.select(left, high, cut), _sub(depth, 1), done]

        state = [perm, _index(first), _index(last), _index(_depth_limit(last - first)), _flag(False)]
        state = _while(state, lambda s: arith.andi(_not(s[4]), _cmp(_GT, _sub(s[2], s[1]), 3)),
                       lambda s: _if(_cmp(_EQ, s[3], 0), s, heap_case, partition_case))
        return _if(state[4], [state[0]], lambda s: s,
                   lambda s: [self.insertion_sort(s[0], state[1], state[2])])[0]

    def sort(self, perm: ir.Value, first: int, last: Size) -> ir.Value:
        """std::sort: introsort of the ranges longer than 16 (heapsort once the depth runs out), then one
        insertion sort of the whole range. A ``last`` known only at run time takes the introsort's loop, which
        does nothing for a range of at most 16."""
        if not isinstance(last, int) or last - first > INTROSORT_THRESHOLD:
            perm = self._introsort(perm, first, last)
        return self.insertion_sort(perm, _index(first), last if isinstance(last, ir.Value) else _index(last))

    def _introsort(self, perm: ir.Value, first: int, last: Size) -> ir.Value:
        if isinstance(last, int):
            depth: Size = _depth_limit(last - first)
            stack_rows: Size = depth + 2
        else:
            depth = _runtime_depth_limit(_sub(last, first))
            stack_rows = _add(depth, 2)
        # pending ranges have strictly falling depths from the bottom of the stack up: at most depth + 1
        stack = tensor.empty([stack_rows, 3], ir.IntegerType.get_signless(64))
        stack = _push(stack, _index(0), [_index(first), last if isinstance(last, ir.Value) else _index(last),
                                         depth if isinstance(depth, ir.Value) else _index(depth)])

        def heapsort(s: State) -> State:
            perm, stack, top, low, high, depth, _ = s
            perm = self.sort_heap(self.heap_select(perm, low, high, high), low, high)
            return [perm, stack, top, low, high, depth, _flag(True)]

        def partition(s: State) -> State:
            perm, stack, top, low, high, depth, done = s
            depth = _sub(depth, 1)
            perm, cut = self.partition_pivot(perm, low, high)
            stack = _push(stack, top, [cut, high, depth])  # sorted later: the right part
            return [perm, stack, _add(top, 1), low, cut, depth, done]

        def one_range(s: State) -> State:
            perm, stack, top = s
            top = _sub(top, 1)
            low, high, depth = (_load(stack, [top, _index(k)]) for k in range(3))
            state = _while([perm, stack, top, low, high, depth, _flag(False)],
                           lambda t: arith.andi(_not(t[6]), _cmp(_GT, _sub(t[4], t[3]), INTROSORT_THRESHOLD)),
                           lambda t: _if(_cmp(_EQ, t[5], 0), t, heapsort, partition))
            return state[:3]

        return _while([perm, stack, _index(1)], lambda s: _cmp(_GT, s[2], 0), one_range)[0]


def _push(stack: ir.Value, top: ir.Value, entry: Sequence[ir.Value]) -> ir.Value:
    for k, value in enumerate(entry):
        stack = _store(value, stack, [top, _index(k)])
    return stack


def _load(buffer: ir.Value, indices: list[ir.Value]) -> ir.Value:
    """An index held in an i64 tensor (the runtime's buffers have no ``index`` element type)."""
    return arith.index_cast(ir.IndexType.get(), tensor.extract(buffer, indices))


def _store(value: ir.Value, buffer: ir.Value, indices: list[ir.Value]) -> ir.Value:
    return tensor.insert(arith.index_cast(ir.IntegerType.get_signless(64), value), buffer, indices)


def _depth_limit(length: int) -> int:
    return 2 * (length.bit_length() - 1) if length > 0 else 0


def _runtime_depth_limit(length: ir.Value) -> ir.Value:
    """:func:`_depth_limit` of a length known at run time: 2 for each halving down to 1 (0 for 0 and 1)."""
    return _while([length, _index(0)], lambda s: _cmp(_GT, s[0], 1),
                  lambda s: [_half(s[0]), _add(s[1], 2)])[1]


# --------------------------------------------------------------------------
# The ops.


def _comparator(element: ir.Type, largest_first: bool) -> Callable[[ir.Value, ir.Value], ir.Value]:
    """PyTorch's comparator on two values: NaN before numbers when the largest go first, after them else."""
    if is_float(element):
        def before(a: ir.Value, b: ir.Value) -> ir.Value:
            a, b = widen(a), widen(b)
            nan_a, nan_b = (arith.cmpf(arith.CmpFPredicate.UNO, v, v) for v in (a, b))
            order = arith.cmpf(arith.CmpFPredicate.OGT if largest_first else arith.CmpFPredicate.OLT, a, b)
            nan_first = arith.andi(nan_a, _not(nan_b)) if largest_first else arith.andi(_not(nan_a), nan_b)
            return arith.ori(nan_first, order)

        return before
    predicate = arith.CmpIPredicate.sgt if largest_first else arith.CmpIPredicate.slt
    return lambda a, b: arith.cmpi(predicate, a, b)


def _ties_by_position(before: Before) -> Before:
    """``before`` with equal values ordered by position: the stable order, which any correct sort reaches."""

    def stable(p: ir.Value, q: ir.Value) -> ir.Value:
        tie = arith.andi(_not(before(q, p)), arith.cmpi(arith.CmpIPredicate.slt, p, q))
        return arith.ori(before(p, q), tie)

    return stable


def _identity_permutation(length: Size) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    static = length if isinstance(length, int) else ir.ShapedType.get_dynamic_size()
    return build_generic([ir.RankedTensorType.get([static], i64)], [], [tensor.empty([length], i64)],
                         [ir.AffineMap.get_identity(1)], [PARALLEL],
                         lambda args: [arith.index_cast(i64, linalg.IndexOp(0).result)]).results[0]


def _dim(v: ir.Value, i: int) -> Size:
    t = ir.RankedTensorType(v.type)
    return t.get_dim_size(i) if not t.is_dynamic_dim(i) else tensor.dim(v, _index(i))


def _nest(sizes: Sequence[Size], state: State, body: Callable[[list[ir.Value], State], State]) -> State:
    """``for i0 in range(sizes[0]): for i1 ...: state = body([i0, i1, ...], state)``."""
    if not sizes:
        return body([], state)
    return _for(0, sizes[0], state,
                lambda i, s: _nest(sizes[1:], s, lambda rest, t: body([i, *rest], t)))


@register_lowering("topk", "sort")
def lower_sorting(op: ir.Operation) -> bool:
    """Per row: the identity permutation reordered by PyTorch's algorithm, then its first k (or n) positions
    and the operand's values at them written into the results."""
    x = op.operands[0]
    if not isinstance(x.type, ir.RankedTensorType):
        return False
    xt = ir.RankedTensorType(x.type)
    et = xt.element_type
    if xt.rank == 0 or not (is_float(et) or (is_int(et) and not is_bool(et))):
        return False
    spec = lookup_op(op.name)
    assert spec is not None
    attrs: dict[str, Any] = read_attributes(spec, op)
    axis = attrs["axis"] % xt.rank
    is_topk = op.name == "graph.topk"
    if is_topk and xt.is_dynamic_dim(axis):
        return False  # k against the length picks topk's algorithm
    largest_first = attrs["largest"] if is_topk else attrs["descending"]
    i64 = ir.IntegerType.get_signless(64)
    with op.location, ir.InsertionPoint(op):
        sizes = [_dim(x, d) for d in range(xt.rank)]
        length = sizes[axis]
        width = attrs["k"] if is_topk else length
        out_sizes = [width if d == axis else s for d, s in enumerate(sizes)]
        outer = [s for d, s in enumerate(sizes) if d != axis]

        def row(ivs: list[ir.Value], state: State) -> State:
            def at(position: ir.Value) -> list[ir.Value]:
                return [*ivs[:axis], position, *ivs[axis:]]

            compare = _comparator(et, largest_first)

            def by_value(p: ir.Value, q: ir.Value) -> ir.Value:
                return compare(tensor.extract(x, at(p)), tensor.extract(x, at(q)))

            stable = not is_topk and attrs["stable"]
            algorithms = _RowAlgorithms(_ties_by_position(by_value) if stable else by_value)
            perm = _identity_permutation(length)
            if is_topk and width == 0:
                return state
            if not is_topk:
                perm = algorithms.sort(perm, 0, length)
            elif width * PARTIAL_SORT_RATIO <= length:
                perm = algorithms.heap_select(perm, _index(0), _index(width), _index(length))
                perm = algorithms.sort_heap(perm, _index(0), _index(width))
            else:
                perm = algorithms.nth_element(perm, 0, width - 1, length)
                if attrs["sorted"]:
                    perm = algorithms.sort(perm, 0, width - 1)

            def write(j: ir.Value, s: State) -> State:
                values, indices = s
                position = tensor.extract(perm, [j])
                values = tensor.insert(tensor.extract(x, at(arith.index_cast(ir.IndexType.get(), position))), values,
                                       at(j))
                indices = tensor.insert(position, indices, at(j))
                return [values, indices]

            return _for(0, width, state, write)

        results = _nest(outer, [tensor.empty(out_sizes, et), tensor.empty(out_sizes, i64)], row)
        for old, new in zip(op.results, results, strict=True):
            old.replace_all_uses_with(new if new.type == old.type else tensor.cast(old.type, new))
        op.erase()
        return True
