// graph-to-linalg lowers matmul to named linalg ops into a zero-filled destination where one applies
// exactly (matmul, batch_matmul, matvec, vecmat, dot; transposes as the op's indexing_maps), and to a
// linalg.generic with parallel/reduction iterators when batch dims broadcast.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM

// CHECK-LABEL: func.func @mm
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT:    %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     graph.
// UPSTREAM-LABEL: func.func @mm
// UPSTREAM:         linalg.matmul
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// transpose_b: b is read as b[n, k] through the op's indexing maps.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @mm_transpose_b
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NEXT:    linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<16x8xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// UPSTREAM-LABEL: func.func @mm_transpose_b
// UPSTREAM:         linalg.matmul indexing_maps
func.func @mm_transpose_b(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %0 = "graph.matmul"(%a, %b) {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// f16 batch matmul: accumulated in an f32 destination, rounded once to f16 afterwards.
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @bmm_f16_transpose_a
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4x16xf32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.batch_matmul indexing_maps = [#[[AT]], #[[B]], #[[C]]] ins(%arg0, %arg1 : tensor<2x8x4xf16>, tensor<2x8x16xf16>) outs(%[[INIT]] : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[R]] : tensor<2x4x16xf32>) outs(%{{.*}} : tensor<2x4x16xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// UPSTREAM-LABEL: func.func @bmm_f16_transpose_a
// UPSTREAM:         linalg.batch_matmul
func.func @bmm_f16_transpose_a(%a: tensor<2x8x4xf16>, %b: tensor<2x8x16xf16>) -> tensor<2x4x16xf16> {
  %0 = "graph.matmul"(%a, %b) {transpose_a = true} : (tensor<2x8x4xf16>, tensor<2x8x16xf16>) -> tensor<2x4x16xf16>
  return %0 : tensor<2x4x16xf16>
}

// -----

// b without batch dims, static shapes: one linalg.contract, no reshape around it (fuse-kernel-loops would
// push one through the product and make it a generic contraction); the runtime collapses a's batch dims
// into the rows of one blocked matmul.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @linear
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.contract indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%arg0, %arg1 : tensor<2x8x4xf32>, tensor<16x4xf32>) outs(%[[INIT]] : tensor<2x8x16xf32>)
// CHECK-NEXT:    return %[[R]]
// UPSTREAM-LABEL: func.func @linear
// UPSTREAM:         linalg.contract
func.func @linear(%a: tensor<2x8x4xf32>, %b: tensor<16x4xf32>) -> tensor<2x8x16xf32> {
  %0 = "graph.matmul"(%a, %b) {transpose_b = true} : (tensor<2x8x4xf32>, tensor<16x4xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// Dynamic rows: the batch dims of a are collapsed into the rows of one linalg.matmul and expanded back.
// CHECK-LABEL: func.func @linear_dynamic
// CHECK:         %[[A:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<?x8x4xf32> into tensor<?x4xf32>
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %arg1 : tensor<?x4xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK:         tensor.expand_shape %[[R]] {{\[}}[0, 1], [2]] output_shape [%{{.*}}, 8, 16] : tensor<?x16xf32> into tensor<?x8x16xf32>
// UPSTREAM-LABEL: func.func @linear_dynamic
func.func @linear_dynamic(%a: tensor<?x8x4xf32>, %b: tensor<4x16xf32>) -> tensor<?x8x16xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<?x8x4xf32>, tensor<4x16xf32>) -> tensor<?x8x16xf32>
  return %0 : tensor<?x8x16xf32>
}

// -----

// Two batch dims, static: one linalg.contract over both (transpose_b in its map).
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @attention_scores
// CHECK:         linalg.contract indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%arg0, %arg1 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// UPSTREAM-LABEL: func.func @attention_scores
func.func @attention_scores(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32> {
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// Broadcast batch dims of floats (multi-query attention: one head of keys for 4 query heads): the broadcast
// operand is copied to the full batch, then a contraction as for equal batch dims (blocked when compiled).
// CHECK-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @multi_query_scores
// CHECK:         %[[COPY:.*]] = linalg.generic {indexing_maps = [#[[READ]], #[[ALL]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<2x1x16x8xf32>) outs(%{{.*}} : tensor<2x4x16x8xf32>)
// CHECK:         linalg.contract indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%arg0, %[[COPY]] : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// CHECK-NOT:     linalg.generic
// UPSTREAM-LABEL: func.func @multi_query_scores
func.func @multi_query_scores(%q: tensor<2x4x8x16xf32>, %k: tensor<2x1x16x8xf32>) -> tensor<2x4x8x8xf32> {
  %0 = "graph.matmul"(%q, %k) : (tensor<2x4x8x16xf32>, tensor<2x1x16x8xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// Broadcast batch dims of integers: a generic whose map reads a's size-1 batch dim at index 0 (no copy: integer
// products are not blocked); i8 wraps.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @broadcast_batch_i8
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : i8) outs(%{{.*}} : tensor<3x5x4x2xi8>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<3x1x4x8xi8>, tensor<5x8x2xi8>) outs(%[[INIT]] : tensor<3x5x4x2xi8>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: i8, %[[Y:.*]]: i8, %[[ACC:.*]]: i8):
// CHECK-NEXT:      %[[P:.*]] = arith.muli %[[X]], %[[Y]] : i8
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[ACC]], %[[P]] : i8
// CHECK-NEXT:      linalg.yield %[[S]] : i8
// UPSTREAM-LABEL: func.func @broadcast_batch_i8
func.func @broadcast_batch_i8(%a: tensor<3x1x4x8xi8>, %b: tensor<5x8x2xi8>) -> tensor<3x5x4x2xi8> {
  %0 = "graph.matmul"(%a, %b) : (tensor<3x1x4x8xi8>, tensor<5x8x2xi8>) -> tensor<3x5x4x2xi8>
  return %0 : tensor<3x5x4x2xi8>
}

// -----

// A 1-D a is a row vector: a @ b^T is linalg.matvec of b and a.
// CHECK-LABEL: func.func @vector_matrix
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK-NEXT:    linalg.matvec ins(%arg1, %arg0 : tensor<16x8xf32>, tensor<8xf32>) outs(%[[INIT]] : tensor<16xf32>)
// UPSTREAM-LABEL: func.func @vector_matrix
func.func @vector_matrix(%a: tensor<8xf32>, %b: tensor<16x8xf32>) -> tensor<16xf32> {
  %0 = "graph.matmul"(%a, %b) {transpose_b = true} : (tensor<8xf32>, tensor<16x8xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @dot
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<i32>)
// CHECK-NEXT:    linalg.dot ins(%arg0, %arg1 : tensor<8xi32>, tensor<8xi32>) outs(%[[INIT]] : tensor<i32>) -> tensor<i32>
// UPSTREAM-LABEL: func.func @dot
func.func @dot(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<i32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<8xi32>, tensor<8xi32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// CHECK-LABEL: func.func @dynamic_rows
// CHECK:         %[[DIM:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[DIM]]) : tensor<?x16xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x16xf32>)
// CHECK-NEXT:    linalg.matmul ins(%arg0, %arg1 : tensor<?x8xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<?x16xf32>)
// UPSTREAM-LABEL: func.func @dynamic_rows
func.func @dynamic_rows(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>) -> tensor<?x16xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
