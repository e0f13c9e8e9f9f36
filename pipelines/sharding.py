"""graph-shard-partition: one rank's graph of a graph annotated with upstream MLIR's shard dialect.

A single-device graph says how it is split across the ranks of a 1-D
``shard.grid`` with ``shard.shard`` annotations, in upstream's syntax::

    shard.grid @tp(shape = 2)
    %col = shard.sharding @tp split_axes = [[0]] : !shard.sharding       // dim 0 split over the grid
    %wq = shard.shard %arg1 to %col : tensor<64x64xf32>                  // q_proj.weight [out, in]
    %row = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding   // dim 1 split
    %wo = shard.shard %arg4 to %row : tensor<64x64xf32>                  // o_proj.weight

An annotated function argument is passed to each rank as its shard (the
argument's type becomes the shard's), an annotated constant is sliced, an
annotated intermediate value is resharded there.  From those the pass
propagates, op by op in program order, what each value is on a rank:
*replicated* (the whole value), *split* along one dimension (a contiguous
block, rank k holding the k-th), or *partial* (a term of a sum over the
ranks).  Each op keeps its operands' layout when its rule allows (below) and
computes on the local blocks; otherwise its operands are made whole first
(``graph.all_gather`` for a split value, ``graph.all_reduce`` for a partial
one) and it runs replicated.  The function's results are made whole.  This
is Megatron-style tensor parallelism: a column-parallel matmul (weight split
along its output) makes a split result, the heads follow it through reshapes
and transposes and attention, and a row-parallel matmul (weight split along
its contraction) makes a partial result, summed by one ``all_reduce``
(MatMulAllReduce then fuses the two).

Rules, the rest is replicated:

- elementwise ops (unary, binary, select, cast): the operands' split
  dimensions, aligned as broadcasting aligns them, agree; a replicated
  operand spanning that dimension is sliced to the rank's block, one
  broadcast along it is used whole; ``add``/``sub`` of partials, ``neg`` of
  one and ``mul``/``div`` of one by a replicated value stay partial;
- ``matmul``: replicated x split along N -> split along N; split along M x
  replicated -> split along M; either split along the contraction -> partial
  (the other factor sliced to the rank's block of it);
  both split along the same batch dimension (or one broadcast along it) ->
  split along it;
- ``reshape``: a split dimension that is the outermost of the dimensions it
  becomes (or merges into) and whose new size the ranks divide; ``transpose``
  follows the permutation;
- ``softmax``, ``safe_softmax``, ``log_softmax``, ``rms_norm``, ``layer_norm``, the reductions,
  ``slice``, ``concat``, ``split``: along dimensions other than the split one
  (``reduce_sum`` over it makes a partial sum); ``flash_attention``: q, k, v
  split along the same leading dimension.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from mlir import ir

from graphfuse.dialect.catalog import lookup_op, python_to_attr, read_attributes
from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.matching import producer, sig
from graphfuse.dialect.shape_utils import normalize_axes, normalize_axis
from graphfuse.dialect.types import TensorSig, tensor_type
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["GraphShardPartition", "Layout"]

REPLICATED = None
PARTIAL = "partial"
#: a layout: REPLICATED, PARTIAL, or the int dimension the value is split along
Layout = int | str | None

_ELEMENTWISE_GROUPS = ("unary elementwise", "binary elementwise")
#: partial sums stay partial through these (linear in the partial operand)
_LINEAR = {"graph.add", "graph.sub", "graph.neg", "graph.mul", "graph.div"}


@dataclass(frozen=True)
class _Grid:
    name: str
    size: int


class _Partitioner:
    """Rewrites one function in place for one rank."""

    def __init__(self, func_op: ir.Operation, grid: _Grid, rank: int, group: str, context: PassContext):
        self.func = func_op
        self.block = func_op.regions[0].blocks[0]
        self.grid = grid
        self.rank = rank
        self.group = group
        self.context = context
        self.layout: dict[ir.Value, Layout] = {}
        self.whole: dict[ir.Value, TensorSig] = {}  # the global signature of every value
        self.replicated: dict[ir.Value, ir.Value] = {}  # value -> its whole form, made once

    # ------------------------------------------------------------------ helpers

    def fail(self, message: str, location: ir.Location | None = None) -> None:
        self.context.fail(f"graph-shard-partition: {message}", location)

    def local(self, whole: TensorSig, layout: Layout, location: ir.Location) -> TensorSig:
        if not isinstance(layout, int):
            return whole
        size = whole.shape[layout]
        if size is None or size % self.grid.size:
            self.fail(f"dimension {layout} of {whole} does not divide into {self.grid.size} ranks", location)
        shape = list(whole.shape)
        shape[layout] = size // self.grid.size
        return TensorSig(tuple(shape), whole.dtype)

    def create(self, name: str, operands: list[ir.Value], location: ir.Location, before: ir.Operation,
               result: TensorSig, **attrs: Any) -> ir.Value:
        spec = lookup_op(f"graph.{name}")
        assert spec is not None
        with location, ir.InsertionPoint(before):
            op = ir.Operation.create(spec.full_name, results=[tensor_type(result)], operands=operands,
                                     attributes={k: python_to_attr(spec.attr(k), v) for k, v in attrs.items()})
        return op.results[0]

    def make_whole(self, value: ir.Value, user: ir.Operation) -> ir.Value:
        """``value`` as the whole tensor (gathered or summed before ``user`` if it is not)."""
        layout = self.layout.get(value, REPLICATED)
        if layout is REPLICATED:
            return value
        if value in self.replicated:
            return self.replicated[value]
        whole = self.whole[value]
        anchor = user if isinstance(value.owner, ir.Block) else value.owner.operation
        insert_before = anchor if isinstance(value.owner, ir.Block) else _next_op(anchor)
        attrs = {"group": self.group, "group_size": self.grid.size}
        if layout == PARTIAL:
            made = self.create("all_reduce", [value], user.location, insert_before, whole, **attrs)
            self.context.count("num-all-reduce")
        else:
            made = self.create("all_gather", [value], user.location, insert_before, whole, axis=layout, **attrs)
            self.context.count("num-all-gather")
        self.layout[made], self.whole[made] = REPLICATED, whole
        self.replicated[value] = made
        return made

    def make_split(self, value: ir.Value, dim: int, user: ir.Operation) -> ir.Value:
        """``value`` (whole) cut to this rank's block along ``dim``: a sliced constant, or a graph.slice."""
        whole = self.whole.get(value) or sig(value)
        part = self.local(whole, dim, user.location)
        constant = producer(value, "arith.constant")
        if constant is not None:
            data = attr_to_array(constant.attributes["value"])
            block = np.ascontiguousarray(np.split(data, self.grid.size, axis=dim)[self.rank])
            with user.location, ir.InsertionPoint(user):
                made = ir.Operation.create("arith.constant", results=[tensor_type(part)],
                                           attributes={"value": array_to_attr(block)}).results[0]
        else:
            start = [0] * len(whole.shape)
            limit = list(whole.shape)
            start[dim] = self.rank * part.shape[dim]
            limit[dim] = start[dim] + part.shape[dim]
            made = self.create("slice", [value], user.location, user, part, start=start, limit=limit,
                               strides=[1] * len(limit))
        self.layout[made], self.whole[made] = dim, whole
        return made

    def convert(self, value: ir.Value, want: Layout, user: ir.Operation) -> ir.Value:
        have = self.layout.get(value, REPLICATED)
        if have == want:
            return value
        whole = self.make_whole(value, user)
        return whole if want is REPLICATED else self.make_split(whole, want, user)

    # ------------------------------------------------------------------ the walk

    def run(self) -> None:
        for arg in self.block.arguments:
            self.whole[arg] = sig(arg)
            self.layout[arg] = REPLICATED
        for op in list(self.block.operations):
            op = op.operation
            for result in op.results:
                if isinstance(result.type, ir.RankedTensorType):
                    self.whole[result] = sig(result)
            if op.name == "func.return":
                for k, value in enumerate(op.operands):
                    op.operands[k] = self.make_whole(value, op)
            elif op.name == "shard.shard":
                self.annotate(op)
            elif op.name.startswith("graph."):
                self.partition(op)
            elif op.name not in ("arith.constant", "shard.sharding"):
                for k, value in enumerate(op.operands):
                    op.operands[k] = self.make_whole(value, op)
        for op in reversed(list(self.block.operations)):
            if op.operation.name in ("shard.shard", "shard.sharding"):
                op.operation.erase()
        arguments = [a.type for a in self.block.arguments]
        results = ir.FunctionType(ir.TypeAttr(self.func.attributes["function_type"]).value).results
        self.func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(arguments, list(results)))

    def annotate(self, op: ir.Operation) -> None:
        value, sharding_value = op.operands[0], op.operands[1]
        want = _layout_of(sharding_value.owner.operation, self.grid, self.whole[value], self.context)
        result = op.results[0]
        if isinstance(value.owner, ir.Block) and self.layout[value] is REPLICATED and not any(
                use.owner.operation.name != "shard.shard" for use in value.uses):
            # An argument annotated where it enters: the rank is passed its shard.
            if isinstance(want, int):
                value.set_type(tensor_type(self.local(self.whole[value], want, op.location)))
            self.layout[value] = want
            self.context.count("num-sharded-arguments")
            new = value
        else:
            new = self.convert(value, want, op)
            if producer(value, "arith.constant") is not None and isinstance(want, int):
                self.context.count("num-sharded-constants")
        result.replace_all_uses_with(new)

    def partition(self, op: ir.Operation) -> None:
        ins = [self.layout.get(v, REPLICATED) for v in op.operands]
        rule = _rule(op, ins, [self.whole.get(v) or sig(v) for v in op.operands],
                     [self.whole[r] for r in op.results], self.grid.size) if any(
            layout is not REPLICATED for layout in ins) else None
        if rule is None:
            wants, outs = [REPLICATED] * len(ins), [REPLICATED] * len(op.results)
        else:
            wants, outs = rule
        for k, (value, want) in enumerate(zip(list(op.operands), wants, strict=True)):
            op.operands[k] = self.convert(value, want, op)
        for result, layout in zip(op.results, outs, strict=True):
            self.layout[result] = layout
            local = self.local(self.whole[result], layout, op.location)
            if local != self.whole[result]:
                result.set_type(tensor_type(local))
        if any(isinstance(layout, int) for layout in outs):
            _localize_attributes(op, outs, self.grid.size)
            self.context.count("num-local-ops")


def _next_op(op: ir.Operation) -> ir.Operation:
    """The op after ``op`` in its block (a function's last op is its return, so there is one)."""
    found = False
    for candidate in op.block.operations:
        if found:
            return candidate.operation
        found = candidate.operation == op
    raise AssertionError("an op without a successor")


def _layout_of(sharding: ir.Operation, grid: _Grid, whole: TensorSig, context: PassContext) -> Layout:
    """The layout a ``shard.sharding`` op describes for a value of type ``whole``."""
    if sharding.name != "shard.sharding":
        context.fail("graph-shard-partition: a shard.shard must take its sharding from a shard.sharding op",
                     sharding.location)
    grid_name = ir.FlatSymbolRefAttr(sharding.attributes["grid"]).value
    if grid_name != grid.name:
        context.fail(f"graph-shard-partition: sharding on grid @{grid_name}; the module's grid is @{grid.name}",
                     sharding.location)
    for extra in ("static_halo_sizes", "static_sharded_dims_offsets"):
        if extra in sharding.attributes and len(ir.DenseI64ArrayAttr(sharding.attributes[extra])):
            context.fail(f"graph-shard-partition: {extra.removeprefix('static_')} are not supported (even, "
                         "contiguous blocks only)", sharding.location)
    axes = [[int(a) for a in re.findall(r"-?\d+", group)]
            for group in re.findall(r"\[([^\[\]]*)\]", str(sharding.attributes["split_axes"]))]
    split = [dim for dim, group in enumerate(axes) if group]
    if not split:
        return REPLICATED
    if len(split) > 1 or axes[split[0]] != [0]:
        context.fail(f"graph-shard-partition: split_axes {sharding.attributes['split_axes']} splits more than one "
                     "dimension or over another grid axis; one dimension over the 1-D grid is supported",
                     sharding.location)
    if split[0] >= whole.rank:
        context.fail(f"graph-shard-partition: split_axes split dimension {split[0]} of {whole}", sharding.location)
    return split[0]


# ---------------------------------------------------------------------- rules


def _rule(op: ir.Operation, ins: list[Layout], operands: list[TensorSig], results: list[TensorSig],
          ranks: int) -> tuple[list[Layout], list[Layout]] | None:
    """(the layouts the operands must have, the results' layouts), or None: everything replicated."""
    spec = lookup_op(op.name)
    if spec is None:
        return None
    attrs = read_attributes(spec, op)
    name = op.name
    if spec.group in _ELEMENTWISE_GROUPS:
        return _elementwise(name, ins, operands, results[0])
    if name == "graph.matmul":
        return _matmul(ins, operands, attrs)
    if name == "graph.transpose":
        (layout,) = ins
        if isinstance(layout, int):
            return [layout], [list(attrs["perm"]).index(layout)]
        return None
    if name == "graph.reshape":
        return _reshape(ins[0], operands[0], results[0], ranks)
    if name in ("graph.softmax", "graph.safe_softmax", "graph.log_softmax"):
        return _keep_if(ins, [normalize_axis(attrs["axis"], operands[0].rank)], len(operands))
    if name == "graph.rms_norm":
        return _keep_if(ins[:1], [operands[0].rank - 1], 1, extra=len(operands) - 1)
    if name == "graph.layer_norm":
        begin = normalize_axis(attrs["begin_norm_axis"], operands[0].rank)
        return _keep_if(ins[:1], list(range(begin, operands[0].rank)), 1, extra=len(operands) - 1)
    if name in ("graph.reduce_sum", "graph.reduce_mean", "graph.reduce_max", "graph.reduce_min"):
        return _reduce(name, ins[0], operands[0], attrs)
    if name == "graph.slice":
        layout = ins[0]
        if isinstance(layout, int) and attrs["start"][layout] == 0 and attrs["limit"][layout] == \
                operands[0].shape[layout] and (not attrs.get("strides") or attrs["strides"][layout] == 1):
            return [layout], [layout]
        return None
    if name == "graph.concat":
        axis = normalize_axis(attrs["axis"], results[0].rank)
        first = ins[0]
        if isinstance(first, int) and first != axis and all(layout == first for layout in ins):
            return [first] * len(ins), [first]
        return None
    if name == "graph.split":
        axis = normalize_axis(attrs["axis"], operands[0].rank)
        if isinstance(ins[0], int) and ins[0] != axis:
            return [ins[0]], [ins[0]] * len(results)
        return None
    if name == "graph.flash_attention":
        q, k, v = ins[:3]
        if isinstance(q, int) and q == k == v and q < operands[0].rank - 2:
            wants: list[Layout] = [q, q, q]
            if len(operands) > 3:  # the mask: split along the same dim unless broadcast along it
                mask = operands[3]
                dim = q - (operands[0].rank - mask.rank)
                wants.append(dim if dim >= 0 and mask.shape[dim] not in (1, None) else REPLICATED)
            return wants, [q]
        return None
    return None


def _keep_if(ins: list[Layout], axes: list[int], count: int, extra: int = 0
             ) -> tuple[list[Layout], list[Layout]] | None:
    """The first operand's split kept when it is not along ``axes``; the other operands replicated."""
    layout = ins[0]
    if isinstance(layout, int) and layout not in axes and all(other is REPLICATED for other in ins[1:]):
        return [layout, *[REPLICATED] * (count - 1 + extra)], [layout]
    return None


def _elementwise(name: str, ins: list[Layout], operands: list[TensorSig], result: TensorSig
                 ) -> tuple[list[Layout], list[Layout]] | None:
    rank = result.rank
    partial = [layout == PARTIAL for layout in ins]
    if any(partial):
        if name in ("graph.add", "graph.sub") and all(partial):
            return [PARTIAL] * len(ins), [PARTIAL]
        if name == "graph.neg":
            return [PARTIAL], [PARTIAL]
        others_whole = all(layout is REPLICATED for layout, p in zip(ins, partial, strict=True) if not p)
        if name == "graph.mul" and partial.count(True) == 1 and others_whole:
            return list(ins), [PARTIAL]  # either factor partial, the other whole
        if name == "graph.div" and partial == [True, False] and others_whole:
            return list(ins), [PARTIAL]  # a partial numerator
        return None
    dims = {layout + rank - operands[k].rank for k, layout in enumerate(ins) if isinstance(layout, int)}
    if len(dims) != 1:
        return None
    (dim,) = dims
    wants: list[Layout] = []
    for operand in operands:
        own = dim - (rank - operand.rank)
        wants.append(own if own >= 0 and operand.shape[own] not in (1, None) else REPLICATED)
    return wants, [dim]


def _matmul(ins: list[Layout], operands: list[TensorSig], attrs: dict[str, Any]
            ) -> tuple[list[Layout], list[Layout]] | None:
    a, b = operands
    la, lb = ins
    if PARTIAL in ins:
        if (la == PARTIAL and lb is REPLICATED) or (lb == PARTIAL and la is REPLICATED):
            return [la, lb], [PARTIAL]  # linear in the partial factor
        return None
    # Logical positions: a [..., M, K], b [..., K, N] after the transpose flags.
    a_m, a_k = (a.rank - 1, a.rank - 2) if attrs["transpose_a"] else (a.rank - 2, a.rank - 1)
    b_k, b_n = (b.rank - 1, b.rank - 2) if attrs["transpose_b"] else (b.rank - 2, b.rank - 1)
    out_rank = max(a.rank, b.rank)
    if la is REPLICATED and lb == b_n:
        return [REPLICATED, b_n], [out_rank - 1]
    if la == a_m and lb is REPLICATED:
        return [a_m, REPLICATED], [out_rank - 2]
    if (la == a_k and lb in (b_k, REPLICATED)) or (la is REPLICATED and lb == b_k):
        return [a_k, b_k], [PARTIAL]  # the whole factor is cut along the contraction too (a local slice)
    batch = None
    if isinstance(la, int) and la < a.rank - 2:
        batch = la + out_rank - a.rank
    if isinstance(lb, int) and lb < b.rank - 2:
        other = lb + out_rank - b.rank
        if batch is not None and other != batch:
            return None
        batch = other
    if batch is None:
        return None
    wants: list[Layout] = []
    for operand in (a, b):
        own = batch - (out_rank - operand.rank)
        wants.append(own if own >= 0 and operand.shape[own] not in (1, None) else REPLICATED)
    return wants, [batch]


def _reshape(layout: Layout, source: TensorSig, target: TensorSig, ranks: int
             ) -> tuple[list[Layout], list[Layout]] | None:
    """The target dimension a split source dimension becomes: the outermost of the dims it maps to."""
    if not isinstance(layout, int) or None in source.shape or None in target.shape:
        return None
    # Walk both shapes in groups of equal element counts.
    i = j = 0
    while i < source.rank and j < target.rank:
        group_i, group_j = [i], [j]
        size_i, size_j = source.shape[i], target.shape[j]
        while size_i != size_j:
            if size_i < size_j:
                i += 1
                group_i.append(i)
                size_i *= source.shape[i]
            else:
                j += 1
                group_j.append(j)
                size_j *= target.shape[j]
        if layout in group_i:
            # Skip unit dims at the front of each group: they are neither split nor the split's outermost.
            lead_i = next((d for d in group_i if source.shape[d] != 1), group_i[0])
            lead_j = next((d for d in group_j if target.shape[d] != 1), group_j[0])
            if layout != lead_i or target.shape[lead_j] % ranks:
                return None
            if source.shape[layout] % ranks:
                return None
            # The block of the outermost dim must stay a block: its size must divide by the ranks in both.
            return [layout], [lead_j]
        i += 1
        j += 1
    return None


def _reduce(name: str, layout: Layout, x: TensorSig, attrs: dict[str, Any]
            ) -> tuple[list[Layout], list[Layout]] | None:
    if not isinstance(layout, int):
        return None
    axes = normalize_axes(attrs["axes"], x.rank)
    if layout in axes:
        return ([layout], [PARTIAL]) if name == "graph.reduce_sum" else None
    return [layout], [layout if attrs["keep_dims"] else layout - sum(1 for a in axes if a < layout)]


def _localize_attributes(op: ir.Operation, outs: list[Layout], ranks: int) -> None:
    """Attributes that spell a size of the split dimension, made the local block's."""
    if op.name == "graph.slice":
        (layout,) = outs
        limit = list(ir.DenseI64ArrayAttr(op.attributes["limit"]))
        limit[layout] //= ranks
        op.attributes["limit"] = ir.DenseI64ArrayAttr.get(limit)


@dataclass(frozen=True)
class GraphShardPartition(GraphPass):
    name: ClassVar[str] = "graph-shard-partition"
    summary: ClassVar[str] = (
        "One rank's graph of a graph annotated with shard.grid / shard.shard: shards, local shapes, collectives")
    statistics: ClassVar[dict[str, str]] = {
        "num-sharded-arguments": "Number of function arguments passed to the rank as its shard",
        "num-sharded-constants": "Number of constants sliced to the rank's block",
        "num-local-ops": "Number of ops computing on split blocks",
        "num-all-reduce": "Number of graph.all_reduce ops inserted (partial sums made whole)",
        "num-all-gather": "Number of graph.all_gather ops inserted (split values made whole)",
    }
    rank: int = option(0, "the rank whose graph to make (0 .. grid size - 1)")
    group: str = option("world", "the process group the inserted collectives name")

    def run(self, module: ir.Module, context: PassContext) -> None:
        grids = [op.operation for op in module.body.operations if op.operation.name == "shard.grid"]
        if not grids:
            return
        if len(grids) > 1:
            context.fail("graph-shard-partition: the module has more than one shard.grid; one 1-D grid is "
                         "supported", grids[1].location)
        shape = list(ir.DenseI64ArrayAttr(grids[0].attributes["shape"]))
        if len(shape) != 1 or shape[0] < 1:
            context.fail(f"graph-shard-partition: grid shape {shape}: a 1-D grid is supported", grids[0].location)
        grid = _Grid(ir.StringAttr(grids[0].attributes["sym_name"]).value, shape[0])
        if not 0 <= self.rank < grid.size:
            context.fail(f"graph-shard-partition: rank {self.rank} is not in the grid @{grid.name} of "
                         f"{grid.size} ranks")
        with module.context:
            for op in list(module.body.operations):
                op = op.operation
                if op.name == "func.func" and op.regions[0].blocks:
                    _Partitioner(op, grid, self.rank, self.group, context).run()
            grids[0].erase()
