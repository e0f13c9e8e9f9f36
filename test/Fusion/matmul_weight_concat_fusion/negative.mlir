// What matmul_weight_concat_fusion must not merge.
// RUN: graphfuse-opt --split-input-file --matmul_weight_concat_fusion %s | FileCheck %s

// A weight passed as an argument (concatenating it would copy it on every call): only the two constant
// weights merge.
// CHECK-LABEL: func.func @argument_weight
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<8x4xf32>
// CHECK-NEXT:    %[[P:.*]] = "graph.matmul"(%arg0, %[[W]])
// CHECK-NEXT:    %[[S:.*]]:2 = "graph.split"(%[[P]])
// CHECK-NEXT:    %[[A:.*]] = "graph.matmul"(%arg0, %arg1)
// CHECK-NEXT:    return %[[S]]#0, %[[A]], %[[S]]#1
func.func @argument_weight(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x2xf32>) {
  %c1 = arith.constant dense<1.0> : tensor<8x2xf32>
  %c2 = arith.constant dense<2.0> : tensor<8x2xf32>
  %0 = "graph.matmul"(%x, %c1) : (tensor<2x8xf32>, tensor<8x2xf32>) -> tensor<2x2xf32>
  %1 = "graph.matmul"(%x, %w) : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %2 = "graph.matmul"(%x, %c2) : (tensor<2x8xf32>, tensor<8x2xf32>) -> tensor<2x2xf32>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x2xf32>
}

// -----

// Different transpose flags, different inputs, a single product: nothing merges.
// CHECK-LABEL: func.func @nothing_to_merge
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    "graph.matmul"(%arg0, %{{.*}}) : (tensor<2x8xf32>, tensor<8x2xf32>)
// CHECK-NEXT:    "graph.matmul"(%arg0, %{{.*}}) {transpose_b = true} : (tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK-NEXT:    "graph.matmul"(%arg1, %{{.*}}) : (tensor<2x8xf32>, tensor<8x2xf32>)
// CHECK-NEXT:    return
func.func @nothing_to_merge(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %c1 = arith.constant dense<1.0> : tensor<8x2xf32>
  %c2 = arith.constant dense<2.0> : tensor<2x8xf32>
  %c3 = arith.constant dense<3.0> : tensor<8x2xf32>
  %0 = "graph.matmul"(%x, %c1) : (tensor<2x8xf32>, tensor<8x2xf32>) -> tensor<2x2xf32>
  %1 = "graph.matmul"(%x, %c2) {transpose_b = true} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x2xf32>
  %2 = "graph.matmul"(%y, %c3) : (tensor<2x8xf32>, tensor<8x2xf32>) -> tensor<2x2xf32>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
