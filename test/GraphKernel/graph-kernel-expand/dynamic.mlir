// Shapes an expansion cannot express are left alone (the expander first plans on types, before creating IR).
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu enable-ops=Softmax,LayerNorm,RmsNorm})' %s | FileCheck %s
// The debug log says why.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu})' --log-level=debug %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// A tiled dynamic dim cannot be reshaped back.
// CHECK-LABEL: func.func @tile_dynamic
// CHECK-NEXT:    "graph.tile"
// DEBUG: [DEBUG] graph-kernel-expand: graph.tile at {{.*}}dynamic.mlir:[[# @LINE + 2]]:8 is not expanded: the tiled operand tensor<?x3xf32> has dynamic dimensions
func.func @tile_dynamic(%x: tensor<?x3xf32>) -> tensor<?x6xf32> {
  %0 = "graph.tile"(%x) {multiples = array<i64: 1, 2>} : (tensor<?x3xf32>) -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}

// -----

// The element count of a dynamic reduced dim is unknown; elsewhere dynamic dims are fine.
// CHECK-LABEL: func.func @mean_dynamic
// CHECK-NEXT:    "graph.reduce_mean"(%arg0) {axes = array<i64: 1>}
// CHECK-NEXT:    "graph.reduce_sum"(%arg0) {axes = array<i64: 0>, keep_dims = false} : (tensor<4x?xf32>) -> tensor<?xf32>
// CHECK-NEXT:    arith.constant dense<4.000000e+00>
// CHECK-NEXT:    "graph.div"
// DEBUG: [DEBUG] graph-kernel-expand: graph.reduce_mean at {{.*}} is not expanded: a reduced dimension of tensor<4x?xf32> is dynamic
func.func @mean_dynamic(%x: tensor<4x?xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  %0 = "graph.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<4x?xf32>) -> tensor<4xf32>
  %1 = "graph.reduce_mean"(%x) {axes = array<i64: 0>} : (tensor<4x?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<4xf32>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @norms_dynamic
// CHECK-NEXT:    "graph.layer_norm"
// CHECK-NEXT:    "graph.rms_norm"
// CHECK-NEXT:    "graph.reduce_max"(%arg0) {axes = array<i64: 0>, keep_dims = true} : (tensor<2x?xf32>) -> tensor<1x?xf32>
func.func @norms_dynamic(%x: tensor<2x?xf32>, %g: tensor<?xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?xf32>) {
  %0 = "graph.layer_norm"(%x, %g, %g) : (tensor<2x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
  %1 = "graph.rms_norm"(%x, %g) : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
  %2 = "graph.softmax"(%x) {axis = 0 : i64} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0, %1, %2 : tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?xf32>
}

// -----

// bias_add's result keeps x's dynamic dim, but x + bias would be typed 2x5: not expanded.
// CHECK-LABEL: func.func @bias_add_type_mismatch
// CHECK-NEXT:    "graph.bias_add"
// DEBUG: [DEBUG] graph-kernel-expand: graph.bias_add at {{.*}} is not expanded: the expansion would give tensor<2x5xf32>, not tensor<2x?xf32>
func.func @bias_add_type_mismatch(%x: tensor<2x?xf32>, %b: tensor<5xf32>) -> tensor<2x?xf32> {
  %0 = "graph.bias_add"(%x, %b) : (tensor<2x?xf32>, tensor<5xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// softmax over an empty axis: reduce_max would have no element.
// CHECK-LABEL: func.func @softmax_empty_axis
// CHECK-NEXT:    "graph.softmax"
func.func @softmax_empty_axis(%x: tensor<4x0xf32>) -> tensor<4x0xf32> {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<4x0xf32>) -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}
