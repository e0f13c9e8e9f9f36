"""Tensor parallelism from Python: annotate a graph's arguments with shard-dialect shardings, take one rank's graph.

The annotations are upstream MLIR's (``shard.grid``, ``shard.sharding``,
``shard.shard``), so a graph annotated here reads the same as one annotated
by hand or by another MLIR tool; the ``graph-shard-partition`` pass
(:mod:`graphfuse.pipelines.sharding`) turns it into one rank's graph.

    annotated = shard_arguments(module, {1: 0, 4: 1}, ranks=2)   # argument 1 split along dim 0, 4 along dim 1
    rank_graph = partition(annotated, rank)                      # this rank's graph, collectives inserted
    rank_weights = [shard_array(w, dim, rank, 2) ...]            # what its sharded arguments are passed

:func:`megatron_shardings` chooses the Megatron-LM layout for the linear
layers of a transformer imported from PyTorch, by parameter name.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import shard

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import entry_function
from graphfuse.dialect.parsing import parse_module
from graphfuse.pipelines.runner import run_pipeline

__all__ = ["COLUMN_PARALLEL", "ROW_PARALLEL", "megatron_shardings", "partition", "shard_argument_arrays",
           "shard_arguments", "shard_array"]

#: PyTorch ``nn.Linear`` weights ([out, in]) whose output is split over the ranks (q, k, v, gate, up)...
COLUMN_PARALLEL = ("*q_proj.weight", "*k_proj.weight", "*v_proj.weight", "*gate_proj.weight", "*up_proj.weight",
                   "*query.weight", "*key.weight", "*value.weight", "*intermediate.dense.weight", "*c_fc.weight")
#: ... and those whose input is (o, down): their partial products are summed by one all_reduce.
ROW_PARALLEL = ("*o_proj.weight", "*down_proj.weight", "*attention.output.dense.weight", "*output.dense.weight")


def megatron_shardings(parameter_names: Sequence[str], first_argument: int = 1,
                       column: Sequence[str] = COLUMN_PARALLEL, row: Sequence[str] = ROW_PARALLEL
                       ) -> dict[int, int]:
    """Argument index -> split dimension for the parameters of an imported model (``params="arguments"``:
    they follow the ``first_argument`` inputs): column-parallel weights along dim 0 (their output),
    row-parallel ones along dim 1 (their input); the rest replicated."""
    shardings = {}
    for k, name in enumerate(parameter_names):
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in row):
            shardings[first_argument + k] = 1
        elif any(fnmatch.fnmatchcase(name, pattern) for pattern in column):
            shardings[first_argument + k] = 0
    return shardings


def shard_arguments(module: ir.Module, shardings: Mapping[int, int | None], ranks: int,
                    entry: str | None = None, grid: str = "tp") -> ir.Module:
    """A copy of ``module`` whose function ``entry`` declares its arguments sharded over a 1-D grid of ``ranks``:
    ``shardings`` maps an argument's index to the dimension split over the grid (None: replicated)."""
    copy = parse_module(module.operation.get_asm(enable_debug_info=True), "<sharded>", module.context)
    func_op = entry_function(copy, entry)
    arguments = list(func_op.regions[0].blocks[0].arguments)
    with copy.context, ir.Location.unknown():
        if any(op.operation.name == "shard.grid" for op in copy.body.operations):
            raise GraphfuseError(f"the module already has a shard.grid; annotate it by hand or use grid={grid!r}"
                                 " on an unannotated module")
        with ir.InsertionPoint.at_block_begin(copy.body):
            shard.grid(grid, [ranks])
        block = func_op.regions[0].blocks[0]
        for index, dim in sorted(shardings.items()):
            if not 0 <= index < len(arguments):
                raise GraphfuseError(f"argument {index} does not exist: @{_name(func_op)} has {len(arguments)}")
            argument = arguments[index]
            rank = ir.RankedTensorType(argument.type).rank
            if dim is not None and not 0 <= dim < rank:
                raise GraphfuseError(f"argument {index} ({argument.type}) has no dimension {dim}")
            axes = [[] for _ in range(max(1, (dim or 0) + 1))]
            if dim is not None:
                axes[dim] = [0]
            text = "[" + ", ".join("[" + ", ".join(map(str, a)) + "]" for a in axes) + "]"
            users = [(use.owner, use.operand_number) for use in argument.uses]
            with ir.InsertionPoint.at_block_begin(block):
                sharding = shard.ShardingOp(ir.FlatSymbolRefAttr.get(grid), ir.Attribute.parse(
                    f"#shard<axisarray{text}>"), [], []).result
                annotated = shard.shard(argument, sharding)
            for owner, number in users:
                owner.operands[number] = annotated
    return copy


def partition(module: ir.Module, rank: int, group: str = "world") -> ir.Module:
    """Rank ``rank``'s graph of an annotated module (a copy): ``graph-shard-partition{rank=...}``."""
    copy = parse_module(module.operation.get_asm(enable_debug_info=True), "<partitioned>", module.context)
    run_pipeline(copy, f'builtin.module(graph-shard-partition{{rank={int(rank)} group="{group}"}})')
    return copy


def shard_array(array: np.ndarray, dim: int | None, rank: int, ranks: int) -> np.ndarray:
    """Rank ``rank``'s block of ``array`` split in ``ranks`` along ``dim`` (the whole array for None)."""
    if dim is None:
        return array
    if array.shape[dim] % ranks:
        raise GraphfuseError(f"dimension {dim} of an array of shape {array.shape} does not divide into {ranks}")
    return np.ascontiguousarray(np.split(array, ranks, axis=dim)[rank])


def shard_argument_arrays(arrays: Sequence[np.ndarray], shardings: Mapping[int, int | None], rank: int,
                          ranks: int) -> list[np.ndarray]:
    """The arguments as rank ``rank`` is passed them: the sharded ones cut to its block."""
    return [shard_array(a, shardings.get(k), rank, ranks) for k, a in enumerate(arrays)]


def _name(func_op: ir.Operation) -> str:
    return ir.StringAttr(func_op.attributes["sym_name"]).value
