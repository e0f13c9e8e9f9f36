// What matmul_elem_biasadd_fusion must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --matmul_elem_biasadd_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --matmul_elem_biasadd_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The bias runs along the rows (axis 0), not the last axis.
// CHECK-LABEL: func.func @bias_not_last_axis
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.bias_add"
// WHY: pattern MatMulBiasAdd not fused at {{.*}}: the bias_add runs along axis 0, not the last axis of the rank-2 matmul result
func.func @bias_not_last_axis(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<4xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.bias_add"(%0, %b) {axis = 0 : i64} : (tensor<4x32xf32>, tensor<4xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// The matmul result is also a function result.
// CHECK-LABEL: func.func @matmul_returned
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"
// CHECK-NEXT:    %[[B:.*]] = "graph.bias_add"(%[[M]]
// CHECK-NEXT:    return %[[M]], %[[B]]
// WHY: pattern MatMulBiasAdd not fused at {{.*}}: the matmul result is also a function result
func.func @matmul_returned(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.bias_add"(%0, %b) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %0, %1 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// The matmul result has another user.
// CHECK-LABEL: func.func @matmul_shared
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.exp"
// WHY: pattern MatMulAddBias not fused at {{.*}}: the matmul result has other users
func.func @matmul_shared(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.add"(%0, %b) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %2 = "graph.exp"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1, %2 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Not a bias: a 2-D addend, a broadcast length-1 vector (matmul_elem_add_fusion's cases): no match.
// CHECK-LABEL: func.func @not_a_bias
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.add"
func.func @not_a_bias(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %c: tensor<4x32xf32>, %one: tensor<1xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.add"(%0, %c) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %3 = "graph.add"(%one, %2) : (tensor<1xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1, %3 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// An integer matmul + add: matmul_bias_add (like bias_add) is float-only.
// CHECK-LABEL: func.func @integer_bias
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.add"
// WHY: pattern MatMulAddBias not fused at {{.*}}: the fused op would be invalid: operand a tensor<4x16xi32> must have a floating-point element type (f32, f16, bf16)
func.func @integer_bias(%x: tensor<4x16xi32>, %w: tensor<16x32xi32>, %b: tensor<32xi32>) -> tensor<4x32xi32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xi32>, tensor<16x32xi32>) -> tensor<4x32xi32>
  %1 = "graph.add"(%0, %b) : (tensor<4x32xi32>, tensor<32xi32>) -> tensor<4x32xi32>
  return %1 : tensor<4x32xi32>
}

// -----

// A bias_add of something that is not a matmul, and a matmul in another function (no fusion across calls).
// CHECK-LABEL: func.func private @callee
// CHECK-NEXT:    "graph.matmul"
// CHECK-LABEL: func.func @caller
// CHECK-NEXT:    call @callee
// CHECK-NEXT:    "graph.bias_add"
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.bias_add"
func.func private @callee(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}
func.func @caller(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = call @callee(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.bias_add"(%0, %b) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %2 = "graph.exp"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %3 = "graph.bias_add"(%2, %b) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %1, %3 : tensor<4x32xf32>, tensor<4x32xf32>
}
