"""graphfuse over several processes: a rank's graph compiled for the CPU, its collectives run by torch.distributed.

Every process (rank) of a job started by ``torchrun`` (or any launcher that
initializes ``torch.distributed``) compiles its own graph, the graph of its
shard, with :func:`compile` and calls it as it would call
:func:`graphfuse.compile`'s result.  The graph is fused as usual, then cut at
its collectives (:func:`graphfuse.lowering.partition.split_at_collectives`):
the compute stages are JIT-compiled, and the collectives run between them
through ``torch.distributed`` on the stages' numpy buffers (shared with torch
tensors, not copied).  graphfuse brings no transport of its own: gloo on CPUs
here, NCCL or HCCL on devices, the same calls.

- ``graph.all_reduce``: ``all_reduce`` (f16 and bf16 summed in f32 and
  rounded once, as the reference does).
- ``graph.all_gather``: ``all_gather`` into one tensor per rank, concatenated
  along the op's axis.
- ``graph.reduce_scatter``: ``reduce_scatter`` where the backend has it; gloo
  does not, so there it is an ``all_reduce`` of which each rank keeps its
  block (the same result, more traffic).
- ``graph.matmul_all_reduce`` (MatMulAllReduce) and
  ``graph.quant_batch_matmul_all_reduce``: the product in row blocks
  (``chunks``), each block's ``all_reduce`` started asynchronously as soon as
  the block is computed, so the communication of block k overlaps the compute
  of block k + 1; then the bias (``x3``).

The group names of the ops map to process groups: ``"world"`` is the default
group, others are passed as ``groups={"tp": group}``.  A group whose size is
not the op's ``group_size`` is an error before anything runs.  At every call
the ranks check that they agree on what they run, and no wait lasts longer
than ``timeout`` (:mod:`graphfuse.rank_checks`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from mlir import ir

from graphfuse.dialect.catalog import lookup_op, read_attributes
from graphfuse.dialect.constants import attr_to_array
from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.parsing import parse_module, relocate
from graphfuse.dialect.types import sig_from_type
from graphfuse.lowering.codegen.cpu.specs import arg_spec
from graphfuse.lowering.compiler import fuse_graph, lower_to_linalg
from graphfuse.lowering.host import default_threads
from graphfuse.lowering.options import CompileOptions, resolve_options
from graphfuse.lowering.partition import STAGE_ENTRY, CollectiveStep, ComputeStage, split_at_collectives
from graphfuse.lowering.runtime import (
    DEFAULT_LLVM_OPT_LEVEL,
    ArgumentChecks,
    CompiledFunction,
    compile_linalg,
)
from graphfuse.rank_checks import (
    DEFAULT_TIMEOUT,
    Agreement,
    CollectiveSite,
    check_timeout,
    finish_agreement,
    start_agreement,
    wait,
)

__all__ = ["DistributedExecutable", "compile", "default_chunks"]

#: Row blocks of a fused product with ``chunks = 0``: at most this many, each block's all-reduce carrying at least
#: MIN_CHUNK_BYTES.  Smaller all-reduces cost mostly their latency, which splitting pays once per block (measured
#: on gloo between two local ranks: 0.34 ms for 64 KiB, 0.64 ms for 1 MiB).
MAX_CHUNKS = 4
MIN_CHUNK_BYTES = 1 << 20


def default_chunks(rows: int, row_bytes: int, shared_cores: bool = False) -> int:
    """The row blocks a ``matmul_all_reduce`` with ``chunks = 0`` is split into (``row_bytes``: one result row).

    One when the communication runs on the cores that compute (``shared_cores``: every rank on this machine,
    each with its share of the cores): there is nothing to overlap it with, and each block adds a latency.
    """
    if shared_cores:
        return 1
    return max(1, min(MAX_CHUNKS, rows, rows * row_bytes // MIN_CHUNK_BYTES))


def _shared_cores(dist: Any) -> bool:
    """Whether the ranks' communication competes with their compute for this machine's cores: gloo, every rank
    on this machine (torchrun's LOCAL_WORLD_SIZE is the world)."""
    local = os.environ.get("LOCAL_WORLD_SIZE")
    return dist.get_backend() == "gloo" and local is not None and int(local) == dist.get_world_size()


def _torch() -> tuple[Any, Any]:
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        raise GraphfuseError("graphfuse.distributed runs collectives through torch.distributed: install torch "
                             "(pip install 'graphfuse[torch]')") from None
    if not dist.is_available() or not dist.is_initialized():
        raise GraphfuseError("torch.distributed is not initialized: start the ranks with torchrun and call "
                             "torch.distributed.init_process_group('gloo') first")
    return torch, dist


def _local_threads() -> int:
    """Threads per rank: the cores shared by the ranks on this machine (torchrun's LOCAL_WORLD_SIZE)."""
    local = int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1)
    return max(1, default_threads() // max(1, local))


@dataclass
class _Collective:
    """A collective of the entry function, ready to run."""

    name: str
    attrs: dict[str, Any]
    #: the process group, None for the default one: an executable that held the default group would keep it alive
    #: past destroy_process_group, to interpreter exit, where gloo aborts releasing its last operation's tensors
    group: Any
    operands: tuple[ir.Value, ...]
    results: tuple[ir.Value, ...]
    #: the operand is used by nothing else: the collective may work in its buffer
    operand_dies: bool
    #: a fused product (matmul_all_reduce, quant_batch_matmul_all_reduce): its compiled product of one row block,
    #: per block height
    blocks: dict[int, CompiledFunction] = field(default_factory=dict)
    chunks: int = 1
    #: seconds the last run spent computing (a fused product's blocks), the rest of it communicating
    computed: float = 0.0
    site: CollectiveSite | None = None
    #: what the ranks of the group must agree on, a tab, where it is (rank_checks.start_agreement)
    agreed: str = ""
    #: seconds to wait for the other ranks (None: no limit); whether the ranks first check they agree
    timeout: float | None = DEFAULT_TIMEOUT
    check_ranks: bool = True


@dataclass
class _Stage:
    function: CompiledFunction
    inputs: tuple[ir.Value, ...]
    outputs: tuple[ir.Value, ...]


class DistributedExecutable(ArgumentChecks):
    """One rank's compiled graph: call it with numpy arrays, get numpy arrays back (every rank calls it); the
    arguments are checked as :class:`~graphfuse.Executable` checks them."""

    def __init__(self, entry: str, module: ir.Module, steps: list[_Stage | _Collective], rank: int, world: int):
        self.entry = self.name = entry
        self.rank = rank
        self.world_size = world
        self._module = module  # owns the values the steps are keyed by
        self._steps = steps
        self._arguments = list(functions(module)[entry].regions[0].blocks[0].arguments)
        self._returned = list(_return_op(module, entry).operands)
        self.inputs = [arg_spec(a.type, f"@{entry} argument {k}") for k, a in enumerate(self._arguments)]
        self.outputs = [arg_spec(v.type, f"@{entry} result {k}") for k, v in enumerate(self._returned)]
        #: seconds the last call spent computing (stages, matmul_all_reduce's blocks) and communicating (the
        #: rest of the collectives: waiting for the other ranks and the transfers not hidden behind compute)
        self.timings: dict[str, float] = {}

    @property
    def collectives(self) -> int:
        return sum(isinstance(step, _Collective) for step in self._steps)

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        arrays = self.check_inputs(arrays)
        values: dict[ir.Value, np.ndarray] = dict(zip(self._arguments, arrays, strict=True))
        compute = communicate = 0.0
        agreements = self._start_agreements(arrays)
        for step in self._steps:
            start = time.perf_counter()
            if isinstance(step, _Collective) and step.group in agreements:
                torch, dist = _torch()
                finish_agreement(agreements.pop(step.group), dist, torch, step.timeout)
                communicate += time.perf_counter() - start
                start = time.perf_counter()
            if isinstance(step, _Stage):
                outputs = step.function(*[values[v] for v in step.inputs])
                values.update(zip(step.outputs, outputs, strict=True))
                compute += time.perf_counter() - start
            else:
                step.computed = 0.0
                values.update(zip(step.results, _run_collective(step, values), strict=True))
                compute += step.computed
                communicate += time.perf_counter() - start - step.computed
        self.timings = {"compute": compute, "collectives": communicate}
        return [_constant_or(values, v) for v in self._returned]

    @cached_property
    def _checked_groups(self) -> list[tuple[Any, CollectiveSite, list[str], bool]]:
        """Per group whose collectives check the ranks: the group, its first collective, the lines the ranks agree
        on, and whether an operand type of them has a dynamic size (the call's sizes are then agreed on too)."""
        by_group: dict[Any, list[_Collective]] = {}
        for step in self._steps:
            if isinstance(step, _Collective) and step.check_ranks:
                by_group.setdefault(step.group, []).append(step)
        checked = []
        for group, steps in by_group.items():
            assert steps[0].site is not None
            lines = [step.agreed for step in steps]
            checked.append((group, steps[0].site, lines, any("?" in line.partition("\t")[0] for line in lines)))
        return checked

    def _start_agreements(self, arrays: list[np.ndarray]) -> dict[Any, Agreement]:
        """Per group, the exchange of what this call runs over it, started (nothing when check_ranks is off)."""
        if not self._checked_groups:
            return {}
        torch, dist = _torch()
        dynamic = ", ".join(f"argument {k} {'x'.join(map(str, a.shape))}"
                            for k, (a, spec) in enumerate(zip(arrays, self.inputs, strict=True))
                            if None in spec.shape)
        agreements = {}
        for group, site, lines, sized in self._checked_groups:
            if dynamic and sized:
                lines = [*lines, f"calls @{self.entry} with dynamic sizes: {dynamic}"]
            agreements[group] = start_agreement(site, lines, group, dist, torch)
        return agreements


def _constant_or(values: dict[ir.Value, np.ndarray], value: ir.Value) -> np.ndarray:
    if value in values:
        return values[value]
    return attr_to_array(value.owner.attributes["value"])  # a constant returned as it is


def _return_op(module: ir.Module, entry: str) -> ir.Operation:
    block = functions(module)[entry].regions[0].blocks[0]
    return block.operations[len(block.operations) - 1].operation


# ---------------------------------------------------------------------- collectives


def _reduce_op(dist: Any, reduction: str) -> Any:
    return {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[reduction]


def _as_tensor(array: np.ndarray, own: bool) -> tuple[Any, np.ndarray]:
    """(a torch tensor to communicate in, the numpy array it shares memory with); f16/bf16 go through f32."""
    torch, _ = _torch()
    if _is_narrow_float(array.dtype):
        wide = array.astype(np.float32)
        return torch.from_numpy(wide), wide
    buffer = array if own and array.flags.writeable else np.array(array, copy=True)
    return torch.from_numpy(buffer), buffer


def _run_collective(step: _Collective, values: dict[ir.Value, np.ndarray]) -> list[np.ndarray]:
    _, dist = _torch()
    operands = [_constant_or(values, v) for v in step.operands]
    x = operands[0]
    if step.name == "graph.all_reduce":
        tensor, buffer = _as_tensor(x, step.operand_dies)
        _wait(step, dist.all_reduce(tensor, op=_reduce_op(dist, step.attrs["reduction"]), group=step.group,
                                    async_op=True))
        return [buffer.astype(x.dtype, copy=False)]
    if step.name == "graph.all_gather":
        tensor, _ = _as_tensor(x, False)
        pieces = [tensor.new_empty(tensor.shape) for _ in range(step.attrs["group_size"])]
        _wait(step, dist.all_gather(pieces, tensor, group=step.group, async_op=True))
        return [np.concatenate([p.numpy() for p in pieces], axis=step.attrs["axis"]).astype(x.dtype, copy=False)]
    if step.name == "graph.reduce_scatter":
        tensor, buffer = _as_tensor(x, step.operand_dies)
        _wait(step, dist.all_reduce(tensor, op=_reduce_op(dist, step.attrs["reduction"]), group=step.group,
                                    async_op=True))
        blocks = np.split(buffer, step.attrs["group_size"], axis=step.attrs["axis"])
        return [np.ascontiguousarray(blocks[dist.get_rank(step.group)]).astype(x.dtype, copy=False)]
    assert step.name in _PRODUCTS, step.name
    return [_product_all_reduce(step, operands)]


def _agreed_line(step: _Collective) -> str:
    """What the ranks of the group must agree on (the collective, its attributes, its operands' types), a tab,
    and where it is."""
    attributes = ", ".join(f"{name} = {value}" for name, value in sorted(step.attrs.items()) if name != "group")
    types = ", ".join(str(v.type) for v in step.operands)
    assert step.site is not None
    return f"{step.name} {{{attributes}}} on {types}\t{step.site.position}"


def _wait(step: _Collective, work: Any) -> None:
    assert step.site is not None
    wait(work, step.site, step.group, _torch()[1], step.timeout)


def _product_all_reduce(step: _Collective, operands: list[np.ndarray]) -> np.ndarray:
    """The (quantized) matmul in row blocks, each block's all_reduce running while the next block is computed,
    then the bias or ``x3`` added once.

    One all-reduce is in flight at a time (a block's starts once the previous one is done): gloo runs
    concurrent ones no faster, and on a small machine their threads take the cores from the matmul.
    """
    torch, dist = _torch()
    compute_operands = _PRODUCTS[step.name]
    a, rest, extra = operands[0], operands[1:compute_operands], operands[compute_operands:]
    dtype = step.blocks[next(iter(step.blocks))].outputs[0].dtype
    narrow = _is_narrow_float(dtype)  # f16 / bf16 partial products are summed in f32, rounded once
    heights = _heights(a.shape[-2], step.chunks if a.ndim == 2 else 1)
    columns = step.blocks[heights[0]].outputs[0].shape[-1]
    out = np.empty((*a.shape[:-2], a.shape[-2], columns), np.float32 if narrow else dtype)
    in_flight, start = None, 0
    for height in heights:
        begin = time.perf_counter()
        rows = np.ascontiguousarray(a[..., start:start + height, :])
        block = out[..., start:start + height, :]  # rows of a 2-D result (or the whole batch): contiguous
        if narrow:
            (product,) = step.blocks[height](rows, *rest)
            block[...] = product
        else:
            step.blocks[height](rows, *rest, out=[block])  # computed in place
        step.computed += time.perf_counter() - begin
        if in_flight is not None:
            _wait(step, in_flight)
        in_flight = dist.all_reduce(torch.from_numpy(block), group=step.group, async_op=True)
        start += height
    if in_flight is not None:
        _wait(step, in_flight)
    result = out.astype(dtype, copy=False)
    if extra:  # added once, after the sum, rounded as the add rounds it
        result = (result.astype(np.float32) + extra[0].astype(np.float32)).astype(dtype) if narrow \
            else result + extra[0]
    return result


#: The fused products that communicate: how many of their operands the product takes (the rest is added after).
_PRODUCTS = {"graph.matmul_all_reduce": 2, "graph.quant_batch_matmul_all_reduce": 3}


def _is_narrow_float(dtype: np.dtype) -> bool:
    return dtype == np.float16 or str(dtype) == "bfloat16"


def _heights(rows: int, chunks: int) -> list[int]:
    """Row block heights: ``chunks`` blocks as equal as they divide (the first ones one row taller)."""
    chunks = max(1, min(chunks, rows))
    base, extra = divmod(rows, chunks)
    return [base + 1] * extra + [base] * (chunks - extra)


# ---------------------------------------------------------------------- compile


def compile(
    source: ir.Module | str | Path,
    *,
    entry: str | None = None,
    pipeline: str | None = None,
    opt_level: int | None = None,
    graph_kernel_flags: str | None = None,
    fusion_switch_file: str | Path | None = None,
    groups: dict[str, Any] | None = None,
    num_threads: int | None = None,
    chunks: int | None = None,
    jit_opt_level: int = DEFAULT_LLVM_OPT_LEVEL,
    fast_math: bool = True,
    timeout: float | None = DEFAULT_TIMEOUT,
    check_ranks: bool = True,
) -> DistributedExecutable:
    """Fuse and compile this rank's graph ``source`` (as :func:`graphfuse.compile` takes it); its collectives run
    through ``torch.distributed`` (initialized by the caller).

    ``groups`` maps the ops' group names to process groups (``"world"``: the default group; a torch group's own
    name resolves too).  ``num_threads`` defaults to this machine's cores divided among its ranks (torchrun's
    ``LOCAL_WORLD_SIZE``).  ``chunks`` sets the row blocks of the fused products whose ``chunks`` is 0
    (default: :func:`default_chunks`).

    ``timeout``: seconds a rank waits at one collective for the others before it raises an error naming itself,
    the collective and where the others wait (None: no limit).  ``check_ranks``: before each collective the ranks
    of its group exchange what they are about to run (the collective, its attributes, its operands' shapes and
    dtypes) and raise on every rank where they disagree, instead of computing garbage or hanging; one small
    ``all_gather`` per collective (False skips it).
    """
    timeout = check_timeout(timeout)
    if not isinstance(check_ranks, bool):
        raise GraphfuseError(f"check_ranks must be True or False, got {check_ranks!r}")
    if chunks is not None and (not isinstance(chunks, int) or chunks < 1):
        raise GraphfuseError(f"chunks must be a positive integer, got {chunks!r}")
    _, dist = _torch()
    groups = _checked_groups(groups, dist)
    options = resolve_options(pipeline=pipeline, opt_level=opt_level, graph_kernel_flags=graph_kernel_flags,
                              fusion_switch_file=fusion_switch_file, jit_opt_level=jit_opt_level,
                              num_threads=_local_threads() if num_threads is None else num_threads,
                              fast_math=fast_math)
    fused = fuse_graph(source, entry=entry, options=options, collectives=True)
    steps: list[_Stage | _Collective] = []
    for stage in split_at_collectives(fused.module, fused.entry):
        if isinstance(stage, ComputeStage):
            steps.append(_Stage(_compile_stage(stage.text, fused.filename, options), stage.inputs, stage.outputs))
        else:
            steps.append(_collective(stage, fused.filename, groups, dist, options, chunks))
    collectives = [step for step in steps if isinstance(step, _Collective)]
    for index, step in enumerate(collectives, 1):
        step.site = CollectiveSite(step.name, index, len(collectives), fused.entry, step.attrs["group"])
        step.timeout, step.check_ranks = timeout, check_ranks
        step.agreed = _agreed_line(step)
    return DistributedExecutable(fused.entry, fused.module, steps, dist.get_rank(), dist.get_world_size())


def _checked_groups(groups: Any, dist: Any) -> dict[str, Any]:
    """``groups`` with each value a process group (``"world"`` or None: the default group), or an error naming the
    first entry that is not."""
    if groups is None:
        return {}
    if not isinstance(groups, dict):
        raise GraphfuseError(f"groups must map group names to process groups, not {type(groups).__name__}")
    checked = {}
    for name, group in groups.items():
        if not isinstance(name, str):
            raise GraphfuseError(f"groups: the group name {name!r} is not a string")
        if group is None or group == "world":
            group = dist.group.WORLD
        if not isinstance(group, dist.ProcessGroup):
            raise GraphfuseError(f"groups['{name}'] must be a torch.distributed process group (or 'world'), not "
                                 f"{type(group).__name__}")
        checked[name] = group
    return checked


def _compile_stage(text: str, filename: str, options: CompileOptions) -> CompiledFunction:
    module = parse_module(text, filename, make_context())
    lower_to_linalg(module, filename, options.fast_math)
    return compile_linalg(module, STAGE_ENTRY, opt_level=options.jit_opt_level, threads=options.threads,
                          filename=filename, streaming=options.streaming, jobs=options.codegen_jobs)


def _collective(step: CollectiveStep, filename: str, groups: dict[str, Any], dist: Any, options: CompileOptions,
                chunks: int | None) -> _Collective:
    op = step.op
    spec = lookup_op(op.name)
    assert spec is not None
    attrs = read_attributes(spec, op)
    name = attrs["group"]
    group = groups.get(name)
    if group is None and name != "world":
        group = _registered_group(name)  # a torch.distributed group's own name (a model imported from PyTorch)
    if group is None and name != "world":
        raise _located(op, filename, f"'{op.name}' runs over group '{name}', which graphfuse.distributed.compile "
                       f"was not given (groups={{'{name}': ...}})")
    size = dist.get_world_size(group)  # group None: the default group (not held: see _Collective.group)
    if size != attrs["group_size"]:
        raise _located(op, filename, f"'{op.name}' expects group '{name}' of {attrs['group_size']} ranks, but "
                       f"it has {size}")
    operand = op.operands[0]
    dies = len(list(operand.uses)) == 1 and not isinstance(operand.owner, ir.Block)
    collective = _Collective(op.name, attrs, group, tuple(op.operands), tuple(op.results), dies)
    if op.name in _PRODUCTS:
        a_sig = sig_from_type(op.operands[0].type)
        if attrs.get("transpose_a") or attrs.get("transpose_x1"):  # a transposed left operand has no row blocks
            raise _located(op, filename, f"'{op.name}' with a transposed first operand is not supported by "
                           "graphfuse.distributed; transpose it before the product")
        rows = a_sig.shape[-2]
        result = sig_from_type(op.results[0].type)
        row_bytes = (result.shape[-1] or 1) * 4  # summed in f32
        collective.chunks = attrs["chunks"] or chunks or default_chunks(rows, row_bytes, _shared_cores(dist))
        for height in set(_heights(rows, collective.chunks)):
            collective.blocks[height] = _compile_block(op, height, filename, options)
    return collective


def _registered_group(name: str) -> Any:
    """The torch.distributed process group registered under ``name``, or None."""
    try:
        from torch.distributed.distributed_c10d import _resolve_process_group

        return _resolve_process_group(name)
    except (ImportError, RuntimeError, ValueError):
        return None


def _compile_block(op: ir.Operation, height: int, filename: str, options: CompileOptions) -> CompiledFunction:
    """The product of one row block of a fused product-all-reduce (matmul or quant_batch_matmul), as a function."""
    count = _PRODUCTS[op.name]
    product = {"graph.matmul_all_reduce": "graph.matmul",
               "graph.quant_batch_matmul_all_reduce": "graph.quant_batch_matmul"}[op.name]
    spec = lookup_op(product)
    assert spec is not None
    kept = {name: op.attributes[name] for name in op.attributes if spec.attr(name) is not None}
    attributes = ", ".join(f"{name} = {value}" for name, value in kept.items())

    def rows_of(t: ir.Type) -> str:
        sig = sig_from_type(t)
        return f"tensor<{'x'.join(map(str, [*sig.shape[:-2], height, sig.shape[-1]]))}x{sig.dtype}>"

    types = [rows_of(op.operands[0].type), *(str(v.type) for v in list(op.operands)[1:count])]
    result_type = rows_of(op.results[0].type)
    names = [f"%x{k}" for k in range(count)]
    text = (f"func.func @{STAGE_ENTRY}({', '.join(f'{n}: {t}' for n, t in zip(names, types, strict=True))}) "
            f"-> {result_type} {{\n"
            f'  %0 = "{product}"({", ".join(names)}){f" {{{attributes}}}" if attributes else ""} : '
            f"({', '.join(types)}) -> {result_type}\n"
            f"  return %0 : {result_type}\n}}\n")
    return _compile_stage(text, filename, options)


def _located(op: ir.Operation, filename: str, message: str) -> GraphfuseError:
    return GraphfuseError([relocate(Diagnostic("error", message, source_loc(op.location)), filename)])

