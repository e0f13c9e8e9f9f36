"""Kernel-level code generation passes: outline fused ops as kernels, fuse each kernel's loops.

A *kernel* is a private ``func.func`` marked ``graph.kernel``: graph-kernel
fusion outlines clusters of basic ops that way, and ``outline-fused-ops``
outlines each fused or compound op (``add_layer_norm``, ``softmax``,
``matmul_gelu``, ...) left in a caller into a kernel of its own; with
``absorb`` (the CPU opt levels) a row or elementwise compound op (softmax, the
norms, swiglu, ...) takes the lone elementwise ops next to it along (a scale
before a softmax, a cast after a norm), which would otherwise each be an
unfused loop nest, and a 2-D product (``matmul_bias_add``, ...) the
elementwise ops on its result (an activation, a residual add), which the
matmul schedule applies to each block of C.  After
``graph-to-linalg``, ``fuse-kernel-loops`` fuses the linalg ops *inside each
kernel* into as few loop nests as possible; ops outside kernels stay one loop
nest each, which is what an unfused graph costs.  The kernels are then inlined
into their callers (upstream ``inline``) before bufferization.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import func
from mlir.passmanager import PassManager

from graphfuse.dialect.diagnostics import source_loc
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import as_operation, attributes, create_op, nested_ops, op_id, sig
from graphfuse.dialect.ops.collective import COLLECTIVE_OPS
from graphfuse.dialect.types import TensorSig
from graphfuse.lowering import decompose  # noqa: F401  (registers the decompositions this pass outlines)
from graphfuse.lowering.common import DECOMPOSITIONS
from graphfuse.lowering.elementwise_groups import merge_elementwise_groups
from graphfuse.pipelines import log
from graphfuse.pipelines.fusion.norm import InsertBefore
from graphfuse.pipelines.graph_kernel.cluster import in_block, op_kind, outline, widens_contraction_operand
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["DedupeKernelResults", "FuseKernelLoops", "OutlineFusedOps", "is_kernel", "loop_nest_count"]


def is_kernel(func_op: ir.Operation) -> bool:
    return func_op.name == "func.func" and "graph.kernel" in func_op.attributes


#: Compound ops lowered as row or elementwise loop nests, which fuse-kernel-loops fuses with elementwise ops on
#: their inputs and results; contractions (the matmul forms, flash attention) keep their own schedules.
ABSORBING_OPS = frozenset({
    "graph.softmax", "graph.safe_softmax", "graph.log_softmax", "graph.layer_norm", "graph.rms_norm",
    "graph.add_layer_norm", "graph.add_rms_norm", "graph.add_rms_norm_cast", "graph.batch_norm", "graph.bias_add",
    "graph.swiglu", "graph.add_n", "graph.squared_difference",
})
#: Fused products whose kernel takes the lone elementwise ops on their 2-D result (an activation, a residual
#: add), which the CPU lowering applies to each block of C while it is in cache
#: (graphfuse.lowering.contraction); their inputs' producers stay out (a prologue would run once per block).
EPILOGUE_OPS = frozenset({"graph.matmul_bias_add", "graph.matmul_add", "graph.matmul_relu", "graph.matmul_gelu"})
#: Most elementwise ops one compound op takes into its kernel.
MAX_ABSORBED = 32


@dataclass(frozen=True)
class OutlineFusedOps(GraphPass):
    name: ClassVar[str] = "outline-fused-ops"
    summary: ClassVar[str] = "Outline each fused or compound graph op outside a kernel into a kernel of its own"
    statistics: ClassVar[dict[str, str]] = {
        "num-outlined": "Number of fused ops outlined as kernels",
        "num-absorbed": "Number of lone elementwise ops moved into a compound op's kernel",
    }
    #: off by default: on the NPU, UB fusion's switches decide which elementwise ops share a kernel
    absorb: bool = option(False, "a row or elementwise compound op's kernel takes the lone elementwise ops next to it, "
                                 "a 2-D product's kernel its elementwise epilogue")

    def run(self, module: ir.Module, context: PassContext) -> None:
        funcs = functions(module)
        taken = set(funcs)
        inliner = _KernelInliner(funcs, Counter(ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                                                for op in nested_ops(module) if op.name == "func.call"))
        for fn_name, func_op in funcs.items():
            if fn_name in inliner.erased or is_kernel(func_op) or not func_op.regions[0].blocks:
                continue
            block = func_op.regions[0].blocks[0]
            # (collectives are not kernels: over one rank they decompose away, over more they communicate)
            fused = [as_operation(op) for op in block.operations
                     if as_operation(op).name in DECOMPOSITIONS and as_operation(op).name not in COLLECTIVE_OPS]
            claimed: set[int] = set()  # ops already moved into a kernel of this function
            anchor = func_op
            for k, op in enumerate(fused):
                kernel_name = f"{fn_name}_fused_{k}"
                while kernel_name in taken:
                    kernel_name += "_"
                taken.add(kernel_name)
                if self.absorb:
                    op = _rows_flattened(op)
                members = [op]
                if self.absorb and op.name in ABSORBING_OPS:
                    inliner.inline_producers(op, block)
                    members = _with_elementwise_neighbours(op, block, claimed)
                    context.count("num-absorbed", len(members) - 1)
                elif self.absorb and _takes_epilogue(op):
                    inliner.inline_consumers(op, block)
                    members = _with_elementwise_neighbours(op, block, claimed, producers=False)
                    context.count("num-absorbed", len(members) - 1)
                claimed.update(op_id(m) for m in members)
                where = source_loc(op.location)
                log.debug(f"outline-fused-ops: {op.name}{f' at {where}' if where else ''}"
                          f"{f' with {len(members) - 1} elementwise op(s)' if len(members) > 1 else ''}"
                          f" -> @{kernel_name}")
                anchor = outline(func_op, members, op.name.removeprefix("graph."), kernel_name, after=anchor)
                context.count("num-outlined")


class _KernelInliner:
    """Inlines the calls of elementwise kernels (graph-kernel fusion's) whose results only a compound op reads,
    or that are a product's epilogue.

    Their ops then join the compound op's kernel as its prologue (a scale and a mask added before a softmax:
    one kernel instead of a kernel writing the scores and another reading them back) or the product's
    epilogue (a gelu applied to each block of C while it is in cache).  A kernel left without callers is
    erased; ``erased`` names them.
    """

    def __init__(self, kernels: dict[str, ir.Operation], calls: Counter[str]):
        self.kernels = kernels
        self.calls = calls
        self.erased: set[str] = set()

    def inline_producers(self, op: ir.Operation, block: ir.Block) -> None:
        while (call := self._next_producer_call(op, block)) is not None:
            self._inline(call, constants_before=call)

    def inline_consumers(self, op: ir.Operation, block: ir.Block) -> None:
        """Inline the elementwise kernels that read ``op``'s results and otherwise only values defined before
        it, and whose every value has the shape of ``op``'s result: they become ``op``'s epilogue.  Their
        constants go before ``op``, so that the kernel ``op`` is outlined into can take every op along."""
        shape = sig(op.results[0]).shape
        epilogue = {op_id(op)}
        while (call := self._next_consumer_call(op, block, epilogue, shape)) is not None:
            epilogue.update(op_id(o) for o in self._inline(call, constants_before=op))

    def _inline(self, call: ir.Operation, constants_before: ir.Operation) -> list[ir.Operation]:
        """Replace ``call`` by copies of its callee's ops (constants before ``constants_before``); the copies."""
        name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        callee = self.kernels[name]
        body = [as_operation(o) for o in callee.regions[0].blocks[0].operations]
        values: dict[ir.Value, ir.Value] = dict(zip(callee.regions[0].blocks[0].arguments, call.operands,
                                                    strict=True))
        copies = []
        for o in body[:-1]:
            where = constants_before if o.name == "arith.constant" else call
            copy = o.clone(ip=ir.InsertionPoint(where))
            for k, v in enumerate(o.operands):
                copy.operands[k] = values[v]
            values.update(zip(o.results, copy.results, strict=True))
            copies.append(copy)
        for result, value in zip(call.results, body[-1].operands, strict=True):
            result.replace_all_uses_with(values[value])
        call.erase()
        self.calls[name] -= 1
        if self.calls[name] == 0:
            callee.erase()
            self.erased.add(name)
        return copies

    def _elementwise_callee(self, call: ir.Operation, block: ir.Block) -> list[ir.Operation] | None:
        """The ops of the elementwise kernel of at most MAX_ABSORBED ops that ``call`` (in ``block``) calls,
        or None for any other call."""
        if call.name != "func.call" or call.block != block:
            return None
        name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        callee = self.kernels.get(name)
        if name in self.erased or callee is None or not is_kernel(callee) or not callee.regions[0].blocks:
            return None
        ops = [as_operation(o) for o in callee.regions[0].blocks[0].operations][:-1]
        if len(ops) > MAX_ABSORBED or not all(
                o.name == "arith.constant" or (o.name.startswith("graph.") and op_kind(o.name) == "elementwise")
                for o in ops):
            return None
        return ops

    def _next_producer_call(self, op: ir.Operation, block: ir.Block) -> ir.Operation | None:
        """A call in ``block`` of an elementwise kernel of at most MAX_ABSORBED ops whose results only ``op``
        reads, from ``op``'s operands as they are now (an inlined call is gone), or None."""
        for operand in op.operands:
            if isinstance(operand.owner, ir.Block):
                continue
            call = as_operation(operand.owner)
            if self._elementwise_callee(call, block) is None:
                continue
            if all(op_id(use.owner) == op_id(op) for r in call.results for use in r.uses):
                return call
        return None

    def _next_consumer_call(self, op: ir.Operation, block: ir.Block, epilogue: set[int],
                            shape: tuple[int, ...]) -> ir.Operation | None:
        """A call in ``block`` of an elementwise kernel reading a result of ``epilogue`` (``op`` and the ops
        inlined after it so far) whose other operands are defined before ``op`` and whose values all have
        ``shape``, or None."""
        for member in [o for o in block.operations if op_id(as_operation(o)) in epilogue]:
            for result in as_operation(member).results:
                for use in result.uses:
                    call = as_operation(use.owner)
                    ops = self._elementwise_callee(call, block)
                    if ops is None:
                        continue
                    values = [*call.results, *(r for o in ops if o.name != "arith.constant" for r in o.results)]
                    if (all(sig(v).shape == shape for v in values)
                            and all(_defined_before(v, op, epilogue) for v in call.operands)):
                        return call
        return None


def _rows_flattened(op: ir.Operation) -> ir.Operation:
    """``op``, or for a product of EPILOGUE_OPS of an ``a`` with batch dims by a matrix ``b`` (a linear layer
    without a bias, falcon's 3-D ``matmul_gelu``), the 2-D product of ``a``'s rows between two reshapes, which
    replaces it.  The 2-D form applies its epilogue to each block of C on every core (:func:`_takes_epilogue`);
    in the batched form the product's kernel is a contraction, and its elementwise epilogue ran serially after
    it.  Static shapes only; an addend of the result's shape is reshaped as well, a bias along the last axis
    broadcasts as it is."""
    if op.name not in EPILOGUE_OPS or len(op.results) != 1:
        return op
    a, b, result = sig(op.operands[0]), sig(op.operands[1]), sig(op.results[0])
    if a.rank < 3 or b.rank != 2 or attributes(op)["transpose_a"] or not (a.is_static and result.is_static):
        return op
    rows = math.prod(a.shape[:-1])
    flat = (rows, result.shape[-1])
    for extra in op.operands[2:]:
        if sig(extra).rank > 1 and sig(extra).shape != result.shape:
            return op  # an addend broadcast along the rows: left in its batched form

    def reshaped(value: ir.Value, shape: tuple[int, ...]) -> ir.Value:
        declared = [TensorSig(shape, sig(value).dtype)]
        return create_op(InsertBefore(op), "reshape", [value], op.location, declared).results[0]

    operands = [reshaped(op.operands[0], (rows, a.shape[-1])), op.operands[1],
                *(reshaped(v, flat) if sig(v).rank > 1 else v for v in op.operands[2:])]
    with op.location, ir.InsertionPoint(op):
        element = ir.RankedTensorType(op.results[0].type).element_type
        product = ir.Operation.create(op.name, results=[ir.RankedTensorType.get(list(flat), element)],
                                      operands=operands,
                                      attributes={name: op.attributes[name] for name in op.attributes})
    op.results[0].replace_all_uses_with(reshaped(product.results[0], result.shape))
    op.erase()
    return product


def _takes_epilogue(op: ir.Operation) -> bool:
    """Whether ``op`` is a product of EPILOGUE_OPS with one 2-D result."""
    return op.name in EPILOGUE_OPS and len(op.results) == 1 and len(sig(op.results[0]).shape) == 2


def _lone_elementwise(op: ir.Operation | ir.Block, block: ir.Block, claimed: set[int]) -> bool:
    """Whether ``op`` is an elementwise graph op directly in ``block`` that no kernel holds."""
    if isinstance(op, ir.Block):
        return False
    op = as_operation(op)
    return (op.name.startswith("graph.") and op_kind(op.name) == "elementwise"
            and op_id(op) not in claimed and op.block == block and len(op.results) == 1)


def _with_elementwise_neighbours(op: ir.Operation, block: ir.Block, claimed: set[int],
                                producers: bool = True) -> list[ir.Operation]:
    """``op`` and the lone elementwise ops around it that can share its kernel, in program order.

    A producer joins (unless ``producers`` is false) when every use of its result is in the kernel (it is
    then computed in the kernel's loops instead of a pass of its own); a consumer joins when its result has
    the shape of the kernel value it reads (no broadcast of a row result back) and its other operands are
    defined before ``op`` (so the kernel takes them as inputs without a cycle through it).
    """
    members = {op_id(op): op}
    grew = True
    while grew and len(members) <= MAX_ABSORBED:
        grew = False
        for member in list(members.values()):
            for operand in member.operands if producers else ():
                p = operand.owner if isinstance(operand.owner, ir.Block) else as_operation(operand.owner)
                if (_lone_elementwise(p, block, claimed) and op_id(p) not in members
                        and all(_member(in_block(as_operation(use.owner), block), members)
                                for use in p.results[0].uses)):
                    members[op_id(p)] = p
                    grew = True
            for result in member.results:
                for use in result.uses:
                    c = as_operation(use.owner)
                    if (_lone_elementwise(c, block, claimed) and op_id(c) not in members
                            and not widens_contraction_operand(c)  # the next product reads it narrow
                            and sig(c.results[0]).shape == sig(result).shape
                            and all(_defined_before(v, op, members) for v in c.operands)):
                        members[op_id(c)] = c
                        grew = True
    ordered = [m for m in (as_operation(o) for o in block.operations) if op_id(m) in members]
    return ordered


def _member(op: ir.Operation | None, members: dict[int, ir.Operation]) -> bool:
    return op is not None and op_id(op) in members


def _defined_before(value: ir.Value, op: ir.Operation, members: dict[int, ir.Operation] | set[int]) -> bool:
    """Whether ``value`` comes from the kernel's members, a block argument, a constant (the kernel gets a copy)
    or an op before ``op``."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return True
    owner = as_operation(owner)
    return op_id(owner) in members or owner.name == "arith.constant" or owner.is_before_in_block(op)


def _fold_unit_expansions(func_op: ir.Operation) -> int:
    """Let linalg.generic consumers read through ``tensor.expand_shape`` ops that only add size-1 dims.

    A ``keep_dims`` reduction is lowered as a reduction into the kept dims plus
    an ``expand_shape`` adding the size-1 dims back; its elementwise consumers
    read those dims at index 0.  Left in place, the ``expand_shape`` makes
    upstream elementwise fusion reshape whole producers (adding a size-1 dim to
    a reduction's iteration space), which blocks tiling them later.  Here each
    generic reading such an expansion reads its source instead, with the
    size-1 dims dropped from its indexing map.  Returns the number of operands
    rewritten.
    """
    rewritten = 0
    for op in list(func_op.regions[0].blocks[0].operations):
        op = as_operation(op)
        if op.name != "linalg.generic":
            continue
        maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
        n_inputs = len(op.operands) - len(op.results)
        changed = False
        for k in range(n_inputs):
            source = op.operands[k].owner
            if isinstance(source, ir.Block) or as_operation(source).name != "tensor.expand_shape":
                continue
            expand = as_operation(source)
            src_type = ir.RankedTensorType(expand.operands[0].type)
            dst_type = ir.RankedTensorType(expand.results[0].type)
            kept = _kept_dims(expand, src_type, dst_type)
            if kept is None:
                continue
            old = ir.AffineMapAttr(maps[k]).value
            folded = ir.AffineMapAttr.get(ir.AffineMap.get(old.n_dims, old.n_symbols, [old.results[i] for i in kept]))
            # A unit dim read only by this operand (a reduction over it) would vanish from every map: keep it.
            if not _covers_every_dim([*maps[:k], folded, *maps[k + 1:]], old.n_dims):
                continue
            maps[k] = folded
            op.operands[k] = expand.operands[0]
            changed = True
            rewritten += 1
        if changed:
            op.attributes["indexing_maps"] = ir.ArrayAttr.get(maps)
    for op in list(func_op.regions[0].blocks[0].operations):
        op = as_operation(op)
        if op.name == "tensor.expand_shape" and not any(True for _ in op.results[0].uses):
            op.erase()
    return rewritten


def _kept_dims(expand: ir.Operation, source: ir.RankedTensorType, result: ir.RankedTensorType) -> list[int] | None:
    """For an ``expand_shape`` that only adds size-1 dims: per source dim, the result dim that holds it.

    Each reassociation group holds its source dim's size once and 1 elsewhere (a size-1 source dim: a group
    of 1s, its first dim taken; a dynamic one: its one dynamic dim); None for any other expansion.
    """
    kept = []
    for source_dim, group in enumerate(ir.ArrayAttr(expand.attributes["reassociation"])):
        dims = [ir.IntegerAttr(d).value for d in ir.ArrayAttr(group)]
        size = source.shape[source_dim]
        holding = [d for d in dims if result.shape[d] == size] if size != 1 else dims[:1]
        if len(holding) != 1 or any(result.shape[d] != 1 for d in dims if d != holding[0]):
            return None
        kept.append(holding[0])
    return kept


def _covers_every_dim(maps: list[ir.Attribute], n_dims: int) -> bool:
    """Whether every loop dim is read by some indexing map's result (else linalg rejects the maps)."""
    used: set[int] = set()
    for attr in maps:
        for expr in ir.AffineMapAttr(attr).value.results:
            if isinstance(expr, ir.AffineDimExpr):  # map results come back downcast to their kind
                used.add(expr.position)
            elif not isinstance(expr, ir.AffineConstantExpr):
                return False  # a compound expression: do not reason about it, keep the expansion
    return len(used) == n_dims


#: Upstream passes run on each kernel function, in order.  Canonicalization first: with dynamic shapes a consumer's
#: tensor.empty is sized by a tensor.dim of its producer's result, a second use of the producer, and the fusion
#: takes single-use producers only (folded, the dim reads the producer's own init).
KERNEL_LOOP_FUSION = ("canonicalize", "linalg-fuse-elementwise-ops", "canonicalize", "cse")


def _run_on_functions(module: ir.Module, chosen: list[ir.Operation]) -> None:
    """Run KERNEL_LOOP_FUSION on the ``chosen`` functions of ``module``, in one pass manager run.

    A pass manager run per kernel cost about 2 ms of set-up each (a
    5,000-op chain has hundreds of kernels); one run over the module takes
    the other top-level ops out for the time being, so that only the chosen
    functions are transformed, and puts everything back in its order.
    """
    body = module.body
    everything = [op.operation for op in body.operations]
    keep = {op_id(op) for op in chosen}
    others = [op for op in everything if op_id(op) not in keep]
    holder = ir.Module.create()
    for op in others:
        holder.body.append(op)
    try:
        manager = PassManager.parse(f"builtin.module(func.func({','.join(KERNEL_LOOP_FUSION)}))")
        # Not verified here: a kernel's calls would name functions that are out for now (the runner verifies after).
        manager.enable_verifier(False)
        manager.run(module.operation)
    finally:
        for op in everything:
            body.append(op)


def loop_nest_count(func_op: ir.Operation) -> int:
    """The number of linalg ops (each one loop nest once lowered) directly in ``func_op``'s body."""
    block = func_op.regions[0].blocks[0]
    return sum(1 for op in block.operations if as_operation(op).name.startswith("linalg."))


@dataclass(frozen=True)
class FuseKernelLoops(GraphPass):
    name: ClassVar[str] = "fuse-kernel-loops"
    summary: ClassVar[str] = "Fuse the linalg ops inside each kernel function into as few loop nests as possible"
    statistics: ClassVar[dict[str, str]] = {
        "num-kernels": "Number of kernel functions whose loops were fused",
        "num-loop-nests-before": "Number of linalg ops in kernels before fusion",
        "num-loop-nests-after": "Number of linalg ops in kernels after fusion",
        "num-merged": "Number of elementwise loop nests merged into their group's before upstream's fusion",
    }
    all_functions: bool = option(False, "fuse in every function, not only kernels (ignores kernel boundaries)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        with module.context:
            fused: list[tuple[str, ir.Operation, int]] = []  # (name, function, loop nests before)
            for fn_name, func_op in functions(module).items():
                if not func_op.regions[0].blocks or not (self.all_functions or is_kernel(func_op)):
                    continue
                if any(as_operation(op).name.startswith("graph.") for op in func_op.regions[0].blocks[0].operations):
                    context.fail(
                        f"fuse-kernel-loops: @{fn_name} still has graph ops; run graph-to-linalg first",
                        func_op.location,
                    )
                fused.append((fn_name, func_op, loop_nest_count(func_op)))
                _fold_unit_expansions(func_op)
                context.count("num-merged", merge_elementwise_groups(func_op))
            if not fused:
                return
            try:
                _run_on_functions(module, [func_op for _, func_op, _ in fused])
            except ir.MLIRError as error:
                context.fail(f"fuse-kernel-loops: fusing the kernels failed: {error}", fused[0][1].location)
            for fn_name, func_op, before in fused:
                after = loop_nest_count(func_op)
                context.count("num-kernels")
                context.count("num-loop-nests-before", before)
                context.count("num-loop-nests-after", after)
                kinds = Counter(
                    as_operation(op).name
                    for op in func_op.regions[0].blocks[0].operations
                    if as_operation(op).name.startswith("linalg.")
                )
                log.debug(
                    f"fuse-kernel-loops: @{fn_name}: {before} -> {after} loop nests ("
                    + ", ".join(f"{n} x{c}" for n, c in sorted(kinds.items()))
                    + ")"
                )


@dataclass(frozen=True)
class DedupeKernelResults(GraphPass):
    """Each kernel returns a value once: CSE inside a kernel can make two results one value.

    ``return %a, %a`` then reaches bufferization and
    ``buffer-results-to-out-params{hoist-static-allocs}``, which hoists the
    one allocation into the first out-parameter and then crashes on the
    second (a use of the erased allocation).  The duplicate result is
    dropped from the kernel's signature and its callers' uses go to the
    first one.  Kernels with callers other than ``func.call`` are left alone.
    """

    name: ClassVar[str] = "dedupe-kernel-results"
    summary: ClassVar[str] = "Drop the results a kernel returns twice; callers use the first copy"
    statistics: ClassVar[dict[str, str]] = {"num-dropped": "Number of duplicate kernel results dropped"}

    def run(self, module: ir.Module, context: PassContext) -> None:
        with module.context, ir.Location.unknown():
            kernels = {name: f for name, f in functions(module).items() if is_kernel(f) and f.regions[0].blocks}
            calls: dict[str, list[ir.Operation]] = {name: [] for name in kernels}
            others: set[str] = set()
            for op in nested_ops(module):
                if op.name == "func.call":
                    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                    if callee in calls:
                        calls[callee].append(op)
                elif op.name != "func.func":
                    for attr_name in op.attributes:  # a symbol reference elsewhere: the signature must stay
                        text = str(op.attributes[attr_name])
                        others.update(name for name in kernels if f"@{name}" in text)
            for name, func_op in kernels.items():
                if name in others:
                    continue
                dropped = _dedupe_results(func_op, calls[name])
                if dropped:
                    context.count("num-dropped", dropped)
                    log.debug(f"dedupe-kernel-results: @{name}: {dropped} duplicate result(s) dropped")


def _dedupe_results(func_op: ir.Operation, calls: list[ir.Operation]) -> int:
    block = func_op.regions[0].blocks[0]
    ret = as_operation(block.operations[len(block.operations) - 1])
    values = list(ret.operands)
    new_index: dict[ir.Value, int] = {}  # value -> its result index once duplicates are dropped
    keep: list[int] = []  # the old result indices that stay
    source: list[int] = []  # old result index -> new result index
    for old, value in enumerate(values):
        if value not in new_index:
            new_index[value] = len(keep)
            keep.append(old)
        source.append(new_index[value])
    if len(keep) == len(values):
        return 0
    ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
    results = [ftype.results[k] for k in keep]
    func_op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(ftype.inputs), results))
    if "res_attrs" in func_op.attributes:
        attrs = list(ir.ArrayAttr(func_op.attributes["res_attrs"]))
        func_op.attributes["res_attrs"] = ir.ArrayAttr.get([attrs[k] for k in keep])
    with ret.location, ir.InsertionPoint(ret):
        func.ReturnOp([values[k] for k in keep])
    ret.erase()
    for call in calls:
        with call.location, ir.InsertionPoint(call):
            new = func.CallOp(results, ir.FlatSymbolRefAttr(call.attributes["callee"]).value, list(call.operands))
        for old, index in zip(call.results, source, strict=True):
            old.replace_all_uses_with(new.results[index])
        call.erase()
    return len(values) - len(keep)
