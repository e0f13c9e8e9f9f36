// ZConcatv2dFusionPass merges nested concats along one axis into one concat.
// RUN: graphfuse-opt --split-input-file --ZConcatv2dFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --ZConcatv2dFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// Axis 1 and axis -1 are the same axis of a rank-2 tensor; the outer op's spelling is kept.
// CHECK-LABEL: func.func @inner_first
// CHECK-NEXT:    %[[C:.*]] = "graph.concat"(%arg0, %arg1, %arg2) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
// CHECK-NEXT:    return %[[C]]
// LOG: pattern=ZConcatv2dFusion, matched_times=1, effected_times=1
func.func @inner_first(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>) -> tensor<2x9xf32> {
  %0 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %1 = "graph.concat"(%0, %c) {axis = -1 : i64} : (tensor<2x6xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
  return %1 : tensor<2x9xf32>
}

// -----

// Three levels, in the middle of the operand list, on axis 0.
// CHECK-LABEL: func.func @three_levels
// CHECK-NEXT:    %[[C:.*]] = "graph.concat"(%arg0, %arg1, %arg2, %arg3, %arg4) {axis = 0 : i64} : (tensor<1x4xf16>, tensor<2x4xf16>, tensor<2x4xf16>, tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<9x4xf16>
// CHECK-NEXT:    return %[[C]]
func.func @three_levels(%a: tensor<1x4xf16>, %b: tensor<2x4xf16>, %c: tensor<2x4xf16>, %d: tensor<2x4xf16>, %e: tensor<2x4xf16>) -> tensor<9x4xf16> {
  %0 = "graph.concat"(%b, %c) {axis = 0 : i64} : (tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<4x4xf16>
  %1 = "graph.concat"(%0, %d) {axis = 0 : i64} : (tensor<4x4xf16>, tensor<2x4xf16>) -> tensor<6x4xf16>
  %2 = "graph.concat"(%a, %1, %e) {axis = 0 : i64} : (tensor<1x4xf16>, tensor<6x4xf16>, tensor<2x4xf16>) -> tensor<9x4xf16>
  return %2 : tensor<9x4xf16>
}

// -----

// Two inner concats merged at once; dynamic non-axis dims are fine.
// CHECK-LABEL: func.func @two_inner
// CHECK-NEXT:    %[[C:.*]] = "graph.concat"(%arg0, %arg1, %arg0, %arg1) {axis = 1 : i64} : (tensor<?x2xi32>, tensor<?x2xi32>, tensor<?x2xi32>, tensor<?x2xi32>) -> tensor<?x8xi32>
// CHECK-NEXT:    return %[[C]]
func.func @two_inner(%a: tensor<?x2xi32>, %b: tensor<?x2xi32>) -> tensor<?x8xi32> {
  %0 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<?x2xi32>, tensor<?x2xi32>) -> tensor<?x4xi32>
  %1 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<?x2xi32>, tensor<?x2xi32>) -> tensor<?x4xi32>
  %2 = "graph.concat"(%0, %1) {axis = 1 : i64} : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x8xi32>
  return %2 : tensor<?x8xi32>
}
