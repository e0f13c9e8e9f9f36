// FusionVirtualOpSetSwitch: splits whose pieces are contiguous views of the input are marked _no_task.
// RUN: graphfuse-opt --split-input-file --FusionVirtualOpSetSwitch %s | FileCheck %s
// The marked IR verifies and round-trips through graph-verify and through upstream mlir-opt with the IRDL dialect.
// RUN: graphfuse-opt --split-input-file --FusionVirtualOpSetSwitch --graph-verify %s | mlir-opt --split-input-file --irdl-file=%graph_irdl | FileCheck %s
// RUN: graphfuse-opt --split-input-file --FusionVirtualOpSetSwitch --log-level=info %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// split_n: axis 0.
// CHECK-LABEL: func.func @axis0
// CHECK:         "graph.split"(%arg0) {_no_task = true, axis = 0 : i64, sizes = array<i64: 2, 2>}
// LOG:      [INFO] Run graph kernel pass FusionVirtualOpSetSwitch in {{[0-9.]+}} us
// LOG-NEXT: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], UBFusionPass[FusionVirtualOpSetSwitch]: pattern=split_n, matched_times=1, effected_times=1
// LOG-NEXT: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], UBFusionPass[FusionVirtualOpSetSwitch]: pattern=split_c_to_n, matched_times=0, effected_times=0
func.func @axis0(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.neg"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A negative axis is normalised first: -3 of a rank-3 tensor is axis 0.
// CHECK-LABEL: func.func @negative_axis
// CHECK:         "graph.split"(%{{.*}}) {_no_task = true, axis = -3 : i64
// LOG: UBFusionPass[FusionVirtualOpSetSwitch]: pattern=split_n, matched_times=1, effected_times=1
func.func @negative_axis(%x: tensor<6x2x4xf32>, %y: tensor<6x2x4xf32>) -> (tensor<2x2x4xf32>, tensor<4x2x4xf32>) {
  %s = "graph.add"(%x, %y) : (tensor<6x2x4xf32>, tensor<6x2x4xf32>) -> tensor<6x2x4xf32>
  %0:2 = "graph.split"(%s) {axis = -3 : i64, sizes = array<i64: 2, 4>} : (tensor<6x2x4xf32>) -> (tensor<2x2x4xf32>, tensor<4x2x4xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %2 = "graph.exp"(%0#1) : (tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  return %1, %2 : tensor<2x2x4xf32>, tensor<4x2x4xf32>
}

// -----

// split_c_to_n: axis 1 (here written -3 of a rank-4 tensor) when dimension 0 is 1; three pieces.
// CHECK-LABEL: func.func @c_to_n
// CHECK:         "graph.split"(%arg0) {_no_task = true, axis = -3 : i64, sizes = array<i64: 4, 2, 2>}
// LOG: UBFusionPass[FusionVirtualOpSetSwitch]: pattern=split_c_to_n, matched_times=1, effected_times=1
func.func @c_to_n(%x: tensor<1x8x2x2xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %0:3 = "graph.split"(%x) {axis = -3 : i64, sizes = array<i64: 4, 2, 2>} : (tensor<1x8x2x2xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
  %1 = "graph.relu"(%0#0) : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %2 = "graph.relu"(%0#1) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %3 = "graph.relu"(%0#2) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %1, %2, %3 : tensor<1x4x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// A piece read by a graphfuse kernel (a func.call of a function with a body) is fine.
// CHECK-LABEL: func.func @into_kernel
// CHECK:         "graph.split"(%arg0) {_no_task = true
func.func @into_kernel(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = call @kernel(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.neg"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}
func.func private @kernel(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = "graph.neg"(%0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}
