// An exact widening that only products read as factors is left out of a compound op's kernel (absorb): the
// product then reads the narrow values (narrow-contraction-operands) instead of the kernel's f32 copy of them.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(outline-fused-ops{absorb=true})' %s | FileCheck %s

// OPT's block: a bf16 layer norm widened for fc1 (bias added in f32), relu rounded to bf16, widened for fc2.
// Neither widening joins the kernel before it; the rounding and relu are still fc1's epilogue.
// CHECK-LABEL: func.func @norm_fc1_fc2
// CHECK:         %[[N:.*]] = call @norm_fc1_fc2_fused_0(%arg0, %arg1, %arg2) : ({{.*}}) -> tensor<8x16xbf16>
// CHECK-NEXT:    %[[NF:.*]] = "graph.cast"(%[[N]]) : (tensor<8x16xbf16>) -> tensor<8x16xf32>
// CHECK-NEXT:    %[[H:.*]] = call @norm_fc1_fc2_fused_1(%[[NF]], %arg3, %arg4) : ({{.*}}) -> tensor<8x32xbf16>
// CHECK-NEXT:    %[[HF:.*]] = "graph.cast"(%[[H]]) : (tensor<8x32xbf16>) -> tensor<8x32xf32>
// CHECK-NEXT:    call @norm_fc1_fc2_fused_2(%[[HF]], %arg5, %arg6)
// CHECK-LABEL: func.func private @norm_fc1_fc2_fused_0
// CHECK-SAME:    graph.kernel_ops = ["graph.layer_norm"]
// CHECK-LABEL: func.func private @norm_fc1_fc2_fused_1
// CHECK-SAME:    graph.kernel_ops = ["graph.matmul_bias_add", "graph.cast", "graph.relu"]
func.func @norm_fc1_fc2(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %b: tensor<16xbf16>, %w1: tensor<16x32xf32>,
                        %b1: tensor<32xf32>, %w2: tensor<32x16xf32>, %b2: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = "graph.layer_norm"(%x, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<8x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> tensor<8x16xbf16>
  %1 = "graph.cast"(%0) : (tensor<8x16xbf16>) -> tensor<8x16xf32>
  %2 = "graph.matmul_bias_add"(%1, %w1, %b1) : (tensor<8x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %3 = "graph.cast"(%2) : (tensor<8x32xf32>) -> tensor<8x32xbf16>
  %4 = "graph.relu"(%3) : (tensor<8x32xbf16>) -> tensor<8x32xbf16>
  %5 = "graph.cast"(%4) : (tensor<8x32xbf16>) -> tensor<8x32xf32>
  %6 = "graph.matmul_bias_add"(%5, %w2, %b2) : (tensor<8x32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %6 : tensor<8x16xf32>
}

// -----

// Negative: a widening read by an add (not a product) joins the norm's kernel as before.
// CHECK-LABEL: func.func @norm_then_add
// CHECK-NEXT:    %[[K:.*]] = call @norm_then_add_fused_0(%arg0, %arg1, %arg2, %arg3) : ({{.*}}) -> tensor<8x16xf32>
// CHECK-NEXT:    return %[[K]]
// CHECK-LABEL: func.func private @norm_then_add_fused_0
// CHECK-SAME:    graph.kernel_ops = ["graph.layer_norm", "graph.cast", "graph.add"]
func.func @norm_then_add(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %b: tensor<16xbf16>, %r: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = "graph.layer_norm"(%x, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<8x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> tensor<8x16xbf16>
  %1 = "graph.cast"(%0) : (tensor<8x16xbf16>) -> tensor<8x16xf32>
  %2 = "graph.add"(%1, %r) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
