// graph-to-linalg on graph.scatter_update: data is copied once (linalg.copy into a tensor.empty), then an
// scf.for over the indices carries the result; each step reads an index, counts it from the end when negative
// and, inside the axis, inserts the update's slice there (scf.if: an index out of range writes nothing).
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @kv_cache
// UPSTREAM: scf.for

// A KV cache [1, 2, 8, 4] written at three positions of its sequence axis.
// CHECK-LABEL: func.func @kv_cache
// CHECK-DAG:     %[[COUNT:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[LEN:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<1x2x8x4xf32>
// CHECK:         %[[COPY:.*]] = linalg.copy {{.*}} ins(%arg0 : tensor<1x2x8x4xf32>) outs(%[[EMPTY]] : tensor<1x2x8x4xf32>)
// CHECK:         scf.for %[[K:.*]] = %[[ZERO]] to %[[COUNT]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[COPY]])
// CHECK:           %[[ID:.*]] = tensor.extract %arg1[%[[K]]] : tensor<3xi64>
// CHECK:           %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]] : index
// CHECK:           %[[WRAPPED:.*]] = arith.addi %[[I]], %[[LEN]] : index
// CHECK:           %[[POS:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[I]] : index
// CHECK:           %[[LOW:.*]] = arith.cmpi sge, %[[POS]], %[[ZERO]] : index
// CHECK:           %[[HIGH:.*]] = arith.cmpi slt, %[[POS]], %[[LEN]] : index
// CHECK:           %[[INSIDE:.*]] = arith.andi %[[LOW]], %[[HIGH]] : i1
// CHECK:           scf.if %[[INSIDE]] -> (tensor<1x2x8x4xf32>)
// CHECK:             %[[PIECE:.*]] = tensor.extract_slice %arg2[0, 0, %[[K]], 0] [1, 2, 1, 4] [1, 1, 1, 1]
// CHECK:             tensor.insert_slice %[[PIECE]] into %[[ACC]][0, 0, %[[POS]], 0] [1, 2, 1, 4] [1, 1, 1, 1]
// CHECK:           } else {
// CHECK:             scf.yield %[[ACC]] : tensor<1x2x8x4xf32>
// CHECK-NOT:     graph.scatter_update
func.func @kv_cache(%c: tensor<1x2x8x4xf32>, %pos: tensor<3xi64>, %new: tensor<1x2x3x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = "graph.scatter_update"(%c, %pos, %new) {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<3xi64>, tensor<1x2x3x4xf32>) -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

// Indices [2, 3] are collapsed to six, and so are the updates' index dims; i32 indices.
// CHECK-LABEL: func.func @index_grid
// CHECK:         %[[IDS:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1], [2]] : tensor<2x3x5xf16> into tensor<6x5xf16>
// CHECK:         scf.for
// CHECK:           tensor.extract %[[IDS]]
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK:           tensor.extract_slice %[[ROWS]][%{{.*}}, 0] [1, 5] [1, 1]
func.func @index_grid(%x: tensor<9x5xf16>, %i: tensor<2x3xi32>, %u: tensor<2x3x5xf16>) -> tensor<9x5xf16> {
  %0 = "graph.scatter_update"(%x, %i, %u) : (tensor<9x5xf16>, tensor<2x3xi32>, tensor<2x3x5xf16>) -> tensor<9x5xf16>
  return %0 : tensor<9x5xf16>
}

// -----

// A scalar index on the last axis, whose size is dynamic: read with tensor.dim; the update gains a unit dim.
// CHECK-LABEL: func.func @scalar_index_dynamic_axis
// CHECK:         tensor.expand_shape %arg1 [] output_shape [1] : tensor<i64> into tensor<1xi64>
// CHECK:         tensor.expand_shape %arg2 {{\[\[}}0, 1]] output_shape [6, 1] : tensor<6xi8> into tensor<6x1xi8>
// CHECK:         %[[SIZE:.*]] = tensor.dim %arg0, %{{.*}} : tensor<6x?xi8>
// CHECK:         scf.for
// CHECK:           arith.addi %{{.*}}, %[[SIZE]] : index
// CHECK:           tensor.insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}] [6, 1] [1, 1] : tensor<6x1xi8> into tensor<6x?xi8>
func.func @scalar_index_dynamic_axis(%x: tensor<6x?xi8>, %i: tensor<i64>, %u: tensor<6xi8>) -> tensor<6x?xi8> {
  %0 = "graph.scatter_update"(%x, %i, %u) {axis = -1 : i64} : (tensor<6x?xi8>, tensor<i64>, tensor<6xi8>) -> tensor<6x?xi8>
  return %0 : tensor<6x?xi8>
}
