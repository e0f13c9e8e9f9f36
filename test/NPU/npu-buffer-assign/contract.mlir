// npu-buffer-assign on ops that are not named matmuls or generics: a linalg.contract (a batched matmul with
// a shared weight, as graph-to-linalg may emit it) is a cube op, its ins and outs told apart by its operand
// segments; an op the pass does not understand leaves it unsure whether it reads or writes an argument, so
// each argument it touches is both loaded and stored (never stored without its contents loaded first).
// RUN: graphfuse-opt %s --split-input-file --npu-buffer-assign | FileCheck %s

// CHECK-LABEL: func.func private @contract_kernel
// CHECK-SAME:      npu.l0c_bytes = 4096 : i64, npu.l1_bytes = 16384 : i64, npu.matmul = array<i64: 2, 16, 32, 64, 4>, npu.tile_rows = 2 : i64, npu.tiles = 1 : i64, npu.ub_bytes = 0 : i64
// CHECK:         %[[X:.*]] = memref.alloc() : memref<2x16x64xf32, #npu.mem<"l1">>
// CHECK-NEXT:    "npu.dma"(%arg0, %[[X]])
// CHECK-NEXT:    %[[W:.*]] = memref.alloc() : memref<64x32xf32, #npu.mem<"l1">>
// CHECK-NEXT:    "npu.dma"(%arg1, %[[W]])
// CHECK-NEXT:    %[[ACC:.*]] = memref.alloc() : memref<2x16x32xf32, #npu.mem<"l0c">>
// CHECK:         linalg.contract {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ACC]] : memref<2x16x32xf32, #npu.mem<"l0c">>)
// CHECK-NEXT:    "npu.dma"(%[[ACC]], %arg2)
// CHECK-NOT:     "npu.dma"
// CHECK:         return
#lhs = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#rhs = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @contract(%x: memref<2x16x64xf32>, %w: memref<64x32xf32>, %y: memref<2x16x32xf32>) {
  call @contract_kernel(%x, %w, %y) : (memref<2x16x64xf32>, memref<64x32xf32>, memref<2x16x32xf32>) -> ()
  return
}
func.func private @contract_kernel(%x: memref<2x16x64xf32>, %w: memref<64x32xf32>, %y: memref<2x16x32xf32>)
    attributes {graph.kernel, graph.fusion_kind = "matmul"} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x16x32xf32>)
  linalg.contract indexing_maps = [#lhs, #rhs, #out] ins(%x, %w : memref<2x16x64xf32>, memref<64x32xf32>) outs(%y : memref<2x16x32xf32>)
  return
}

// -----

// CHECK-LABEL: func.func private @unknown_kernel
// CHECK-SAME:      npu.tile_rows = 0 : i64, npu.tiles = 1 : i64, npu.ub_bytes = 256 : i64
// CHECK:         %[[X:.*]] = memref.alloc() : memref<4x8xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%arg0, %[[X]])
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<4x8xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%arg1, %[[Y]])
// CHECK:         memref.load %[[X]]
// CHECK:         memref.store %{{.*}}, %[[Y]]
// CHECK-DAG:     "npu.dma"(%[[X]], %arg0)
// CHECK-DAG:     "npu.dma"(%[[Y]], %arg1)
func.func @unknown(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  call @unknown_kernel(%x, %y) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  return
}
func.func private @unknown_kernel(%x: memref<4x8xf32>, %y: memref<4x8xf32>) attributes {graph.kernel, graph.fusion_kind = "copy"} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0, %c0] : memref<4x8xf32>
  memref.store %v, %y[%c0, %c0] : memref<4x8xf32>
  return
}
