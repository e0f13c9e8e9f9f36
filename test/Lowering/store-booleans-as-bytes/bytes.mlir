// store-booleans-as-bytes: every boolean tensor becomes a byte tensor holding 0 or 1, across kernels and at the
// function boundary; inside linalg bodies the values stay i1 (a byte read is compared with 0, as numpy reads a
// bool array's bytes; a boolean result zero-extended). The emulated NPU's lowering runs it before bufferization: no memref<...xi1> is made.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict},store-booleans-as-bytes)' | FileCheck %s
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(store-booleans-as-bytes)' 2>&1 | FileCheck %s --check-prefix=GRAPH

// A mask made by one kernel and used by the next, also returned.
// CHECK-LABEL: func.func @mask(
// CHECK-SAME:    -> (tensor<4x8xi8>, tensor<4x8xf32>)
// CHECK:         %[[M:.*]] = call @mask_greater_0({{.*}}) : ({{.*}}) -> tensor<4x8xi8>
// CHECK:         call @mask_select_1(%[[M]], {{.*}}) : (tensor<4x8xi8>, {{.*}}
// CHECK-LABEL: func.func private @mask_greater_0(
// CHECK:         linalg.generic
// CHECK:           %[[B:.*]] = arith.cmpf ogt
// CHECK-NEXT:      %[[BYTE:.*]] = arith.extui %[[B]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[BYTE]] : i8
// CHECK-LABEL: func.func private @mask_select_1(%arg0: tensor<4x8xi8>
// CHECK:           %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[C:.*]] = arith.cmpi ne, %in, %[[ZERO]] : i8
// CHECK-NEXT:      arith.select %[[C]]
// CHECK-NOT:     xi1>
// GRAPH: error: store-booleans-as-bytes: lower graph ops to linalg first (graph-to-linalg)
func.func @mask(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xi1>, tensor<4x8xf32>) {
  %m = "graph.greater"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %z = "graph.select"(%m, %x, %y) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m, %z : tensor<4x8xi1>, tensor<4x8xf32>
}

// -----

// Negative: no boolean tensor, nothing changes (the f32 kernel keeps its types).
// CHECK-LABEL: func.func @plain(
// CHECK-SAME:    -> tensor<4x8xf32>
// CHECK-LABEL: func.func private @plain_exp_0(
// CHECK-NOT:     i8
// CHECK:         return
func.func @plain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
