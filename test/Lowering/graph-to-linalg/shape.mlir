// graph-to-linalg on the data-movement ops: reshape through collapse/expand_shape, broadcast_to as a
// linalg.generic with a broadcast map, transpose as linalg.transpose, concat as insert_slices into a
// tensor.empty, split and slice as extract_slices. Any element type lowers the same way.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @reshape
// UPSTREAM: tensor.expand_shape
// UPSTREAM-LABEL: func.func @slice
// UPSTREAM: tensor.extract_slice

// 4x8 -> 2x16 goes through the common shape 32.
// CHECK-LABEL: func.func @reshape
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [2, 16] : tensor<32xf32> into tensor<2x16xf32>
// CHECK-NEXT:    return %[[E]]
// CHECK-NOT:     graph.
func.func @reshape(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// Dropping a size-1 dim is one collapse.
// CHECK-LABEL: func.func @reshape_collapse
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<4x1x8xbf16> into tensor<4x8xbf16>
// CHECK-NEXT:    return %[[C]]
func.func @reshape_collapse(%x: tensor<4x1x8xbf16>) -> tensor<4x8xbf16> {
  %0 = "graph.reshape"(%x) : (tensor<4x1x8xbf16>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// No common grouping: through 1-D; the dynamic result size is the element count / 2.
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<?x8x4xi32> into tensor<?xi32>
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = tensor.dim %[[C]], %[[C0]] : tensor<?xi32>
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[D:.*]] = arith.divui %[[N]], %[[C2]] : index
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [2, %[[D]]] : tensor<?xi32> into tensor<2x?xi32>
// CHECK-NEXT:    return %[[E]]
func.func @reshape_dynamic(%x: tensor<?x8x4xi32>) -> tensor<2x?xi32> {
  %0 = "graph.reshape"(%x) : (tensor<?x8x4xi32>) -> tensor<2x?xi32>
  return %0 : tensor<2x?xi32>
}

// -----

// Sizes from an operand: the dynamic dims of %s; the static last dim both shapes end with is kept, so the
// rows alone are expanded.
// CHECK-LABEL: func.func @reshape_given_sizes
// CHECK-SAME:    (%[[X:.*]]: tensor<?x768xf32>, %[[S:.*]]: tensor<?x?x1xi1>)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[B:.*]] = tensor.dim %[[S]], %[[C0]] : tensor<?x?x1xi1>
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[L:.*]] = tensor.dim %[[S]], %[[C1]] : tensor<?x?x1xi1>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [%[[B]], %[[L]], 768] : tensor<?x768xf32> into tensor<?x?x768xf32>
// CHECK-NEXT:    return %[[E]]
func.func @reshape_given_sizes(%x: tensor<?x768xf32>, %s: tensor<?x?x1xi1>) -> tensor<?x?x768xf32> {
  %0 = "graph.reshape"(%x, %s) : (tensor<?x768xf32>, tensor<?x?x1xi1>) -> tensor<?x?x768xf32>
  return %0 : tensor<?x?x768xf32>
}

// -----

// One size from the operand, the other the element count over it: [b, 8, s] -> [b * 8, 1, s] through 1-D.
// CHECK-LABEL: func.func @reshape_given_and_counted
// CHECK-SAME:    (%[[X:.*]]: tensor<?x8x?xf32>, %[[S:.*]]: tensor<1x1x?xi64>)
// CHECK:         %[[L:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<1x1x?xi64>
// CHECK:         %[[B:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8x?xf32>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8x?xf32>
// CHECK-NEXT:    %[[BN:.*]] = arith.muli %[[B]], %[[N]] : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[ALL:.*]] = arith.muli %[[BN]], %[[C8]] : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.divui %[[ALL]], %[[L]] : index
// CHECK-NEXT:    %[[F:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<?x8x?xf32> into tensor<?xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1, 2]] output_shape [%[[ROWS]], 1, %[[L]]] : tensor<?xf32> into tensor<?x1x?xf32>
// CHECK-NEXT:    return %[[E]]
func.func @reshape_given_and_counted(%x: tensor<?x8x?xf32>, %s: tensor<1x1x?xi64>) -> tensor<?x1x?xf32> {
  %0 = "graph.reshape"(%x, %s) : (tensor<?x8x?xf32>, tensor<1x1x?xi64>) -> tensor<?x1x?xf32>
  return %0 : tensor<?x1x?xf32>
}

// -----

// CHECK-DAG: #[[BCAST:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast_to
// CHECK-SAME:    (%[[X:.*]]: tensor<3x1xf16>)
// CHECK-NEXT:    %[[I:.*]] = tensor.empty() : tensor<2x3x5xf16>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [#[[BCAST]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<3x1xf16>) outs(%[[I]] : tensor<2x3x5xf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      linalg.yield %[[IN]] : f16
// CHECK-NEXT:    } -> tensor<2x3x5xf16>
// CHECK-NEXT:    return %[[R]]
func.func @broadcast_to(%x: tensor<3x1xf16>) -> tensor<2x3x5xf16> {
  %0 = "graph.broadcast_to"(%x) : (tensor<3x1xf16>) -> tensor<2x3x5xf16>
  return %0 : tensor<2x3x5xf16>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x8xi1>)
// CHECK-NEXT:    %[[I:.*]] = tensor.empty() : tensor<2x8x4xi1>
// CHECK-NEXT:    %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x4x8xi1>) outs(%[[I]] : tensor<2x8x4xi1>) permutation = [0, 2, 1]
// CHECK-NEXT:    return %[[T]]
func.func @transpose(%x: tensor<2x4x8xi1>) -> tensor<2x8x4xi1> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 0, 2, 1>} : (tensor<2x4x8xi1>) -> tensor<2x8x4xi1>
  return %0 : tensor<2x8x4xi1>
}

// -----

// Two single operands and a variadic rest of two, each inserted at its running offset.
// CHECK-LABEL: func.func @concat
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x2xf32>, %[[C:.*]]: tensor<4x3xf32>, %[[D:.*]]: tensor<4x3xf32>)
// CHECK-NEXT:    %[[I:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT:    %[[S0:.*]] = tensor.insert_slice %[[A]] into %[[I]][0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
// CHECK-NEXT:    %[[S1:.*]] = tensor.insert_slice %[[B]] into %[[S0]][0, 8] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x16xf32>
// CHECK-NEXT:    %[[S2:.*]] = tensor.insert_slice %[[C]] into %[[S1]][0, 10] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x16xf32>
// CHECK-NEXT:    %[[S3:.*]] = tensor.insert_slice %[[D]] into %[[S2]][0, 13] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x16xf32>
// CHECK-NEXT:    return %[[S3]]
func.func @concat(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<4x3xf32>, %d: tensor<4x3xf32>) -> tensor<4x16xf32> {
  %0 = "graph.concat"(%a, %b, %c, %d) {axis = -1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Dynamic sizes along the axis: offsets and the result size from tensor.dim.
// CHECK-LABEL: func.func @concat_dynamic
// CHECK-SAME:    (%[[A:.*]]: tensor<?x3xi8>, %[[B:.*]]: tensor<?x3xi8>)
// CHECK:         %[[NA:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x3xi8>
// CHECK:         %[[NB:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x3xi8>
// CHECK-NEXT:    %[[N:.*]] = arith.addi %[[NA]], %[[NB]] : index
// CHECK-NEXT:    %[[I:.*]] = tensor.empty(%[[N]]) : tensor<?x3xi8>
// CHECK-NEXT:    %[[S0:.*]] = tensor.insert_slice %[[A]] into %[[I]][0, 0] [%[[NA]], 3] [1, 1] : tensor<?x3xi8> into tensor<?x3xi8>
// CHECK-NEXT:    %[[S1:.*]] = tensor.insert_slice %[[B]] into %[[S0]][%[[NA]], 0] [%[[NB]], 3] [1, 1] : tensor<?x3xi8> into tensor<?x3xi8>
// CHECK-NEXT:    return %[[S1]]
func.func @concat_dynamic(%a: tensor<?x3xi8>, %b: tensor<?x3xi8>) -> tensor<?x3xi8> {
  %0 = "graph.concat"(%a, %b) {axis = 0 : i64} : (tensor<?x3xi8>, tensor<?x3xi8>) -> tensor<?x3xi8>
  return %0 : tensor<?x3xi8>
}

// -----

// CHECK-LABEL: func.func @split
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xi64>)
// CHECK-NEXT:    %[[P0:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 2] [1, 1] : tensor<4x8xi64> to tensor<4x2xi64>
// CHECK-NEXT:    %[[P1:.*]] = tensor.extract_slice %[[X]][0, 2] [4, 6] [1, 1] : tensor<4x8xi64> to tensor<4x6xi64>
// CHECK-NEXT:    return %[[P0]], %[[P1]]
func.func @split(%x: tensor<4x8xi64>) -> (tensor<4x2xi64>, tensor<4x6xi64>) {
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xi64>) -> (tensor<4x2xi64>, tensor<4x6xi64>)
  return %0#0, %0#1 : tensor<4x2xi64>, tensor<4x6xi64>
}

// -----

// StableHLO slice: offsets = start, sizes = ceil((limit - start) / strides), strides.
// CHECK-LABEL: func.func @slice
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[X]][1, 0] [2, 4] [1, 2] : tensor<4x8xf32> to tensor<2x4xf32>
// CHECK-NEXT:    return %[[S]]
func.func @slice(%x: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %0 = "graph.slice"(%x) {limit = array<i64: 3, 8>, start = array<i64: 1, 0>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
