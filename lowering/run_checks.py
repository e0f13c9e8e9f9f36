"""Run-time checks in compiled code: an integer division by zero and an index out of range raise, as eager does.

The checked operands (the errors are :mod:`graphfuse.dialect.run_checks`'): the divisor of an integer ``div``,
``mod``, ``floor_div`` and ``floor_mod``, and the indices of ``gather``, ``gather_elements`` and
``scatter_update``.  graph-to-linalg with its option ``checks`` (the CPU compile pipeline's; off by default in the
pass, and on the emulated NPU) calls :meth:`CheckEmitter.before` on each graph op before lowering it:

- a constant operand is checked while compiling, and nothing is emitted when it passes (``x // 2``, a gather at
  constant positions);
- otherwise the op is preceded by a call of a private function ``@graphfuse_check_<n>`` with the operand: one
  ``linalg.generic`` reducing it to "does any element fail" (an ``ori`` of comparisons, which LLVM vectorizes),
  then an ``scf.if`` that stores the site's code into the *status word* ``memref.global @graphfuse_status`` unless
  an earlier check stored one (eager raises at the first failure).

The op's own lowering is unchanged and stays safe (x / 0 computes 0, an index is clamped into the axis): the check
only reports.  Float division is never checked (IEEE defines x / 0).  Being a call, the check keeps out of the
kernel passes' way (tile-kernel-rows and parallelize-kernels see no reduction in an elementwise kernel);
``inline`` brings it into the entry.  Its cost is one more read of the divisor or the indices, usually a scalar,
a constant or small beside the data gathered, and an elementwise producer of the checked operand now has two
users, so upstream elementwise fusion leaves it a loop nest of its own.

The stored code is ``site << 8 | status code`` (:data:`~graphfuse.dialect.run_checks.CHECK_STATUS`), and the
store carries the site (``graphfuse.check``: status, op, location).  After bufferization :func:`bind_status_word`
makes the status word one more argument of the entry (a workspace buffer outside the arena: it must outlive the
call) and returns the sites; the JIT (``CompiledFunction``) and the C entry point of graphfuse-compile clear it
before each call and read it after, and :func:`failed_check` makes the error of a non-zero word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, linalg, memref, scf, tensor

from graphfuse.dialect.diagnostics import GraphfuseError, SourceLoc, source_loc
from graphfuse.dialect.matching import constant_array, nested_ops
from graphfuse.dialect.run_checks import (
    CHECK_ERRORS,
    CHECK_STATUS,
    IndexOutOfRangeError,
    IntegerDivisionByZeroError,
    RunCheckError,
    check_failed,
)
from graphfuse.lowering.common import REDUCTION, build_generic, const, is_bool, is_int

__all__ = ["STATUS_SYMBOL", "CheckEmitter", "CheckSite", "bind_status_word", "failed_check", "site_attribute",
           "site_of"]

#: The status word's global until the runtime makes it an argument.
STATUS_SYMBOL = "graphfuse_status"
#: The attribute of the store that records a failure: the site it reports.
SITE_ATTRIBUTE = "graphfuse.check"
#: Check functions are named this and a number, the site's.
FUNCTION_PREFIX = "graphfuse_check_"
#: Bits of the status word below the site number: the status code.
SITE_SHIFT = 8

_DIVISIONS = frozenset({"graph.div", "graph.mod", "graph.floor_div", "graph.floor_mod"})
_INDEXING = frozenset({"graph.gather", "graph.gather_elements", "graph.scatter_update"})


@dataclass(frozen=True)
class CheckSite:
    """One check of the compiled code: what it reports and where the graph op is."""

    number: int
    #: a status name of CHECK_STATUS
    status: str
    op: str
    location: SourceLoc | None
    detail: str = ""

    def error(self) -> RunCheckError:
        """The error of this site failing."""
        return check_failed(CHECK_ERRORS[self.status], self.op, self.location, self.detail)

    def as_json(self, display_name: str | None = None) -> dict[str, Any]:
        """The site for a library's metadata; a location in the parser's buffer "-" is written as ``display_name``."""
        where = self.location
        if where is not None and where.file == "-" and display_name is not None:
            where = SourceLoc(display_name, where.line, where.col)
        return {"site": self.number, "status": self.status, "op": self.op, "detail": self.detail,
                **({"file": where.file, "line": where.line, "col": where.col} if where is not None else {})}

    @staticmethod
    def from_json(described: dict[str, Any]) -> CheckSite:
        where = (SourceLoc(str(described["file"]), int(described["line"]), int(described["col"]))
                 if "file" in described else None)
        return CheckSite(int(described["site"]), str(described["status"]), str(described["op"]), where,
                         str(described.get("detail", "")))


def failed_check(word: int, sites: tuple[CheckSite, ...]) -> RunCheckError:
    """The error a non-zero status word reports (the site's; a word of no known site still has its status)."""
    number, code = word >> SITE_SHIFT, word & ((1 << SITE_SHIFT) - 1)
    for site in sites:
        if site.number == number:
            return site.error()
    status = next((name for name, value in CHECK_STATUS.items() if value == code), None)
    if status is None:
        raise GraphfuseError(f"compiled code reported the unknown status word {word:#x}")
    return check_failed(CHECK_ERRORS[status])


# --------------------------------------------------------------------------
# Emitting the checks (graph-to-linalg).

#: "this element fails", on one element of the checked operand
Predicate = Callable[[ir.Value], ir.Value]


@dataclass
class _Check:
    """What one op needs checked: ``operand``, each element with the predicate ``failing`` makes of ``sizes`` (in
    the check function: its bounds are computed there once, not per element)."""

    status: str
    operand: ir.Value
    failing: Callable[[list[ir.Value]], Predicate]
    sizes: list[ir.Value]
    detail: str


class CheckEmitter:
    """Emits the checks of one module's ops (graph-to-linalg makes one per run)."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.next_site = sum(1 for op in module.body.operations
                             if op.operation.name == "func.func"
                             and ir.StringAttr(op.attributes["sym_name"]).value.startswith(FUNCTION_PREFIX))
        self.has_status = any(op.operation.name == "memref.global"
                              and ir.StringAttr(op.attributes["sym_name"]).value == STATUS_SYMBOL
                              for op in module.body.operations)

    def before(self, op: ir.Operation) -> bool:
        """Check ``op``'s operand before ``op`` when it may fail at run time; whether a check was emitted."""
        with op.location, ir.InsertionPoint(op):
            check = _division(op) if op.name in _DIVISIONS else _indexing(op) if op.name in _INDEXING else None
        if check is None:
            return False
        site = self.next_site
        self.next_site += 1
        name = f"{FUNCTION_PREFIX}{site}"
        self._define(name, site, op, check)
        with op.location, ir.InsertionPoint(op):
            func.CallOp([], ir.FlatSymbolRefAttr.get(name), [check.operand, *check.sizes])
        return True

    def _define(self, name: str, site: int, op: ir.Operation, check: _Check) -> None:
        types = [check.operand.type, *(v.type for v in check.sizes)]
        with ir.Location.unknown():
            if not self.has_status:
                with ir.InsertionPoint.at_block_begin(self.module.body):
                    status_type = ir.MemRefType.get([1], ir.IntegerType.get_signless(32))
                    memref.GlobalOp(STATUS_SYMBOL, ir.TypeAttr.get(status_type), sym_visibility="private",
                                    initial_value=ir.DenseElementsAttr.get(np.zeros(1, np.int32)))
                self.has_status = True
            with ir.InsertionPoint(self.module.body):
                function = func.FuncOp(name, ir.FunctionType.get(types, []), visibility="private")
        with op.location:
            block = function.add_entry_block()
            with ir.InsertionPoint(block):
                operand, sizes = block.arguments[0], list(block.arguments)[1:]
                _record_if(_any_fails(operand, check.failing(sizes)), site, op, check)
                func.ReturnOp([])


def _division(op: ir.Operation) -> _Check | None:
    """The divisor of an integer division, unless it is a constant without a zero."""
    divisor = op.operands[1]
    element = ir.RankedTensorType(divisor.type).element_type
    if not is_int(element) or is_bool(element):
        return None  # float division is IEEE's: x / 0 is +-inf or NaN
    known = constant_array(divisor)
    if known is not None and not np.any(known == 0):
        return None

    def is_zero(_: list[ir.Value]) -> Predicate:
        zero = const(element, 0)
        return lambda x: arith.cmpi(arith.CmpIPredicate.eq, x, zero)

    return _Check(IntegerDivisionByZeroError.status, divisor, is_zero, [], "")


def _indexing(op: ir.Operation) -> _Check | None:
    """The indices of a gather-like op against its axis, unless they are constants inside it."""
    data, indices = op.operands[0], op.operands[1]
    source = ir.RankedTensorType(data.type)
    if source.rank == 0:
        return None
    axis = ir.IntegerAttr(op.attributes["axis"]).value if "axis" in op.attributes else 0
    axis = axis + source.rank if axis < 0 else axis
    negative = ir.BoolAttr(op.attributes["negative_indices"]).value if "negative_indices" in op.attributes else True
    static = None if source.is_dynamic_dim(axis) else source.get_dim_size(axis)
    known = constant_array(indices)
    if known is not None and static is not None:
        positions = known.astype(np.int64)
        if np.all((positions >= (-static if negative else 0)) & (positions < static)):
            return None
    sizes = [] if static is not None else [tensor.dim(data, arith.constant(ir.IndexType.get(), axis))]

    def outside(dims: list[ir.Value]) -> Predicate:
        index = ir.IndexType.get()
        size = dims[0] if dims else arith.constant(index, static)
        low = arith.subi(arith.constant(index, 0), size) if negative else arith.constant(index, 0)

        def fails(x: ir.Value) -> ir.Value:
            position = arith.index_cast(index, x)
            return arith.ori(arith.cmpi(arith.CmpIPredicate.slt, position, low),
                             arith.cmpi(arith.CmpIPredicate.sge, position, size))

        return fails

    bounds = f"[{-static if negative else 0}, {static})" if static is not None else (
        "[-size, size)" if negative else "[0, size)")
    return _Check(IndexOutOfRangeError.status, indices, outside, sizes,
                  f"an index is not in {bounds} (axis {axis})")


def _any_fails(operand: ir.Value, fails: Callable[[ir.Value], ir.Value]) -> ir.Value:
    """Whether ``fails`` holds for any element of tensor ``operand`` (an i1)."""
    t = ir.RankedTensorType(operand.type)
    if t.rank == 0:
        return fails(tensor.extract(operand, []))
    flag = ir.IntegerType.get_signless(8)  # bytes, not i1: the reduction vectorizes and needs no boolean buffer
    init = linalg.fill(const(flag, 0), outs=[tensor.empty([], flag)])
    maps = [ir.AffineMap.get_identity(t.rank), ir.AffineMap.get(t.rank, 0, [])]
    generic = build_generic([init.type], [operand], [init], maps, [REDUCTION] * t.rank,
                            lambda args: [arith.ori(args[1], arith.extui(flag, fails(args[0])))])
    return arith.cmpi(arith.CmpIPredicate.ne, tensor.extract(generic.results[0], []), const(flag, 0))


def _record_if(failed: ir.Value, site: int, op: ir.Operation, check: _Check) -> None:
    """Store the site's code into the status word when ``failed``, unless a code is there already."""
    word_type = ir.IntegerType.get_signless(32)
    branch = scf.IfOp(failed)
    with ir.InsertionPoint(branch.then_block):
        status = memref.get_global(ir.MemRefType.get([1], word_type), STATUS_SYMBOL)
        first = arith.constant(ir.IndexType.get(), 0)
        old = memref.load(status, [first])
        code = const(word_type, site << SITE_SHIFT | CHECK_STATUS[check.status])
        new = arith.select(arith.cmpi(arith.CmpIPredicate.eq, old, const(word_type, 0)), code, old)
        store = memref.store(new, status, [first])
        store.attributes[SITE_ATTRIBUTE] = _site_attribute(site, op, check)
        scf.YieldOp([])


def _site_attribute(site: int, op: ir.Operation, check: _Check) -> ir.Attribute:
    i64 = ir.IntegerType.get_signless(64)
    fields: dict[str, ir.Attribute] = {
        "site": ir.IntegerAttr.get(i64, site), "status": ir.StringAttr.get(check.status),
        "op": ir.StringAttr.get(op.name), "detail": ir.StringAttr.get(check.detail),
    }
    where = source_loc(op.location)
    if where is not None:
        fields.update(file=ir.StringAttr.get(where.file), line=ir.IntegerAttr.get(i64, where.line),
                      col=ir.IntegerAttr.get(i64, where.col))
    return ir.DictAttr.get(fields)


# --------------------------------------------------------------------------
# Binding the status word (the runtime, after bufferization).


def bind_status_word(module: ir.Module, entry: ir.Operation) -> tuple[CheckSite, ...]:
    """Make the status word the last argument of ``entry`` (bufferized, every check inlined into it) and return
    the check sites; nothing changes, and no site is returned, when the code checks nothing."""
    status_global = next((op.operation for op in module.body.operations
                          if op.operation.name == "memref.global"
                          and ir.StringAttr(op.attributes["sym_name"]).value == STATUS_SYMBOL), None)
    if status_global is None:
        return ()
    # The other functions of the module that still check (public ones the entry does not call keep theirs): a
    # call of one from the entry would report into a word nobody reads.
    elsewhere = {ir.StringAttr(f.attributes["sym_name"]).value for f in module.body.operations
                 if f.operation.name == "func.func" and f.operation != entry and any(map(_reads_status, nested_ops(f)))}
    reads, sites = [], {}
    for op in nested_ops(entry):  # one walk of the entry: its reads of the word, its calls, its failure stores
        if _reads_status(op):
            reads.append(op)
        elif op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in elsewhere:
            raise GraphfuseError(f"a run-time check in @{ir.FlatSymbolRefAttr(op.attributes['callee']).value} was "
                                 "not inlined into the entry: its failures would go unreported")
        elif op.name == "memref.store" and SITE_ATTRIBUTE in op.attributes:
            site = site_of(ir.DictAttr(op.attributes[SITE_ATTRIBUTE]))
            sites[site.number] = site
    if not reads:
        return ()
    word_type = ir.MemRefType(ir.TypeAttr(status_global.attributes["type"]).value)
    block = entry.regions[0].blocks[0]
    word = block.add_argument(word_type, ir.Location.unknown())
    for read in reads:
        read.results[0].replace_all_uses_with(word)
        read.erase()
    if not elsewhere:
        status_global.erase()
    function_type = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)
    entry.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([*function_type.inputs, word_type], list(function_type.results)))
    if "arg_attrs" in entry.attributes:
        attrs = list(ir.ArrayAttr(entry.attributes["arg_attrs"]))
        entry.attributes["arg_attrs"] = ir.ArrayAttr.get([*attrs, ir.DictAttr.get({})])
    return tuple(sites[number] for number in sorted(sites))


def _reads_status(op: ir.Operation) -> bool:
    return op.name == "memref.get_global" and ir.FlatSymbolRefAttr(op.attributes["name"]).value == STATUS_SYMBOL


def site_attribute(site: CheckSite) -> ir.DictAttr:
    """``site`` as its failure store carries it (:func:`site_of` reads it back): the CPU pipeline records the
    entry's sites so on the entry."""
    i64 = ir.IntegerType.get_signless(64)
    fields: dict[str, ir.Attribute] = {
        "site": ir.IntegerAttr.get(i64, site.number), "status": ir.StringAttr.get(site.status),
        "op": ir.StringAttr.get(site.op), "detail": ir.StringAttr.get(site.detail),
    }
    if site.location is not None:
        fields.update(file=ir.StringAttr.get(site.location.file), line=ir.IntegerAttr.get(i64, site.location.line),
                      col=ir.IntegerAttr.get(i64, site.location.col))
    return ir.DictAttr.get(fields)


def site_of(fields: ir.DictAttr) -> CheckSite:
    """The check site a failure store's attribute (or :func:`site_attribute`) describes."""

    def text(name: str) -> str:
        return ir.StringAttr(fields[name]).value

    where = (SourceLoc(text("file"), ir.IntegerAttr(fields["line"]).value, ir.IntegerAttr(fields["col"]).value)
             if "file" in fields else None)
    return CheckSite(ir.IntegerAttr(fields["site"]).value, text("status"), text("op"), where, text("detail"))
