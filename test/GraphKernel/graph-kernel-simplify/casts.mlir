// cast(cast(x)) -> cast(x) when the first cast holds every value of x exactly: an int8 weight cast to bf16 and then
// widened to f32 is one conversion of the int8 values.  Exact, so unsafe-math=false keeps it; a first cast that
// can round (f32 -> bf16, i32 -> bf16, bf16 -> f16) or a boolean stays.
// RUN: graphfuse-opt --split-input-file --graph-kernel-simplify %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=false})' %s | FileCheck %s

// CHECK-LABEL: func.func @int8_to_bf16_to_f32
// CHECK-NEXT:    %[[R:.*]] = "graph.cast"(%arg0) : (tensor<4x8xi8>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[R]]
func.func @int8_to_bf16_to_f32(%w: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %0 = "graph.cast"(%w) : (tensor<4x8xi8>) -> tensor<4x8xbf16>
  %1 = "graph.cast"(%0) : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// f16 -> f32 -> f16 is x itself; bf16 -> f32 -> i32 converts the bf16 value; the inner cast stays where it has
// another user.
// CHECK-LABEL: func.func @round_trip
// CHECK:         %[[W:.*]] = "graph.cast"(%arg1) : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK:         %[[I:.*]] = "graph.cast"(%arg1) : (tensor<4xbf16>) -> tensor<4xi32>
// CHECK:         return %arg0, %[[I]], %[[W]]
func.func @round_trip(%h: tensor<4xf16>, %b: tensor<4xbf16>) -> (tensor<4xf16>, tensor<4xi32>, tensor<4xf32>) {
  %0 = "graph.cast"(%h) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "graph.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  %2 = "graph.cast"(%b) : (tensor<4xbf16>) -> tensor<4xf32>
  %3 = "graph.cast"(%2) : (tensor<4xf32>) -> tensor<4xi32>
  return %1, %3, %2 : tensor<4xf16>, tensor<4xi32>, tensor<4xf32>
}

// -----

// Negatives: f32 -> bf16 rounds, i32 -> bf16 rounds past 256, bf16 -> f16 loses range, a boolean.
// CHECK-LABEL: func.func @inexact
// CHECK-COUNT-8: "graph.cast"
func.func @inexact(%x: tensor<4xf32>, %i: tensor<4xi32>, %b: tensor<4xbf16>, %p: tensor<4xi1>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.cast"(%x) : (tensor<4xf32>) -> tensor<4xbf16>
  %1 = "graph.cast"(%0) : (tensor<4xbf16>) -> tensor<4xf32>
  %2 = "graph.cast"(%i) : (tensor<4xi32>) -> tensor<4xbf16>
  %3 = "graph.cast"(%2) : (tensor<4xbf16>) -> tensor<4xf32>
  %4 = "graph.cast"(%b) : (tensor<4xbf16>) -> tensor<4xf16>
  %5 = "graph.cast"(%4) : (tensor<4xf16>) -> tensor<4xf32>
  %6 = "graph.cast"(%p) : (tensor<4xi1>) -> tensor<4xi8>
  %7 = "graph.cast"(%6) : (tensor<4xi8>) -> tensor<4xf32>
  return %1, %3, %5, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
