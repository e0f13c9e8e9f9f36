"""outline-chunks: the packed entry split into private functions of a few loop nests each.

LLVM's work on one function grows faster than its size; identical loop nests (a repeated layer) become one
function, compiled once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import op_id, ops_named
from graphfuse.lowering.codegen.cpu.buffers import CONSTANTS, top_level_op
from graphfuse.lowering.codegen.cpu.entry import entry_function, entry_name
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["CHUNK_LOOP_NESTS", "OutlineChunks", "outline_chunks"]

#: Loop nests per outlined function of the entry (see outline_chunks).  One: identical loop nests are then identical
#: functions, compiled once; on 2,000- and 5,000-op graphs LLVM took 40% less time than with 8 nests per function.
CHUNK_LOOP_NESTS = 1


@dataclass(frozen=True)
class OutlineChunks(GraphPass):
    name: ClassVar[str] = "outline-chunks"
    summary: ClassVar[str] = ("Outline the packed entry's top-level ops into noinline functions of loop-nests loop "
                              "nests each, the table slots and view offsets they read passed as arguments, "
                              "identical ones kept once (after pack-arguments)")
    loop_nests: int = option(CHUNK_LOOP_NESTS, "loop nests per outlined function")

    def run(self, module: ir.Module, context: PassContext) -> None:
        if self.loop_nests < 1:
            context.fail(f"option 'loop-nests' of pass '{self.name}' must be at least 1, got {self.loop_nests}")
        func = entry_function(module, self.name)
        outline_chunks(module, func, entry_name(func), self.loop_nests)


def outline_chunks(module: ir.Module, func: ir.Operation, entry: str, loop_nests: int = CHUNK_LOOP_NESTS) -> int:
    """Split the packed entry into private functions of ``loop_nests`` loop nests each; returns how many remain.

    With the kernels inlined, the entry holds every loop nest of the graph,
    and LLVM's work on one function grows faster than its size (the
    assertion-enabled LLVM of the wheels verifies the whole function after
    each loop it vectorizes): a 5,000-op chain took minutes.  Consecutive
    top-level ops holding ``loop_nests`` loop nests (ops with regions) are
    wrapped in an ``scf.execute_region`` each (values used after it become
    its results) and moved into a ``noinline`` internal function called in
    their place; after ``pack-arguments`` such a function needs only the
    table pointer, and the slots it reads, the offsets of its views of the
    workspace and the static offsets of its subviews become arguments
    (:func:`_parameterize_slots`, :func:`_parameterize_view_offsets`,
    :func:`_parameterize_subview_offsets`), so functions that compute the same
    thing on other buffers, or other parts of one, are identical: one of each
    is kept.  Constants are
    cloned into the functions (LLVM folds them; a vector constant passed as
    an argument would go through memory).  MLIR's ``transform.loop.outline``
    does the same one op at a time, in time quadratic in the ops.
    """
    block = func.regions[0].blocks[0]
    # Constants stay in the entry, first (they have no operands): the functions clone those they use.
    first = block.operations[0]
    for op in list(block.operations):
        if op.operation.name in CONSTANTS:
            op.operation.move_before(first)
    ops = [op.operation for op in block.operations if op.operation.name not in CONSTANTS][:-1]  # not the return
    position = {op_id(op): k for k, op in enumerate(ops)}
    chunks: list[tuple[int, int]] = []
    begin, nests = 0, 0
    for k, op in enumerate(ops):
        nests += 1 if len(op.regions) else 0
        if nests == loop_nests or (k == len(ops) - 1 and nests):
            chunks.append((begin, k + 1))
            begin, nests = k + 1, 0
    if not chunks:
        return 0
    wrappers = [_wrap_chunk(ops[begin:end], end, position, block) for begin, end in chunks]
    taken = {ir.StringAttr(op.attributes["sym_name"]).value
             for op in module.body.operations if "sym_name" in op.operation.attributes}
    table = block.arguments[len(block.arguments) - 1]
    outlined: list[tuple[ir.Operation, ir.Operation]] = []  # (function, its call)
    for k, (wrapper, captured) in enumerate(zip(wrappers, _captured_values(block, wrappers), strict=True)):
        name = f"{entry}_part_{k}"
        while name in taken:
            name += "_"
        callee, call = _outline(module, wrapper, captured, name)
        call = _parameterize_slots(callee, call, table)
        call = _parameterize_view_offsets(callee, call)
        outlined.append((callee, _parameterize_subview_offsets(callee, call)))
    # Identical loop nests (a repeated layer, the same fused kernel again) become one function, compiled once.
    kept: dict[bytes, ir.Attribute] = {}
    for callee, call in outlined:
        name = ir.StringAttr(callee.attributes["sym_name"]).value
        # Printed on its own (local scope): a function printed as part of the module numbers the whole module.
        # Not verified first: the module is verified after the pass.
        text = callee.get_asm(use_local_scope=True, assume_verified=True).replace(f"@{name}(", "@f(", 1)
        key = hashlib.blake2b(text.encode(), digest_size=20).digest()
        symbol = kept.setdefault(key, ir.FlatSymbolRefAttr.get(name))
        if symbol.value != name:
            call.attributes["callee"] = symbol
            callee.erase()
    return len(kept)


def _wrap_chunk(chunk: list[ir.Operation], end: int, position: dict[int, int], block: ir.Block) -> ir.Operation:
    """Move ``chunk`` (top-level ops ending before position ``end``) into an ``scf.execute_region``; return it."""
    escaping = []
    for op in chunk:
        for result in op.results:  # the terminator, not in ``position``, is after every chunk
            if any(position.get(op_id(top_level_op(use.owner, block)), end) >= end for use in result.uses):
                escaping.append(result)
    with ir.InsertionPoint(chunk[0]), chunk[0].location:
        wrapper = ir.Operation.create("scf.execute_region", results=[v.type for v in escaping], regions=1)
    body = wrapper.regions[0].blocks.append()
    with ir.InsertionPoint(body), chunk[0].location:
        terminator = ir.Operation.create("scf.yield", operands=escaping)
    for op in chunk:
        op.move_before(terminator)
    for value, result in zip(escaping, wrapper.results, strict=True):
        for use in list(value.uses):
            if top_level_op(use.owner, block) != wrapper:  # the uses after the chunk
                use.owner.operation.operands[use.operand_number] = result
    return wrapper


#: A value a wrapper reads from outside it, and where: (value, [(op, operand number)]).
_Captured = tuple[ir.Value, list[tuple[ir.Operation, int]]]


def _captured_values(block: ir.Block, wrappers: list[ir.Operation]) -> list[list[_Captured]]:
    """For each wrapper, the values of ``block`` it reads (arguments, constants, other wrappers' results).

    Found from the definitions' uses: the values defined outside a wrapper
    are all in ``block``, so no walk of the wrappers' insides is needed.
    """
    index = {op_id(w): k for k, w in enumerate(wrappers)}
    captured: list[dict[int, _Captured]] = [{} for _ in wrappers]
    values = list(block.arguments)
    for op in block.operations:
        values.extend(op.operation.results)
    for number, value in enumerate(values):
        owner = value.owner
        defined_by = None if isinstance(owner, ir.Block) else index.get(op_id(owner))
        for use in value.uses:
            user = index.get(op_id(top_level_op(use.owner, block)))
            if user is None or user == defined_by:
                continue
            captured[user].setdefault(number, (value, []))[1].append((use.owner.operation, use.operand_number))
    return [list(c.values()) for c in captured]


def _outline(module: ir.Module, wrapper: ir.Operation, captured: list[_Captured],
             name: str) -> tuple[ir.Operation, ir.Operation]:
    """Move ``wrapper`` into a new private noinline function ``name`` called in its place; (function, call)."""
    from mlir.dialects import func as func_dialect

    # The value each use reads now: an earlier wrapper's result has become its call's result meanwhile.
    captured = [(uses[0][0].operands[uses[0][1]], uses) for _, uses in captured]
    passed = [value for value, _ in captured if isinstance(value.owner, ir.Block)
              or value.owner.name not in CONSTANTS]
    results = [r.type for r in wrapper.results]
    with ir.InsertionPoint(module.body), wrapper.location:
        callee = func_dialect.FuncOp(name, ir.FunctionType.get([v.type for v in passed], results)).operation
    callee.attributes["sym_visibility"] = ir.StringAttr.get("private")
    callee.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
    callee.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
    body = callee.regions[0].blocks.append(*[v.type for v in passed])
    with ir.InsertionPoint(wrapper), wrapper.location:
        call = ir.Operation.create("func.call", results=results, operands=passed,
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    for old, new in zip(wrapper.results, call.results, strict=True):
        old.replace_all_uses_with(new)
    with ir.InsertionPoint(body), wrapper.location:
        terminator = ir.Operation.create("func.return", operands=list(wrapper.results))
    wrapper.move_before(terminator)
    arguments = iter(body.arguments)
    for value, uses in captured:
        if isinstance(value.owner, ir.Block) or value.owner.name not in CONSTANTS:
            inside = next(arguments)
        else:
            inside = value.owner.clone(ir.InsertionPoint(wrapper)).results[ir.OpResult(value).result_number]
        for op, number in uses:
            op.operands[number] = inside
    return callee, call


#: GEPOp's marker of a dynamic index among its constant ones.
_DYNAMIC_INDEX = -(2**31)


def _parameterize_slots(callee: ir.Operation, call: ir.Operation, table: ir.Value) -> ir.Operation:
    """Pass the table slots an outlined function reads as arguments; returns the new call.

    Two loop nests computing the same thing on different buffers then are
    the same function but for its name, and ``outline-chunks`` keeps one.
    """
    from mlir.dialects import llvm

    entry_block = callee.regions[0].blocks[0]
    positions = [k for k, v in enumerate(call.operands) if v == table]
    if not positions:
        return call
    arg = entry_block.arguments[positions[0]]
    geps = [use.owner.operation for use in arg.uses]
    if not geps or any(gep.name != "llvm.getelementptr" or gep.block != geps[0].block for gep in geps):
        return call
    ptr = arg.type
    i64 = ir.IntegerType.get_signless(64)
    slots: dict[int, ir.Value] = {}  # table slot -> the argument holding it, in order of first use
    for op in list(geps[0].block.operations):
        op = op.operation
        if op.name != "llvm.getelementptr" or op.operands[0] != arg:
            continue
        slot = ir.DenseI32ArrayAttr(op.attributes["rawConstantIndices"])[0]
        if slot not in slots:
            slots[slot] = entry_block.add_argument(i64, op.location)
        with ir.InsertionPoint(op), op.location:
            dynamic = llvm.getelementptr(ptr, arg, [slots[slot]], [_DYNAMIC_INDEX], ptr, llvm.GEPNoWrapFlags.inbounds)
        op.results[0].replace_all_uses_with(dynamic)
        op.erase()
    return _call_with_more_arguments(callee, call, i64, list(slots))


def _parameterize_view_offsets(callee: ir.Operation, call: ir.Operation) -> ir.Operation:
    """Pass the constant byte offsets of the views an outlined function takes as arguments; returns the new call.

    The workspace arena (:func:`_pack_buffers`) puts a repeated layer's
    buffers at other offsets than the first layer's, so without this the
    layers' loop nests differ in those constants alone and each is compiled
    again.  Where one function is left with one call, LLVM propagates the
    constants back into it.
    """
    index = ir.IndexType.get()
    entry_block = callee.regions[0].blocks[0]
    offsets: dict[int, ir.Value] = {}  # byte offset -> the argument holding it, in order of first use

    for op in ops_named(callee, "memref.view"):
        shift = op.operands[1].owner
        if isinstance(shift, ir.Operation | ir.OpView) and shift.name == "arith.constant":
            offset = ir.IntegerAttr(shift.attributes["value"]).value
            if offset not in offsets:
                offsets[offset] = entry_block.add_argument(index, op.location)
            op.operands[1] = offsets[offset]
    if not offsets:
        return call
    for op in list(entry_block.operations):  # the cloned constants the views took: unused ones would tell twins apart
        if op.operation.name == "arith.constant" and not any(True for _ in op.results[0].uses):
            op.operation.erase()
    return _call_with_more_arguments(callee, call, index, list(offsets))


#: Ops that take a memref of any strided layout as it is: a view they use may have a dynamic offset instead of a
#: static one without anything else changing.
_LAYOUT_AGNOSTIC_USERS = frozenset({"memref.load", "memref.store", "memref.copy", "vector.transfer_read",
                                    "vector.transfer_write", "vector.load", "vector.store"})


def _parameterize_subview_offsets(callee: ir.Operation, call: ir.Operation) -> ir.Operation:
    """Pass the static offsets of the subviews an outlined function takes as arguments; returns the new call.

    The blocks of a concatenation are written at other columns of one result, each by a loop nest that differs
    from the others in its view's offset alone; passed as arguments, the offsets leave one function for all of
    them.  Each offset of each subview gets an argument of its own (equal offsets are not merged: two calls
    with different coincidences would make different functions).  Only subviews with static offsets, sizes and
    strides whose users take any layout (linalg ops, loads, stores, copies, transfers) are rewritten.
    """
    index = ir.IndexType.get()
    entry_block = callee.regions[0].blocks[0]
    offsets: list[int] = []
    subviews = [op for op in ops_named(callee, "memref.subview") if _static_subview(op) and all(
        use.owner.name in _LAYOUT_AGNOSTIC_USERS or use.owner.name.startswith("linalg.") for use in op.results[0].uses)]
    for op in subviews:
        static = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
        values = []
        for offset in static:
            offsets.append(offset)
            values.append(entry_block.add_argument(index, op.location))
        old = ir.MemRefType(op.results[0].type)
        strides, _ = old.get_strides_and_offset()
        layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides)
        new_type = ir.MemRefType.get(list(old.shape), old.element_type, layout, old.memory_space)
        dynamic = ir.DenseI64ArrayAttr.get([ir.ShapedType.get_dynamic_stride_or_offset()] * len(static))
        with ir.InsertionPoint(op), op.location:
            view = ir.Operation.create(
                "memref.subview", results=[new_type], operands=[op.operands[0], *values],
                attributes={"static_offsets": dynamic, "static_sizes": op.attributes["static_sizes"],
                            "static_strides": op.attributes["static_strides"],
                            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(values), 0, 0])})
        op.results[0].replace_all_uses_with(view.results[0])
        op.erase()
    if not offsets:
        return call
    return _call_with_more_arguments(callee, call, index, offsets)


def _static_subview(op: ir.Operation) -> bool:
    """A subview whose offsets, sizes and strides are all static (no operand but its source), of a memref with
    static strides, keeping its rank."""
    source, result = ir.MemRefType(op.operands[0].type), ir.MemRefType(op.results[0].type)
    if len(op.operands) != 1 or source.rank != result.rank:
        return False
    strides, _ = source.get_strides_and_offset()
    return ir.ShapedType.get_dynamic_stride_or_offset() not in strides


def _call_with_more_arguments(callee: ir.Operation, call: ir.Operation, type_: ir.Type,
                              values: list[int]) -> ir.Operation:
    """Retype ``callee`` after arguments were added to its entry block; replace ``call`` by one passing
    ``values`` (constants of ``type_``) for them; returns the new call."""
    from mlir.dialects import arith

    results = [r.type for r in call.results]
    entry_block = callee.regions[0].blocks[0]
    callee.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in entry_block.arguments], results))
    with ir.InsertionPoint(call), call.location:
        numbers = [arith.constant(type_, value) for value in values]
        direct = ir.Operation.create("func.call", results=results, operands=[*call.operands, *numbers],
                                     attributes={"callee": call.attributes["callee"]})
    for old, new in zip(call.results, direct.results, strict=True):
        old.replace_all_uses_with(new)
    call.erase()
    return direct
