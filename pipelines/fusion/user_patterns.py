"""User-defined fusion passes: ``graphfuse.register_replacement``, TorchAir's pattern/replacement pairs.

The user writes two functions with the builder API, each taking the
:class:`~graphfuse.dialect.builder.FunctionBuilder` first and then one tensor
per example input::

    def search(b, x):
        return x * b.sigmoid(x)

    def replace(b, x):
        return b.silu(x)

    graphfuse.register_replacement(search, replace, [np.ones((4, 8), np.float32)], name="user_silu_fusion")

Registration traces ``search`` into a pattern DAG (its arguments are
wildcards, its ops must be matched by name and attributes, its constants by
value), traces ``replace`` on the example inputs, checks with the reference
interpreter that both compute the same results, and registers a
:class:`FusionPass` subclass under ``name``: it is listed, runnable as a
pipeline step, run by graph-fusion after the built-in passes, switchable by
every front end and counted in fusion_result.json like them.

At each match the replacement is traced again with the operand types found in
the IR, so a pattern traced at 4x8 also fuses a 2x3x16 instance when the
replacement builds (and gives the matched results' types) there.  The
matching rules are in docs/user-patterns.md.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

import numpy as np
from mlir import ir
from mlir.passmanager import PassManager

from graphfuse.dialect.builder import FunctionBuilder, ModuleBuilder, Tensor
from graphfuse.dialect.catalog import VerifyError, lookup_op, read_attributes
from graphfuse.dialect.constants import attr_to_array
from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import as_operation, constant_array, fused_location, op_id, users
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig, dtype_of_array, sig_from_type
from graphfuse.pipelines.fusion.base import GRAPH_FUSION, UB_FUSION, FusionPass, Pattern
from graphfuse.pipelines.fusion.norm import anchor_for, commit
from graphfuse.pipelines.registry import canonical_pass_name, lookup_pass, register_pass, unregister_pass

__all__ = ["Match", "register_replacement", "registered_replacements", "unregister_replacement"]

#: Binary ops whose operands may be swapped: users expect a + b to match b + a.
COMMUTATIVE = frozenset(
    f"graph.{name}"
    for name in ("add", "mul", "maximum", "minimum", "equal", "not_equal", "logical_and", "logical_or")
)
#: Characters that survive pipeline strings (``disable-pass=a,b``), flag lists and switch files: no
#: commas, spaces, braces or dots (a dot reads as ``stage.name`` in the switches).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
#: How many structural matches of one root are tried before giving up on finding a legal one.
_MAX_CANDIDATES = 16
#: Default comparison tolerances of the registration check, by result element type.
_TOLERANCES = {"f32": (1e-5, 1e-6), "f16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2)}

SearchFn = Callable[..., Any]


# --------------------------------------------------------------------------
# The traced search graph: context-free, so it matches IR of any context.


@dataclass(frozen=True)
class ValueRef:
    """A value of the search graph: search argument ``index``, constant ``index``, or result of node ``index``."""

    kind: str  # "arg", "const" or "node"
    index: int
    result: int = 0


@dataclass(frozen=True)
class PatternNode:
    name: str  # "graph.mul"
    attrs: dict[str, Any]  # with defaults filled in, as read_attributes gives them
    operands: tuple[ValueRef, ...]
    result_dtypes: tuple[str, ...]
    #: the result element type is part of the op's identity (graph.cast)
    dtype_is_attribute: bool

    def operand_orders(self) -> list[tuple[int, ...]]:
        identity = tuple(range(len(self.operands)))
        if self.name in COMMUTATIVE and len(self.operands) == 2 and self.operands[0] != self.operands[1]:
            return [identity, (1, 0)]
        return [identity]


@dataclass(frozen=True)
class SearchGraph:
    nodes: tuple[PatternNode, ...]  # in trace (topological) order
    constants: tuple[np.ndarray, ...]
    outputs: tuple[ValueRef, ...]  # each a node result
    input_sigs: tuple[TensorSig, ...]  # the example inputs' types
    anchor: int  # the node the rewrite driver is called on
    dtype_agnostic: bool

    @property
    def root_name(self) -> str:
        return self.nodes[self.anchor].name


@dataclass
class _Binding:
    ops: dict[int, ir.Operation] = field(default_factory=dict)
    args: dict[int, ir.Value] = field(default_factory=dict)
    constants: dict[int, ir.Value] = field(default_factory=dict)
    used: frozenset[int] = frozenset()  # op_id of the bound ops

    def copy(self) -> _Binding:
        return _Binding(dict(self.ops), dict(self.args), dict(self.constants), self.used)


@dataclass(frozen=True)
class Match:
    """One occurrence of a user pattern in the IR, as ``extra_check`` receives it.

    Valid only during the check (the ops are about to be rewritten): read what
    you need, keep nothing.
    """

    #: the pattern's (and pass's) name
    name: str
    #: the values bound to the search function's arguments, in argument order
    inputs: tuple[ir.Value, ...]
    #: the matched ops, in the search function's order (constants not included)
    ops: tuple[ir.Operation, ...]
    #: the values the replacement's results will replace, in the search function's result order
    outputs: tuple[ir.Value, ...]

    @property
    def input_sigs(self) -> tuple[TensorSig, ...]:
        """Shape and dtype of each input: ``match.input_sigs[0].shape[-1] % 8 == 0``."""
        return tuple(_sig(v) for v in self.inputs)

    def constant(self, index: int) -> np.ndarray | None:
        """The value of input ``index`` when it is an ``arith.constant``, else None."""
        return constant_array(self.inputs[index])


def _sig(value: ir.Value) -> TensorSig:
    sig = sig_from_type(value.type)
    if sig is None:
        raise VerifyError(f"value of type {value.type} is not a ranked tensor")
    return sig


# --------------------------------------------------------------------------
# Tracing


def _where(fn: Callable) -> SourceLoc | None:
    """file:line of a user function's definition, for located registration errors."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    path = inspect.getsourcefile(fn) or code.co_filename
    return SourceLoc(path, code.co_firstlineno, 1)


def _caller() -> SourceLoc | None:
    """file:line of the user's register_replacement call (the first frame outside this module)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return SourceLoc(frame.f_code.co_filename, frame.f_lineno, 1) if frame is not None else None


def _error(message: str, fn: Callable | None = None) -> GraphfuseError:
    """A registration error located at ``fn``'s definition, else at the register_replacement call."""
    where = _where(fn) if fn is not None else None
    return GraphfuseError([Diagnostic("error", message, where or _caller())])


class _TraceFailure(Exception):
    """A user function did not build for the given types; ``message`` says why."""

    def __init__(self, message: str, diagnostics: list[Diagnostic] | None = None):
        super().__init__(message)
        self.message = message
        self.diagnostics = diagnostics


def _trace(fn: Callable, sigs: Sequence[TensorSig], context: ir.Context, func_name: str) -> FunctionBuilder:
    """Call ``fn(b, *tensors)`` in a new function of ``context``; the returned builder is finished."""
    builder = FunctionBuilder(func_name, ModuleBuilder(context))
    try:
        args = [builder.arg(sig.shape, sig.dtype) for sig in sigs]
        returned = fn(builder, *args)
    except GraphfuseError as error:
        first = error.diagnostics[0] if error.diagnostics else None
        raise _TraceFailure(first.message if first else str(error), error.diagnostics) from None
    except Exception as error:  # user code: any failure means "does not build for these types"
        raise _TraceFailure(f"{type(error).__name__}: {error}") from error
    results = tuple(returned) if isinstance(returned, list | tuple) else (returned,)
    if not results:
        raise _TraceFailure("it returned nothing (expected one or more tensors)")
    for i, value in enumerate(results):
        if not isinstance(value, Tensor):
            raise _TraceFailure(f"result #{i} is {type(value).__name__}, expected a Tensor built with the builder")
        if value.builder is not builder:
            raise _TraceFailure(f"result #{i} was built by another builder")
    builder.ret(*results)
    return builder


def _body(builder: FunctionBuilder) -> tuple[list[ir.Operation], ir.Operation]:
    """The traced function's ops (without the terminator) and its func.return."""
    ops = [op.operation for op in builder.block.operations]
    return ops[:-1], ops[-1]


def _live_ops(ops: list[ir.Operation], ret: ir.Operation) -> list[ir.Operation]:
    """The ops the returned values depend on, in order (a user function may build unused ops)."""
    live: set[int] = set()
    needed = list(ret.operands)
    by_id = {op_id(op): op for op in ops}
    while needed:
        value = needed.pop()
        if isinstance(value.owner, ir.Block):
            continue
        owner = as_operation(value.owner)
        if op_id(owner) in live or op_id(owner) not in by_id:
            continue
        live.add(op_id(owner))
        needed.extend(owner.operands)
    return [op for op in ops if op_id(op) in live]


def _search_graph(builder: FunctionBuilder, name: str, search_fn: Callable, dtype_agnostic: bool) -> SearchGraph:
    """The pattern DAG of a traced search function; errors for what cannot be a pattern."""
    ops, ret = _body(builder)
    refs: dict[ir.Value, ValueRef] = {arg: ValueRef("arg", i) for i, arg in enumerate(builder.block.arguments)}
    nodes: list[PatternNode] = []
    constants: list[np.ndarray] = []
    for op in _live_ops(ops, ret):
        if op.name == "arith.constant":
            refs[op.results[0]] = ValueRef("const", len(constants))
            constants.append(attr_to_array(op.attributes["value"]))
            continue
        spec = lookup_op(op.name)
        assert spec is not None, op.name  # the builder creates graph ops and constants only
        for k, result in enumerate(op.results):
            refs[result] = ValueRef("node", len(nodes), k)
        nodes.append(
            PatternNode(
                op.name,
                read_attributes(spec, op),
                tuple(refs[v] for v in op.operands),
                tuple(_sig(r).dtype for r in op.results),
                spec.result_param == "dtype",
            )
        )
    outputs = tuple(refs[v] for v in ret.operands)
    where = f"user pattern '{name}': the search function"
    if not nodes:
        raise _error(f"{where} builds no op: a pattern needs at least one graph op", search_fn)
    for i, out in enumerate(outputs):
        if out.kind != "node":
            what = "an input" if out.kind == "arg" else "a constant"
            raise _error(f"{where} returns {what} as result #{i}: every result must be computed by an op", search_fn)
    if len(set(outputs)) != len(outputs):
        raise _error(f"{where} returns the same value twice", search_fn)
    used_args = {ref.index for node in nodes for ref in node.operands if ref.kind == "arg"}
    unused = [i for i in range(len(builder.block.arguments)) if i not in used_args]
    if unused:
        raise _error(f"{where}'s results do not depend on input #{unused[0]}: every input must be used", search_fn)
    if not _connected(nodes):
        raise _error(f"{where} builds unconnected graphs: every op must reach the others through values", search_fn)
    anchor = _anchor(nodes, outputs)
    return SearchGraph(tuple(nodes), tuple(constants), outputs, tuple(_sig(a) for a in builder.block.arguments),
                       anchor, dtype_agnostic)


def _connected(nodes: list[PatternNode]) -> bool:
    """Whether the ops form one graph, joined by values they share (results or inputs; constants do not join)."""
    parent = list(range(len(nodes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_user_of_arg: dict[int, int] = {}
    for j, node in enumerate(nodes):
        for ref in node.operands:
            other = ref.index if ref.kind == "node" else first_user_of_arg.setdefault(ref.index, j)
            if ref.kind != "const":
                parent[find(j)] = find(other)
    return len({find(j) for j in range(len(nodes))}) == 1


def _anchor(nodes: list[PatternNode], outputs: tuple[ValueRef, ...]) -> int:
    """The output-producing node that reaches the most nodes through operands (the last one on ties)."""

    def reach(j: int) -> int:
        seen, stack = set(), [j]
        while stack:
            k = stack.pop()
            if k not in seen:
                seen.add(k)
                stack.extend(r.index for r in nodes[k].operands if r.kind == "node")
        return len(seen)

    return max({out.index for out in outputs}, key=lambda j: (reach(j), j))


# --------------------------------------------------------------------------
# Matching: backtracking over producers (and users, for nodes the anchor does not reach).


class _Matcher:
    def __init__(self, graph: SearchGraph, block: ir.Block):
        self.graph = graph
        self.block = block

    def matches(self, root: ir.Operation) -> Iterator[_Binding]:
        start = self._bind(_Binding(), self.graph.anchor, root)
        if start is not None:
            yield from self._expand(start, (self.graph.anchor,))

    def _bind(self, binding: _Binding, index: int, op: ir.Operation) -> _Binding | None:
        """``binding`` plus node ``index`` -> ``op`` when the op itself fits (operands are checked later)."""
        node = self.graph.nodes[index]
        if op.name != node.name or op_id(op) in binding.used or op.block != self.block:
            return None
        if len(op.operands) != len(node.operands) or len(op.results) != len(node.result_dtypes):
            return None
        dtypes = [sig_from_type(r.type) for r in op.results]
        if any(d is None for d in dtypes):
            return None
        if not self.graph.dtype_agnostic or node.dtype_is_attribute:
            if tuple(d.dtype for d in dtypes) != node.result_dtypes:
                return None
        try:
            attrs = read_attributes(lookup_op(op.name), op)
        except VerifyError:
            return None
        if attrs != node.attrs:
            return None
        bound = binding.copy()
        bound.ops[index] = op
        bound.used = binding.used | {op_id(op)}
        return bound

    def _expand(self, binding: _Binding, pending: tuple[int, ...]) -> Iterator[_Binding]:
        if pending:
            index, rest = pending[0], pending[1:]
            op, node = binding.ops[index], self.graph.nodes[index]
            for order in node.operand_orders():
                values = [op.operands[i] for i in order]
                yield from self._operands(binding, node.operands, values, 0, rest)
            return
        for index, node in enumerate(self.graph.nodes):
            if index in binding.ops:
                continue
            value = self._bound_operand(binding, node)
            if value is None:
                continue
            seen: set[int] = set()
            for user in users(value):
                if op_id(user) in seen:
                    continue
                seen.add(op_id(user))
                bound = self._bind(binding, index, user)
                if bound is not None:
                    yield from self._expand(bound, (index,))
            return  # every complete binding binds this node to some user of ``value``
        yield binding

    def _bound_operand(self, binding: _Binding, node: PatternNode) -> ir.Value | None:
        for ref in node.operands:
            if ref.kind == "arg" and ref.index in binding.args:
                return binding.args[ref.index]
            if ref.kind == "node" and ref.index in binding.ops:
                return binding.ops[ref.index].results[ref.result]
        return None

    def _operands(
        self, binding: _Binding, refs: tuple[ValueRef, ...], values: list[ir.Value], i: int, pending: tuple[int, ...]
    ) -> Iterator[_Binding]:
        if i == len(refs):
            yield from self._expand(binding, pending)
            return
        ref, value = refs[i], values[i]
        if ref.kind == "arg":
            bound = binding.args.get(ref.index)
            if bound is not None:
                if bound == value:
                    yield from self._operands(binding, refs, values, i + 1, pending)
                return
            if not self._input_fits(ref.index, value):
                return
            extended = binding.copy()
            extended.args[ref.index] = value
            yield from self._operands(extended, refs, values, i + 1, pending)
        elif ref.kind == "const":
            if self._constant_fits(ref.index, value):
                extended = binding.copy()
                extended.constants[ref.index] = value
                yield from self._operands(extended, refs, values, i + 1, pending)
        else:
            owner = value.owner
            if isinstance(owner, ir.Block) or not isinstance(value, ir.OpResult):
                return
            owner = as_operation(owner)
            if value.result_number != ref.result:
                return
            known = binding.ops.get(ref.index)
            if known is not None:
                if op_id(known) == op_id(owner):
                    yield from self._operands(binding, refs, values, i + 1, pending)
                return
            extended = self._bind(binding, ref.index, owner)
            if extended is not None:
                yield from self._operands(extended, refs, values, i + 1, (*pending, ref.index))

    def _input_fits(self, index: int, value: ir.Value) -> bool:
        sig = sig_from_type(value.type)
        if sig is None:
            return False
        return self.graph.dtype_agnostic or sig.dtype == self.graph.input_sigs[index].dtype

    def _constant_fits(self, index: int, value: ir.Value) -> bool:
        """Constants match by value; a pattern constant whose elements are all equal matches any such splat."""
        want = self.graph.constants[index]
        got = constant_array(value)
        if got is None or got.size == 0:
            return False
        if not self.graph.dtype_agnostic and got.dtype != want.dtype:
            return False
        want64, got64 = want.astype(np.float64).reshape(-1), got.astype(np.float64).reshape(-1)
        if want64.size and np.all(want64 == want64[0]):
            return bool(np.all(got64 == want64[0]))
        return got.shape == want.shape and bool(np.array_equal(got64, want64))


# --------------------------------------------------------------------------
# The rewrite


@dataclass
class UserPattern:
    """Everything a registered pattern needs at match time."""

    name: str
    graph: SearchGraph
    replace_fn: Callable
    extra_check: Callable[[Match], bool] | None

    def rewrite(self, root: ir.Operation, rw: Any) -> bool | str:
        matcher = _Matcher(self.graph, root.block)
        first_reason: str | None = None
        for count, binding in enumerate(matcher.matches(root)):
            if count == _MAX_CANDIDATES:
                break
            match = self._match(binding)
            reason = self._illegal(binding, match)
            if reason is None:
                outcome = self._replace(binding, match, rw)
                if outcome is True:
                    return True
                reason = outcome
            first_reason = first_reason or reason
        return first_reason if first_reason is not None else False

    def _match(self, binding: _Binding) -> Match:
        graph = self.graph
        return Match(
            self.name,
            tuple(binding.args[i] for i in range(len(graph.input_sigs))),
            tuple(binding.ops[j] for j in range(len(graph.nodes))),
            tuple(binding.ops[out.index].results[out.result] for out in graph.outputs),
        )

    def _illegal(self, binding: _Binding, match: Match) -> str | None:
        """Why this structural match may not be rewritten, or None."""
        matched = {op_id(op) for op in match.ops}
        outputs = {(out.index, out.result) for out in self.graph.outputs}
        for j, op in binding.ops.items():
            for k, result in enumerate(op.results):
                if (j, k) in outputs:
                    continue
                outside = [u for u in users(result) if op_id(u) not in matched]
                if outside:
                    what = "a function result" if any(u.name == "func.return" for u in outside) else "used outside it"
                    return f"intermediate result #{k} of {op.name} (op #{j} of the pattern) is {what}"
        if self.extra_check is not None:
            try:
                accepted = self.extra_check(match)
            except Exception as error:  # user code: a failing check is an error of the pattern, not a silent skip
                raise GraphfuseError(
                    f"extra_check of user pattern '{self.name}' raised {type(error).__name__}: {error}"
                ) from error
            if not accepted:
                return "extra_check rejected the match"
        return None

    def _replace(self, binding: _Binding, match: Match, rw: Any) -> bool | str:
        sigs = [_sig(v) for v in match.inputs]
        try:
            traced = _trace(self.replace_fn, sigs, match.ops[0].context, "replacement")
        except _TraceFailure as failure:
            types = ", ".join(str(s) for s in sigs)
            return f"the replacement does not build for inputs ({types}): {failure.message}"
        ops, ret = _body(traced)
        if len(ret.operands) != len(match.outputs):
            return f"the replacement gives {len(ret.operands)} results for these inputs, not {len(match.outputs)}"
        for i, (new, old) in enumerate(zip(ret.operands, match.outputs, strict=True)):
            if new.type != old.type:
                return f"the replacement's result #{i} would be {new.type}, the matched value is {old.type}"
        last = max(match.ops, key=cmp_to_key(_block_order))
        anchor = anchor_for(last, list(match.ops), match.inputs)
        if isinstance(anchor, str):
            return anchor
        mapping = dict(zip(traced.block.arguments, match.inputs, strict=True))
        new_ops = _copy_ops(_live_ops(ops, ret), mapping, anchor, fused_location(list(match.ops)))
        values = [mapping[v] for v in ret.operands]
        plan: dict[int, dict[int, ir.Value]] = {}
        for out, value in zip(self.graph.outputs, values, strict=True):
            plan.setdefault(out.index, {})[out.result] = value
        # Consumers first: commit erases each op once nothing but the ops before it in the plan uses it.
        ordered = sorted(binding.ops.items(), key=cmp_to_key(lambda a, b: _block_order(b[1], a[1])))
        return commit(rw, [(op, plan.get(j, {})) for j, op in ordered], new_ops)


def _block_order(a: ir.Operation, b: ir.Operation) -> int:
    """Sort key comparator: ops of one block by position (no walk over the block)."""
    if op_id(a) == op_id(b):
        return 0
    return -1 if a.is_before_in_block(b) else 1


def _copy_ops(
    ops: list[ir.Operation], values: dict[ir.Value, ir.Value], anchor: ir.Operation, loc: ir.Location
) -> list[ir.Operation]:
    """Recreate the replacement's ops before ``anchor``, operands read through ``values`` (old -> new value,
    extended with each new result); returns the new ops in creation order."""
    created = []
    with ir.InsertionPoint(anchor), loc:
        for op in ops:
            attributes = dict(op.attributes.items())
            new = ir.Operation.create(
                op.name,
                results=[r.type for r in op.results],
                operands=[values[v] for v in op.operands],
                attributes=attributes,
                loc=loc,
            )
            created.append(new)
            for old, fresh in zip(op.results, new.results, strict=True):
                values[old] = fresh
    return created


# --------------------------------------------------------------------------
# Registration


_USER_PASSES: dict[str, type[FusionPass]] = {}  # canonical name -> the registered class


def _example_arrays(example_inputs: Sequence[Any], name: str) -> list[np.ndarray]:
    arrays = []
    for i, value in enumerate(example_inputs):
        array = np.asarray(value)
        if array.dtype == np.float64:
            array = array.astype(np.float32)  # as the builder's constants: the dialect's working float type
        if dtype_of_array(array) is None:
            supported = ", ".join(sorted(str(d) for d in NUMPY_DTYPES.values()))
            raise _error(f"user pattern '{name}': example input #{i} has numpy dtype {array.dtype} "
                         f"(supported: {supported})")
        arrays.append(array)
    return arrays


def _check_name(name: Any, replace: bool, context: ir.Context) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _error(f"invalid user pattern name {name!r}: use letters, digits, '_' and '-', starting with a "
                     "letter or '_' (the name is written in pipelines, flag lists and switch files)")
    key = canonical_pass_name(name)
    existing = lookup_pass(name)
    if existing is not None and key not in _USER_PASSES:
        raise _error(f"user pattern name '{name}' is taken by the graphfuse pass '{existing.name}'; "
                     "only patterns registered with register_replacement can be replaced")
    if existing is not None and not replace:
        raise _error(f"a user pattern named '{name}' is already registered; pass replace=True to replace it, "
                     "or unregister_replacement() it first")
    try:
        with context:
            PassManager.parse(f"builtin.module({name})")
    except ValueError:
        return key
    raise _error(f"user pattern name '{name}' is an upstream MLIR pass; choose another name")


def _check_numerics(
    name: str,
    search: ir.Module,
    replacement: ir.Module,
    inputs: list[np.ndarray],
    rtol: float | None,
    atol: float | None,
    replace_fn: Callable,
) -> None:
    """The replacement must compute what the search graph computes on the example inputs."""
    want = run_function(search, inputs)
    got = run_function(replacement, inputs)
    where = f"user pattern '{name}'"
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        if w.shape != g.shape or w.dtype != g.dtype:
            raise _error(f"{where}: the replacement's result #{i} is a {g.dtype} array of shape {g.shape}, "
                         f"the search function's a {w.dtype} array of shape {w.shape}", replace_fn)
        dtype = dtype_of_array(w)
        if dtype not in _TOLERANCES:
            if not np.array_equal(w, g):
                mismatched = int(np.count_nonzero(w != g))
                raise _error(f"{where}: the replacement's result #{i} differs from the search function's on the "
                             f"example inputs in {mismatched} of {w.size} elements (integer results must be equal)",
                             replace_fn)
            continue
        default_rtol, default_atol = _TOLERANCES[dtype]
        r = default_rtol if rtol is None else rtol
        a = default_atol if atol is None else atol
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        if not np.allclose(g64, w64, rtol=r, atol=a, equal_nan=True):
            finite = np.isfinite(w64) & np.isfinite(g64)
            error = float(np.max(np.abs(g64 - w64)[finite])) if finite.any() else float("nan")
            raise _error(f"{where}: the replacement's result #{i} differs from the search function's on the "
                         f"example inputs: max abs error {error:.3g} (rtol={r:g}, atol={a:g})", replace_fn)


def _summary(graph: SearchGraph, replacement: FunctionBuilder) -> str:
    def names(ops: Sequence[str]) -> str:
        return ", ".join(n.removeprefix("graph.") for n in ops) or "its inputs"

    ops, ret = _body(replacement)
    after = [op.name for op in _live_ops(ops, ret) if op.name != "arith.constant"]
    return f"user pattern: {names([n.name for n in graph.nodes])} => {names(after)}"


def register_replacement(
    search_fn: SearchFn,
    replace_fn: SearchFn,
    example_inputs: Sequence[Any],
    name: str,
    extra_check: Callable[[Match], bool] | None = None,
    *,
    replace: bool = False,
    group: str = GRAPH_FUSION,
    dtype_agnostic: bool = False,
    rtol: float | None = None,
    atol: float | None = None,
    summary: str | None = None,
) -> type[FusionPass]:
    """Register a fusion pass named ``name`` that rewrites what ``search_fn`` builds into what ``replace_fn`` builds.

    Both functions take the :class:`FunctionBuilder` and one tensor per
    example input and return a tensor or a tuple of tensors.  ``example_inputs``
    (numpy arrays) give the inputs' types for tracing and the values of the
    correctness check (reference interpreter, ``allclose`` with ``rtol``/``atol``,
    defaults by dtype; integer and bool results must be equal).  Inputs match
    any value of the example's element type (any type with ``dtype_agnostic``),
    of any shape for which the replacement builds and gives the matched
    results' types.  ``extra_check(match)`` may refuse a :class:`Match`.
    ``group`` is ``"GraphFusion"`` or ``"UBFusion"`` (its switch file section).

    Registering a name that is registered already is an error unless
    ``replace=True`` (only patterns registered here can be replaced: built-in
    passes cannot).  Returns the pass class; raises GraphfuseError with the
    reason when the pattern cannot be registered.
    """
    if group not in (GRAPH_FUSION, UB_FUSION):
        raise _error(f"user pattern '{name}': group must be '{GRAPH_FUSION}' or '{UB_FUSION}', got {group!r}")
    for what, fn in (("search_fn", search_fn), ("replace_fn", replace_fn)):
        if not callable(fn):
            raise _error(f"user pattern '{name}': {what} must be a function, got {type(fn).__name__}")
    if extra_check is not None and not callable(extra_check):
        raise _error(f"user pattern '{name}': extra_check must be a function or None")
    context = make_context()
    key = _check_name(name, replace, context)
    inputs = _example_arrays(example_inputs, name)
    sigs = [TensorSig(tuple(a.shape), dtype_of_array(a)) for a in inputs]
    ident = re.sub(r"\W", "_", name)
    traced: dict[str, FunctionBuilder] = {}
    for what, fn in (("search", search_fn), ("replacement", replace_fn)):
        try:
            traced[what] = _trace(fn, sigs, context, ident if what == "search" else f"{ident}_replacement")
        except _TraceFailure as failure:
            types = ", ".join(str(s) for s in sigs)
            message = f"user pattern '{name}': the {what} function does not build for inputs ({types}): "
            location = failure.diagnostics[0].location if failure.diagnostics else None
            raise GraphfuseError([Diagnostic("error", message + failure.message, location or _where(fn))]) from None
    graph = _search_graph(traced["search"], name, search_fn, dtype_agnostic)
    _, ret = _body(traced["replacement"])
    if len(ret.operands) != len(graph.outputs):
        raise _error(f"user pattern '{name}': the replacement returns {len(ret.operands)} values, the search "
                     f"function {len(graph.outputs)}", replace_fn)
    _check_numerics(name, traced["search"].module, traced["replacement"].module, inputs, rtol, atol, replace_fn)
    replacement_ops, _ = _body(traced["replacement"])
    for op in replacement_ops:
        if op.name == graph.root_name and next(_Matcher(graph, op.block).matches(op), None) is not None:
            raise _error(f"user pattern '{name}': the replacement contains the search pattern again, so fusing "
                         "would never end", replace_fn)

    pattern = UserPattern(name, graph, replace_fn, extra_check)
    example = str(traced["search"].func.operation) + "\n"
    cls = dataclass(frozen=True)(
        type(
            f"UserPattern_{ident}",
            (FusionPass,),
            {
                "__module__": __name__,
                "__doc__": f"User fusion pattern '{name}' (graphfuse.register_replacement).",
                "name": name,
                "summary": summary or _summary(graph, traced["replacement"]),
                "group": group,
                "origin": "user",
                "example": example,
                "patterns": (Pattern(name, graph.root_name, pattern.rewrite),),
                "user_pattern": pattern,
            },
        )
    )
    if key in _USER_PASSES:
        unregister_pass(name)
    # The registry's generation changes with it: graphfuse.compile's cache stops serving code built before.
    register_pass(cls)
    _USER_PASSES[key] = cls
    return cls


def unregister_replacement(name: str) -> None:
    """Remove the user pattern ``name``; an error when no pattern of that name was registered."""
    key = canonical_pass_name(name) if isinstance(name, str) else None
    if key not in _USER_PASSES:
        known = ", ".join(cls.name for cls in _USER_PASSES.values()) or "none"
        raise _error(f"no user pattern named {name!r} is registered (user patterns: {known})")
    if lookup_pass(name) is _USER_PASSES[key]:
        unregister_pass(name)
    del _USER_PASSES[key]


def registered_replacements() -> list[str]:
    """The names of the registered user patterns, in registration order."""
    return [cls.name for cls in _USER_PASSES.values()]

