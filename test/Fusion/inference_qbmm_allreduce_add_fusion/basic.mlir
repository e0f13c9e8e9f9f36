// quant_batch_matmul -> all_reduce(sum) -> add => quant_batch_matmul_all_reduce (inference_qbmm_allreduce_add_fusion).
// RUN: graphfuse-opt --split-input-file --inference_qbmm_allreduce_add_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-fusion)' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --inference_qbmm_allreduce_add_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS
// RUN: graphfuse-opt --split-input-file --log-level=debug --inference_qbmm_allreduce_add_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-fusion{disable-pass=inference_qbmm_allreduce_add_fusion})' %s | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @row_parallel
// CHECK-NEXT:    %[[Y:.*]] = "graph.quant_batch_matmul_all_reduce"(%arg0, %arg1, %arg2, %arg3) {dtype = "f16", group = "tp", group_size = 4 : i64} : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<16xf32>, tensor<4x16xf16>) -> tensor<4x16xf16>
// CHECK-NEXT:    return %[[Y]]
// OFF-LABEL: func.func @row_parallel
// OFF-NEXT:    "graph.quant_batch_matmul"
// OFF-NEXT:    "graph.all_reduce"
// OFF-NEXT:    "graph.add"
// COUNTS: GraphFusionPass[inference_qbmm_allreduce_add_fusion]: pattern=QbmmAllReduceAdd, matched_times=1, effected_times=1
func.func @row_parallel(%x: tensor<4x32xi8>, %w: tensor<32x16xi8>, %scale: tensor<16xf32>, %r: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %0 = "graph.quant_batch_matmul"(%x, %w, %scale) : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<16xf32>) -> tensor<4x16xf16>
  %1 = "graph.all_reduce"(%0) {group = "tp", group_size = 4 : i64} : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %2 = "graph.add"(%r, %1) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  return %2 : tensor<4x16xf16>
}

// -----

// Not fused: the max instead of the sum; a product with a bias (it would be added once per rank); the sum
// broadcast to a larger shape.
// CHECK-LABEL: func.func @negative
// CHECK-NOT:     "graph.quant_batch_matmul_all_reduce"
// WHY-DAG: pattern QbmmAllReduceAdd not fused at {{.*}}: the all_reduce takes the max, not the sum
// WHY-DAG: pattern QbmmAllReduceAdd not fused at {{.*}}: the quant_batch_matmul has a bias (summed over the ranks it would count once per rank)
// WHY-DAG: pattern QbmmAllReduceAdd not fused at {{.*}}: the add broadcasts the sum to a larger shape
func.func @negative(%x: tensor<4x32xi8>, %w: tensor<32x16xi8>, %scale: tensor<16xf32>, %b: tensor<16xf16>, %r: tensor<4x16xf16>, %big: tensor<2x4x16xf16>)
    -> (tensor<4x16xf16>, tensor<4x16xf16>, tensor<2x4x16xf16>) {
  %0 = "graph.quant_batch_matmul"(%x, %w, %scale) : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<16xf32>) -> tensor<4x16xf16>
  %1 = "graph.all_reduce"(%0) {group_size = 2 : i64, reduction = "max"} : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %2 = "graph.add"(%1, %r) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %3 = "graph.quant_batch_matmul"(%x, %w, %scale, %b) : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<16xf32>, tensor<16xf16>) -> tensor<4x16xf16>
  %4 = "graph.all_reduce"(%3) {group_size = 2 : i64} : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %5 = "graph.add"(%4, %r) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %6 = "graph.quant_batch_matmul"(%x, %w, %scale) : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<16xf32>) -> tensor<4x16xf16>
  %7 = "graph.all_reduce"(%6) {group_size = 2 : i64} : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %8 = "graph.add"(%7, %big) : (tensor<4x16xf16>, tensor<2x4x16xf16>) -> tensor<2x4x16xf16>
  return %2, %5, %8 : tensor<4x16xf16>, tensor<4x16xf16>, tensor<2x4x16xf16>
}
