"""CANN graph-fusion passes: hardware-independent rewrites "by the math", and split fusion.

The seed (Ascend CANN's fusion overview) describes graph fusion as rewrites
that follow from the ops' mathematics, independent of the hardware (its
example: Conv2D + BatchNorm folded into one Conv2D), and split fusion (拆分融合):
an op X split into X1 and X2, each fused with a different neighbour.  The
passes keep CANN's names and sit in fusion_switch.cfg's ``GraphFusion`` group.

==================================  =====================================================================
pass                                rewrite
==================================  =====================================================================
ConvBatchnormFusionPass             conv2d [+ bias_add] + batch_norm (constants) -> conv2d(w * s) + bias_add
BatchNormSplitFusionPass            conv2d + batch_norm + bias_add (constants) -> conv2d(w * s) + bias_add;
                                    the batch_norm's scale goes into the conv, its shift into the bias
ConvBiasAddFusionPass               conv2d + bias_add (or add of a per-channel constant) -> conv2d with a bias
ConvToFullyConnectionFusionPass     conv2d whose kernel covers the whole input -> reshape + matmul + reshape
ZConcatv2dFusionPass                concat(a, concat(b, c)) on one axis -> concat(a, b, c)
SplitConvConcatFusionPass           split(x, C) -> n conv2d -> concat(C) -> one conv2d with groups = n
ConvConcatFusionPass                n conv2d of one input -> concat(C) -> one conv2d with all the filters
SoftmaxSmallOpFusionPass            reduce_max, sub, exp, reduce_sum, div -> softmax (off by default)
==================================  =====================================================================

The rewrite functions live in :mod:`~graphfuse.pipelines.fusion.cann_conv` and
:mod:`~graphfuse.pipelines.fusion.cann_graph`; their docstrings give the
exact conditions.  Only the batch_norm folds change rounding (weights and
bias are folded in float64 and rounded once; the bound is in ``cann_conv``);
the others compute the same sums in another order (ConvToFullyConnection) or
exactly the same values.

Seed pass names not implemented
-------------------------------

Seed 001's CANN names for TensorFlow-parser bookkeeping, Ascend-only kernels
and attributes that graph ops never take as tensors (their reasons are in
:data:`UNSUPPORTED_PASSES`): ``PoolingFusionPass``, ``ZConcatExt2FusionPass``,
``ZSplitVDFusionPass``, ``ZSplitVDFusionPassV2``, ``TfMergeSubFusionPass``,
``TfTagNoConstFoldingFusionPass``, ``DeleteNoConstFolding``,
``TfMergeWeightQuantFusionPass``, ``Conv2DQuantProcessFusionPass``,
``V200NotRequantFusionPass``, ``FixPipeAbilityProcessPass``.  A switch file or
the flags naming one get a warning with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from graphfuse.pipelines.fusion.base import GRAPH_FUSION, FusionPass, Pattern
from graphfuse.pipelines.fusion.cann_conv import (
    batchnorm_split,
    conv_batchnorm,
    conv_bias_add,
    conv_bias_batchnorm,
    conv_concat,
    conv_to_fully_connection,
    split_conv_concat,
)
from graphfuse.pipelines.fusion.cann_graph import merge_concats, small_op_softmax

#: Passes whose names appear in the seeds but need Ascend-only kernels or collectives: name -> reason.
UNSUPPORTED_PASSES: dict[str, str] = {
    # seed 001 (CANN ATC's switch file and fusion log)
    "PoolingFusionPass": "rewrites TensorFlow pooling nodes into Ascend's Pooling kernel with its window constants; "
                         "graphfuse's max_pool2d / avg_pool2d are that op already",
    "ZConcatExt2FusionPass": "turns a ConcatV2 with its axis as a tensor input into ConcatD with a constant axis; a "
                             "graph.concat's axis is always an attribute",
    "ZSplitVDFusionPass": "turns SplitV with its sizes as tensor inputs into SplitVD with constant sizes; a "
                          "graph.split's sizes are always attributes",
    "ZSplitVDFusionPassV2": "SplitVD split into pieces of at most 63 outputs for the Ascend kernel's limit; "
                            "graph.split has no output limit",
    "TfMergeSubFusionPass": "removes TensorFlow's Merge/Switch control-flow pairs after parsing; graphs here have "
                            "no TensorFlow control flow",
    "TfTagNoConstFoldingFusionPass": "marks TensorFlow nodes that constant folding must keep; TensorFlow parser "
                                     "bookkeeping, no graph rewrite",
    "DeleteNoConstFolding": "removes those marks again after constant folding; TensorFlow parser bookkeeping",
    "TfMergeWeightQuantFusionPass": "merges TensorFlow fake-quantization nodes into quantized weights; graphfuse "
                                    "imports no fake-quantization ops",
    "Conv2DQuantProcessFusionPass": "rewrites an int8 AscendQuant -> Conv2D -> AscendDequant chain for Ascend's "
                                    "quantized convolution; graphfuse has no quantized conv2d",
    "V200NotRequantFusionPass": "removes requantization between quantized kernels on Ascend V200 chips; needs "
                                "Ascend's quantized kernels",
    "FixPipeAbilityProcessPass": "moves post-processing onto the Cube unit's FixPipe stage of Ascend hardware; the "
                                 "emulated NPU has no FixPipe unit",
}


@dataclass(frozen=True)
class ConvBatchnormFusionPass(FusionPass):
    """batch_norm(conv2d(x, w) [+ b]) -> bias_add(conv2d(x, w * s), (b - mean) * s + offset).

    ``s = scale / sqrt(var + epsilon)``.  Everything but ``x`` must be a
    constant (CANN: filter, bias and the batch_norm inputs must be Const), the
    conv result (and the bias_add's) may have no other user, and var +
    epsilon must be positive.  The bias between conv and batch_norm may be a
    ``bias_add`` along axis 1 or an ``add`` of a per-channel constant.
    """

    name: ClassVar[str] = "ConvBatchnormFusionPass"
    priority: ClassVar[int] = 80
    summary: ClassVar[str] = "Fold an inference batch_norm (and a conv bias) into the conv2d weights and a bias_add"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "cann"
    example: ClassVar[str] = """\
func.func @conv_bn(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("ConvBatchnormFusion", "graph.batch_norm", conv_batchnorm),
        Pattern("ConvBiasAddBatchnormFusion", "graph.batch_norm", conv_bias_batchnorm),
    )


@dataclass(frozen=True)
class BatchNormSplitFusionPass(FusionPass):
    """Split fusion: bias_add(batch_norm(conv2d(x, w)), c) -> bias_add(conv2d(x, w * s), c + offset - mean * s).

    The seed's split fusion (拆分融合) splits an op X into X1 and X2 and fuses
    each with a different neighbour.  An inference batch_norm is the affine
    per-channel map ``y * s + t`` (``s = scale / sqrt(var + eps)``, ``t =
    offset - mean * s``): X1 = ``* s`` is fused into the producer conv's
    weights, X2 = ``+ t`` into the constant bias of the consumer (``bias_add``
    along axis 1, or ``add`` of a per-channel constant).  No op of the
    batch_norm survives and no bias_add is added.

    CANN's own documented split fusions are training-mode (BatchNorm split into
    BNTrainingReduce, fused with the producer Conv2D, and BNTrainingUpdate,
    fused with its ReLU/Add consumers); graphfuse's batch_norm is
    inference-mode only, so this pass applies the same scheme to the
    inference affine map, under a descriptive name.

    Unlike ConvBatchnormFusionPass (rooted at the batch_norm, which adds a new
    bias_add after the conv), this pass is rooted at the consumer and reuses
    its bias: on conv2d -> batch_norm -> bias_add it leaves one bias_add where
    ConvBatchnormFusionPass would leave two.  It needs the batch_norm result
    to have that single consumer; ConvBatchnormFusionPass does not look at the
    consumers.
    """

    name: ClassVar[str] = "BatchNormSplitFusionPass"
    priority: ClassVar[int] = 70
    summary: ClassVar[str] = (
        "Split an inference batch_norm between a conv2d and a bias: scale into the weights, shift into the bias"
    )
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "cann"
    example: ClassVar[str] = """\
func.func @conv_bn_bias(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %bias = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.bias_add"(%1, %bias) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("BatchNormSplitBiasAddFusion", "graph.bias_add", batchnorm_split),
        Pattern("BatchNormSplitAddFusion", "graph.add", batchnorm_split),
    )


@dataclass(frozen=True)
class ConvBiasAddFusionPass(FusionPass):
    """bias_add(conv2d(x, w), b) -> conv2d(x, w, b): the seed's conv + biasAdd, accumulated in place.

    The seed's example of a rewrite "by the math" that the hardware rewards: the bias initializes the
    convolution's accumulator (L0C on Ascend), so no add runs over the output.  Takes ``bias_add`` along the
    channel axis (any 1-D bias) and ``add`` of a per-channel value; it runs after the batch_norm folds, which
    leave a conv2d + bias_add.  The seed names no pass for it: graphfuse names it in CANN's style.

    On by default for the NPU only.  On the CPU a bias after a direct convolution is already free: it is
    the first op of the epilogue applied to each register tile, while a bias that starts the accumulator is
    one more store and load of each tile; measured (2 threads, 64 channels at 56x56, interleaved), the
    3x3 conv + bias + relu took 0.71-0.80 ms with the pass against 0.68-0.71 without, the ResNet block
    1.23-1.30 against 1.18-1.22.  ``enable_pass=ConvBiasAddFusionPass`` turns it on there.
    """

    name: ClassVar[str] = "ConvBiasAddFusionPass"
    priority: ClassVar[int] = 85
    default_backends: ClassVar[frozenset[str]] = frozenset({"npu"})
    summary: ClassVar[str] = "Make a bias added to a conv2d's channels the conv2d's own bias, accumulated in place"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "cann"
    example: ClassVar[str] = """\
func.func @conv_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x2x2xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  %1 = "graph.bias_add"(%0, %b) {axis = 1 : i64} : (tensor<1x3x2x2xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  return %1 : tensor<1x3x2x2xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("ConvBiasAddFusion", "graph.bias_add", conv_bias_add),
        Pattern("ConvAddFusion", "graph.add", conv_bias_add),
    )


@dataclass(frozen=True)
class ConvToFullyConnectionFusionPass(FusionPass):
    """conv2d(x, w) with kh = H, kw = W, no pads, groups 1 -> reshape(matmul(x', w', transpose_b = true)).

    ``x'`` is x reshaped to ``[N, C*H*W]``, ``w'`` the weight reshaped to
    ``[O, C*H*W]`` (a constant weight is reshaped at compile time), and the
    ``[N, O]`` product is reshaped to the conv's ``[N, O, 1, 1]``.  As in CANN:
    the input's C, H, W must equal the filter's, groups 1, pads 0; any stride
    gives the same single output position.  N may be dynamic.
    """

    name: ClassVar[str] = "ConvToFullyConnectionFusionPass"
    priority: ClassVar[int] = 90
    summary: ClassVar[str] = "Turn a conv2d whose kernel covers the whole input into a matmul"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "cann"
    example: ClassVar[str] = """\
func.func @conv_fc(%x: tensor<2x3x4x4xf32>, %w: tensor<8x3x4x4xf32>) -> tensor<2x8x1x1xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<2x3x4x4xf32>, tensor<8x3x4x4xf32>) -> tensor<2x8x1x1xf32>
  return %0 : tensor<2x8x1x1xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("ConvToFullyConnectionFusion", "graph.conv2d", conv_to_fully_connection),
    )


@dataclass(frozen=True)
class ZConcatv2dFusionPass(FusionPass):
    """Merge nested concats on one axis: concat(a, concat(b, c), d) -> concat(a, b, c, d).

    An inner concat is merged when it joins the same axis (after normalizing
    negative axes), has no other user (CANN: no fusion when a ConcatV2D input
    is reused), and the merged operand list keeps graph.concat's IRDL rule
    (operands after the second share one type).
    """

    name: ClassVar[str] = "ZConcatv2dFusionPass"
    priority: ClassVar[int] = 40
    summary: ClassVar[str] = "Merge nested concats along the same axis into one concat"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "cann"
    example: ClassVar[str] = """\
func.func @nested(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>) -> tensor<2x9xf32> {
  %0 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %1 = "graph.concat"(%0, %c) {axis = -1 : i64} : (tensor<2x6xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
  return %1 : tensor<2x9xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("ZConcatv2dFusion", "graph.concat", merge_concats),)


@dataclass(frozen=True)
class SplitConvConcatFusionPass(FusionPass):
    """split(x, axis 1) -> conv2d per piece -> concat(axis 1) => conv2d(x, concat(w), groups = n).

    Every piece must have the same channel count and every conv the same
    output channel count, kernel size, strides, pads and dilations, groups 1
    and a constant weight; piece i must feed the i-th concat operand, and no
    piece or conv result may have other users.  (CANN documents this exact
    rewrite as ASplitConv2dConcatPass, which SplitConvConcatFusionPass runs
    first; graphfuse keeps the seed's name.)
    """

    name: ClassVar[str] = "SplitConvConcatFusionPass"
    priority: ClassVar[int] = 60
    summary: ClassVar[str] = "Turn split -> per-piece conv2d -> concat on channels into one grouped conv2d"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "cann"
    example: ClassVar[str] = """\
func.func @split_conv_concat(%x: tensor<1x4x5x5xf32>) -> tensor<1x6x3x3xf32> {
  %w0 = arith.constant dense<0.5> : tensor<3x2x3x3xf32>
  %w1 = arith.constant dense<-0.25> : tensor<3x2x3x3xf32>
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>}
      : (tensor<1x4x5x5xf32>) -> (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>)
  %1 = "graph.conv2d"(%0#0, %w0) : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %2 = "graph.conv2d"(%0#1, %w1) : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %3 = "graph.concat"(%1, %2) {axis = 1 : i64} : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x6x3x3xf32>
  return %3 : tensor<1x6x3x3xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("SplitConvConcatFusion", "graph.concat", split_conv_concat),)


@dataclass(frozen=True)
class ConvConcatFusionPass(FusionPass):
    """conv2d(x, w_i) for i < n -> concat(axis 1) => conv2d(x, concat(w_i, axis 0)).

    Horizontal fusion of convolutions that read one input (an Inception block's branches, a detection head's
    box and class convs): one convolution computes every filter, its output already in the concat's order,
    and the input is read once instead of n times.  The convs must share strides, pads and dilations, have
    groups 1, constant weights of one kernel size and no other users.  CANN's pass writes each conv's output
    into the concat's buffer at its offset; joining the filters gets the same result with one kernel.
    """

    name: ClassVar[str] = "ConvConcatFusionPass"
    priority: ClassVar[int] = 55
    summary: ClassVar[str] = "Turn convs of one input concatenated on channels into one conv2d with all the filters"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "cann"
    example: ClassVar[str] = """\
func.func @conv_concat(%x: tensor<1x3x6x6xf32>) -> tensor<1x5x6x6xf32> {
  %w0 = arith.constant dense<0.5> : tensor<2x3x3x3xf32>
  %w1 = arith.constant dense<-0.25> : tensor<3x3x3x3xf32>
  %0 = "graph.conv2d"(%x, %w0) {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x3x6x6xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  %1 = "graph.conv2d"(%x, %w1) {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x3x6x6xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  %2 = "graph.concat"(%0, %1) {axis = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<1x3x6x6xf32>) -> tensor<1x5x6x6xf32>
  return %2 : tensor<1x5x6x6xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("ConvConcatFusion", "graph.concat", conv_concat),)


@dataclass(frozen=True)
class SoftmaxSmallOpFusionPass(FusionPass):
    """div(e, reduce_sum(e)) with e = exp(x - reduce_max(x)) -> softmax(x), one axis, keep_dims = true.

    Off by default, as in CANN: enable it with fusion_switch.cfg
    (``"SoftmaxSmallOpFusionPass": "on"``) or run it by name.  The seed's example configs call it
    ``SoftmaxFusionPass``: that name switches and runs it too (``graphfuse.builtin_passes.BUILTIN_ALIASES``).
    """

    name: ClassVar[str] = "SoftmaxSmallOpFusionPass"
    priority: ClassVar[int] = 50
    summary: ClassVar[str] = "Fuse the small-op softmax chain (reduce_max, sub, exp, reduce_sum, div) into softmax"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "cann"
    default_backends: ClassVar[frozenset[str]] = frozenset()
    example: ClassVar[str] = """\
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %4 = "graph.div"(%2, %3) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("SoftmaxSmallOpFusion", "graph.div", small_op_softmax),)
