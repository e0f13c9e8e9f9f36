// npu-buffer-assign places each kernel's buffers on chip and makes its GM transfers explicit: GM arguments
// are staged in UB (vector kernels) or L1 (cube operands), a matmul accumulates in L0C, results go back to
// GM with npu.dma.  Small kernels fit the 910b's UB whole: one tile, no loop.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// The entry only calls kernels; its intermediate lives in GM (no memory space) and its result is computed in
// place into the output argument (no GM -> GM copy).
// CHECK-LABEL: func.func @two_ops(%arg0: memref<16x64xf32>, %arg1: memref<16x64xf32>, %arg2: memref<16x64xf32>)
// CHECK:         %[[MID:.*]] = memref.alloc() : memref<16x64xf32>
// CHECK-NEXT:    call @two_ops_add_0(%arg0, %arg1, %[[MID]])
// CHECK-NEXT:    call @two_ops_exp_1(%[[MID]], %arg2)
// CHECK-NOT:     memref.copy
// CHECK:         return
// CHECK-LABEL: func.func private @two_ops_add_0
// CHECK-SAME:      npu.l1_bytes = 0 : i64, npu.tile_rows = 16 : i64, npu.tiles = 1 : i64, npu.ub_bytes = 12288 : i64
// CHECK:         %[[A:.*]] = memref.alloc() : memref<16x64xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%arg0, %[[A]]) : (memref<16x64xf32>, memref<16x64xf32, #npu.mem<"ub">>) -> ()
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<16x64xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%arg1, %[[B]])
// CHECK-NEXT:    %[[C:.*]] = memref.alloc() : memref<16x64xf32, #npu.mem<"ub">>
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic {{.*}} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[C]] : memref<16x64xf32, #npu.mem<"ub">>)
// CHECK:         "npu.dma"(%[[C]], %arg2) : (memref<16x64xf32, #npu.mem<"ub">>, memref<16x64xf32>) -> ()
// CHECK-NEXT:    return
// CHECK-LABEL: func.func private @two_ops_exp_1
// CHECK-SAME:      npu.ub_bytes = 8192 : i64
func.func @two_ops(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = "graph.add"(%x, %y) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %1 = "graph.exp"(%0) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %1 : tensor<16x64xf32>
}

// -----

// A matmul kernel: both operands staged in L1 (the cube unit's input buffer), the accumulator in L0C; the
// bias-add epilogue updates the accumulator in place, which goes back to GM from L0C.  Nothing in UB.
// CHECK-LABEL: func.func private @matmul_bias_matmul_bias_add_1
// CHECK-SAME:      npu.l0c_bytes = 1024 : i64, npu.l1_bytes = 4096 : i64, npu.matmul = array<i64: 1, 16, 16, 32, 4>, npu.tile_rows = 16 : i64, npu.tiles = 1 : i64, npu.ub_bytes = 0 : i64
// CHECK-DAG:     "npu.dma"(%arg0, %{{.*}}) : (memref<16x32xf32>, memref<16x32xf32, #npu.mem<"l1">>) -> ()
// CHECK-DAG:     "npu.dma"(%arg1, %{{.*}}) : (memref<32x16xf32>, memref<32x16xf32, #npu.mem<"l1">>) -> ()
// CHECK:         linalg.matmul ins({{.*}} : memref<16x32xf32, #npu.mem<"l1">>, memref<32x16xf32, #npu.mem<"l1">>) outs({{.*}} : memref<16x16xf32, #npu.mem<"l0c">>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : memref<16x16xf32, #npu.mem<"l0c">>)
// CHECK:         "npu.dma"(%{{.*}}, %arg2) : (memref<16x16xf32, #npu.mem<"l0c">>, memref<16x16xf32>) -> ()
func.func @matmul_bias(%a: tensor<16x32xf32>, %b: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %bias = arith.constant dense<0.5> : tensor<16xf32>
  %0 = "graph.matmul_bias_add"(%a, %b, %bias) : (tensor<16x32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
