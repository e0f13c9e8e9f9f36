// graph-to-linalg on graph.random_uniform: a generic with no input hashing each element's row-major position
// with the seed in i32 arithmetic (wrapping multiplies, logical shifts), the top 24 bits scaled to [0, 1).
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @uniform
// UPSTREAM: linalg.generic

// CHECK-LABEL: func.func @uniform
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:           linalg.index 0
// CHECK:           linalg.index 1
// CHECK:           arith.trunci %{{.*}} : i64 to i32
// CHECK-COUNT-2:   arith.muli %{{.*}} : i32
// CHECK:           arith.shrui
// CHECK:           arith.uitofp %{{.*}} : i32 to f32
// CHECK:           arith.mulf
func.func @uniform(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %0 = "graph.random_uniform"(%x) {seed = 7 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A dynamic dimension: its size comes from the operand, which is otherwise never read.
// CHECK-LABEL: func.func @dynamic
// CHECK:         %[[N:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x3xi32>
// CHECK:         tensor.empty(%[[N]]) : tensor<?x3xf32>
func.func @dynamic(%x: tensor<?x3xi32>) -> tensor<?x3xf32> {
  %0 = "graph.random_uniform"(%x) {seed = 1 : i64} : (tensor<?x3xi32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
