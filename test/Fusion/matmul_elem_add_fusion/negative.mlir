// What matmul_elem_add_fusion must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --matmul_elem_add_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --matmul_elem_add_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The addend broadcasts the matmul result to a larger shape: matmul_add keeps the matmul's shape.
// CHECK-LABEL: func.func @enlarging
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.add"
// WHY: pattern MatMulAdd not fused at {{.*}}: the add broadcasts the matmul result to a larger shape
func.func @enlarging(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %c: tensor<3x4x32xf32>) -> tensor<3x4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.add"(%0, %c) : (tensor<4x32xf32>, tensor<3x4x32xf32>) -> tensor<3x4x32xf32>
  return %1 : tensor<3x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_returned
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"
// CHECK-NEXT:    %[[A:.*]] = "graph.add"
// CHECK-NEXT:    return %[[A]], %[[M]]
// WHY: pattern MatMulAdd not fused at {{.*}}: the matmul result is also a function result
func.func @matmul_returned(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %c: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.add"(%0, %c) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1, %0 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// add(m, m): the matmul result is used twice.
// CHECK-LABEL: func.func @doubled
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.add"
// WHY: pattern MatMulAdd not fused at {{.*}}: the matmul result has other users
func.func @doubled(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.add"(%0, %0) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// A sub is not an add.
// CHECK-LABEL: func.func @sub
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.sub"
func.func @sub(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.sub"(%0, %c) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}
