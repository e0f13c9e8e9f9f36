"""The table of built-in passes: each name with the function that loads its class.

It sits above every layer that defines passes (the pattern fusion and
graph-kernel passes of ``pipelines/``, the lowering and NPU passes of
``lowering/``), so the passes need not know the registry, and listing names
imports nothing: a pass module is imported the first time a pipeline, a
switch file or ``--list-passes`` asks for one of its passes.  A new built-in
pass is one line here.  ``graphfuse/__init__.py`` adds the table to the
registry before anything can look a pass up.
"""

from __future__ import annotations

from graphfuse.lowering.codegen.cpu.registry import CPU_CODEGEN_PASSES
from graphfuse.pipelines.registry import PassLoader, add_pass_aliases, add_pass_loaders, lazy_pass


def _load(module: str, class_name: str) -> PassLoader:
    """A loader of ``graphfuse.<module>.<class_name>``."""
    return lazy_pass(f"graphfuse.{module}", class_name)


BUILTIN_PASSES: dict[str, PassLoader] = {
    # graph clean-ups
    "graph-canonicalize": _load("pipelines.passes.canonicalize", "GraphCanonicalize"),
    "graph-cse": _load("pipelines.passes.cse", "GraphCSE"),
    "graph-dce": _load("pipelines.passes.dce", "GraphDCE"),
    "graph-verify": _load("pipelines.passes.verify", "GraphVerify"),
    "graph-fold-empty-tensors": _load("pipelines.passes.fold_empty", "GraphFoldEmptyTensors"),
    # tensor parallelism: one rank's graph of a sharded graph
    "graph-shard-partition": _load("pipelines.sharding", "GraphShardPartition"),
    # pattern fusion drivers and passes (their run order is each class's ``priority``)
    "graph-fusion": _load("pipelines.fusion.graph_fusion", "GraphFusion"),
    "ub-fusion": _load("pipelines.fusion.graph_fusion", "UbFusion"),
    "shape_reshape": _load("pipelines.fusion.reshape", "ShapeReshape"),
    "shape_reshape_2": _load("pipelines.fusion.reshape", "ShapeReshape2"),
    "split_concat_fusion": _load("pipelines.fusion.reshape", "SplitConcatFusion"),
    "ZConcatv2dFusionPass": _load("pipelines.fusion.cann", "ZConcatv2dFusionPass"),
    "SoftmaxSmallOpFusionPass": _load("pipelines.fusion.cann", "SoftmaxSmallOpFusionPass"),
    "SplitConvConcatFusionPass": _load("pipelines.fusion.cann", "SplitConvConcatFusionPass"),
    "ConvConcatFusionPass": _load("pipelines.fusion.cann", "ConvConcatFusionPass"),
    "BatchNormSplitFusionPass": _load("pipelines.fusion.cann", "BatchNormSplitFusionPass"),
    "ConvBatchnormFusionPass": _load("pipelines.fusion.cann", "ConvBatchnormFusionPass"),
    "ConvBiasAddFusionPass": _load("pipelines.fusion.cann", "ConvBiasAddFusionPass"),
    "ConvToFullyConnectionFusionPass": _load("pipelines.fusion.cann", "ConvToFullyConnectionFusionPass"),
    "FlashAttentionFusionV1": _load("pipelines.fusion.attention", "FlashAttentionFusionV1"),
    "FlashAttentionFusionV2": _load("pipelines.fusion.attention", "FlashAttentionFusionV2"),
    "add_layer_norm_fusion": _load("pipelines.fusion.norm", "AddLayerNormFusion"),
    "add_layer_norm_v3_fusion": _load("pipelines.fusion.norm", "AddLayerNormV3Fusion"),
    "add_layer_norm_ext_fusion": _load("pipelines.fusion.norm", "AddLayerNormExtFusion"),
    "add_rms_norm_quant_fusion": _load("pipelines.fusion.norm", "AddRmsNormQuantFusion"),
    "rms_norm_quant_fusion": _load("pipelines.fusion.norm", "RmsNormQuantFusion"),
    "add_cast_rms_norm_cast_fusion": _load("pipelines.fusion.norm", "AddCastRmsNormCastFusion"),
    "add_rms_norm_fusion": _load("pipelines.fusion.norm", "AddRmsNormFusion"),
    "rms_norm_fusion": _load("pipelines.fusion.norm", "RmsNormFusion"),
    "pattern_fusion_pass": _load("pipelines.fusion.torchair", "PatternFusionPass"),
    "transpose_matmul_fusion": _load("pipelines.fusion.matmul", "TransposeMatmulFusion"),
    "inference_swiglu_fusion": _load("pipelines.fusion.matmul", "InferenceSwigluFusion"),
    "matmul_weight_concat_fusion": _load("pipelines.fusion.horizontal", "MatmulWeightConcatFusion"),
    "inference_matmul_split_fusion": _load("pipelines.fusion.matmul", "InferenceMatmulSplitFusion"),
    "MatMulAllReduce": _load("pipelines.fusion.collective", "MatMulAllReduce"),
    "inference_qbmm_add_fusion": _load("pipelines.fusion.collective", "InferenceQbmmAddFusion"),
    "inference_qbmm_allreduce_add_fusion": _load("pipelines.fusion.collective", "InferenceQbmmAllReduceAddFusion"),
    "matmul_elem_biasadd_fusion": _load("pipelines.fusion.matmul", "MatmulElemBiasaddFusion"),
    "MatMulBiasAddFusionPass": _load("pipelines.fusion.matmul", "MatMulBiasAddFusionPass"),
    "matmul_elem_add_fusion": _load("pipelines.fusion.matmul", "MatmulElemAddFusion"),
    "matmul_elem_relu_fusion": _load("pipelines.fusion.matmul", "MatmulElemReluFusion"),
    "matmul_elem_gelu_fusion": _load("pipelines.fusion.matmul", "MatmulElemGeluFusion"),
    "TbeEltwiseFusionPass": _load("pipelines.fusion.ub", "TbeEltwiseFusionPass"),
    "ATbeMatMulElemwiseFusionPass": _load("pipelines.fusion.ub", "ATbeMatMulElemwiseFusionPass"),
    "TbeReduceElemwiseFusionPass": _load("pipelines.fusion.ub", "TbeReduceElemwiseFusionPass"),
    "AutomaticUbFusion": _load("pipelines.fusion.ub", "AutomaticUbFusion"),
    "FusionVirtualOpSetSwitch": _load("pipelines.fusion.virtual_op", "FusionVirtualOpSetSwitch"),
    # graph-kernel fusion and its steps
    "graph-kernel-fusion": _load("pipelines.graph_kernel.fusion", "GraphKernelFusion"),
    "graph-kernel-expand": _load("pipelines.graph_kernel.expand", "GraphKernelExpand"),
    "graph-kernel-simplify": _load("pipelines.graph_kernel.simplify", "GraphKernelSimplify"),
    "graph-kernel-cluster": _load("pipelines.graph_kernel.cluster", "GraphKernelCluster"),
    # lowering to the CPU
    "graph-decompose": _load("lowering.decompose", "GraphDecompose"),
    "outline-fused-ops": _load("lowering.kernels", "OutlineFusedOps"),
    "fuse-kernel-loops": _load("lowering.kernels", "FuseKernelLoops"),
    "dedupe-kernel-results": _load("lowering.kernels", "DedupeKernelResults"),
    "graph-to-linalg": _load("lowering.graph_to_linalg", "GraphToLinalg"),
    "select-row-schedules": _load("lowering.row_strategy", "SelectRowSchedules"),
    "apply-row-schedules": _load("lowering.row_fusion", "ApplyRowSchedules"),
    "tile-kernel-rows": _load("lowering.row_fusion", "TileKernelRows"),
    "parallelize-kernels": _load("lowering.parallel", "ParallelizeKernels"),
    # the CPU code generator: linalg -> LLVM dialect (its table lives next to its passes)
    **CPU_CODEGEN_PASSES,
    # the emulated NPU
    "npu-outline-ops": _load("lowering.npu.outline", "NpuOutlineOps"),
    "npu-buffer-assign": _load("lowering.npu.buffer_assign", "NpuBufferAssign"),
}

add_pass_loaders(BUILTIN_PASSES)

#: The seeds' names for passes graphfuse calls otherwise: a switch file written for CANN that names
#: SoftmaxFusionPass switches graphfuse's SoftmaxSmallOpFusionPass.
BUILTIN_ALIASES: dict[str, str] = {
    "SoftmaxFusionPass": "SoftmaxSmallOpFusionPass",
}

add_pass_aliases(BUILTIN_ALIASES)
