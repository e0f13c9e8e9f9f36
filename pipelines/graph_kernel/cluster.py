"""graph-kernel-cluster: group basic ops into kernels and outline each into a ``graph.kernel`` function.

MindSpore's basic-op fusion on the graph dialect.  Ops of the cluster list
(seed Appendix 2, per backend, adjusted by the cluster flags) are merged
greedily along producer -> consumer edges, in program order:

- elementwise and broadcast ops chain freely;
- a reduction takes its elementwise producers; elementwise consumers of a
  reduction join it while they keep the reduced shape (no broadcast back)
  and within ``reduce-depth`` ops of it;
- with ``stitch`` (opt-level 3) a reduction's result may also be broadcast
  back and reduced again in the same kernel (a whole softmax or layer_norm);
- a kernel holds at most one matmul, as its head: the matmul's elementwise
  consumers (its epilogue) join it, its producers never do;
- reshape and transpose join like elementwise ops when they are cluster ops;
- a merge never creates a cycle: two clusters merge only when no path
  between them leaves them, through single ops or through other clusters
  (:class:`ClusterDag` keeps the graph of clusters and checks it);
- no kernel exceeds ``limit`` ops (``composite_op_limit_size``).

With ``parallel`` (opt-level 3) independent small kernels are then merged
into one multi-output kernel.  Each kernel of two or more ops is outlined into
a private ``func.func`` carrying ``graph.kernel``, ``graph.kernel_ops`` (the
source ops) and ``graph.fusion_kind``, called with ``func.call``; kernels may
have several results.  Why an op did not join a neighbour's kernel is logged
at debug level.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from mlir import ir
from mlir.dialects import func

from graphfuse.dialect.catalog import lookup_op
from graphfuse.dialect.diagnostics import source_loc
from graphfuse.dialect.matching import as_operation, op_id
from graphfuse.dialect.types import holds_exactly, sig_from_type
from graphfuse.pipelines import log
from graphfuse.pipelines.graph_kernel.cluster_dag import ClusterDag
from graphfuse.pipelines.graph_kernel.op_names import resolve_ops
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, active_rewrite_budget, option

#: Seed Appendix 2, CPU and Ascend columns, for the ops the dialect has.
DEFAULT_CLUSTER_OPS: dict[str, frozenset[str]] = {
    "cpu": frozenset({
        "abs", "add", "cast", "exp", "log", "maximum", "minimum", "mul", "neg", "pow", "div", "reciprocal",
        "rsqrt", "sqrt", "sub", "equal", "less", "less_equal", "logical_not", "select", "reduce_sum", "reshape",
        "transpose", "round", "tanh", "reduce_max", "mod",
    }),
    "npu": frozenset({
        "abs", "add", "broadcast_to", "cast", "exp", "log", "maximum", "minimum", "mul", "neg", "pow", "div",
        "reciprocal", "rsqrt", "sqrt", "sub", "equal", "not_equal", "greater", "greater_equal", "less",
        "less_equal", "logical_and", "logical_or", "logical_not", "select", "assign", "reduce_sum", "isfinite",
        "transpose", "floor", "ceil", "trunc",
    }),
}

#: Reductions, and the ops clustered like them: argmax / argmin reduce an axis too, cumsum reads along one.
_REDUCTIONS = frozenset({"reduce_sum", "reduce_max", "reduce_min", "reduce_mean", "argmax", "argmin", "cumsum"})
#: Data placed without arithmetic: one_hot spreads an index along a new axis, assign broadcasts its value, slice
#: (StridedSlice) reads a strided window.
_LAYOUT = frozenset({"reshape", "transpose", "broadcast_to", "one_hot", "assign", "slice"})


def cluster_set(backend: str, enable: tuple[str, ...] = (), disable: tuple[str, ...] = (),
                only: tuple[str, ...] = ()) -> frozenset[str]:
    """The ops that may join kernels: ``only`` alone, else the backend's defaults + enable - disable."""
    if only:
        return frozenset(resolve_ops(only, "enable_cluster_ops_only"))
    ops = set(DEFAULT_CLUSTER_OPS[backend]) | resolve_ops(enable, "enable_cluster_ops")
    return frozenset(ops - resolve_ops(disable, "disable_cluster_ops"))


#: Ops whose first two operands are the factors of a product (the rest, a bias or an addend, are read once).
_CONTRACTIONS = frozenset({"graph.matmul", "graph.matmul_bias_add", "graph.matmul_add", "graph.matmul_relu",
                           "graph.matmul_gelu", "graph.matmul_split"})


def widens_contraction_operand(op: ir.Operation) -> bool:
    """A ``graph.cast`` to a type that holds its operand's every value (bf16 -> f32, int8 -> f32) whose result only
    contractions read, as factors.  In a kernel of its producer it would be that kernel's wide result; left alone
    it lowers to a widening the product can read through (bf16 pairs, int8 quads, narrow row-dot weights), and
    the product reads half or a quarter of the bytes."""
    if op.name != "graph.cast" or not op.results:
        return False
    source, result = sig_from_type(op.operands[0].type), sig_from_type(op.results[0].type)
    if source is None or result is None or source.dtype == result.dtype \
            or not holds_exactly(source.dtype, result.dtype):
        return False
    uses = list(op.results[0].uses)
    return bool(uses) and all(as_operation(use.owner).name in _CONTRACTIONS and use.operand_number < 2
                              for use in uses)


def op_kind(name: str) -> str:
    """"elementwise", "reduction", "layout", "matmul" or "opaque" for a dialect op name."""
    short = name.removeprefix("graph.")
    if short in _REDUCTIONS:
        return "reduction"
    if short in _LAYOUT:
        return "layout"
    if short == "matmul":
        return "matmul"
    spec = lookup_op(name)
    if spec is not None and spec.group in ("unary elementwise", "binary elementwise"):
        return "elementwise"
    return "opaque"


@dataclass
class Cluster:
    members: list[int]  # op indices, in program order
    matmul: bool = False
    reductions: int = 0
    depth_after_reduce: int = -1  # elementwise ops after the last reduction (-1: none yet)
    parallel: bool = False
    stitched: bool = False  # a reduced value is broadcast back inside the kernel

    @property
    def kind(self) -> str:
        if self.parallel:
            return "parallel"
        if self.matmul:
            return "matmul_epilogue"
        if self.reductions > 1 or self.stitched:
            return "stitch"
        if self.reductions == 1:
            return "reduction"
        return "elementwise"


@dataclass
class _Graph:
    """One function body as index-based adjacency, for cluster legality checks."""

    ops: list[ir.Operation]
    index: dict[int, int]  # op_id -> position
    producers: list[list[int]] = field(default_factory=list)  # positions of in-block producers
    consumers: list[list[int]] = field(default_factory=list)


def _build_graph(block: ir.Block) -> _Graph:
    ops = [as_operation(op) for op in block.operations]
    graph = _Graph(ops, {op_id(op): i for i, op in enumerate(ops)})
    graph.producers = [[] for _ in ops]
    graph.consumers = [[] for _ in ops]
    for i, op in enumerate(ops):
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, ir.Block):
                continue
            j = graph.index.get(op_id(owner))
            if j is not None and j not in graph.producers[i]:
                graph.producers[i].append(j)
                graph.consumers[j].append(i)
    return graph


class _Clustering:
    def __init__(self, graph: _Graph, allowed: frozenset[str], limit: int, reduce_depth: int, stitch: bool):
        self.graph = graph
        self.allowed = allowed
        self.limit = limit
        self.reduce_depth = reduce_depth
        self.stitch = stitch
        self.owner: dict[int, Cluster] = {}
        self.reasons: list[str] = []
        #: the graph of clusters; a cluster is the DAG node of any of its members
        self.dag = ClusterDag(graph.consumers)

    def _why_not(self, i: int, target: Cluster) -> str | None:
        """None when op ``i`` may join ``target``, else the reason (logged at debug level)."""
        op = self.graph.ops[i]
        kind = op_kind(op.name)
        if len(target.members) + 1 > self.limit:
            return f"the kernel reached composite_op_limit_size={self.limit}"
        if kind == "matmul":
            return "a matmul only starts a kernel (its operands stay outside)"
        if kind == "reduction" and target.reductions and not self.stitch:
            return "a reduction after a reduction needs stitching fusion (opt-level 3)"
        if target.reductions and not self.stitch and kind in ("elementwise", "layout"):
            if self._broadcasts_reduced_value(i, target):
                return "it broadcasts a reduced value back to the full shape (stitching fusion, opt-level 3)"
            if target.depth_after_reduce >= self.reduce_depth:
                return f"it is more than {self.reduce_depth} ops after the kernel's reduction"
        if not self.dag.can_merge(target.members[0], i):
            return "a path between them runs outside the kernel (the kernel would form a cycle)"
        return None

    def _broadcasts_reduced_value(self, i: int, target: Cluster) -> bool:
        op = self.graph.ops[i]
        out = list(op.results[0].type.shape) if op.results else []
        for j in self.graph.producers[i]:
            if self.owner.get(j) is target and op_kind(self.graph.ops[j].name) == "reduction":
                reduced = list(self.graph.ops[j].results[0].type.shape)
                if reduced != out:
                    return True
        return False

    def _join(self, i: int, target: Cluster) -> None:
        kind = op_kind(self.graph.ops[i].name)
        if target.reductions and self._broadcasts_reduced_value(i, target):
            target.stitched = True
        target.members.append(i)
        self.owner[i] = target
        self.dag.merge(target.members[0], i)
        if kind == "reduction":
            target.reductions += 1
            target.depth_after_reduce = 0
        elif target.depth_after_reduce >= 0:
            target.depth_after_reduce += 1

    def _merge(self, a: Cluster, b: Cluster) -> None:
        self.dag.merge(a.members[0], b.members[0])
        for m in b.members:
            self.owner[m] = a
        a.members = sorted(a.members + b.members)
        a.matmul |= b.matmul
        a.reductions += b.reductions
        a.depth_after_reduce = max(a.depth_after_reduce, b.depth_after_reduce)
        a.stitched |= b.stitched

    def _reject(self, i: int, message: str) -> None:
        op = self.graph.ops[i]
        where = source_loc(op.location)
        text = f"graph-kernel-cluster: {op.name} at {where or 'unknown location'} {message}"
        self.reasons.append(text)
        log.debug(text)

    def run(self) -> list[Cluster]:
        for i, op in enumerate(self.graph.ops):
            short = op.name.removeprefix("graph.")
            if not op.name.startswith("graph."):
                continue
            if short not in self.allowed:
                self._reject(i, "is not a cluster op (see enable_cluster_ops)")
                continue
            kind = op_kind(op.name)
            if kind == "opaque":
                self._reject(i, "is not a basic op (expand it first)")
                continue
            if widens_contraction_operand(op):
                self._reject(i, "stays out of kernels: it exactly widens a contraction's operand, which then reads "
                             "the narrow values (the CPU code generator's narrow-contraction-operands)")
                continue
            home: Cluster | None = None
            for j in self.graph.producers[i]:
                producer_cluster = self.owner.get(j)
                if producer_cluster is None or producer_cluster is home:
                    continue
                if home is None:
                    reason = self._why_not(i, producer_cluster)
                    if reason is None:
                        self._join(i, producer_cluster)
                        home = producer_cluster
                    else:
                        self._reject(i, f"did not join the kernel of {self.graph.ops[j].name}: {reason}")
                    continue
                # Already placed: pull in another producer kernel when that stays legal.
                reason = self._merge_reason(home, producer_cluster, i)
                if reason is None:
                    self._merge(home, producer_cluster)
                else:
                    self._reject(i, f"kept apart from the kernel of {self.graph.ops[j].name}: {reason}")
            if home is None:
                self.owner[i] = Cluster([i], matmul=kind == "matmul", reductions=int(kind == "reduction"),
                                        depth_after_reduce=0 if kind == "reduction" else -1)
        # Distinct clusters by identity, in order of first member (``in`` on the list compared every
        # cluster field by field: quadratic in the number of ops).
        unique = {id(cluster): cluster for cluster in self.owner.values()}
        return list(unique.values())

    def _merge_reason(self, home: Cluster, other: Cluster, i: int) -> str | None:
        if len(home.members) + len(other.members) > self.limit:
            return f"together they exceed composite_op_limit_size={self.limit}"
        if home.matmul and other.matmul:
            return "a kernel holds at most one matmul"
        if home.reductions and other.reductions and not self.stitch:
            return "two reductions in one kernel need stitching fusion (opt-level 3)"
        if not self.dag.can_merge(home.members[0], other.members[0]):
            return "a path between them runs outside both kernels (the kernel would form a cycle)"
        return None

    def merge_parallel(self, clusters: list[Cluster], max_ops: int) -> list[Cluster]:
        """Merge independent small kernels (no path either way) into multi-output kernels."""
        small = [c for c in clusters if len(c.members) >= 2 and len(c.members) <= max_ops and not c.matmul]
        merged: list[Cluster] = []
        for cluster in small:
            for group in merged:
                if len(group.members) + len(cluster.members) > self.limit:
                    continue
                if not self.dag.independent(group.members[0], cluster.members[0]):
                    continue
                self._merge(group, cluster)
                group.parallel = True
                break
            else:
                merged.append(cluster)
        small_ids = {id(c) for c in small}
        rest = [c for c in clusters if id(c) not in small_ids]
        return rest + merged

# -- outlining -------------------------------------------------------------------------


def in_block(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    """``op`` or its ancestor that lies directly in ``block`` (None when it is not inside ``block``)."""
    while op.block != block:
        parent = op.parent
        if parent is None or parent.name == "builtin.module":
            return None
        op = as_operation(parent)
    return op


def _move_dependents_after(call: ir.Operation, outputs: list[ir.Value]) -> None:
    """Move the ops before ``call`` that depend on its results (through any chain) to right after it.

    The call takes the place of the kernel's last member, so an op between
    the members that reads a kernel output is now before the value it reads.
    Those ops, and the ops that depend on them, move after the call in their
    order: what a topological sort of the block preferring the current order
    would do, but touching only the ops that must move (outlining one kernel
    stays proportional to its size, not to the caller's).  Nothing they need
    is defined by the call's inputs' producers after them: that would be a
    cycle through the kernel, which clustering never forms.
    """
    block = call.block
    seen = {op_id(call)}
    frontier = list(outputs)
    moving: list[ir.Operation] = []
    while frontier:
        value = frontier.pop()
        for use in value.uses:
            user = in_block(as_operation(use.owner), block)
            if user is None or op_id(user) in seen or not user.is_before_in_block(call):
                continue
            seen.add(op_id(user))
            moving.append(user)
            frontier.extend(user.results)
    moving.sort(key=functools.cmp_to_key(lambda a, b: -1 if a.is_before_in_block(b) else 1))
    anchor = call
    for op in moving:
        op.move_after(anchor)
        anchor = op


def outline(func_op: ir.Operation, members: list[ir.Operation], kind: str, name: str,
            after: ir.Operation | None = None) -> ir.Operation:
    """Move ``members`` (in program order) into a new private function ``name``, called in their place.

    Inputs are the values the members use from outside (in order of first use),
    results the members' values used outside.  The ops are moved, not copied;
    constants they use are copied in.  The kernel is placed after ``after``
    (default: the caller) and returned.
    """
    member_set = {op_id(op) for op in members}
    inputs: list[ir.Value] = []
    input_pos: dict[ir.Value, int] = {}
    constants: list[ir.Operation] = []  # constants the kernel gets its own copy of
    for op in members:
        for operand in op.operands:
            owner = operand.owner
            if not isinstance(owner, ir.Block) and op_id(owner) in member_set:
                continue
            if not isinstance(owner, ir.Block) and as_operation(owner).name == "arith.constant":
                if all(op_id(c) != op_id(owner) for c in constants):
                    constants.append(as_operation(owner))
                continue
            if operand not in input_pos:
                input_pos[operand] = len(inputs)
                inputs.append(operand)
    outputs = [r for op in members for r in op.results
               if any(op_id(u.owner) not in member_set for u in r.uses)]
    last = members[0]
    for op in members[1:]:
        if last.is_before_in_block(op):
            last = op
    with func_op.context, members[-1].location:
        ftype = ir.FunctionType.get([v.type for v in inputs], [v.type for v in outputs])
        with ir.InsertionPoint(func_op.parent.regions[0].blocks[0]):
            kernel = func.FuncOp(name, ftype, visibility="private")
        kernel.operation.move_after(after or func_op)
        body = kernel.add_entry_block()
        ret = func.ReturnOp(outputs, ip=ir.InsertionPoint(body))
        kernel.attributes["graph.kernel"] = ir.UnitAttr.get()
        kernel.attributes["graph.kernel_ops"] = ir.ArrayAttr.get([ir.StringAttr.get(op.name) for op in members])
        kernel.attributes["graph.fusion_kind"] = ir.StringAttr.get(kind)
        # The call takes the last member's place: every input is defined before it.
        call = func.CallOp([v.type for v in outputs], ir.FlatSymbolRefAttr.get(name), inputs,
                           ip=ir.InsertionPoint(last))
        # Uses outside the kernel now read the call's results (the kernel's own return keeps the values).
        for value, new in zip(outputs, call.results, strict=True):
            # Snapshot the uses first: rewiring one changes the value's use list.
            uses = [(as_operation(use.owner), use.operand_number) for use in value.uses]
            for owner, number in uses:
                if op_id(owner) not in member_set and op_id(owner) != op_id(ret):
                    owner.operands[number] = new
        # Constants are copied in (a kernel is self-contained, as a fused sub-graph is in MindSpore).
        copies = {}
        for constant in constants:
            copy = constant.clone(ip=ir.InsertionPoint(ret.operation))
            copies[constant.results[0]] = copy.results[0]
        for op in members:
            op.move_before(ret.operation)
            for k, operand in enumerate(op.operands):
                if operand in input_pos:
                    op.operands[k] = body.arguments[input_pos[operand]]
                elif operand in copies:
                    op.operands[k] = copies[operand]
        for constant in constants:
            if not any(True for _ in constant.results[0].uses):
                constant.erase()
    _move_dependents_after(call.operation, list(call.results))
    return kernel.operation


# -- the pass -------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphKernelCluster(GraphPass):
    name: ClassVar[str] = "graph-kernel-cluster"
    summary: ClassVar[str] = "Cluster basic ops into kernels, outlined as graph.kernel functions called with func.call"
    statistics: ClassVar[dict[str, str]] = {
        "num-kernels": "Number of kernels outlined",
        "num-fused-ops": "Number of ops moved into kernels",
    }

    backend: Literal["cpu", "npu"] = option("cpu", "target whose default cluster op list applies")
    enable_ops: tuple[str, ...] = option((), "ops added to the cluster list (MindSpore names, e.g. MatMul)")
    disable_ops: tuple[str, ...] = option((), "ops removed from the cluster list")
    only_ops: tuple[str, ...] = option((), "the cluster list itself (enable/disable are then ignored)")
    limit: int = option(200, "composite_op_limit_size: most ops in one kernel")
    reduce_depth: int = option(20, "most elementwise ops after a reduction in its kernel")
    stitch: bool = option(False, "stitching fusion: reduction -> elementwise -> reduction in one kernel")
    parallel: bool = option(False, "parallel fusion: merge independent small kernels")
    parallel_max_ops: int = option(16, "kernels of at most this many ops take part in parallel fusion")
    dump_as_text: bool = option(False, "write graph_kernel_dump/ with each kernel's source ops and decisions")
    dump_path: str = option("graph_kernel_dump", "directory for dump-as-text")

    def __post_init__(self) -> None:
        if self.limit < 2:
            raise OptionError(f"option 'limit' of pass '{self.name}' must be >= 2, got {self.limit}")
        if self.reduce_depth < 0 or self.parallel_max_ops < 2:
            raise OptionError(f"options 'reduce-depth' and 'parallel-max-ops' of pass '{self.name}' are too small")

    def run(self, module: ir.Module, context: PassContext) -> None:
        allowed = cluster_set(self.backend, self.enable_ops, self.disable_ops, self.only_ops)
        budget = active_rewrite_budget()
        dump: list[str] = []
        kernels = 0
        functions = [as_operation(op) for op in module.body.operations if as_operation(op).name == "func.func"]
        for func_op in functions:
            if "graph.kernel" in func_op.attributes or not func_op.regions[0].blocks:
                continue
            start = time.perf_counter()
            graph = _build_graph(func_op.regions[0].blocks[0])
            clustering = _Clustering(graph, allowed, self.limit, self.reduce_depth, self.stitch)
            clusters = clustering.run()
            if self.parallel:
                clusters = clustering.merge_parallel(clusters, self.parallel_max_ops)
            fused = sorted((c for c in clusters if len(c.members) >= 2), key=lambda c: min(c.members))
            fn_name = ir.StringAttr(func_op.attributes["sym_name"]).value
            # Outlining moves ops, so take the member ops (not positions) before changing the block.
            plans = [(f"{fn_name}_kernel_{k}", c.kind, [graph.ops[m] for m in c.members], self._describe(
                f"{fn_name}_kernel_{k}", c, graph)) for k, c in enumerate(fused)]
            anchor = func_op
            for kernel_name, kind, members, description in plans:
                # graphfuse-bisect's fuel: each kernel outlined spends one rewrite, named by its first op.
                if budget is not None and not budget.try_consume(self.name, kind, members[0].location,
                                                                 members[0].name):
                    continue
                dump.append(description)
                context.count("num-fused-ops", len(members))
                ops = Counter(op.name for op in members)
                log.debug(f"graph-kernel-cluster: {kernel_name} ({kind}): "
                          + ", ".join(f"{n} x{c}" for n, c in sorted(ops.items())))
                anchor = outline(func_op, members, kind, kernel_name, after=anchor)
                kernels += 1
            dump.extend(clustering.reasons)
            log.debug(f"graph-kernel-cluster: @{fn_name}: {len(fused)} kernels in "
                      f"{(time.perf_counter() - start) * 1e3:.2f} ms")
        context.count("num-kernels", kernels)
        if self.dump_as_text:
            path = Path(self.dump_path)
            path.mkdir(parents=True, exist_ok=True)
            (path / "graph_kernel_clusters.txt").write_text("\n".join(dump) + "\n")

    @staticmethod
    def _describe(name: str, cluster: Cluster, graph: _Graph) -> str:
        lines = [f"kernel {name} ({cluster.kind}, {len(cluster.members)} ops):"]
        for m in cluster.members:
            op = graph.ops[m]
            lines.append(f"  {op.name} at {source_loc(op.location) or 'unknown location'}")
        return "\n".join(lines)
