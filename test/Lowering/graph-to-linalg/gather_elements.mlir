// graph-to-linalg on graph.gather_elements: a linalg.generic over the result (the indices' shape) reading the
// index at the result's own coordinates, counting it from the end when negative, clamping it into the axis and
// extracting data there; the other coordinates of data are the result's.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @take_along_rows
// UPSTREAM: tensor.extract

// BERT's token type ids: torch.gather along dim 1 of a [1, 64] buffer, a [2, 10] grid of indices.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @take_along_rows
// CHECK-DAG:     %[[LEN:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         %[[LAST:.*]] = arith.subi %[[LEN]], %{{.*}} : index
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%arg1 : tensor<1x10xi64>) outs(%{{.*}} : tensor<1x10xi64>)
// CHECK:           %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]] : index
// CHECK:           %[[WRAPPED:.*]] = arith.addi %[[I]], %[[LEN]] : index
// CHECK:           %[[POS:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[I]] : index
// CHECK:           %[[LOW:.*]] = arith.minsi %[[POS]], %[[LAST]] : index
// CHECK:           %[[COL:.*]] = arith.maxsi %[[LOW]], %[[ZERO]] : index
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           tensor.extract %arg0[%[[ROW]], %[[COL]]] : tensor<1x64xi64>
// CHECK-NOT:     graph.gather_elements
func.func @take_along_rows(%t: tensor<1x64xi64>, %i: tensor<1x10xi64>) -> tensor<1x10xi64> {
  %0 = "graph.gather_elements"(%t, %i) {axis = 1 : i64} : (tensor<1x64xi64>, tensor<1x10xi64>) -> tensor<1x10xi64>
  return %0 : tensor<1x10xi64>
}

// -----

// Along axis 0 with i32 indices and a dynamic axis size (tensor.dim).
// CHECK-LABEL: func.func @first_axis_dynamic
// CHECK:         %[[SIZE:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x3xf32>
// CHECK:         linalg.generic
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK:           %[[COL:.*]] = linalg.index 1 : index
// CHECK:           tensor.extract %arg0[%{{.*}}, %[[COL]]] : tensor<?x3xf32>
func.func @first_axis_dynamic(%x: tensor<?x3xf32>, %i: tensor<5x2xi32>) -> tensor<5x2xf32> {
  %0 = "graph.gather_elements"(%x, %i) : (tensor<?x3xf32>, tensor<5x2xi32>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}
