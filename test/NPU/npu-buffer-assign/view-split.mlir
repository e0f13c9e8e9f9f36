// A piece of a no-task split (FusionVirtualOpSetSwitch) is a view: the consumer's kernel takes the split's
// input and stages only the slice it reads, also when it reshapes the piece (the reshape then views the
// slice's UB copy).  An unmarked split is a kernel of its own, whose result the consumer reads whole.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(FusionVirtualOpSetSwitch,npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// Split along axis 0 (split_n): the reshape kernel moves its 4x16 piece (256 bytes) in, not the 8x16 input.
// CHECK-LABEL: func.func @reshape_piece(%arg0: memref<8x16xf32>, %arg1: memref<64xf32>, %arg2: memref<8x8xf32>)
// CHECK-NOT:     split
// CHECK:         call @reshape_piece_reshape_1(%arg0, %arg1) : (memref<8x16xf32>, memref<64xf32>) -> ()
// CHECK:         call @reshape_piece_reshape_2(%arg0, %arg2) : (memref<8x16xf32>, memref<8x8xf32>) -> ()
// CHECK-LABEL: func.func private @reshape_piece_reshape_1
// CHECK-SAME:      npu.ub_bytes = 512 : i64
// CHECK:         %[[SLICE:.*]] = memref.subview %arg0[0, 0] [4, 16] [1, 1]
// CHECK-NEXT:    %[[UB:.*]] = memref.alloc() : memref<4x16xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%[[SLICE]], %[[UB]])
// CHECK-NOT:     memref<8x16xf32, #npu.mem<"ub">>
// CHECK:         memref.collapse_shape %[[UB]] {{\[}}[0, 1]] : memref<4x16xf32, #npu.mem<"ub">> into memref<64xf32, #npu.mem<"ub">>
// CHECK:         "npu.dma"(%{{.*}}, %arg1) : (memref<64xf32, #npu.mem<"ub">>, memref<64xf32>) -> ()
// A reshape to another 2-D shape is a collapse then an expand of the staged slice, both identity layouts.
// CHECK-LABEL: func.func private @reshape_piece_reshape_2
// CHECK-SAME:      npu.ub_bytes = 512 : i64
// CHECK:         %[[SLICE2:.*]] = memref.subview %arg0[4, 0] [4, 16] [1, 1]
// CHECK-NEXT:    %[[UB2:.*]] = memref.alloc() : memref<4x16xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%[[SLICE2]], %[[UB2]])
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[UB2]] {{.*}} into memref<64xf32, #npu.mem<"ub">>
// CHECK:         memref.expand_shape %[[FLAT]] {{.*}} into memref<8x8xf32, #npu.mem<"ub">>
func.func @reshape_piece(%x: tensor<8x16xf32>) -> (tensor<64xf32>, tensor<8x8xf32>) {
  %a, %b = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 4, 4>} : (tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  %r = "graph.reshape"(%a) : (tensor<4x16xf32>) -> tensor<64xf32>
  %s = "graph.reshape"(%b) : (tensor<4x16xf32>) -> tensor<8x8xf32>
  return %r, %s : tensor<64xf32>, tensor<8x8xf32>
}

// -----

// A piece that is a function result is not marked (seed 004): the split stays a kernel and the reshape reads
// the split's 4x16 result buffer whole.
// CHECK-LABEL: func.func private @task_split_split_0
// CHECK-SAME:      graph.fusion_kind = "split"
// CHECK-LABEL: func.func private @task_split_reshape_1(%arg0: memref<4x16xf32>
// CHECK-SAME:      npu.ub_bytes = 512 : i64
// CHECK-NOT:     memref.subview
// CHECK:         "npu.dma"(%arg0, %{{.*}}) : (memref<4x16xf32>, memref<4x16xf32, #npu.mem<"ub">>) -> ()
func.func @task_split(%x: tensor<8x16xf32>) -> (tensor<64xf32>, tensor<4x16xf32>) {
  %a, %b = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 4, 4>} : (tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  %r = "graph.reshape"(%a) : (tensor<4x16xf32>) -> tensor<64xf32>
  return %r, %b : tensor<64xf32>, tensor<4x16xf32>
}
