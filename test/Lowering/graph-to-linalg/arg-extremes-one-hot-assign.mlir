// graph-to-linalg on graph.argmax / argmin (one reduction generic carrying the best value and its index from
// linalg.index; a NaN replaces a number, so the first NaN wins), graph.one_hot (a select on linalg.index of the
// new axis) and graph.assign (the value broadcast into the variable's shape).
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @argmax_rows
// UPSTREAM: linalg.generic

// CHECK-LABEL: func.func @argmax_rows
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs({{.*}} : tensor<4xf32>, tensor<4xi64>)
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           arith.cmpf ogt
// CHECK:           arith.cmpf uno
// CHECK:           arith.cmpf ord
// CHECK:         return %[[R]]#1 : tensor<4xi64>
func.func @argmax_rows(%x: tensor<4x8xf32>) -> tensor<4xi64> {
  %0 = "graph.argmax"(%x) {axis = 1 : i64, keep_dims = false} : (tensor<4x8xf32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Integers: strictly smaller only (the first of equal minima stays); keep_dims expands the index back.
// CHECK-LABEL: func.func @argmin_keep
// CHECK:         linalg.fill ins(%{{.*}} : i32)
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK:           arith.cmpi slt
// CHECK-NOT:       arith.cmpf
// CHECK:         tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
func.func @argmin_keep(%x: tensor<4x8xi32>) -> tensor<1x8xi64> {
  %0 = "graph.argmin"(%x) {axis = 0 : i64, keep_dims = true} : (tensor<4x8xi32>) -> tensor<1x8xi64>
  return %0 : tensor<1x8xi64>
}

// -----

// CHECK-LABEL: func.func @one_hot
// CHECK:         linalg.generic {{.*}}ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<3xi32>, tensor<f32>, tensor<f32>) outs(%{{.*}} : tensor<5x3xf32>)
// CHECK:           arith.extsi %{{.*}} : i32 to i64
// CHECK:           linalg.index 0 : index
// CHECK:           arith.cmpi eq
// CHECK:           arith.select
func.func @one_hot(%i: tensor<3xi32>, %on: tensor<f32>, %off: tensor<f32>) -> tensor<5x3xf32> {
  %0 = "graph.one_hot"(%i, %on, %off) {depth = 5 : i64, axis = 0 : i64} : (tensor<3xi32>, tensor<f32>, tensor<f32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// CHECK-LABEL: func.func @assign
// CHECK:         %[[R:.*]] = linalg.generic {{.*}}ins(%arg1 : tensor<8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK:         return %[[R]]
func.func @assign(%v: tensor<4x8xf32>, %x: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.assign"(%v, %x) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
