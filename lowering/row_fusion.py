"""tile-kernel-rows: one pass over each row for kernels with reductions (softmax, layer_norm, rms_norm...), and rows
of register-sized chunks for them and for large elementwise kernels.

After ``fuse-kernel-loops`` a normalization kernel is still several loop
nests over the whole tensor (max, sum of exp, normalize for softmax), each
streaming the input from memory again.  This pass tiles every kernel result
by rows (every parallel dim but the innermost to 1) and fuses all its
producers into that loop with the transform dialect
(``transform.structured.fuse``): each row is read from memory once and the
reductions and elementwise steps run on it while it is in L1.  The ops inside
the loop have static row shapes and are then vectorized
(``transform.structured.vectorize``): reductions become ``vector.reduction``,
elementwise bodies become vector code, and each row is then cut into
register-sized chunks (:mod:`graphfuse.lowering.row_chunks`).

Kernels with a row reduction (one input, reduced over the innermost dim)
and static shapes are tiled.  With ``elementwise`` so are elementwise
kernels without transposes whose rows hold at least one chunk, and 1-D
elementwise kernels of at least ``parallel-min-elements`` (16,384) elements, cut into rows of 4096
(``transform.structured.split`` first, so that every row is static).  The
other elementwise kernels are left to LLVM's loop vectorizer, and kernels
holding a convolution or a generic contraction are left alone.  A named contraction (``linalg.matmul``,
``batch_matmul``, ``contract``: flash attention's two products) stays whole,
outside the row loops: the rows it reads are tiled as roots of their own
(attention's softmax, one pass per row between the two products), and a
same-type ``tensor.cast`` between it and its users stops the producer
fusion from pulling it into a row loop.  Rows longer than ``max-row`` (a
vocabulary's logits, a long sequence's scores) are vectorized only when every
row body can be cut into chunks: the kernel is tried on a copy, kept when no
vector longer than ``max-row`` is left, and otherwise tiled without vectors
(a whole-row vector would not fit the register file).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import tensor
from mlir.dialects.transform import interpreter

from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import as_operation, nested_ops
from graphfuse.lowering.host import vector_bits
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.parallel import DEFAULT_MIN_ELEMENTS, static_elements
from graphfuse.lowering.row_chunks import chunk_row_loops
from graphfuse.pipelines import log
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, option

__all__ = ["TileKernelRows"]

_ROOT = "graph.row_root"
_TILES = "graph.row_tiles"
_ALLOWED = frozenset({"linalg.generic", "linalg.fill"})
#: Named contractions a row-tiled kernel may hold: they stay whole, outside the row loops (see _fence_contractions).
_CONTRACTIONS = frozenset({"linalg.contract", "linalg.matmul", "linalg.batch_matmul"})
_FENCE = "graph.row_fence"
#: Rows of a 1-D elementwise kernel, in chunks (64 chunks of 64 floats at 512 bits: 16 KiB per row, so the rows
#: split evenly over the threads and the one shorter rest is small).
FLAT_ROW_CHUNKS = 64

_SCRIPT = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %roots = transform.structured.match attributes{ROOT} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %roots : !transform.any_op {
    ^bb0(%r: !transform.any_op):
      %t, %l:LOOPS = transform.structured.fuse %r tile_sizes TILES USE_FORALL
        : (!transform.any_op) -> (!transform.any_op, LOOP_TYPES)
    }
    transform.apply_patterns to %root {
      transform.apply_patterns.tensor.fold_tensor_empty
    } : !transform.any_op
    VECTORIZE
    transform.yield
  }
}"""

#: 1-D elementwise kernels: the result is split at the last multiple of the row length; the first part is
#: tiled into rows (a forall over them, producers fused), the rest is one shorter row (a one-trip loop).  The
#: parts' destinations stay slices of the kernel's (no fold_tensor_empty): bufferization then writes both in
#: place, where a fresh tensor.empty per part cost a whole intermediate buffer and a copy.
_FLAT_SCRIPT = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %roots = transform.structured.match attributes{ROOT} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %roots : !transform.any_op {
    ^bb0(%r: !transform.any_op):
      SPLIT
      %t, %l = transform.structured.fuse %main tile_sizes [ROW] USE_FORALL
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      REST
    }
    VECTORIZE
    transform.yield
  }
}"""
_FLAT_SPLIT = """%parts = transform.structured.split %r after MAIN {dimension = 0} : !transform.any_op
      %main, %rest = transform.split_handle %parts : (!transform.any_op) -> (!transform.any_op, !transform.any_op)"""
_FLAT_WHOLE = """%main = transform.structured.match attributes{ROOT} in %r : (!transform.any_op) -> !transform.any_op"""
_FLAT_REST = """%t2, %l2 = transform.structured.fuse %rest tile_sizes [REST_SIZE]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)"""

#: Vectorize the ops of every row loop and lower what the chunks and LLVM do not take.  No
#: ``lower_broadcast``: it unrolls a broadcast along the row element by element before canonicalization folds
#: it back (a 12000-float row: 15 s in the interpreter), and every broadcast it met folded away anyway.
_VECTORIZE = """%loops = transform.structured.match ops{["scf.for", "scf.forall"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %loops : !transform.any_op {
    ^bb0(%loop: !transform.any_op):
      %inner = transform.structured.match ops{["linalg.generic", "linalg.fill"]} in %loop
        : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %inner : !transform.any_op
    }
    transform.apply_patterns to %root {
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_shape_cast
    } : !transform.any_op
    transform.apply_patterns to %root {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %root : !transform.any_op"""


def _iterators(op: ir.Operation) -> list[str]:
    return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _row_tiles(op: ir.Operation) -> list[int]:
    """Tile 1 on every parallel loop but the innermost loop; 0 (untiled) on the innermost and reductions."""
    if op.name == "linalg.fill":
        rank = ir.RankedTensorType(op.results[0].type).rank
        return [1] * (rank - 1) + [0]
    iterators = _iterators(op)
    return [1 if it == "parallel" and k < len(iterators) - 1 else 0 for k, it in enumerate(iterators)]


def _innermost_extent(func_op: ir.Operation) -> int:
    """The longest innermost loop of the kernel's generics (the row length once rows are tiled)."""
    extent = 1
    for op in func_op.regions[0].blocks[0].operations:
        op = as_operation(op)
        if op.name != "linalg.generic":
            continue
        loops = len(_iterators(op))
        for value in op.operands:
            t = value.type
            if isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).rank == loops and loops:
                extent = max(extent, ir.RankedTensorType(t).shape[-1])
    return extent


def _has_reduction(func_op: ir.Operation) -> bool:
    """Whether a kernel holds a generic with a reduction loop (row kernels; the others are elementwise)."""
    return any(op.name == "linalg.generic" and "reduction" in _iterators(op) for op in
               (as_operation(o) for o in func_op.regions[0].blocks[0].operations))


def _order_preserving(op: ir.Operation) -> bool:
    """Every indexing map of ``op`` picks loop dims in increasing order (identity or broadcast, no transpose)."""
    for attr in ir.ArrayAttr(op.attributes["indexing_maps"]):
        positions = []
        for expr in ir.AffineMapAttr(attr).value.results:
            expr = expr.maybe_downcast()
            if not isinstance(expr, ir.AffineDimExpr):
                return False
            positions.append(expr.position)
        if positions != sorted(set(positions)):
            return False
    return True


def _elementwise_rows(func_op: ir.Operation, min_row: int, flat_min: int, max_row: int) -> str | None:
    """Why an elementwise kernel is not row-tiled (None: it is): no transposes, and rank >= 2 results with rows
    of at least ``min_row`` or 1-D results of at least ``flat_min`` elements (cut into rows, see _FLAT_SCRIPT)."""
    if min_row <= 0:
        return "it has no reduction (LLVM vectorizes elementwise loops)"
    block = func_op.regions[0].blocks[0]
    for op in block.operations:
        op = as_operation(op)
        if op.name == "linalg.generic" and not _order_preserving(op):
            return "it has no reduction and transposes (LLVM vectorizes elementwise loops)"
    ret = block.operations[len(block.operations) - 1]
    ranks = set()
    for value in ret.operands:
        t = value.type
        if not isinstance(t, ir.RankedTensorType) or ir.RankedTensorType(t).rank < 1:
            return "it has no reduction and a scalar result (LLVM vectorizes elementwise loops)"
        ranks.add(ir.RankedTensorType(t).rank)
        if ir.RankedTensorType(t).rank >= 2 and ir.RankedTensorType(t).shape[-1] < min_row:
            return f"it has no reduction and rows shorter than {min_row} (LLVM vectorizes elementwise loops)"
        if ir.RankedTensorType(t).rank >= 2 and ir.RankedTensorType(t).shape[-1] > max_row:
            return f"it has no reduction and rows longer than {max_row} (LLVM vectorizes elementwise loops)"
        if ir.RankedTensorType(t).rank == 1 and ir.RankedTensorType(t).shape[0] < flat_min:
            return f"it has no reduction and a 1-D result below {flat_min} elements (LLVM vectorizes elementwise loops)"
    if len(ranks) > 1 and 1 in ranks:
        return "it has no reduction and 1-D results beside others"
    return None


def _candidate_roots(func_op: ir.Operation, min_elementwise_row: int = 0, flat_min: int = 0,
                     max_row: int = 4096) -> tuple[list[ir.Operation], str | None]:
    """The linalg ops producing the kernel's results, or a reason the kernel is not row-tiled.

    Kernels without a row reduction are tiled too when :func:`_elementwise_rows` accepts them (their rows are
    then cut into register-sized chunks and stored with streaming stores where they are large).
    """
    block = func_op.regions[0].blocks[0]
    has_reduction = False
    contractions: list[ir.Operation] = []
    for op in block.operations:
        op = as_operation(op)
        if op.name in _CONTRACTIONS:
            contractions.append(op)
            continue
        if op.name.startswith("linalg.") and op.name not in _ALLOWED:
            return [], f"it holds {op.name}"
        for value in (*op.operands, *op.results):
            if isinstance(value.type, ir.RankedTensorType) and not ir.RankedTensorType(value.type).has_static_shape:
                return [], "it has dynamic shapes"
            if isinstance(value.type, ir.RankedTensorType) and 0 in ir.RankedTensorType(value.type).shape:
                return [], "it has a zero-size dimension"  # linalg tiling asserts on empty loops
        if op.name == "linalg.generic" and "reduction" in _iterators(op):
            iterators = _iterators(op)
            if len(op.operands) - len(op.results) != 1:
                return [], "a reduction has several inputs (a contraction: vectorizing it would unroll it)"
            if iterators[-1] != "reduction":
                return [], "a reduction is not over the innermost dim"
            has_reduction = True
    if not has_reduction:
        reason = _elementwise_rows(func_op, min_elementwise_row, flat_min, max_row)
        if reason is not None:
            return [], reason
    ret = block.operations[len(block.operations) - 1]
    roots: list[ir.Operation] = []
    for value in ret.operands:
        owner = value.owner
        reshapes = ("tensor.expand_shape", "tensor.collapse_shape")
        if not isinstance(owner, ir.Block) and as_operation(owner).name in reshapes:
            owner = as_operation(owner).operands[0].owner
        if isinstance(owner, ir.Block) or as_operation(owner).name not in _ALLOWED:
            continue
        owner = as_operation(owner)
        rank = ir.RankedTensorType(owner.results[0].type).rank
        if rank < 1 or (not any(_row_tiles(owner)) and not (rank == 1 and not has_reduction)):
            continue
        if all(r is not owner and r != owner for r in roots):
            roots.append(owner)
    for contraction in contractions:  # the rows a contraction reads (attention's softmax before its second product)
        n_inputs = len(contraction.operands) - len(contraction.results)
        for value in list(contraction.operands)[:n_inputs]:
            owner = value.owner
            if isinstance(owner, ir.Block) or as_operation(owner).name != "linalg.generic":
                continue
            owner = as_operation(owner)
            if not any(_row_tiles(owner)) or any(r == owner for r in roots):
                continue
            roots.append(owner)
    if contractions:
        # around contractions only the roots whose rows hold a reduction (the softmax, not a cast of the product)
        roots = [r for r in roots if _reads_a_row_reduction(r)]
    if not roots:
        return [], "no result is a linalg op with rows to tile"
    return roots, None


def _reads_a_row_reduction(root: ir.Operation) -> bool:
    """Whether ``root`` or a generic/fill it reads from (transitively, within the kernel) is a reduction."""
    pending, seen = [root], []
    while pending:
        op = pending.pop()
        if any(op == s for s in seen):
            continue
        seen.append(op)
        if op.name == "linalg.generic" and "reduction" in _iterators(op):
            return True
        for value in op.operands:
            owner = value.owner
            if not isinstance(owner, ir.Block) and as_operation(owner).name in _ALLOWED:
                pending.append(as_operation(owner))
    return False


def _fence_contractions(func_op: ir.Operation) -> None:
    """Put a same-type ``tensor.cast`` between each named contraction and its users.

    ``transform.structured.fuse`` pulls every producer of a row into the row
    loop, a contraction included: per row it would be a matrix-vector
    product the runtime cannot block.  The cast is not a tiling interface
    op, so fusion stops there and the contraction stays whole before the
    loop; :func:`_drop_fences` removes the casts after tiling.
    """
    block = func_op.regions[0].blocks[0]
    for op in list(block.operations):
        op = as_operation(op)
        if op.name not in _CONTRACTIONS:
            continue
        result = op.results[0]
        with op.location, ir.InsertionPoint.after(op):
            fence = tensor.CastOp(result.type, result)
        fence.attributes[_FENCE] = ir.UnitAttr.get()
        result.replace_all_uses_except(fence.result, fence.operation)


def _root_index(func_op: ir.Operation, op: ir.Operation) -> int:
    """The position of ``op`` in the kernel's body (roots are top-level ops of it)."""
    for index, candidate in enumerate(func_op.regions[0].blocks[0].operations):
        if as_operation(candidate) == op:
            return index
    raise ValueError(f"{op.name} is not in the kernel's body")


def _op_at(func_op: ir.Operation, index: int) -> ir.Operation:
    return as_operation(func_op.regions[0].blocks[0].operations[index])


def _longest_vector(func_op: ir.Operation) -> int:
    """The most elements of any vector value the kernel's ops produce and use (the whole-row constants the chunks
    replaced are left unused, for canonicalization to erase)."""
    longest = 0
    for op in nested_ops(func_op):
        for value in op.results:
            if isinstance(value.type, ir.VectorType) and any(True for _ in value.uses):
                longest = max(longest, math.prod(ir.VectorType(value.type).shape))
    return longest


def _drop_fences(func_op: ir.Operation) -> None:
    for op in nested_ops(func_op):
        if op.name == "tensor.cast" and _FENCE in op.attributes:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()


def _widen_forall_destinations(func_op: ir.Operation) -> None:
    """Let a forall over a leading slice of a tensor write into the whole tensor.

    After ``transform.structured.split`` a 1-D kernel's rows are a forall
    over ``extract_slice %d[0] [M]`` whose result is inserted back into ``%d``.
    Bufferization gave the slice a buffer of its own and copied it (a whole
    intermediate); with ``%d`` itself as the forall's destination (its
    parallel_insert_slices keep their offsets) the rows are written in place.
    """
    for insert in [op for op in nested_ops(func_op) if op.name == "tensor.insert_slice"]:
        source, dest = insert.operands[0], insert.operands[1]
        if isinstance(source.owner, ir.Block) or as_operation(source.owner).name != "scf.forall":
            continue
        forall = as_operation(source.owner)
        if len(forall.results) != 1 or len(insert.operands) != 2:
            continue
        init = forall.operands[len(forall.operands) - 1]
        if isinstance(init.owner, ir.Block) or as_operation(init.owner).name != "tensor.extract_slice":
            continue
        slice_op = as_operation(init.owner)
        if slice_op.operands[0] != dest or len(slice_op.operands) != 1 or any(
                o != 0 for o in ir.DenseI64ArrayAttr(insert.attributes["static_offsets"])):
            continue
        if list(ir.DenseI64ArrayAttr(slice_op.attributes["static_offsets"])) != \
                list(ir.DenseI64ArrayAttr(insert.attributes["static_offsets"])):
            continue
        body = forall.regions[0].blocks[0]
        shared = body.arguments[len(body.arguments) - 1]
        shared.set_type(dest.type)
        forall.results[0].set_type(dest.type)
        forall.operands[len(forall.operands) - 1] = dest
        insert.results[0].replace_all_uses_with(forall.results[0])
        insert.erase()
        if not list(slice_op.results[0].uses):
            slice_op.erase()


def _apply(func_op: ir.Operation, name: str, script: str, context: PassContext) -> None:
    """Run a transform script on a kernel, then drop the root marks it matched."""
    transform = ir.Module.parse(script)
    try:
        interpreter.apply_named_sequence(func_op, transform.body.operations[0], transform)
    except ir.MLIRError as error:
        context.fail(f"tile-kernel-rows: tiling @{name} failed: {error}", func_op.location)
    for op in nested_ops(func_op):
        if _ROOT in op.attributes:
            del op.attributes[_ROOT]


@dataclass(frozen=True)
class TileKernelRows(GraphPass):
    name: ClassVar[str] = "tile-kernel-rows"
    summary: ClassVar[str] = (
        "Tile kernels with reductions (and large elementwise ones) by rows, fuse their producers per row, vectorize "
        "the rows in register-sized chunks")
    statistics: ClassVar[dict[str, str]] = {
        "num-kernels": "Number of kernels tiled by rows",
        "num-vectorized": "Number of tiled kernels whose rows were vectorized",
        "num-chunked": "Number of row loops whose vectorized rows were cut into register-sized chunks",
    }
    vectorize: bool = option(True, "vectorize the ops inside the row loop")
    max_row: int = option(
        4096, "longest row (elements) vectorized as it is; longer rows are vectorized only when cut into chunks")
    parallel_min_elements: int = option(
        DEFAULT_MIN_ELEMENTS, "kernels with at least this many result elements get a parallel row loop (scf.forall)")
    vector_bits: int = option(0, "vector register width (bits) the row chunks are sized for; 0: the host's")
    chunk_vectors: int = option(
        4, "vector registers per row chunk (independent accumulators); 0 keeps whole-row vectors")
    elementwise: bool = option(
        True, "tile elementwise kernels by rows too: rank >= 2 with rows of one chunk to max-row, 1-D from "
        "parallel-min-elements (needs chunk-vectors)")

    def __post_init__(self) -> None:
        if self.max_row < 1:
            raise OptionError(f"option 'max-row' of pass '{self.name}' must be >= 1, got {self.max_row}")
        if self.vector_bits not in (0, 128, 256, 512):
            raise OptionError(f"option 'vector-bits' of pass '{self.name}' must be 0, 128, 256 or 512, "
                              f"got {self.vector_bits}")
        if self.chunk_vectors < 0:
            raise OptionError(f"option 'chunk-vectors' of pass '{self.name}' must be >= 0, got {self.chunk_vectors}")

    def run(self, module: ir.Module, context: PassContext) -> None:
        with module.context, ir.Location.unknown():
            for name, func_op in functions(module).items():
                if not is_kernel(func_op) or not func_op.regions[0].blocks:
                    continue
                lanes = (self.vector_bits or vector_bits()) // 32
                min_row = lanes * self.chunk_vectors if self.elementwise and self.vectorize else 0
                flat_row = min(self.max_row, FLAT_ROW_CHUNKS * min_row)
                flat_min = max(2 * flat_row, self.parallel_min_elements) if min_row else 0
                roots, reason = _candidate_roots(func_op, min_row, flat_min, self.max_row)
                if reason is not None:
                    log.debug(f"tile-kernel-rows: @{name} is not tiled: {reason}")
                    continue
                if not _has_reduction(func_op) and all(ir.RankedTensorType(r.results[0].type).rank == 1 for r in roots):
                    self._tile_flat(func_op, name, roots, flat_row, context)
                    continue
                row = _innermost_extent(func_op)
                parallel = all((static_elements(r.results[0]) or 0) >= self.parallel_min_elements for r in roots)
                if self.vectorize and row > self.max_row and self.chunk_vectors:
                    vectorize = self._tile_long_rows(func_op, name, roots, parallel, context)
                else:
                    vectorize = self.vectorize and row <= self.max_row
                    self._tile_rows(func_op, name, roots, vectorize, parallel, context)
                context.count("num-kernels")
                if vectorize:
                    context.count("num-vectorized")
                log.debug(
                    f"tile-kernel-rows: @{name}: {len(roots)} result loop(s) by rows of {row}"
                    + (", vectorized" if vectorize else "")
                )

    def _tile_rows(self, func_op: ir.Operation, name: str, roots: list[ir.Operation], vectorize: bool,
                   parallel: bool, context: PassContext) -> None:
        _fence_contractions(func_op)
        self._tile(func_op, name, roots, vectorize, parallel, context)
        _drop_fences(func_op)
        if vectorize and self.chunk_vectors:
            self._chunk(func_op, name, context)

    def _tile_long_rows(self, func_op: ir.Operation, name: str, roots: list[ir.Operation], parallel: bool,
                        context: PassContext) -> bool:
        """Tile a kernel whose rows are longer than ``max-row``: vectorized on a copy of the kernel, kept when
        the chunks left no vector longer than ``max-row``, else tiled unvectorized.  Returns whether it is
        vectorized."""
        root_ids = [_root_index(func_op, r) for r in roots]
        with ir.InsertionPoint(func_op):
            attempt = func_op.clone()
        attempt_roots = [_op_at(attempt, i) for i in root_ids]
        self._tile_rows(attempt, name, attempt_roots, True, parallel, context)
        longest = _longest_vector(attempt)
        if longest <= self.max_row:
            func_op.erase()
            return True
        log.debug(f"tile-kernel-rows: @{name}: rows not vectorized: a row body kept a vector of {longest} elements "
                  f"(max-row {self.max_row})")
        attempt.erase()
        self._tile_rows(func_op, name, roots, False, parallel, context)
        return False

    def _chunk(self, func_op: ir.Operation, name: str, context: PassContext) -> None:
        """Cut the kernel's vectorized rows into register-sized chunks (lowering/row_chunks.py)."""
        prefix = f"tile-kernel-rows: @{name}: "
        chunked = chunk_row_loops(func_op, self.vector_bits or vector_bits(), self.chunk_vectors,
                                  lambda message: log.debug(prefix + message))
        context.count("num-chunked", chunked)

    def _tile_flat(self, func_op: ir.Operation, name: str, roots: list[ir.Operation], row: int,
                   context: PassContext) -> None:
        """A 1-D elementwise kernel as rows of ``row`` elements and one shorter rest, vectorized and chunked."""
        length = ir.RankedTensorType(roots[0].results[0].type).shape[0]
        if any(ir.RankedTensorType(r.results[0].type).shape[0] != length for r in roots):
            log.debug(f"tile-kernel-rows: @{name} is not tiled: its 1-D results differ in length")
            return
        main = length // row * row
        parallel = length >= self.parallel_min_elements
        for root in roots:
            root.attributes[_ROOT] = ir.UnitAttr.get()
        script = (
            _FLAT_SCRIPT.replace("SPLIT", _FLAT_SPLIT if length > main else _FLAT_WHOLE)
            .replace("REST", _FLAT_REST if length > main else "")
            .replace("REST_SIZE", str(length - main))
            .replace("MAIN", str(main))
            .replace("USE_FORALL", "{use_forall}" if parallel else "")
            .replace("ROW", str(row))
            .replace("ROOT", _ROOT)
            .replace("VECTORIZE", _VECTORIZE)
        )
        _apply(func_op, name, script, context)
        _widen_forall_destinations(func_op)
        self._chunk(func_op, name, context)
        context.count("num-kernels")
        context.count("num-vectorized")
        log.debug(f"tile-kernel-rows: @{name}: 1-D, {main // row} rows of {row} and a rest of {length - main}, "
                  "vectorized")

    @staticmethod
    def _tile(
        func_op: ir.Operation, name: str, roots: list[ir.Operation], vectorize: bool, parallel: bool,
        context: PassContext,
    ) -> None:
        # One transform script per distinct tile-size list (the script's tile sizes are static).
        by_tiles: dict[tuple[int, ...], list[ir.Operation]] = {}
        for root in roots:
            by_tiles.setdefault(tuple(_row_tiles(root)), []).append(root)
        for index, (tiles, group) in enumerate(by_tiles.items()):
            for root in group:
                root.attributes[_ROOT] = ir.UnitAttr.get()
            last = index == len(by_tiles) - 1
            # A forall is one loop however many dims it tiles; its rows are independent (parallelize-kernels).
            loops = 1 if parallel else sum(1 for t in tiles if t)
            script = (
                _SCRIPT.replace("USE_FORALL", "{use_forall}" if parallel else "")
                .replace("ROOT", _ROOT)
                .replace("TILES", str(list(tiles)))
                .replace("LOOP_TYPES", ", ".join(["!transform.any_op"] * loops))
                .replace("LOOPS", str(loops))
                .replace("VECTORIZE", _VECTORIZE if vectorize and last else "")
            )
            _apply(func_op, name, script, context)
