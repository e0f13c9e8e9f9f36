// With absorb, a product of an operand with batch dims by a matrix (a linear layer on [batch, seq, hidden], no
// bias reshape: falcon's matmul_gelu) becomes the 2-D product of the operand's rows between reshapes, so that
// its kernel applies the epilogue to each block of C on every core; an addend of the result's shape is
// reshaped with it, a bias broadcasts as it is. Without absorb (the NPU's setting) nothing changes.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(outline-fused-ops{absorb=true})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --outline-fused-ops %s | FileCheck %s --check-prefix=ALONE

// CHECK-LABEL: func.func @gelu_rows
// CHECK-NEXT:    %[[A:.*]] = "graph.reshape"(%arg0) : (tensor<2x3x8xf32>) -> tensor<6x8xf32>
// CHECK-NEXT:    %[[P:.*]] = call @gelu_rows_fused_0(%[[A]], %arg1) : (tensor<6x8xf32>, tensor<8x16xf32>) -> tensor<6x16xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%[[P]]) : (tensor<6x16xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func private @gelu_rows_fused_0
// CHECK-NEXT:    "graph.matmul_gelu"(%arg0, %arg1) {{.*}} : (tensor<6x8xf32>, tensor<8x16xf32>) -> tensor<6x16xf32>
// ALONE-LABEL: func.func @gelu_rows
// ALONE-NEXT:    call @gelu_rows_fused_0(%arg0, %arg1) : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
func.func @gelu_rows(%x: tensor<2x3x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x3x16xf32> {
  %0 = "graph.matmul_gelu"(%x, %w) {approximate = "none"} : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  return %0 : tensor<2x3x16xf32>
}

// -----

// The addend of the result's shape is reshaped too; the bias of matmul_bias_add is not.
// CHECK-LABEL: func.func @addend_and_bias
// CHECK:         %[[C:.*]] = "graph.reshape"(%arg2) : (tensor<2x3x16xf32>) -> tensor<6x16xf32>
// CHECK:         call @addend_and_bias_fused_0({{.*}}, %arg1, %[[C]]) : (tensor<6x8xf32>, tensor<8x16xf32>, tensor<6x16xf32>)
// CHECK:         call @addend_and_bias_fused_1({{.*}}, %arg1, %arg3) : (tensor<6x8xf32>, tensor<8x16xf32>, tensor<16xf32>)
func.func @addend_and_bias(%x: tensor<2x3x8xf32>, %w: tensor<8x16xf32>, %c: tensor<2x3x16xf32>, %b: tensor<16xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
  %0 = "graph.matmul_add"(%x, %w, %c) : (tensor<2x3x8xf32>, tensor<8x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %1 = "graph.matmul_bias_add"(%x, %w, %b) : (tensor<2x3x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<2x3x16xf32>
  return %0, %1 : tensor<2x3x16xf32>, tensor<2x3x16xf32>
}

// -----

// Negative: a batched b, a transposed a, an addend broadcast along the rows and dynamic rows keep the batched form.
// CHECK-LABEL: func.func @kept_batched
// CHECK-NOT:     "graph.reshape"
// CHECK:         return
func.func @kept_batched(%x: tensor<2x3x8xf32>, %wb: tensor<2x8x16xf32>, %xt: tensor<2x8x3xf32>, %w: tensor<8x16xf32>, %c: tensor<3x16xf32>, %xd: tensor<?x3x8xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<?x3x16xf32>) {
  %0 = "graph.matmul_relu"(%x, %wb) : (tensor<2x3x8xf32>, tensor<2x8x16xf32>) -> tensor<2x3x16xf32>
  %1 = "graph.matmul_relu"(%xt, %w) {transpose_a = true} : (tensor<2x8x3xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  %2 = "graph.matmul_add"(%x, %w, %c) : (tensor<2x3x8xf32>, tensor<8x16xf32>, tensor<3x16xf32>) -> tensor<2x3x16xf32>
  %3 = "graph.matmul_relu"(%xd, %w) : (tensor<?x3x8xf32>, tensor<8x16xf32>) -> tensor<?x3x16xf32>
  return %0, %1, %2, %3 : tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<?x3x16xf32>
}
