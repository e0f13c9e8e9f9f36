// graph-to-linalg on graph.gather.  A gather of slices (data has dims after the axis), statically shaped and
// outside kernels, is an scf.for over data's dims before the axis and the indices (flattened), each step reading
// one index, counting it from the end when negative, clamping it into the axis and copying the slice it selects.
// Any other gather is a linalg.generic over the result that reads the indices through its map and extracts the
// element of data; the other coordinates are the generic's own indices.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @embedding
// UPSTREAM: tensor.extract_slice

// An embedding lookup: [2, 3] token ids into a [10, 4] table, one row copied per id.
// CHECK-LABEL: func.func @embedding
// CHECK:         %[[IDS:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1]] : tensor<2x3xi64> into tensor<6xi64>
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 10 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[LAST:.*]] = arith.constant 9 : index
// CHECK:         %[[OUT:.*]] = scf.for %[[K:.*]] = %[[ZERO]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<6x4xf32>)
// CHECK:           %[[ID:.*]] = tensor.extract %[[IDS]][%[[K]]] : tensor<6xi64>
// CHECK:           %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]] : index
// CHECK:           %[[WRAPPED:.*]] = arith.addi %[[I]], %[[ROWS]] : index
// CHECK:           %[[POS:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[I]] : index
// CHECK:           %[[LOW:.*]] = arith.minsi %[[POS]], %[[LAST]] : index
// CHECK:           %[[ROW:.*]] = arith.maxsi %[[LOW]], %[[ZERO]] : index
// CHECK:           %[[SLICE:.*]] = tensor.extract_slice %arg0[%[[ROW]], 0] [1, 4] [1, 1] : tensor<10x4xf32> to tensor<4xf32>
// CHECK:           %[[NEXT:.*]] = tensor.insert_slice %[[SLICE]] into %[[ACC]][%[[K]], 0] [1, 4] [1, 1]
// CHECK:           scf.yield %[[NEXT]] : tensor<6x4xf32>
// CHECK:         tensor.expand_shape %[[OUT]] {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     graph.gather
func.func @embedding(%w: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = "graph.gather"(%w, %ids) : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// The middle axis with i32 indices: the loop runs over data's dim 0 and the indices, its step split into the two.
// CHECK-LABEL: func.func @middle_axis
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<5x4x3xf32>)
// CHECK:           %[[AT:.*]] = arith.remui %[[K]], %[[FOUR:.*]] : index
// CHECK:           %[[REST:.*]] = arith.divui %[[K]], %[[FOUR]] : index
// CHECK:           %[[D0:.*]] = arith.remui %[[REST]], %{{.*}} : index
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK:           tensor.extract_slice %arg0[%[[D0]], %{{.*}}, 0] [1, 1, 3] [1, 1, 1] : tensor<5x7x3xf32> to tensor<3xf32>
// CHECK:           tensor.insert_slice %{{.*}} into %[[ACC]][%[[D0]], %[[AT]], 0] [1, 1, 3] [1, 1, 1]
func.func @middle_axis(%x: tensor<5x7x3xf32>, %i: tensor<4xi32>) -> tensor<5x4x3xf32> {
  %0 = "graph.gather"(%x, %i) {axis = 1 : i64} : (tensor<5x7x3xf32>, tensor<4xi32>) -> tensor<5x4x3xf32>
  return %0 : tensor<5x4x3xf32>
}

// -----

// A scalar index removes the axis: one slice copied, its unit dim collapsed away.
// CHECK-LABEL: func.func @scalar_index
// CHECK:         scf.for
// CHECK:           tensor.extract_slice %arg0[%{{.*}}, 0, 0] [1, 5, 2] [1, 1, 1] : tensor<6x5x2xi8> to tensor<5x2xi8>
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x5x2xi8> into tensor<5x2xi8>
func.func @scalar_index(%x: tensor<6x5x2xi8>, %i: tensor<i64>) -> tensor<5x2xi8> {
  %0 = "graph.gather"(%x, %i) : (tensor<6x5x2xi8>, tensor<i64>) -> tensor<5x2xi8>
  return %0 : tensor<5x2xi8>
}

// -----

// Inside a kernel the gather stays a generic: fuse-kernel-loops fuses it with the ops after it.
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func private @kernel_gather
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic {indexing_maps = [#[[IDS]], #{{.*}}]
// CHECK:           %[[COL:.*]] = linalg.index 1 : index
// CHECK:           tensor.extract %arg0[%{{.*}}, %[[COL]]] : tensor<10x4xf32>
func.func private @kernel_gather(%w: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> attributes {graph.kernel} {
  %0 = "graph.gather"(%w, %ids) : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Along the last axis each index selects one element: a generic.
// CHECK-LABEL: func.func @last_axis
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic
// CHECK:           tensor.extract %arg0[%{{.*}}, %{{.*}}] : tensor<5x7xf32>
func.func @last_axis(%x: tensor<5x7xf32>, %i: tensor<2xi64>) -> tensor<5x2xf32> {
  %0 = "graph.gather"(%x, %i) {axis = 1 : i64} : (tensor<5x7xf32>, tensor<2xi64>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
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
