// graph-to-linalg on graph.gather: a linalg.generic over the result that reads the indices through its map
// (the result dims the indices fill), counts a negative index from the end, clamps it into the axis and
// extracts the element of data; the other coordinates are the generic's own indices.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @embedding
// UPSTREAM: tensor.extract

// An embedding lookup: [2, 3] token ids into a [10, 4] table.
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @embedding
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 10 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         %[[LAST:.*]] = arith.subi %[[ROWS]], %{{.*}} : index
// CHECK:         linalg.generic {indexing_maps = [#[[IDS]], #[[ALL]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%arg1 : tensor<2x3xi64>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK:         ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK:           %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:           %[[WRAPPED:.*]] = arith.addi %[[I]], %[[ROWS]] : index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]] : index
// CHECK:           %[[POS:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[I]] : index
// CHECK:           %[[LOW:.*]] = arith.minsi %[[POS]], %[[LAST]] : index
// CHECK:           %[[ROW:.*]] = arith.maxsi %[[LOW]], %[[ZERO]] : index
// CHECK:           %[[COL:.*]] = linalg.index 2 : index
// CHECK:           tensor.extract %arg0[%[[ROW]], %[[COL]]] : tensor<10x4xf32>
// CHECK-NOT:     graph.gather
func.func @embedding(%w: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = "graph.gather"(%w, %ids) : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// The middle axis with i32 indices: dims 0 and 2 of the result are data's, dim 1 the index's.
// CHECK-DAG: #[[MID:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @middle_axis
// CHECK:         linalg.generic {indexing_maps = [#[[MID]], #{{.*}}]
// CHECK-SAME:      ins(%arg1 : tensor<4xi32>) outs(%{{.*}} : tensor<5x4x3xf32>)
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK-DAG:       %[[D0:.*]] = linalg.index 0 : index
// CHECK-DAG:       %[[D2:.*]] = linalg.index 2 : index
// CHECK:           tensor.extract %arg0[%[[D0]], %{{.*}}, %[[D2]]] : tensor<5x7x3xf32>
func.func @middle_axis(%x: tensor<5x7x3xf32>, %i: tensor<4xi32>) -> tensor<5x4x3xf32> {
  %0 = "graph.gather"(%x, %i) {axis = 1 : i64} : (tensor<5x7x3xf32>, tensor<4xi32>) -> tensor<5x4x3xf32>
  return %0 : tensor<5x4x3xf32>
}

// -----

// A scalar index removes the axis; a dynamic axis size is read with tensor.dim.
// CHECK-DAG: #[[NONE:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @scalar_index_dynamic_axis
// CHECK:         %[[SIZE:.*]] = tensor.dim %arg0, %{{.*}} : tensor<6x?xi8>
// CHECK:         linalg.generic {indexing_maps = [#[[NONE]], #{{.*}}]
// CHECK-SAME:      ins(%arg1 : tensor<i64>) outs(%{{.*}} : tensor<6xi8>)
// CHECK:           arith.addi %{{.*}}, %[[SIZE]] : index
// CHECK:           tensor.extract %arg0[%{{.*}}, %{{.*}}] : tensor<6x?xi8>
func.func @scalar_index_dynamic_axis(%x: tensor<6x?xi8>, %i: tensor<i64>) -> tensor<6xi8> {
  %0 = "graph.gather"(%x, %i) {axis = -1 : i64} : (tensor<6x?xi8>, tensor<i64>) -> tensor<6xi8>
  return %0 : tensor<6xi8>
}
