"""Rewrites that keep a kernel's meaning and leave npu-buffer-assign fewer buffers to place.

:func:`forward_result_copies` runs outside kernels always (a result computed
into a GM buffer then copied to the caller's output is computed in place);
:func:`simplify_buffers` runs on a kernel that no plan fits as lowered, before
the plans are tried once more.
"""

from __future__ import annotations

from mlir import ir

from graphfuse.dialect.matching import as_operation, nested_ops, op_id
from graphfuse.lowering.npu.kernel_buffers import (
    RESHAPE_VIEWS,
    alloc,
    is_cube_op,
    loop_access,
    reassociation,
    window_view,
)

__all__ = [
    "copies_of_fills", "forward_reshaped_result_copies", "forward_result_copies", "hoist_loop_allocations",
    "reshape_allocations", "reshape_arguments", "simplify_buffers", "slice_contractions",
]


def forward_result_copies(func_op: ir.Operation) -> int:
    """``memref.copy %buf, %out`` where %buf is a fresh allocation and %out is only this copy's target:
    compute into %out directly (no GM -> GM copy).  Returns the number of copies removed."""
    block = func_op.regions[0].blocks[0]
    removed = 0
    for op in [as_operation(o) for o in block.operations]:
        if op.name != "memref.copy":
            continue
        source, dest = op.operands[0], op.operands[1]
        if not isinstance(dest.owner, ir.Block) or isinstance(source.owner, ir.Block):
            continue
        allocation = as_operation(source.owner)
        if allocation.name != "memref.alloc" or source.type != dest.type:
            continue
        if sum(1 for _ in dest.uses) != 1:
            continue
        op.erase()
        source.replace_all_uses_with(dest)
        allocation.erase()
        removed += 1
    return removed


def _identity_layout(t: ir.MemRefType) -> bool:
    """Whether ``t`` is laid out row-major and contiguous (what an allocation or a function argument is)."""
    return t.layout == ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))


def _unit_dims_map(view: ir.Operation) -> list[int | None] | None:
    """For a reshape that only adds or drops dims of size 1: each result dim's source dim (None: an added
    unit dim); None for any other reshape."""
    source = list(ir.MemRefType(view.operands[0].type).shape)
    result = list(ir.MemRefType(view.results[0].type).shape)
    groups = reassociation(view)
    out: list[int | None] = []
    if view.name == "memref.expand_shape":  # groups: per source dim, its result dims
        out = [None] * len(result)
        for s_dim, members in enumerate(groups):
            large = [d for d in members if result[d] != 1]
            if len(large) > 1:
                return None
            out[large[0] if large else members[0]] = s_dim
        return out
    for members in groups:  # collapse_shape: per result dim, its source dims
        large = [d for d in members if source[d] != 1]
        if len(large) > 1:
            return None
        out.append(large[0] if large else members[0])
    return out


def reshape_allocations(func_op: ir.Operation) -> int:
    """A local allocation seen through one reshape (a reduction's ``[4, 8]`` result seen as ``[4, 8, 1]``, a
    total's ``[]`` as ``[1]``) is allocated in the reshaped shape, so that the ops write the buffer the
    tilings follow: when the reshape is its only use, or when the reshape only adds or drops dims of size 1
    and its other users are fills and generics, whose indexing maps then index the new dims (0 for an added
    one).  Returns the number of allocations changed."""
    changed = 0
    for op in [as_operation(o) for o in func_op.regions[0].blocks[0].operations]:
        if op.name != "memref.alloc" or op.operands:
            continue
        value = op.results[0]
        views = [as_operation(u.owner) for u in value.uses if as_operation(u.owner).name in RESHAPE_VIEWS]
        others = [as_operation(u.owner) for u in value.uses if as_operation(u.owner).name not in RESHAPE_VIEWS]
        if len(views) != 1:
            continue
        view = views[0]
        t = ir.MemRefType(view.results[0].type)
        if not _identity_layout(t):
            continue
        sources = _unit_dims_map(view) if others else []
        if sources is None or any(u.name not in ("linalg.fill", "linalg.generic") for u in others):
            continue
        with ir.InsertionPoint(op), op.location:
            fresh = alloc(ir.MemRefType.get(list(t.shape), t.element_type, None, t.memory_space))
        for user in others:
            if user.name == "linalg.generic":
                _reindex(user, value, sources)
            for k, operand in enumerate(user.operands):
                if operand == value:
                    user.operands[k] = fresh
        view.results[0].replace_all_uses_with(fresh)
        view.erase()
        op.erase()
        changed += 1
    return changed


def _reindex(generic: ir.Operation, value: ir.Value, sources: list[int | None]) -> None:
    """The indexing maps of ``generic``'s operands that are ``value``, for the buffer's new dims: each new dim
    takes the old dim's expression it comes from, an added unit dim 0."""
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    for k, operand in enumerate(generic.operands):
        if operand != value:
            continue
        old = maps[k]
        exprs = [old.results[s] if s is not None else ir.AffineConstantExpr.get(0) for s in sources]
        maps[k] = ir.AffineMap.get(old.n_dims, old.n_symbols, exprs)
    generic.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def copies_of_fills(func_op: ir.Operation) -> int:
    """``linalg.fill c -> %a`` then ``memref.copy %a, %b`` with nothing touching %a between: fill %b with c
    instead (CSE leaves two accumulators started from one zero-filled buffer so).  Returns the number of
    copies replaced."""
    filled: list[tuple[ir.Value, ir.Operation]] = []  # buffer -> the fill that last wrote it, in program order
    changed = 0
    for op in [as_operation(o) for o in func_op.regions[0].blocks[0].operations]:
        if op.name == "memref.copy":
            source, dest = op.operands[0], op.operands[1]
            fill = next((f for v, f in filled if v == source), None)
            if fill is not None and ir.MemRefType(source.type).shape == ir.MemRefType(dest.type).shape and \
                    ir.MemRefType(source.type).element_type == ir.MemRefType(dest.type).element_type:
                copy = fill.clone(ip=ir.InsertionPoint(op))
                copy.operands[1] = dest
                op.erase()
                changed += 1
                filled = [(v, f) for v, f in filled if v != dest]
                continue
        touched = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
        for region in op.regions:  # ops inside a loop or an if touch what they use
            for inner in nested_ops(op) if region else []:
                touched += [v for v in inner.operands if isinstance(v.type, ir.MemRefType)]
        filled = [(v, f) for v, f in filled if not any(v == t for t in touched)]
        if op.name == "linalg.fill" and len(op.operands) == 2:
            filled.append((op.operands[1], op))
    return changed


def _static_window(view: ir.Operation) -> tuple[list[int], list[int]] | None:
    """A subview's static offsets and sizes (unit strides, rank kept), or None."""
    if len(view.operands) != 1 or ir.MemRefType(view.results[0].type).rank != ir.MemRefType(view.operands[0].type).rank:
        return None
    if any(s != 1 for s in ir.DenseI64ArrayAttr(view.attributes["static_strides"])):
        return None
    return (list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"])),
            list(ir.DenseI64ArrayAttr(view.attributes["static_sizes"])))


def slice_contractions(func_op: ir.Operation) -> int:
    """A matmul into a local accumulator that is only filled and copied out in static slices along one of
    its result's dims (a fused QKV projection split into Q, K and V) becomes one matmul per slice, each
    reading the slice of its operands that dim indexes and writing its result directly: three matmuls of
    the accumulator's size over three, each of which the cube tiling fits.  Returns the number of
    contractions sliced."""
    changed = 0
    for op in [as_operation(o) for o in func_op.regions[0].blocks[0].operations]:
        if not is_cube_op(op) or op.name == "linalg.conv_2d_nchw_fchw":
            continue
        out = op.operands[len(op.operands) - 1]
        if isinstance(out.owner, ir.Block) or as_operation(out.owner).name != "memref.alloc":
            continue
        users = [as_operation(u.owner) for u in out.uses]
        fills = [u for u in users if u.name == "linalg.fill"]
        views = [u for u in users if u.name == "memref.subview"]
        if len(fills) != 1 or len(users) != len(views) + 2 or not views:
            continue
        shape = list(ir.MemRefType(out.type).shape)
        windows = [_static_window(v) for v in views]
        copies = [[as_operation(u.owner) for u in v.results[0].uses] for v in views]
        if any(w is None for w in windows) or any(len(c) != 1 or c[0].name != "memref.copy" or c[0].operands[0] !=
                                                  v.results[0] or not isinstance(c[0].operands[1].owner, ir.Block)
                                                  for c, v in zip(copies, views, strict=True)):
            continue
        cut = {d for offsets, sizes in windows for d in range(len(shape)) if sizes[d] != shape[d]}
        access = loop_access(op)
        if len(cut) != 1 or access is None:
            continue
        (dim,) = cut
        out_dims = access[0][-1][1]
        if len(out_dims[dim]) != 1:
            continue
        (loop,) = out_dims[dim]
        inputs = access[0][:-1]
        if any(loop in d and d != frozenset({loop}) for _, dims, _ in inputs for d in dims):
            continue  # the loop mixed with another in an operand's index: no plain slice of it
        with ir.InsertionPoint(op), op.location:
            for (offsets, sizes), copy in zip(windows, copies, strict=True):
                dest = copy[0].operands[1]
                fill = fills[0].clone(ip=ir.InsertionPoint(op))
                fill.operands[1] = dest
                sliced = op.clone(ip=ir.InsertionPoint(op))
                for k, (value, dims, _) in enumerate(inputs):
                    positions = [p for p, d in enumerate(dims) if loop in d]
                    if positions:
                        v_shape = list(ir.MemRefType(value.type).shape)
                        v_offsets = [offsets[dim] if p in positions else 0 for p in range(len(v_shape))]
                        v_sizes = [sizes[dim] if p in positions else n for p, n in enumerate(v_shape)]
                        sliced.operands[k] = window_view(value, v_offsets, v_sizes)
                sliced.operands[len(op.operands) - 1] = dest
        for copy in copies:
            copy[0].erase()
        for view in views:
            view.erase()
        fills[0].erase()
        op.erase()
        as_operation(out.owner).erase()
        changed += 1
    return changed


def hoist_loop_allocations(func_op: ir.Operation) -> int:
    """Static allocations inside a loop of the kernel (a scan's rounded slice, each iteration) are made once
    before it: each iteration's buffer is written before it is read, so one buffer serves them all.  Returns
    the number of allocations hoisted."""
    block = func_op.regions[0].blocks[0]
    hoisted = 0
    for op in [as_operation(o) for o in block.operations]:
        if op.name != "scf.for":
            continue
        for inner in nested_ops(op):
            if inner.name == "memref.alloc" and not inner.operands:
                inner.move_before(op)
                hoisted += 1
    return hoisted


def forward_reshaped_result_copies(func_op: ir.Operation) -> int:
    """``memref.copy (reshape %buf), %out`` where %buf is a local allocation seen only by its ops and that
    reshape, and %out is only this copy's target: the ops write %out through the inverse reshape instead
    (a transpose's [2, 16, 4, 16] result collapsed into a [32, 64] result).  Returns the number of copies
    removed."""
    removed = 0
    for copy in [as_operation(o) for o in func_op.regions[0].blocks[0].operations]:
        if copy.name != "memref.copy":
            continue
        source, dest = copy.operands[0], copy.operands[1]
        if not isinstance(dest.owner, ir.Block) or sum(1 for _ in dest.uses) != 1 or \
                isinstance(source.owner, ir.Block) or as_operation(source.owner).name not in RESHAPE_VIEWS:
            continue
        view = as_operation(source.owner)
        local = view.operands[0]
        if isinstance(local.owner, ir.Block) or as_operation(local.owner).name != "memref.alloc" or \
                sum(1 for _ in source.uses) != 1 or ir.MemRefType(dest.type) != ir.MemRefType(source.type):
            continue
        inverse = "memref.expand_shape" if view.name == "memref.collapse_shape" else "memref.collapse_shape"
        attributes = {"reassociation": view.attributes["reassociation"]}
        if inverse == "memref.expand_shape":
            attributes["static_output_shape"] = ir.DenseI64ArrayAttr.get(list(ir.MemRefType(local.type).shape))
        with ir.InsertionPoint.after(as_operation(local.owner)), copy.location:
            into = ir.Operation.create(inverse, results=[local.type], operands=[dest], attributes=attributes)
        allocation = as_operation(local.owner)
        copy.erase()
        view.erase()
        local.replace_all_uses_with(into.results[0])
        allocation.erase()
        removed += 1
    return removed


def reshape_arguments(kernel: ir.Operation) -> int:
    """A GM argument the kernel uses only through one reshape (a result [32, 64] written as the
    [2, 16, 4, 16] of a transpose, then collapsed) takes the reshaped type, its callers reshaping what they
    pass (a reshape of a contiguous GM buffer moves nothing): the kernel then reads and writes the buffer
    in the shape its ops use, which the tilings follow.  Only for kernels called by ``func.call`` alone.
    Returns the number of arguments changed."""
    module = kernel.parent
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    calls = [op for op in nested_ops(module) if op.name == "func.call"
             and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == name]
    # any other reference to the kernel (an attribute naming @kernel) would see the old signature
    others = [op for op in nested_ops(module) if op.name != "func.call" and op_id(op) != op_id(kernel)
              and f"@{name}" in str(op.attributes)]
    if not calls or others:
        return 0
    block = kernel.regions[0].blocks[0]
    changed = 0
    for position, argument in enumerate(block.arguments):
        views = [as_operation(u.owner) for u in argument.uses]
        if len(views) != 1 or views[0].name not in RESHAPE_VIEWS:
            continue
        view = views[0]
        t = ir.MemRefType(view.results[0].type)
        if not _identity_layout(t):
            continue
        for call in calls:
            with ir.InsertionPoint(call), call.location:
                reshaped = view.clone()
            reshaped.operands[0] = call.operands[position]
            call.operands[position] = reshaped.results[0]
        argument.set_type(t)
        view.results[0].replace_all_uses_with(argument)
        view.erase()
        changed += 1
    if changed:
        ftype = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
        kernel.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], list(ftype.results)))
    return changed


def simplify_buffers(kernel: ir.Operation) -> int:
    """Rewrites that keep a kernel's meaning and leave it fewer local buffers to place, tried when no plan
    fits it as it is: allocations in loops are made once before them, allocations and arguments reshaped
    once take the reshaped shape (a local copied whole through a reshape into a result is that result,
    reshaped), a copy of a filled buffer is a fill, a matmul copied out in slices is a matmul per
    slice, and a local buffer copied whole to a result at the end is the result
    (:func:`forward_result_copies`).  Returns the number of changes."""
    return (hoist_loop_allocations(kernel) + reshape_allocations(kernel) + forward_reshaped_result_copies(kernel)
            + reshape_arguments(kernel) + copies_of_fills(kernel) + slice_contractions(kernel)
            + forward_result_copies(kernel))
