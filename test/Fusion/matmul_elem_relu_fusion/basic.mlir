// matmul -> relu => graph.matmul_relu.
// RUN: graphfuse-opt --split-input-file --matmul_elem_relu_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --matmul_elem_relu_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// CHECK-LABEL: func.func @relu
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_relu"(%arg0, %arg1) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT:    return %[[R]]
// COUNTS: GraphFusionPass[matmul_elem_relu_fusion]: pattern=MatMulRelu, matched_times=1, effected_times=1
func.func @relu(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.relu"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// f16 with transpose_a, a batched i8 matmul, a matrix-vector product.
// CHECK-LABEL: func.func @variants
// CHECK-NEXT:    %[[A:.*]] = "graph.matmul_relu"(%arg0, %arg1) {transpose_a = true} : (tensor<16x4xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[B:.*]] = "graph.matmul_relu"(%arg2, %arg3) : (tensor<3x2x5xi8>, tensor<3x5x2xi8>) -> tensor<3x2x2xi8>
// CHECK-NEXT:    %[[C:.*]] = "graph.matmul_relu"(%arg4, %arg5) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]]
func.func @variants(%x: tensor<16x4xf16>, %w: tensor<16x8xf16>, %i: tensor<3x2x5xi8>, %j: tensor<3x5x2xi8>,
                    %m: tensor<4x16xf32>, %v: tensor<16xf32>) -> (tensor<4x8xf16>, tensor<3x2x2xi8>, tensor<4xf32>) {
  %0 = "graph.matmul"(%x, %w) {transpose_a = true} : (tensor<16x4xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  %1 = "graph.relu"(%0) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %2 = "graph.matmul"(%i, %j) : (tensor<3x2x5xi8>, tensor<3x5x2xi8>) -> tensor<3x2x2xi8>
  %3 = "graph.relu"(%2) : (tensor<3x2x2xi8>) -> tensor<3x2x2xi8>
  %4 = "graph.matmul"(%m, %v) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4xf32>
  %5 = "graph.relu"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %3, %5 : tensor<4x8xf16>, tensor<3x2x2xi8>, tensor<4xf32>
}
