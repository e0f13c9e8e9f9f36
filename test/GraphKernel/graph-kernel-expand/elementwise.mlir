// Elementwise composites and their basic-op expansions (bit-exact: the references are these compositions).
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu})' %s | FileCheck %s
// Every new op, constants included, keeps the composite's location.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu})' --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC

// CHECK-LABEL: func.func @square
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%arg0, %arg0) : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
// CHECK-NEXT:    return %[[R]]
func.func @square(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %0 = "graph.square"(%x) : (tensor<4x8xi32>) -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

// x unless below 0, as relu's reference (PyTorch's) is: NaN and -0 pass through (maximum would make -0 into +0).
// CHECK-LABEL: func.func @relu
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<f16>
// CHECK-NEXT:    %[[L:.*]] = "graph.less"(%arg0, %[[Z]]) : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xi1>
// CHECK-NEXT:    %[[R:.*]] = "graph.select"(%[[L]], %[[Z]], %arg0) : (tensor<4x8xi1>, tensor<f16>, tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    return %[[R]]
func.func @relu(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "graph.relu"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Summed left to right.
// CHECK-LABEL: func.func @add_n
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%arg0, %arg1) : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
// CHECK-NEXT:    %[[B:.*]] = "graph.add"(%[[A]], %arg2)
// CHECK-NEXT:    %[[C:.*]] = "graph.add"(%[[B]], %arg0)
// CHECK-NEXT:    return %[[C]]
func.func @add_n(%a: tensor<3xi8>, %b: tensor<3xi8>, %c: tensor<3xi8>) -> tensor<3xi8> {
  %0 = "graph.add_n"(%a, %b, %c, %a) : (tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  return %0 : tensor<3xi8>
}

// -----

// CHECK-LABEL: func.func @squared_difference
// CHECK-NEXT:    %[[D:.*]] = "graph.sub"(%arg0, %arg1) : (tensor<2x1x8xbf16>, tensor<3x1xbf16>) -> tensor<2x3x8xbf16>
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%[[D]], %[[D]]) : (tensor<2x3x8xbf16>, tensor<2x3x8xbf16>) -> tensor<2x3x8xbf16>
// CHECK-NEXT:    return %[[R]]
func.func @squared_difference(%a: tensor<2x1x8xbf16>, %b: tensor<3x1xbf16>) -> tensor<2x3x8xbf16> {
  %0 = "graph.squared_difference"(%a, %b) : (tensor<2x1x8xbf16>, tensor<3x1xbf16>) -> tensor<2x3x8xbf16>
  return %0 : tensor<2x3x8xbf16>
}

// -----

// The reference's stable form: e = exp(-|x|) never overflows; (x >= 0 ? 1 : e) / (1 + e), one division.
// CHECK-LABEL: func.func @sigmoid
// CHECK-NEXT:    %[[ABS:.*]] = "graph.abs"(%arg0)
// CHECK-NEXT:    %[[NEG:.*]] = "graph.neg"(%[[ABS]])
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%[[NEG]])
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[D:.*]] = "graph.add"(%[[E]], %[[ONE]])
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[POS:.*]] = "graph.greater_equal"(%arg0, %[[ZERO]]) : (tensor<16xf32>, tensor<f32>) -> tensor<16xi1>
// CHECK-NEXT:    %[[NUM:.*]] = "graph.select"(%[[POS]], %[[ONE]], %[[E]])
// CHECK-NEXT:    %[[R:.*]] = "graph.div"(%[[NUM]], %[[D]])
// CHECK-NEXT:    return %[[R]]
// LOC-LABEL: func.func @sigmoid
// LOC-NEXT:      "graph.abs"{{.*}} loc([[L:#loc[0-9]+]])
// LOC-COUNT-8:   loc([[L]])
// LOC-NEXT:      return
// LOC:         [[L]] = loc({{.*}}:[[# @LINE + 2]]:8)
func.func @sigmoid(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.sigmoid"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @silu
// CHECK:         %[[NUM:.*]] = "graph.select"
// CHECK-NEXT:    %[[S:.*]] = "graph.div"(%[[NUM]],
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%arg0, %[[S]])
// CHECK-NEXT:    return %[[R]]
func.func @silu(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.silu"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @fast_gelu
// CHECK-NEXT:    %[[K:.*]] = arith.constant dense<1.702000e+00> : tensor<f32>
// CHECK-NEXT:    %[[Y:.*]] = "graph.mul"(%arg0, %[[K]])
// CHECK-NEXT:    "graph.abs"(%[[Y]])
// CHECK:         %[[NUM:.*]] = "graph.select"
// CHECK-NEXT:    %[[S:.*]] = "graph.div"(%[[NUM]],
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%arg0, %[[S]])
// CHECK-NEXT:    return %[[R]]
// LOC-LABEL: func.func @fast_gelu
// LOC-NEXT:      arith.constant{{.*}} loc([[L:#loc[0-9]+]])
// LOC-COUNT-11:  loc([[L]])
// LOC-NEXT:      return
// LOC:         [[L]] = loc({{.*}}:[[# @LINE + 2]]:8)
func.func @fast_gelu(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.fast_gelu"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
