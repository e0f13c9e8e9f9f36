// reshape-dynamic-expands: an expand_shape with a group of several dynamic sizes (rows of [batch * tokens]
// expanded back to [batch, tokens]) becomes a tensor.reshape to its output sizes; one with at most one dynamic
// size per group keeps its form.
// RUN: graphfuse-opt %s --split-input-file --reshape-dynamic-expands | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --reshape-dynamic-expands --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: (S) 1 num-reshaped

// CHECK-LABEL: func.func @batch_and_tokens(
// CHECK-SAME:    %[[ROWS:.*]]: tensor<?x64xf32>, %[[B:.*]]: index, %[[T:.*]]: index)
// CHECK-DAG:     %[[B64:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK-DAG:     %[[T64:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK-DAG:     %[[N:.*]] = arith.constant 64 : i64
// CHECK:         %[[SHAPE:.*]] = tensor.from_elements %[[B64]], %[[T64]], %[[N]] : tensor<3xi64>
// CHECK:         %[[R:.*]] = tensor.reshape %[[ROWS]](%[[SHAPE]]) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return %[[R]]
func.func @batch_and_tokens(%rows: tensor<?x64xf32>, %b: index, %t: index) -> tensor<?x?x64xf32> {
  %e = tensor.expand_shape %rows [[0, 1], [2]] output_shape [%b, %t, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  return %e : tensor<?x?x64xf32>
}

// -----

// Negative: one dynamic size per group (heads split off a dynamic row count), and static groups.
// CHECK-LABEL: func.func @one_dynamic_size_per_group(
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [%{{.*}}, 4, 8, 16]
// CHECK-NOT:     tensor.reshape
// CHECK-LABEL: func.func @static(
// CHECK:         tensor.expand_shape
// CHECK-NOT:     tensor.reshape
func.func @one_dynamic_size_per_group(%x: tensor<?x128xf32>, %b: index) -> tensor<?x4x8x16xf32> {
  %e = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [%b, 4, 8, 16] : tensor<?x128xf32> into tensor<?x4x8x16xf32>
  return %e : tensor<?x4x8x16xf32>
}
func.func @static(%x: tensor<8x128xf32>) -> tensor<2x4x128xf32> {
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 4, 128] : tensor<8x128xf32> into tensor<2x4x128xf32>
  return %e : tensor<2x4x128xf32>
}
