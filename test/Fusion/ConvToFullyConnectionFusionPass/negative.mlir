// Convs that are not a fully connected layer.
// RUN: graphfuse-opt --split-input-file --ConvToFullyConnectionFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --ConvToFullyConnectionFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The kernel is smaller than the image: several output positions, no match.
// CHECK-LABEL: func.func @small_kernel
// CHECK:         "graph.conv2d"
// CHECK-NOT:     graph.matmul
// WHY: pattern=ConvToFullyConnectionFusion, matched_times=0, effected_times=0
func.func @small_kernel(%x: tensor<2x3x4x4xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x8x2x2xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<2x3x4x4xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x2x2xf32>
  return %0 : tensor<2x8x2x2xf32>
}

// -----

// The kernel covers the image but the conv pads it (CANN: pads must be [0, 0, 0, 0]).
// CHECK-LABEL: func.func @padded
// CHECK:         "graph.conv2d"
// WHY: pattern ConvToFullyConnectionFusion not fused at {{.*}}: the conv2d pads its input ([1, 0, 0, 0])
func.func @padded(%x: tensor<2x3x4x4xf32>, %w: tensor<8x3x4x4xf32>) -> tensor<2x8x2x1xf32> {
  %0 = "graph.conv2d"(%x, %w) {pads = array<i64: 1, 0, 0, 0>} : (tensor<2x3x4x4xf32>, tensor<8x3x4x4xf32>) -> tensor<2x8x2x1xf32>
  return %0 : tensor<2x8x2x1xf32>
}

// -----

// A grouped conv is a block-diagonal product, not one matmul (CANN: group must be 1).
// CHECK-LABEL: func.func @grouped
// CHECK:         "graph.conv2d"
// WHY: pattern ConvToFullyConnectionFusion not fused at {{.*}}: the conv2d has 2 groups
func.func @grouped(%x: tensor<2x4x3x3xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x1x1xf32> {
  %0 = "graph.conv2d"(%x, %w) {groups = 2 : i64} : (tensor<2x4x3x3xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x1x1xf32>
  return %0 : tensor<2x6x1x1xf32>
}

// -----

// A dynamic image size cannot be shown to equal the kernel size: no match.
// CHECK-LABEL: func.func @dynamic_height
// CHECK:         "graph.conv2d"
// WHY: pattern=ConvToFullyConnectionFusion, matched_times=0, effected_times=0
func.func @dynamic_height(%x: tensor<2x3x?x4xf32>, %w: tensor<8x3x4x4xf32>) -> tensor<2x8x?x1xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<2x3x?x4xf32>, tensor<8x3x4x4xf32>) -> tensor<2x8x?x1xf32>
  return %0 : tensor<2x8x?x1xf32>
}
