// tile and reduce_mean.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu})' %s | FileCheck %s

// Each dim tiled m > 1 times gets a size-1 dim in front that broadcasts to m; a size-1 dim broadcasts in place.
// CHECK-LABEL: func.func @tile
// CHECK-NEXT:    %[[S:.*]] = "graph.reshape"(%arg0) : (tensor<2x1x3xi1>) -> tensor<1x2x1x3xi1>
// CHECK-NEXT:    %[[B:.*]] = "graph.broadcast_to"(%[[S]]) : (tensor<1x2x1x3xi1>) -> tensor<2x2x5x3xi1>
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%[[B]]) : (tensor<2x2x5x3xi1>) -> tensor<4x5x3xi1>
// CHECK-NEXT:    return %[[R]]
func.func @tile(%x: tensor<2x1x3xi1>) -> tensor<4x5x3xi1> {
  %0 = "graph.tile"(%x) {multiples = array<i64: 2, 5, 1>} : (tensor<2x1x3xi1>) -> tensor<4x5x3xi1>
  return %0 : tensor<4x5x3xi1>
}

// -----

// The last dim repeated: 2x3 -> 2x1x3 -> 2x4x3 -> 2x12 ([a b c a b c ...] per row, as numpy.tile).
// CHECK-LABEL: func.func @tile_last
// CHECK-NEXT:    %[[S:.*]] = "graph.reshape"(%arg0) : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.broadcast_to"(%[[S]]) : (tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%[[B]]) : (tensor<2x4x3xf32>) -> tensor<2x12xf32>
// CHECK-NEXT:    return %[[R]]
func.func @tile_last(%x: tensor<2x3xf32>) -> tensor<2x12xf32> {
  %0 = "graph.tile"(%x) {multiples = array<i64: 1, 4>} : (tensor<2x3xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

// Only size-1 dims repeated: a single broadcast_to.
// CHECK-LABEL: func.func @tile_broadcast_only
// CHECK-NEXT:    %[[B:.*]] = "graph.broadcast_to"(%arg0) : (tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[B]]
func.func @tile_broadcast_only(%x: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.tile"(%x) {multiples = array<i64: 4, 1>} : (tensor<1x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// All multiples 1: the operand itself (dynamic dims allowed).
// CHECK-LABEL: func.func @tile_identity
// CHECK-NEXT:    return %arg0
func.func @tile_identity(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = "graph.tile"(%x) {multiples = array<i64: 1, 1>} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// reduce_mean: reduce_sum / n (n = 4 * 16), keep_dims as given; f16 sums in f32 between casts.
// CHECK-LABEL: func.func @reduce_mean
// CHECK-NEXT:    %[[S:.*]] = "graph.reduce_sum"(%arg0) {axes = array<i64: 0, 2>, keep_dims = false} : (tensor<4x8x16xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[N:.*]] = arith.constant dense<6.400000e+01> : tensor<f32>
// CHECK-NEXT:    %[[M:.*]] = "graph.div"(%[[S]], %[[N]]) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[X:.*]] = "graph.cast"(%arg1) : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[S2:.*]] = "graph.reduce_sum"(%[[X]]) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[N2:.*]] = arith.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[M2:.*]] = "graph.div"(%[[S2]], %[[N2]])
// CHECK-NEXT:    %[[Y:.*]] = "graph.cast"(%[[M2]]) : (tensor<4x1xf32>) -> tensor<4x1xf16>
// CHECK-NEXT:    return %[[M]], %[[Y]], %arg1
func.func @reduce_mean(%x: tensor<4x8x16xf32>, %h: tensor<4x8xf16>) -> (tensor<8xf32>, tensor<4x1xf16>, tensor<4x8xf16>) {
  %0 = "graph.reduce_mean"(%x) {axes = array<i64: 0, -1>} : (tensor<4x8x16xf32>) -> tensor<8xf32>
  %1 = "graph.reduce_mean"(%h) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  %2 = "graph.reduce_mean"(%h) {axes = array<i64>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0, %1, %2 : tensor<8xf32>, tensor<4x1xf16>, tensor<4x8xf16>
}
