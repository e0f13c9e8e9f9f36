// graph-to-linalg on graph.topk and graph.sort: per row (an scf.for nest over the other dims) an identity
// permutation of the positions (i64), reordered by PyTorch's libstdc++ algorithm built from scf.while,
// scf.for and scf.if with tensor.extract / tensor.insert, then the first k positions and the operand's
// values at them inserted into the two results.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file --allow-unregistered-dialect | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @router
// UPSTREAM: scf.while

// A MoE router: k * 64 > n, so quickselect (std::nth_element) while the range is longer than 3, with a heap
// select once its depth (2 * floor(log2 4) = 4) runs out, then an insertion sort of the last range.
// CHECK-LABEL: func.func @router
// CHECK-DAG:     %[[VALUES:.*]] = tensor.empty() : tensor<6x2xf32>
// CHECK-DAG:     %[[INDICES:.*]] = tensor.empty() : tensor<6x2xi64>
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[VALUES]], %{{.*}} = %[[INDICES]]) -> (tensor<6x2xf32>, tensor<6x2xi64>)
// CHECK:           %[[PERM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi64>)
// CHECK:             linalg.index 0
// CHECK:           scf.while (%{{.*}} = %[[PERM]], {{.*}}) : (tensor<4xi64>, index, index, index, i1)
// CHECK:             arith.cmpi sgt, %{{.*}}, %c3
// NaN goes first: (isnan(a) and not isnan(b)) or a > b
// CHECK:             arith.cmpf uno
// CHECK:             arith.cmpf ogt
// CHECK:           scf.for %{{.*}} iter_args({{.*}}) -> (tensor<6x2xf32>, tensor<6x2xi64>)
// CHECK:             %[[P:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<4xi64>
// CHECK:             tensor.extract %arg0[%[[ROW]], %{{.*}}] : tensor<6x4xf32>
// CHECK:             tensor.insert %[[P]] into
// CHECK-NOT:     graph.topk
func.func @router(%x: tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>) {
  %v, %i = "graph.topk"(%x) {k = 2 : i64} : (tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>)
  return %v, %i : tensor<6x2xf32>, tensor<6x2xi64>
}

// -----

// k * 64 <= n: std::partial_sort, a heap select then a heapsort of the k kept (no partition). Integers compare
// signed, the smallest first.
// CHECK-LABEL: func.func @partial_sort
// CHECK-NOT:     arith.divsi %{{.*}}, %c2 : index
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<130xi64>)
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     graph.topk
func.func @partial_sort(%x: tensor<130xi32>) -> (tensor<2xi32>, tensor<2xi64>) {
  %v, %i = "graph.topk"(%x) {k = 2 : i64, largest = false} : (tensor<130xi32>) -> (tensor<2xi32>, tensor<2xi64>)
  return %v, %i : tensor<2xi32>, tensor<2xi64>
}

// -----

// std::sort of more than 16 elements: introsort with a stack of (first, last, depth) ranges, at most
// 2 * floor(log2 24) + 2 = 10 of them, then one insertion sort.
// CHECK-LABEL: func.func @sort_expert_ids
// CHECK:         tensor.empty() : tensor<10x3xi64>
// CHECK:         scf.while
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK-NOT:     graph.sort
func.func @sort_expert_ids(%ids: tensor<24xi64>) -> (tensor<24xi64>, tensor<24xi64>) {
  %v, %i = "graph.sort"(%ids) : (tensor<24xi64>) -> (tensor<24xi64>, tensor<24xi64>)
  return %v, %i : tensor<24xi64>, tensor<24xi64>
}

// -----

// Up to 16 elements std::sort is one insertion sort: no stack.
// CHECK-LABEL: func.func @short_sort
// CHECK-NOT:     tensor<{{[0-9]+}}x3xi64>
// CHECK:         scf.for
// CHECK-NOT:     graph.sort
func.func @short_sort(%x: tensor<2x7xbf16>) -> (tensor<2x7xbf16>, tensor<2x7xi64>) {
  %v, %i = "graph.sort"(%x) {descending = true, stable = true} : (tensor<2x7xbf16>) -> (tensor<2x7xbf16>, tensor<2x7xi64>)
  return %v, %i : tensor<2x7xbf16>, tensor<2x7xi64>
}

// -----

// The algorithm's branches depend on the size of the axis: a dynamic axis is not lowered.
// CHECK-LABEL: func.func @dynamic_axis
// CHECK:         "graph.topk"(%arg0)
func.func @dynamic_axis(%x: tensor<6x?xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>) {
  %v, %i = "graph.topk"(%x) {k = 2 : i64} : (tensor<6x?xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>)
  return %v, %i : tensor<6x2xf32>, tensor<6x2xi64>
}
