// Round trip of the elementwise ops: graphfuse-opt (with graph-verify) and upstream mlir-opt
// (IRDL only) parse and print them unchanged.
// RUN: graphfuse-opt %s | graphfuse-opt | FileCheck %s
// RUN: mlir-opt --irdl-file=%graph_irdl %s | FileCheck %s

// CHECK-LABEL: func.func @unary_float_f16(
// CHECK-SAME:    %arg0: tensor<?x8xf16>) -> (tensor<?x8xf16>, tensor<?x8xf16>) {
// CHECK-NEXT:    %0 = "graph.exp"(%arg0) : (tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK-NEXT:    %1 = "graph.tanh"(%0) : (tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK-NEXT:    %2 = "graph.sigmoid"(%1) : (tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK-NEXT:    %3 = "graph.silu"(%2) : (tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK-NEXT:    %4 = "graph.fast_gelu"(%3) : (tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK-NEXT:    return %3, %4 : tensor<?x8xf16>, tensor<?x8xf16>
func.func @unary_float_f16(%a: tensor<?x8xf16>) -> (tensor<?x8xf16>, tensor<?x8xf16>) {
  %0 = "graph.exp"(%a) : (tensor<?x8xf16>) -> tensor<?x8xf16>
  %1 = "graph.tanh"(%0) : (tensor<?x8xf16>) -> tensor<?x8xf16>
  %2 = "graph.sigmoid"(%1) : (tensor<?x8xf16>) -> tensor<?x8xf16>
  %3 = "graph.silu"(%2) : (tensor<?x8xf16>) -> tensor<?x8xf16>
  %4 = "graph.fast_gelu"(%3) : (tensor<?x8xf16>) -> tensor<?x8xf16>
  return %3, %4 : tensor<?x8xf16>, tensor<?x8xf16>
}

// CHECK-LABEL: func.func @unary_float_bf16(
// CHECK-SAME:    %arg0: tensor<2x?xbf16>) -> tensor<2x?xbf16> {
// CHECK-NEXT:    %0 = "graph.rsqrt"(%arg0) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %1 = "graph.erf"(%0) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %2 = "graph.round"(%1) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %3 = "graph.log"(%2) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %4 = "graph.sqrt"(%3) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %5 = "graph.reciprocal"(%4) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %6 = "graph.floor"(%5) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %7 = "graph.ceil"(%6) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %8 = "graph.sin"(%7) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    %9 = "graph.cos"(%8) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
// CHECK-NEXT:    return %9 : tensor<2x?xbf16>
func.func @unary_float_bf16(%a: tensor<2x?xbf16>) -> tensor<2x?xbf16> {
  %0 = "graph.rsqrt"(%a) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %1 = "graph.erf"(%0) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %2 = "graph.round"(%1) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %3 = "graph.log"(%2) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %4 = "graph.sqrt"(%3) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %5 = "graph.reciprocal"(%4) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %6 = "graph.floor"(%5) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %7 = "graph.ceil"(%6) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %8 = "graph.sin"(%7) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %9 = "graph.cos"(%8) : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  return %9 : tensor<2x?xbf16>
}

// approximate = "none" is the default: written or not, it round-trips as written.
// CHECK-LABEL: func.func @gelu_attributes(
// CHECK-SAME:    %arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %0 = "graph.gelu"(%arg0) {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %1 = "graph.gelu"(%arg0) {approximate = "none"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = "graph.gelu"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
func.func @gelu_attributes(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.gelu"(%a) {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.gelu"(%a) {approximate = "none"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.gelu"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @unary_integer(
// CHECK-SAME:    %arg0: tensor<4xi8>, %arg1: tensor<4xi32>, %arg2: tensor<?xi64>) -> (tensor<4xi8>, tensor<4xi32>, tensor<?xi64>) {
// CHECK-NEXT:    %0 = "graph.abs"(%arg0) : (tensor<4xi8>) -> tensor<4xi8>
// CHECK-NEXT:    %1 = "graph.neg"(%0) : (tensor<4xi8>) -> tensor<4xi8>
// CHECK-NEXT:    %2 = "graph.relu"(%arg1) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %3 = "graph.square"(%2) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %4 = "graph.sign"(%arg2) : (tensor<?xi64>) -> tensor<?xi64>
// CHECK-NEXT:    return %1, %3, %4 : tensor<4xi8>, tensor<4xi32>, tensor<?xi64>
func.func @unary_integer(%a: tensor<4xi8>, %b: tensor<4xi32>, %c: tensor<?xi64>) -> (tensor<4xi8>, tensor<4xi32>, tensor<?xi64>) {
  %0 = "graph.abs"(%a) : (tensor<4xi8>) -> tensor<4xi8>
  %1 = "graph.neg"(%0) : (tensor<4xi8>) -> tensor<4xi8>
  %2 = "graph.relu"(%b) : (tensor<4xi32>) -> tensor<4xi32>
  %3 = "graph.square"(%2) : (tensor<4xi32>) -> tensor<4xi32>
  %4 = "graph.sign"(%c) : (tensor<?xi64>) -> tensor<?xi64>
  return %1, %3, %4 : tensor<4xi8>, tensor<4xi32>, tensor<?xi64>
}

// CHECK-LABEL: func.func @isfinite_and_logical(
// CHECK-SAME:    %arg0: tensor<4x?xf32>, %arg1: tensor<?xi1>) -> tensor<4x?xi1> {
// CHECK-NEXT:    %0 = "graph.isfinite"(%arg0) : (tensor<4x?xf32>) -> tensor<4x?xi1>
// CHECK-NEXT:    %1 = "graph.logical_not"(%0) : (tensor<4x?xi1>) -> tensor<4x?xi1>
// CHECK-NEXT:    %2 = "graph.logical_and"(%1, %arg1) : (tensor<4x?xi1>, tensor<?xi1>) -> tensor<4x?xi1>
// CHECK-NEXT:    %3 = "graph.logical_or"(%2, %0) : (tensor<4x?xi1>, tensor<4x?xi1>) -> tensor<4x?xi1>
// CHECK-NEXT:    return %3 : tensor<4x?xi1>
func.func @isfinite_and_logical(%a: tensor<4x?xf32>, %m: tensor<?xi1>) -> tensor<4x?xi1> {
  %0 = "graph.isfinite"(%a) : (tensor<4x?xf32>) -> tensor<4x?xi1>
  %1 = "graph.logical_not"(%0) : (tensor<4x?xi1>) -> tensor<4x?xi1>
  %2 = "graph.logical_and"(%1, %m) : (tensor<4x?xi1>, tensor<?xi1>) -> tensor<4x?xi1>
  %3 = "graph.logical_or"(%2, %0) : (tensor<4x?xi1>, tensor<4x?xi1>) -> tensor<4x?xi1>
  return %3 : tensor<4x?xi1>
}

// Binary ops broadcast like numpy; a dynamic dim stays dynamic unless the other side is static.
// CHECK-LABEL: func.func @binary_broadcast(
// CHECK-SAME:    %arg0: tensor<?x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<4x1xf32>) -> (tensor<?x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %0 = "graph.add"(%arg0, %arg1) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    %1 = "graph.sub"(%0, %arg1) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    %2 = "graph.mul"(%1, %arg2) : (tensor<?x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %3 = "graph.div"(%2, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %4 = "graph.pow"(%3, %arg2) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %5 = "graph.maximum"(%4, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %6 = "graph.minimum"(%5, %arg2) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %1, %6 : tensor<?x8xf32>, tensor<4x8xf32>
func.func @binary_broadcast(%a: tensor<?x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>) -> (tensor<?x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.add"(%a, %b) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %1 = "graph.sub"(%0, %b) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %2 = "graph.mul"(%1, %c) : (tensor<?x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %3 = "graph.div"(%2, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = "graph.pow"(%3, %c) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %5 = "graph.maximum"(%4, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %6 = "graph.minimum"(%5, %c) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %1, %6 : tensor<?x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @binary_integer(
// CHECK-SAME:    %arg0: tensor<2x3xi64>, %arg1: tensor<3xi64>, %arg2: tensor<2x3xi8>) -> (tensor<2x3xi64>, tensor<2x3xi8>) {
// CHECK-NEXT:    %0 = "graph.div"(%arg0, %arg1) : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT:    %1 = "graph.pow"(%0, %arg1) : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT:    %2 = "graph.add"(%arg2, %arg2) : (tensor<2x3xi8>, tensor<2x3xi8>) -> tensor<2x3xi8>
// CHECK-NEXT:    return %1, %2 : tensor<2x3xi64>, tensor<2x3xi8>
func.func @binary_integer(%a: tensor<2x3xi64>, %b: tensor<3xi64>, %c: tensor<2x3xi8>) -> (tensor<2x3xi64>, tensor<2x3xi8>) {
  %0 = "graph.div"(%a, %b) : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %1 = "graph.pow"(%0, %b) : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %2 = "graph.add"(%c, %c) : (tensor<2x3xi8>, tensor<2x3xi8>) -> tensor<2x3xi8>
  return %1, %2 : tensor<2x3xi64>, tensor<2x3xi8>
}

// Comparisons give i1; equal and not_equal also take i1.
// CHECK-LABEL: func.func @comparisons(
// CHECK-SAME:    %arg0: tensor<4x8xi32>, %arg1: tensor<8xi32>, %arg2: tensor<4x8xi1>, %arg3: tensor<4x8xbf16>) -> (tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>) {
// CHECK-NEXT:    %0 = "graph.greater"(%arg0, %arg1) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %1 = "graph.greater_equal"(%arg0, %arg1) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %2 = "graph.less"(%arg3, %arg3) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xi1>
// CHECK-NEXT:    %3 = "graph.less_equal"(%arg3, %arg3) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xi1>
// CHECK-NEXT:    %4 = "graph.equal"(%arg2, %0) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    %5 = "graph.not_equal"(%1, %2) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    return %3, %4, %5 : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>
func.func @comparisons(%a: tensor<4x8xi32>, %b: tensor<8xi32>, %p: tensor<4x8xi1>, %f: tensor<4x8xbf16>) -> (tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>) {
  %0 = "graph.greater"(%a, %b) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi1>
  %1 = "graph.greater_equal"(%a, %b) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi1>
  %2 = "graph.less"(%f, %f) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xi1>
  %3 = "graph.less_equal"(%f, %f) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xi1>
  %4 = "graph.equal"(%p, %0) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %5 = "graph.not_equal"(%1, %2) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  return %3, %4, %5 : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>
}

// select broadcasts all three operands; the branches may be any one type (here i64 and i1).
// CHECK-LABEL: func.func @select(
// CHECK-SAME:    %arg0: tensor<4x1xi1>, %arg1: tensor<4x8xi64>, %arg2: tensor<8xi64>, %arg3: tensor<?x8xi1>) -> (tensor<4x8xi64>, tensor<?x8xi1>) {
// CHECK-NEXT:    %0 = "graph.select"(%arg0, %arg1, %arg2) : (tensor<4x1xi1>, tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi64>
// CHECK-NEXT:    %1 = "graph.select"(%arg3, %arg3, %arg0) : (tensor<?x8xi1>, tensor<?x8xi1>, tensor<4x1xi1>) -> tensor<?x8xi1>
// CHECK-NEXT:    return %0, %1 : tensor<4x8xi64>, tensor<?x8xi1>
func.func @select(%c: tensor<4x1xi1>, %a: tensor<4x8xi64>, %b: tensor<8xi64>, %p: tensor<?x8xi1>) -> (tensor<4x8xi64>, tensor<?x8xi1>) {
  %0 = "graph.select"(%c, %a, %b) : (tensor<4x1xi1>, tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi64>
  %1 = "graph.select"(%p, %p, %c) : (tensor<?x8xi1>, tensor<?x8xi1>, tensor<4x1xi1>) -> tensor<?x8xi1>
  return %0, %1 : tensor<4x8xi64>, tensor<?x8xi1>
}

// cast: the result type names the target element type; the shape (dynamic dims too) is kept.
// CHECK-LABEL: func.func @cast(
// CHECK-SAME:    %arg0: tensor<?x8xf32>, %arg1: tensor<4xi32>, %arg2: tensor<4xi1>) -> (tensor<?x8xbf16>, tensor<4xi1>, tensor<4xf16>, tensor<4xi8>, tensor<4xi64>) {
// CHECK-NEXT:    %0 = "graph.cast"(%arg0) : (tensor<?x8xf32>) -> tensor<?x8xbf16>
// CHECK-NEXT:    %1 = "graph.cast"(%arg1) : (tensor<4xi32>) -> tensor<4xi1>
// CHECK-NEXT:    %2 = "graph.cast"(%arg2) : (tensor<4xi1>) -> tensor<4xf16>
// CHECK-NEXT:    %3 = "graph.cast"(%2) : (tensor<4xf16>) -> tensor<4xi8>
// CHECK-NEXT:    %4 = "graph.cast"(%3) : (tensor<4xi8>) -> tensor<4xi64>
// CHECK-NEXT:    return %0, %1, %2, %3, %4 : tensor<?x8xbf16>, tensor<4xi1>, tensor<4xf16>, tensor<4xi8>, tensor<4xi64>
func.func @cast(%a: tensor<?x8xf32>, %b: tensor<4xi32>, %c: tensor<4xi1>) -> (tensor<?x8xbf16>, tensor<4xi1>, tensor<4xf16>, tensor<4xi8>, tensor<4xi64>) {
  %0 = "graph.cast"(%a) : (tensor<?x8xf32>) -> tensor<?x8xbf16>
  %1 = "graph.cast"(%b) : (tensor<4xi32>) -> tensor<4xi1>
  %2 = "graph.cast"(%c) : (tensor<4xi1>) -> tensor<4xf16>
  %3 = "graph.cast"(%2) : (tensor<4xf16>) -> tensor<4xi8>
  %4 = "graph.cast"(%3) : (tensor<4xi8>) -> tensor<4xi64>
  return %0, %1, %2, %3, %4 : tensor<?x8xbf16>, tensor<4xi1>, tensor<4xf16>, tensor<4xi8>, tensor<4xi64>
}

// Discardable attributes (with a dot) are allowed on any op.
// CHECK-LABEL: func.func @discardable_attribute(
// CHECK-SAME:    %arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %0 = "graph.exp"(%arg0) {graph.kernel = "k0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return %0 : tensor<4xf32>
func.func @discardable_attribute(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) {graph.kernel = "k0"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Rank-0 tensors.
// CHECK-LABEL: func.func @scalars(
// CHECK-SAME:    %arg0: tensor<f32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %0 = "graph.neg"(%arg0) : (tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    %1 = "graph.mul"(%0, %arg1) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return %1 : tensor<4xf32>
func.func @scalars(%a: tensor<f32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.neg"(%a) : (tensor<f32>) -> tensor<f32>
  %1 = "graph.mul"(%0, %b) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
