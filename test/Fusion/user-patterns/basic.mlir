// User fusions from a pass plugin (graphfuse.register_replacement), run by name: what fuses and what does not.
// RUN: graphfuse-opt --load-pass-plugin=%S/Inputs/silu_pattern.py --split-input-file --user_silu_fusion --user_rms_norm_fusion %s | FileCheck %s
// RUN: graphfuse-opt --load-pass-plugin=%S/Inputs/silu_pattern.py --split-input-file --user_silu_fusion --user_rms_norm_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// The pattern as traced (4x8), and both operand orders of the commutative mul.
// CHECK-LABEL: func.func @silu
// CHECK-NEXT:    %[[A:.*]] = "graph.silu"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.silu"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @silu(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.mul"(%x, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = "graph.mul"(%t, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Traced at 4x8, the patterns fuse other shapes and ranks; the epsilon written as a 1-element
// constant matches the traced scalar 1e-6 (splat semantics).
// CHECK-LABEL: func.func @other_shapes
// CHECK-NEXT:    "graph.silu"(%arg0) : (tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:    "graph.rms_norm"(%arg0, %arg1) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      (tensor<2x3x16xf32>, tensor<16xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:    return
func.func @other_shapes(%x: tensor<2x3x16xf32>, %g: tensor<16xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
  %s = "graph.sigmoid"(%x) : (tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %y = "graph.mul"(%x, %s) : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %sq = "graph.mul"(%x, %x) : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %m = "graph.reduce_mean"(%sq) {axes = array<i64: -1>, keep_dims = true} : (tensor<2x3x16xf32>) -> tensor<2x3x1xf32>
  %eps = arith.constant dense<1.0e-06> : tensor<1xf32>
  %a = "graph.add"(%eps, %m) : (tensor<1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %r = "graph.rsqrt"(%a) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %n = "graph.mul"(%r, %x) : (tensor<2x3x1xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %z = "graph.mul"(%g, %n) : (tensor<16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  return %y, %z : tensor<2x3x16xf32>, tensor<2x3x16xf32>
}

// -----

// The sigmoid is also returned: fusing would lose it. Matched, not fused, the reason logged.
// LOG: user_silu_fusion: pattern user_silu_fusion not fused at {{.*}}basic.mlir:{{[0-9]+}}:{{[0-9]+}}: intermediate result #0 of graph.sigmoid (op #0 of the pattern) is a function result
// CHECK-LABEL: func.func @intermediate_returned
// CHECK-NEXT:    "graph.sigmoid"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    return
func.func @intermediate_returned(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.mul"(%x, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The sigmoid also feeds a neg: matched, not fused.
// LOG: user_silu_fusion: pattern user_silu_fusion not fused at {{.*}}basic.mlir:{{[0-9]+}}:{{[0-9]+}}: intermediate result #0 of graph.sigmoid (op #0 of the pattern) is used outside it
// CHECK-LABEL: func.func @intermediate_used
// CHECK-NEXT:    "graph.sigmoid"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    "graph.neg"
// CHECK-NEXT:    return
func.func @intermediate_used(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.mul"(%s, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "graph.neg"(%s) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %n : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not the pattern: another element type than the example's (f16), a sigmoid of another value,
// another epsilon, another reduction axis. No match, nothing logged.
// LOG-NOT: not fused
// CHECK-LABEL: func.func @not_the_pattern
// CHECK:         "graph.sigmoid"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    "graph.sigmoid"
// CHECK-NEXT:    "graph.mul"
// CHECK-NOT:     "graph.silu"
// CHECK-NOT:     "graph.rms_norm"
// CHECK:         return
func.func @not_the_pattern(%h: tensor<4x8xf16>, %x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %g: tensor<8xf32>)
    -> (tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.sigmoid"(%h) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %y = "graph.mul"(%h, %s) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %t = "graph.sigmoid"(%w) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = "graph.mul"(%x, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = "graph.mul"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = "graph.reduce_mean"(%sq) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps = arith.constant dense<1.0e-05> : tensor<f32>
  %a = "graph.add"(%m, %eps) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = "graph.rsqrt"(%a) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = "graph.mul"(%x, %r) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %o = "graph.mul"(%n, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %sq1 = "graph.mul"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = "graph.reduce_mean"(%sq1) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps1 = arith.constant dense<1.0e-06> : tensor<f32>
  %a1 = "graph.add"(%m1, %eps1) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r1 = "graph.rsqrt"(%a1) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n1 = "graph.mul"(%x, %r1) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %o1 = "graph.mul"(%n1, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %z, %o, %o1 : tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
