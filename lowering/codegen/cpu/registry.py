"""The CPU code generator's passes by name, each loaded (its module imported) when first asked for.

``graphfuse/builtin_passes.py`` adds this table to the pass registry with the other built-in passes: listing the
names imports no pass module.
"""

from __future__ import annotations

from graphfuse.pipelines.registry import PassLoader, lazy_pass

__all__ = ["CPU_CODEGEN_PASSES"]


def _load(module: str, class_name: str) -> PassLoader:
    """A loader of ``class_name`` of this package's ``module``."""
    return lazy_pass(f"{__package__}.{module}", class_name)


#: In pipeline order (lowering/codegen/cpu/pipeline.py).
CPU_CODEGEN_PASSES: dict[str, PassLoader] = {
    "to-destination-passing-style": _load("to_destination_passing_style", "ToDestinationPassingStyle"),
    "narrow-contraction-operands": _load("narrow_contraction_operands", "NarrowContractionOperands"),
    "widen-contraction-operands": _load("widen_contraction_operands", "WidenContractionOperands"),
    "block-contractions": _load("block_contractions", "BlockContractions"),
    "select-contraction-schedules": _load("select_contraction_schedules", "SelectContractionSchedules"),
    "apply-contraction-schedules": _load("apply_contraction_schedules", "ApplyContractionSchedules"),
    "privatize-entry": _load("privatize_entry", "PrivatizeEntry"),
    "store-booleans-as-bytes": _load("store_booleans_as_bytes", "StoreBooleansAsBytes"),
    "split-shared-empties": _load("split_shared_empties", "SplitSharedEmpties"),
    "copy-long-concats": _load("copy_long_concats", "CopyLongConcats"),
    "reshape-dynamic-expands": _load("reshape_dynamic_expands", "ReshapeDynamicExpands"),
    "drop-redundant-materializations": _load("drop_redundant_materializations", "DropRedundantMaterializations"),
    "restore-entry-visibility": _load("restore_entry_visibility", "RestoreEntryVisibility"),
    "align-constants": _load("align_constants", "AlignConstants"),
    "erase-self-copies": _load("erase_self_copies", "EraseSelfCopies"),
    "compute-in-copy-targets": _load("compute_in_copy_targets", "ComputeInCopyTargets"),
    "compute-results-in-outputs": _load("compute_results_in_outputs", "ComputeResultsInOutputs"),
    "stack-loop-buffers": _load("stack_loop_buffers", "StackLoopBuffers"),
    "free-loop-buffers": _load("free_loop_buffers", "FreeLoopBuffers"),
    "drop-results-in-outputs": _load("drop_results_in_outputs", "DropResultsInOutputs"),
    "hoist-allocations": _load("hoist_allocations", "HoistAllocations"),
    "bind-status-word": _load("bind_status_word", "BindStatusWord"),
    "check-bufferized-entry": _load("check_bufferized_entry", "CheckBufferizedEntry"),
    "forward-loop-results": _load("forward_loop_results", "ForwardLoopResults"),
    "version-large-loop-nests": _load("version_large_loop_nests", "VersionLargeLoopNests"),
    "stream-large-stores": _load("stream_large_stores", "StreamLargeStores"),
    "prefetch-next-rows": _load("prefetch_next_rows", "PrefetchNextRows"),
    "pack-arguments": _load("pack_arguments", "PackArguments"),
    "strided-copies-as-loops": _load("strided_copies_as_loops", "StridedCopiesAsLoops"),
    "outline-chunks": _load("outline_chunks", "OutlineChunks"),
    "hoist-stack-buffers": _load("hoist_stack_buffers", "HoistStackBuffers"),
}
