// Nested concats that ZConcatv2dFusionPass must keep; the debug log says why.
// RUN: graphfuse-opt --split-input-file --ZConcatv2dFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --ZConcatv2dFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The inner concat has another user (CANN: no fusion when a ConcatV2D input is reused).
// CHECK-LABEL: func.func @inner_other_user
// CHECK-NEXT:    %[[I:.*]] = "graph.concat"(%arg0, %arg1)
// CHECK-NEXT:    %[[O:.*]] = "graph.concat"(%[[I]], %arg2)
// CHECK-NEXT:    return %[[O]], %[[I]]
// WHY: pattern ZConcatv2dFusion not fused at {{.*}}: the concat at operand 0 has other users
func.func @inner_other_user(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>) -> (tensor<2x9xf32>, tensor<2x6xf32>) {
  %0 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %1 = "graph.concat"(%0, %c) {axis = 1 : i64} : (tensor<2x6xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
  return %1, %0 : tensor<2x9xf32>, tensor<2x6xf32>
}

// -----

// The inner concat joins another axis.
// CHECK-LABEL: func.func @other_axis
// CHECK-COUNT-2: "graph.concat"
// WHY: pattern ZConcatv2dFusion not fused at {{.*}}: operand 0 is a concat along axis 0, not 1
func.func @other_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %0 = "graph.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %1 = "graph.concat"(%0, %c) {axis = -1 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// graph.concat's IRDL definition gives every operand after the second one type
// (a variadic group): merging would give (2x1, 2x1, 2x2, 2x3), whose last two differ.
// CHECK-LABEL: func.func @irdl_rule
// CHECK-NEXT:    %[[I:.*]] = "graph.concat"(%arg2, %arg3) {axis = 1 : i64}
// CHECK-NEXT:    %[[O:.*]] = "graph.concat"(%arg0, %arg1, %[[I]]) {axis = 1 : i64}
// CHECK-NEXT:    return %[[O]]
// WHY: pattern ZConcatv2dFusion not fused at {{.*}}: merging the concat at operand 2 would give operands of different types after the second (tensor<2x2xf32>, tensor<2x3xf32>), which graph.concat's IRDL variadic group forbids
func.func @irdl_rule(%x: tensor<2x1xf32>, %y: tensor<2x1xf32>, %b: tensor<2x2xf32>, %c: tensor<2x3xf32>) -> tensor<2x7xf32> {
  %0 = "graph.concat"(%b, %c) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %1 = "graph.concat"(%x, %y, %0) {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x5xf32>) -> tensor<2x7xf32>
  return %1 : tensor<2x7xf32>
}

// -----

// Inner concats are merged left to right while the rule holds: the first one
// merges, the second would break the rule and stays nested (the merged concat is
// then matched again and rejected: matched twice, effected once).
// CHECK-LABEL: func.func @partial
// CHECK-NEXT:    %[[I:.*]] = "graph.concat"(%arg2, %arg3) {axis = 1 : i64}
// CHECK-NEXT:    %[[O:.*]] = "graph.concat"(%arg0, %arg1, %[[I]]) {axis = 1 : i64}
// CHECK-NEXT:    return %[[O]]
// WHY: pattern ZConcatv2dFusion not fused at {{.*}}: merging the concat at operand 2 would give operands of different types after the second (tensor<2x2xf32>, tensor<2x3xf32>)
// WHY: pattern=ZConcatv2dFusion, matched_times=2, effected_times=1
func.func @partial(%a: tensor<2x1xf32>, %b: tensor<2x1xf32>, %c: tensor<2x2xf32>, %d: tensor<2x3xf32>) -> tensor<2x7xf32> {
  %0 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %1 = "graph.concat"(%c, %d) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %2 = "graph.concat"(%0, %1) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x5xf32>) -> tensor<2x7xf32>
  return %2 : tensor<2x7xf32>
}
