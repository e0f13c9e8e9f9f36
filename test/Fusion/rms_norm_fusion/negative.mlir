// rms_norm_fusion: what must not fuse.
// RUN: graphfuse-opt --split-input-file --rms_norm_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --rms_norm_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// The mean over another axis (a norm over rows, not the last axis).
// LOG: pattern RmsNormFusion not fused at {{.*}}: the mean is not over the last axis alone with its dim kept
// CHECK-LABEL: func.func @other_axis
// CHECK-NOT:     graph.rms_norm
// CHECK:         "graph.rsqrt"
func.func @other_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %sq = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 0>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %r = "graph.rsqrt"(%s) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %n = "graph.mul"(%x, %r) : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// The statistics are also returned: an intermediate used elsewhere.
// LOG: pattern RmsNormFusion not fused at {{.*}}: an intermediate of the norm is used elsewhere
// CHECK-LABEL: func.func @mean_returned
// CHECK-NOT:     graph.rms_norm
func.func @mean_returned(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %sq = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = "graph.rsqrt"(%s) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = "graph.mul"(%x, %r) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %ms : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// The reciprocal scales another value than the one squared.
// LOG: pattern RmsNormFusion not fused at {{.*}}: the reciprocal square root is not used only to scale the squared value
// CHECK-LABEL: func.func @scales_another
// CHECK-NOT:     graph.rms_norm
func.func @scales_another(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %sq = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = "graph.rsqrt"(%s) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = "graph.mul"(%z, %r) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// eps computed at run time, and a square that is a product of two values: no norm to match (no log line).
// LOG-NOT: RmsNormFusion not fused
// CHECK-LABEL: func.func @not_a_norm
// CHECK-NOT:     graph.rms_norm
func.func @not_a_norm(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %e: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %sq = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s = "graph.add"(%ms, %e) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = "graph.rsqrt"(%s) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = "graph.mul"(%x, %r) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %p = "graph.mul"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms2 = "graph.reduce_mean"(%p) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s2 = "graph.add"(%ms2, %eps) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r2 = "graph.rsqrt"(%s2) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n2 = "graph.mul"(%x, %r2) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %n2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A weight of another length (a broadcast over a leading axis) stays a product after the norm.
// CHECK-LABEL: func.func @weight_not_last_dim
// CHECK:         %[[Y:.*]] = "graph.rms_norm"(%arg0, %{{.*}})
// CHECK-NEXT:    "graph.mul"(%arg1, %[[Y]])
func.func @weight_not_last_dim(%x: tensor<4x8xf32>, %w: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %sq = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = "graph.rsqrt"(%s) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = "graph.mul"(%x, %r) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = "graph.mul"(%w, %n) : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// No weight and a dynamic last dim: gamma would be ones of a length known only at run time.
// LOG: pattern RmsNormFusion not fused at {{.*}}: no weight and a dynamic last dim
// CHECK-LABEL: func.func @dynamic_last_dim
// CHECK-NOT:     graph.rms_norm
func.func @dynamic_last_dim(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %sq = "graph.square"(%x) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x?xf32>) -> tensor<4x1xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = "graph.rsqrt"(%s) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = "graph.mul"(%x, %r) : (tensor<4x?xf32>, tensor<4x1xf32>) -> tensor<4x?xf32>
  return %n : tensor<4x?xf32>
}

// -----

// A square root divided into another value than the one squared, and a root of the mean read twice: not norms.
// CHECK-LABEL: func.func @sqrt_not_a_norm
// CHECK-NOT:     graph.rms_norm
func.func @sqrt_not_a_norm(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %sq = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = "graph.sqrt"(%s) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = "graph.div"(%z, %r) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq2 = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ms2 = "graph.reduce_mean"(%sq2) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s2 = "graph.add"(%ms2, %eps) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r2 = "graph.sqrt"(%s2) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %i2 = "graph.div"(%x, %r2) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %t = "graph.add"(%r2, %r2) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  return %n, %t : tensor<4x8xf32>, tensor<4x1xf32>
}
