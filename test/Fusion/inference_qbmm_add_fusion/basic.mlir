// quant_batch_matmul -> add of a 1-D bias => quant_batch_matmul with the bias (inference_qbmm_add_fusion).
// RUN: graphfuse-opt --split-input-file --inference_qbmm_add_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-fusion)' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --inference_qbmm_add_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS
// RUN: graphfuse-opt --split-input-file --log-level=debug --inference_qbmm_add_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-fusion)' --graph-kernel-flags="--disable_pass=inference_qbmm_add_fusion" %s | FileCheck %s --check-prefix=OFF

// The bias may be the product's type (here a cast to it) or f32.
// CHECK-LABEL: func.func @bias
// CHECK-NEXT:    %[[B:.*]] = "graph.cast"(%arg3)
// CHECK-NEXT:    %[[Y:.*]] = "graph.quant_batch_matmul"(%arg0, %arg1, %arg2, %[[B]]) {dtype = "bf16", transpose_x2 = true} : (tensor<4x32xi8>, tensor<16x32xi8>, tensor<16xf32>, tensor<16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT:    return %[[Y]]
// OFF-LABEL: func.func @bias
// OFF-NEXT:    "graph.quant_batch_matmul"
// OFF-NEXT:    "graph.cast"
// OFF-NEXT:    "graph.add"
// COUNTS: GraphFusionPass[inference_qbmm_add_fusion]: pattern=QbmmAdd, matched_times=1, effected_times=1
func.func @bias(%x: tensor<4x32xi8>, %w: tensor<16x32xi8>, %scale: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<4x16xbf16> {
  %0 = "graph.quant_batch_matmul"(%x, %w, %scale) {dtype = "bf16", transpose_x2 = true} : (tensor<4x32xi8>, tensor<16x32xi8>, tensor<16xf32>) -> tensor<4x16xbf16>
  %1 = "graph.cast"(%b) : (tensor<16xf32>) -> tensor<16xbf16>
  %2 = "graph.add"(%1, %0) : (tensor<16xbf16>, tensor<4x16xbf16>) -> tensor<4x16xbf16>
  return %2 : tensor<4x16xbf16>
}

// -----

// Not fused: a residual (not a 1-D bias); a product with a bias already; the product also returned.
// CHECK-LABEL: func.func @negative
// CHECK-NEXT:    "graph.quant_batch_matmul"
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.quant_batch_matmul"
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.quant_batch_matmul"
// CHECK-NEXT:    "graph.add"
// WHY-DAG: pattern QbmmAdd not fused at {{.*}}: the add's other operand is not a 1-D bias of the product's last dim
// WHY-DAG: pattern QbmmAdd not fused at {{.*}}: the quant_batch_matmul has a bias already
// WHY-DAG: pattern QbmmAdd not fused at {{.*}}: the quant_batch_matmul result is also a function result
func.func @negative(%x: tensor<4x32xi8>, %w: tensor<32x16xi8>, %scale: tensor<1xf32>, %b: tensor<16xf16>, %r: tensor<4x16xf16>)
    -> (tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>) {
  %0 = "graph.quant_batch_matmul"(%x, %w, %scale) : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<1xf32>) -> tensor<4x16xf16>
  %1 = "graph.add"(%0, %r) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %2 = "graph.quant_batch_matmul"(%x, %w, %scale, %b) : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<1xf32>, tensor<16xf16>) -> tensor<4x16xf16>
  %3 = "graph.add"(%2, %b) : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %4 = "graph.quant_batch_matmul"(%x, %w, %scale) : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<1xf32>) -> tensor<4x16xf16>
  %5 = "graph.add"(%4, %b) : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  return %1, %3, %4, %5 : tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>
}
