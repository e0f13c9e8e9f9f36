"""Applying the contraction schedules recorded on a module's ops (``graph.schedule``, :mod:`.strategy`).

The schedules run family by family, in the order their rewrites need: batched matmuls shared out by batches
(when written by hand: the strategy applies those itself, a rewrite its products' schedules read), direct
convolutions, row-dot products, matmuls (each with its fill and epilogue outlined while its fusions run,
:mod:`graphfuse.lowering.isolation`), the copies of B into panels the packed matmuls read; then the products
left unread by the fusions are erased, and the epilogues left alone, the vectorization of every register tile
and the blocked batched matmuls follow.  Within a family, the schedules run in the order they first appear in
the module (the copies and the row-dot products by their sizes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.matching import op_id, ops_named, producer
from graphfuse.lowering.contraction.dot_tiles import vectorize_pair_tiles
from graphfuse.lowering.contraction.marks import (
    _clear_marks,
    _erase_fused_products,
    _erase_unread,
    _erase_unused_fills,
    _mark_static_tiles,
)
from graphfuse.lowering.contraction.pair_copies import vectorize_pair_copies
from graphfuse.lowering.contraction.panels import filled_init
from graphfuse.lowering.isolation import isolated
from graphfuse.lowering.schedules.library import (
    SCHEDULE,
    apply_schedule,
    apply_sequence,
    loaded,
    schedule_sequence,
    schedule_sizes,
    scheduled_ops,
)

__all__ = ["apply_schedules", "schedule_problem"]


def _size(schedule: ir.Attribute, name: str) -> int:
    return schedule_sizes(schedule)[name]


def _conv_order(schedule: ir.Attribute) -> tuple[int, int]:
    """Output columns in the lanes (register tiles of several filters) first, each with its epilogue first."""
    return int(_size(schedule, "tile_dim1") == 1), int(schedule_sequence(schedule) == "direct_conv")


def _erase_fusion_leftovers(module: ir.Module) -> None:
    _erase_fused_products(module)
    _erase_unused_fills(module)


def _erase_unread_transposes(module: ir.Module) -> None:
    """The transposes of B that batch tasks computed in each task."""
    _erase_unread(module, lambda op: op.name == "linalg.transpose")


def _mark_row_dot_tiles(module: ir.Module) -> None:
    """The row-dot tiles' fills and sums of lanes, vectorized with the tiles."""
    _mark_static_tiles(module, ("linalg.fill", "linalg.reduce"), "graph.row_dot_tiles")


@dataclass(frozen=True)
class _Family:
    """Schedules that run together: which sequences, the ops they tile (by name and loop count), in what order
    (None: as they first appear in the module), and what follows them when there were any."""

    member: Callable[[str], bool]
    ops: tuple[tuple[str, int], ...]
    order: Callable[[ir.Attribute], tuple] | None = None
    then: Callable[[ir.Module], None] | None = None


#: The products and the copies they read, in the order they run; the fusions' leftovers are erased after them.
_PRODUCTS = (
    _Family(lambda name: name.startswith("batch_tasks"), (("linalg.batch_matmul", 4),),
            then=_erase_unread_transposes),
    _Family(lambda name: name.startswith("direct_conv"), (("linalg.generic", 7),), _conv_order,
            _erase_fusion_leftovers),
    _Family(lambda name: name.startswith("row_dot_"), (("linalg.generic", 3),),
            lambda s: (_size(s, "columns_per_task"), _size(s, "rows_per_tile")), _mark_row_dot_tiles),
    _Family(lambda name: name.startswith("row_tile_dot_"), (("linalg.generic", 4),),
            lambda s: (_size(s, "columns_per_task"),), _mark_row_dot_tiles),
    _Family(lambda name: name == "row_tile_columns", (("linalg.generic", 4),),
            lambda s: (_size(s, "columns_per_task"), _size(s, "tile_columns"))),
    _Family(lambda name: name == "register_tiles", (("linalg.matmul", 3),)),
    _Family(lambda name: name.startswith("packed_tiles"), (("linalg.generic", 4), ("linalg.generic", 5))),
    _Family(lambda name: name in ("pack_panels", "pack_transposed_panels"), (("linalg.transpose", 3),),
            lambda s: (_size(s, "panels_per_task"), schedule_sequence(s) == "pack_transposed_panels")),
    _Family(lambda name: name == "pack_pair_panels", (("linalg.transpose", 4),),
            lambda s: (_size(s, "panels_per_task"),), vectorize_pair_copies),
    _Family(lambda name: name == "column_sums", (("linalg.generic", 3),)),
    _Family(lambda name: name == "pack_panels_serial", (("linalg.transpose", 3),)),
    _Family(lambda name: name == "pack_transposed_panels_serial", (("linalg.transpose", 3),)),
)
#: The epilogues left alone, before the register tiles are vectorized.
_EPILOGUES = _Family(lambda name: name == "epilogue_rows", (("linalg.generic", 2),))
#: The batched matmuls kept whole, last: LLVM vectorizes their loops.
_BATCHED = _Family(lambda name: name == "batch_matmul_blocks", (("linalg.batch_matmul", 4),))


def schedule_problem(schedule: ir.DictAttr, op: ir.Operation) -> str | None:
    """Why library schedule ``schedule`` (its parameters checked against the sequence) cannot tile ``op``, or
    None: the op's kind and loops, its sizes (positive, but for a task size, of which one of a pair may be 0),
    and the ops its fusions take (C's fill, the epilogue, B's transpose)."""
    name = schedule_sequence(schedule)
    family = next((f for f in (*_PRODUCTS, _EPILOGUES, _BATCHED) if f.member(name)), None)
    if family is None:
        return f"no family of the contraction schedules runs @{name}"
    if (op.name, _loops(op)) not in family.ops:
        wanted = " or ".join(f"a {kind} of {loops} loops" for kind, loops in family.ops)
        return f"@{name} tiles {wanted}, not a {op.name} of {_loops(op)} loops"
    sizes = schedule_sizes(schedule)
    tasks = {key: value for key, value in sizes.items() if key.startswith("task_")}
    for key, value in sizes.items():
        if value < (0 if key in tasks else 1):
            return f"parameter '{key}' of @{name} must be {'at least 0' if key in tasks else 'positive'}, got {value}"
    if tasks and not any(tasks.values()):
        return f"@{name} needs one of {', '.join(sorted(tasks))} positive"
    if "_filled" in name and filled_init(op.operands[2]) is None:
        return f"@{name} fuses C's fill, but the op's init is not a linalg.fill (or an int8 product's compensated fill)"
    if "_transposed" in name and name.startswith("batch") and producer(op.operands[1], "linalg.transpose") is None:
        return f"@{name} fuses B's transpose, but the op's B is not a linalg.transpose"
    if "_with_epilogue" in name:
        readers = {op_id(use.owner): use.owner for use in op.results[0].uses}
        if len(readers) != 1 or next(iter(readers.values())).name != "linalg.generic":
            return f"@{name} fuses the op into its epilogue, but its result has no sole linalg.generic reader"
    return None


def _loops(op: ir.Operation) -> int:
    """The loops of a linalg op (its iteration space's rank)."""
    if "iterator_types" in op.attributes:
        return len(ir.ArrayAttr(op.attributes["iterator_types"]))
    if op.name == "linalg.transpose":
        return ir.RankedTensorType(op.results[0].type).rank if op.results else 0
    return {"linalg.matmul": 3, "linalg.batch_matmul": 4}.get(op.name, 0)


def apply_schedules(module: ir.Module) -> None:
    """Apply every schedule recorded on ``module``'s ops, vectorize the register tiles and clear the marks the
    schedules set (``graph.schedule`` too)."""
    with loaded(module.context):
        recorded = list(scheduled_ops(module))
        if not recorded and not ops_named(module, "linalg."):
            return  # no schedule, nothing the steps below tile, mark or erase
        families = (*_PRODUCTS, _EPILOGUES, _BATCHED)
        for schedule in recorded:
            if not any(family.member(schedule_sequence(schedule)) for family in families):
                raise GraphfuseError(f"no family of the contraction schedules runs @{schedule_sequence(schedule)}")
        for family in _PRODUCTS:
            _apply_family(module, family, recorded)
        _erase_fusion_leftovers(module)
        _apply_family(module, _EPILOGUES, recorded)
        if _mark_static_tiles(module):
            vectorize_pair_tiles(module)  # before the vectorizer, which would widen their pairs to f32
            apply_sequence(module, "vectorize_register_tiles", "vectorizing matmul tiles")
        _apply_family(module, _BATCHED, recorded)
        _clear_marks(module)


def _apply_family(module: ir.Module, family: _Family, recorded: list[ir.Attribute]) -> None:
    members = [s for s in recorded if family.member(schedule_sequence(s))]
    for schedule in sorted(members, key=family.order) if family.order else members:
        _apply_isolated(module, schedule)
    if members and family.then is not None:
        family.then(module)


def _apply_isolated(module: ir.Module, schedule: ir.Attribute) -> None:
    """Apply a matmul's or convolution's ``schedule`` with each of its ops, the fill of its result and the
    epilogue it is fused into outlined into a function of its own while it runs: the fusions cost in proportion
    to the function they work in (isolation.py)."""
    name = schedule_sequence(schedule)
    fuses = name in ("register_tiles", "direct_conv_with_epilogue") or name.startswith("packed_tiles")
    if not fuses:
        apply_schedule(module, schedule, "the contraction schedule")
        return
    clusters = []
    for op in _carrying(module, schedule):
        epilogue = None
        if "with_epilogue" in name:
            readers = {op_id(use.owner): use.owner for use in op.results[0].uses}  # wrappers' hash is no identity
            epilogue = next(iter(readers.values())) if len(readers) == 1 else None
        clusters.append([x for x in (filled_init(op.operands[2]), op, epilogue) if x is not None])
    with isolated(module, clusters):
        apply_schedule(module, schedule, "the contraction schedule")


def _carrying(module: ir.Module, schedule: ir.Attribute) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if SCHEDULE in op.attributes and op.attributes[SCHEDULE] == schedule:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found
