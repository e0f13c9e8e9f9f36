// Fast math in graph-to-linalg (on by default): float mul/add/sub carry #arith.fastmath<contract> so LLVM
// forms FMAs; a division by a value that is the same along the innermost loop (a per-row sum or norm) is one
// reciprocal and a multiply; sigmoid divides once.  fast-math=false gives the plain, correctly rounded forms.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg{fast-math=false})' %s | FileCheck %s --check-prefix=OFF
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @mul_add
// UPSTREAM: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32

// CHECK-LABEL: func.func @mul_add
// CHECK:         arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:         arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// OFF-LABEL:   func.func @mul_add
// OFF-NOT:       fastmath
// OFF:           arith.mulf %{{.*}}, %{{.*}} : f32
// OFF:           arith.addf %{{.*}}, %{{.*}} : f32
// OFF-NOT:       fastmath
func.func @mul_add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.mul"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.sub"(%0, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.add"(%1, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// The divisor reads index 0 of the innermost dim: 1 / s in the body, which LLVM computes once per row.
// CHECK-LABEL: func.func @div_by_row
// CHECK:         linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x1xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.divf %[[ONE]], %[[S]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[X]], %[[R]] fastmath<contract> : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// OFF-LABEL:   func.func @div_by_row
// OFF:           ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// OFF-NEXT:        %[[Y:.*]] = arith.divf %[[X]], %[[S]] : f32
// OFF-NEXT:        linalg.yield %[[Y]] : f32
func.func @div_by_row(%x: tensor<4x8xf32>, %s: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %0 = "graph.div"(%x, %s) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Negative: a divisor that changes along the innermost dim keeps its correctly rounded division.
// CHECK-LABEL: func.func @div_by_column
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[Y:.*]] = arith.divf %[[X]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
func.func @div_by_column(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.div"(%x, %s) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Negative: integer ops take no fast-math flags, and integer division stays exact.
// CHECK-LABEL: func.func @int_ops
// CHECK-NOT:     fastmath
// CHECK:         arith.divsi
// CHECK-NOT:     fastmath
func.func @int_ops(%a: tensor<4x8xi32>, %b: tensor<4x1xi32>) -> tensor<4x8xi32> {
  %0 = "graph.add"(%a, %a) : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %1 = "graph.div"(%0, %b) : (tensor<4x8xi32>, tensor<4x1xi32>) -> tensor<4x8xi32>
  return %1 : tensor<4x8xi32>
}

// -----

// sigmoid: one reciprocal r = 1 / (1 + e), then r or e * r (fast-math=false: two divisions).
// CHECK-LABEL: func.func @sigmoid
// CHECK:         %[[R:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[ER:.*]] = arith.mulf %{{.*}}, %[[R]] fastmath<contract> : f32
// CHECK-NEXT:    arith.select %{{.*}}, %[[R]], %[[ER]] : f32
// CHECK-NOT:     arith.divf
// OFF-LABEL:   func.func @sigmoid
// OFF-COUNT-2:   arith.divf
// OFF-NOT:       arith.divf
func.func @sigmoid(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "graph.sigmoid"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// layer_norm: (x - mean) times one 1 / sqrt(var + eps) per row (the mean and variance are divided once per
// row already, their rows have one element).
// CHECK-LABEL: func.func @layer_norm
// CHECK:           math.sqrt
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x1xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.divf %[[ONE]], %[[S]] : f32
// CHECK-NEXT:      arith.mulf %[[X]], %[[R]] fastmath<contract> : f32
// OFF-LABEL:   func.func @layer_norm
// OFF:           math.sqrt
// OFF:           linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x1xf32>)
// OFF-NEXT:      ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// OFF-NEXT:        arith.divf %[[X]], %[[S]] : f32
func.func @layer_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.layer_norm"(%x, %g, %b) {begin_norm_axis = -1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// softmax: e times 1 / sum(e) per row.
// CHECK-LABEL: func.func @softmax
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x1xf32>)
// CHECK-NEXT:    ^bb0(%[[E:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.divf %[[ONE]], %[[S]] : f32
// CHECK-NEXT:      arith.mulf %[[E]], %[[R]] fastmath<contract> : f32
// OFF-LABEL:   func.func @softmax
// OFF:           iterator_types = ["parallel", "reduction"]
// OFF:           iterator_types = ["parallel", "reduction"]
// OFF:           ^bb0(%[[E:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// OFF-NEXT:        arith.divf %[[E]], %[[S]] : f32
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reduce_mean with a static count multiplies by the constant 1 / 6 (fast-math=false: divides by 6).
// CHECK-LABEL: func.func @mean
// CHECK:         %[[INV:.*]] = arith.constant 0.166666672 : f32
// CHECK:           arith.mulf %{{.*}}, %[[INV]] fastmath<contract> : f32
// CHECK-NOT:       arith.divf
// OFF-LABEL:   func.func @mean
// OFF:           %[[N:.*]] = arith.constant 6.000000e+00 : f32
// OFF:             arith.divf %{{.*}}, %[[N]] : f32
func.func @mean(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  %0 = "graph.reduce_mean"(%x) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x6xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
