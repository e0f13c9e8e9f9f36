// The seed's exclusions: splits FusionVirtualOpSetSwitch leaves running as kernels; the debug log says why.
// RUN: graphfuse-opt --split-input-file --FusionVirtualOpSetSwitch %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --FusionVirtualOpSetSwitch %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Dynamic shapes.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:     _no_task
// WHY: FusionVirtualOpSetSwitch: pattern split_n not fused at {{.*}}exclusions.mlir:[[#@LINE+3]]:{{[0-9]+}}: dynamic shapes are not supported
// WHY: UBFusionPass[FusionVirtualOpSetSwitch]: pattern=split_n, matched_times=1, effected_times=0
func.func @dynamic(%x: tensor<4x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %2 = "graph.exp"(%0#1) : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %1, %2 : tensor<2x?xf32>, tensor<2x?xf32>
}

// -----

// A constant input (Const).
// CHECK-LABEL: func.func @constant_input
// CHECK-NOT:     _no_task
// WHY: pattern split_n not fused at {{.*}}: its input is a constant (Const)
func.func @constant_input() -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %0:2 = "graph.split"(%c) {axis = 0 : i64, sizes = array<i64: 1, 1>} : (tensor<2x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %2 = "graph.exp"(%0#1) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %1, %2 : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// A function argument reshaped into the split (Data -> Reshape -> Split).
// CHECK-LABEL: func.func @data_reshape
// CHECK-NOT:     _no_task
// WHY: pattern split_n not fused at {{.*}}: its input is a function argument through a reshape (Data -> Reshape -> Split)
func.func @data_reshape(%x: tensor<32xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %r = "graph.reshape"(%x) : (tensor<32xf32>) -> tensor<4x8xf32>
  %0:2 = "graph.split"(%r) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.exp"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// The producer is already no_task (a split marked before, feeding this one).
// CHECK-LABEL: func.func @producer_no_task
// CHECK:         "graph.split"(%arg0) {_no_task = true
// CHECK:         "graph.split"(%{{.*}}) {axis = 0
// WHY: pattern split_n not fused at {{.*}}: its input's producer graph.split is already no_task
func.func @producer_no_task(%x: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>) {
  %0:2 = "graph.split"(%x) {_no_task = true, axis = 0 : i64, sizes = array<i64: 4, 4>} : (tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %1:2 = "graph.split"(%0#0) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %2 = "graph.exp"(%1#0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = "graph.exp"(%1#1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = "graph.exp"(%0#1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2, %3, %4 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>
}

// -----

// A split feeding another split: the first is ruled out (SplitD -> SplitD), the second, reading a real
// buffer, becomes a view.
// CHECK-LABEL: func.func @another_split
// CHECK:         "graph.split"(%arg0) {axis = 0
// CHECK:         "graph.split"(%{{.*}}) {_no_task = true, axis = 0
// WHY: pattern split_n not fused at {{.*}}: a piece feeds another split
func.func @another_split(%x: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 4, 4>} : (tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %1:2 = "graph.split"(%0#0) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %2 = "graph.exp"(%1#0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = "graph.exp"(%1#1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = "graph.exp"(%0#1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2, %3, %4 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>
}

// -----

// A consumer already no_task (marked by an earlier pass).
// CHECK-LABEL: func.func @consumer_no_task
// CHECK:         "graph.split"(%arg0) {axis = 0
// WHY: pattern split_n not fused at {{.*}}: its consumer graph.reshape is already no_task
func.func @consumer_no_task(%x: tensor<4x8xf32>) -> (tensor<16xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = "graph.reshape"(%0#0) {_no_task = true} : (tensor<2x8xf32>) -> tensor<16xf32>
  %2 = "graph.exp"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<16xf32>, tensor<2x8xf32>
}

// -----

// A piece is a function result (NetOutput).
// CHECK-LABEL: func.func @function_result
// CHECK-NOT:     _no_task
// WHY: pattern split_n not fused at {{.*}}: a piece is a function result (NetOutput)
func.func @function_result(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %0#1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A piece goes to a collective: the dialect has none, so a collective is a call of an external
// declaration named like one (HcomAllReduce here).
// CHECK-LABEL: func.func @collective
// CHECK-NOT:     _no_task
// WHY: pattern split_n not fused at {{.*}}: a piece is passed to the collective @hcom_all_reduce
func.func private @hcom_all_reduce(tensor<2x8xf32>) -> tensor<2x8xf32>
func.func @collective(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = call @hcom_all_reduce(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.exp"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Any other external function is not compiled by graphfuse (CANN: not a TVM op).
// CHECK-LABEL: func.func @external
// CHECK-NOT:     _no_task
// WHY: pattern split_n not fused at {{.*}}: a piece is passed to @custom_op, an external function graphfuse does not compile
func.func private @custom_op(tensor<2x8xf32>) -> tensor<2x8xf32>
func.func @external(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = call @custom_op(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.exp"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// split_c_to_n needs dimension 0 to be 1; a split along axis 2 is neither pattern (no match).
// CHECK-LABEL: func.func @not_contiguous
// CHECK-NOT:     _no_task
// WHY: pattern split_c_to_n not fused at {{.*}}: split_c_to_n needs dimension 0 to be 1, got 2: the pieces are not contiguous
// WHY: UBFusionPass[FusionVirtualOpSetSwitch]: pattern=split_n, matched_times=0, effected_times=0
// WHY: UBFusionPass[FusionVirtualOpSetSwitch]: pattern=split_c_to_n, matched_times=1, effected_times=0
func.func @not_contiguous(%x: tensor<2x8x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x8x2xf32>, tensor<2x8x2xf32>) {
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<2x8x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>)
  %1:2 = "graph.split"(%x) {axis = 2 : i64, sizes = array<i64: 2, 2>} : (tensor<2x8x4xf32>) -> (tensor<2x8x2xf32>, tensor<2x8x2xf32>)
  %2 = "graph.exp"(%0#0) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %3 = "graph.exp"(%0#1) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %4 = "graph.exp"(%1#0) : (tensor<2x8x2xf32>) -> tensor<2x8x2xf32>
  %5 = "graph.exp"(%1#1) : (tensor<2x8x2xf32>) -> tensor<2x8x2xf32>
  return %2, %3, %4, %5 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x8x2xf32>, tensor<2x8x2xf32>
}
