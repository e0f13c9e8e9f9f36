// What inference_swiglu_fusion must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --inference_swiglu_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --inference_swiglu_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Unequal pieces (the mul broadcasts the one-column first piece).
// CHECK-LABEL: func.func @unequal
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.silu"
// CHECK-NEXT:    "graph.mul"
// WHY: pattern Swiglu not fused at {{.*}}: the split cuts sizes [1, 32], not two equal halves
func.func @unequal(%x: tensor<4x33xf32>) -> tensor<4x32xf32> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 1, 32>} : (tensor<4x33xf32>) -> (tensor<4x1xf32>, tensor<4x32xf32>)
  %1 = "graph.silu"(%0#0) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %2 = "graph.mul"(%1, %0#1) : (tensor<4x1xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %2 : tensor<4x32xf32>
}

// -----

// A three-way split is not two halves.
// CHECK-LABEL: func.func @three_pieces
// CHECK-NEXT:    "graph.split"
// WHY: pattern Swiglu not fused at {{.*}}: the split cuts sizes [8, 8, 8], not two equal halves
func.func @three_pieces(%x: tensor<4x24xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:3 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 8, 8, 8>} : (tensor<4x24xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  %1 = "graph.silu"(%0#0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%1, %0#1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2, %0#2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Halves of the first axis, not the last.
// CHECK-LABEL: func.func @wrong_axis
// CHECK-NEXT:    "graph.split"
// WHY: pattern Swiglu not fused at {{.*}}: the split cuts axis 0, not the last axis of rank 2
func.func @wrong_axis(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 4, 4>} : (tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %1 = "graph.silu"(%0#0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%1, %0#1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// silu of the second half times the first: a different function (no match).
// CHECK-LABEL: func.func @halves_swapped
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.silu"
// CHECK-NEXT:    "graph.mul"
func.func @halves_swapped(%x: tensor<4x64xf32>) -> tensor<4x32xf32> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 32>} : (tensor<4x64xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>)
  %1 = "graph.silu"(%0#1) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.mul"(%1, %0#0) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %2 : tensor<4x32xf32>
}

// -----

// The silu output is also returned.
// CHECK-LABEL: func.func @silu_returned
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.silu"
// CHECK-NEXT:    "graph.mul"
// WHY: pattern Swiglu not fused at {{.*}}: the silu result is also a function result
func.func @silu_returned(%x: tensor<4x64xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 32>} : (tensor<4x64xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>)
  %1 = "graph.silu"(%0#0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.mul"(%1, %0#1) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %2, %1 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// The second half has another user.
// CHECK-LABEL: func.func @half_shared
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.silu"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    "graph.exp"
// WHY: pattern Swiglu not fused at {{.*}}: the second half has other users
func.func @half_shared(%x: tensor<4x64xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 32>} : (tensor<4x64xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>)
  %1 = "graph.silu"(%0#0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.mul"(%1, %0#1) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %3 = "graph.exp"(%0#1) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %2, %3 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Slices that are not the halves: overlapping, strided.
// CHECK-LABEL: func.func @bad_slices
// CHECK-COUNT-2: "graph.mul"
// WHY: pattern Swiglu not fused at {{.*}}: the slices are not the lower and upper halves of the last axis (unit strides, other dims whole)
// WHY: pattern Swiglu not fused at {{.*}}: the slices are not the lower and upper halves of the last axis (unit strides, other dims whole)
func.func @bad_slices(%x: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %1 = "graph.slice"(%x) {start = array<i64: 0, 7>, limit = array<i64: 4, 15>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %2 = "graph.silu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.mul"(%2, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "graph.slice"(%x) {start = array<i64: 0, 0>, limit = array<i64: 4, 16>, strides = array<i64: 1, 2>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %5 = "graph.slice"(%x) {start = array<i64: 0, 8>, limit = array<i64: 4, 16>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %6 = "graph.silu"(%4) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = "graph.mul"(%6, %5) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3, %7 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Halves of two different tensors.
// CHECK-LABEL: func.func @two_sources
// CHECK:         "graph.mul"
func.func @two_sources(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %0 = "graph.slice"(%x) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %1 = "graph.slice"(%y) {start = array<i64: 0, 8>, limit = array<i64: 4, 16>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %2 = "graph.silu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.mul"(%2, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// Reshapes that change the last dim: the halves' rows are not the result's rows.
// CHECK-LABEL: func.func @reshape_cuts_the_rows
// CHECK:         "graph.silu"
// CHECK:         "graph.mul"
// CHECK-NOT:     "graph.swiglu"
func.func @reshape_cuts_the_rows(%x: tensor<4x64xf32>) -> tensor<8x16xf32> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 32>} : (tensor<4x64xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>)
  %1 = "graph.reshape"(%0#0) : (tensor<4x32xf32>) -> tensor<8x16xf32>
  %2 = "graph.silu"(%1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = "graph.reshape"(%0#1) : (tensor<4x32xf32>) -> tensor<8x16xf32>
  %4 = "graph.mul"(%2, %3) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}

// -----

// Only one half reshaped.
// CHECK-LABEL: func.func @one_half_reshaped
// CHECK:         "graph.silu"
// CHECK:         "graph.mul"
// CHECK-NOT:     "graph.swiglu"
func.func @one_half_reshaped(%x: tensor<2x2x64xf32>) -> tensor<2x2x32xf32> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 32>} : (tensor<2x2x64xf32>) -> (tensor<2x2x32xf32>, tensor<2x2x32xf32>)
  %1 = "graph.silu"(%0#0) : (tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
  %2 = "graph.reshape"(%0#1) : (tensor<2x2x32xf32>) -> tensor<4x32xf32>
  %3 = "graph.reshape"(%2) : (tensor<4x32xf32>) -> tensor<2x2x32xf32>
  %4 = "graph.mul"(%1, %3) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
  return %4 : tensor<2x2x32xf32>
}
