// graph-to-linalg turns each elementwise graph op into one linalg.generic on tensors:
// tensor.empty init, parallel iterators, numpy broadcasting through the indexing maps.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg)' %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @bias_add
// UPSTREAM: linalg.generic

// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @bias_add
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] fastmath<contract> : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     graph.
func.func @bias_add(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Size-1 dimensions read index 0; NaN-propagating maximum.
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW1:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @outer_maximum
// CHECK:         linalg.generic {indexing_maps = [#[[COL]], #[[ROW1]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK:           arith.maximumf
func.func @outer_maximum(%a: tensor<4x1xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.maximum"(%a, %b) : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// f16 is computed in f32 inside the body, with the vectorizable exp (clamps that keep NaN, n and 2^n from
// the shifter 1.5 * 2^23, Cody-Waite reduction, a polynomial, 2^n built in the exponent bits); no libm
// call, no float-to-int conversion, no select for NaN at the end (NaN flows through the arithmetic).
// CHECK-LABEL: func.func @exp_f16
// CHECK:         ^bb0(%[[A:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[LOW:.*]] = arith.constant -1.040000e+02 : f32
// CHECK-NEXT:      %[[BELOW:.*]] = arith.cmpf olt, %[[W]], %[[LOW]] : f32
// CHECK-NEXT:      %{{.*}} = arith.select %[[BELOW]], %[[LOW]], %[[W]] : f32
// CHECK:           %[[SHIFTER:.*]] = arith.constant 0x4B400000 : f32
// CHECK:           %[[SHIFTED:.*]] = arith.addf %{{.*}}, %[[SHIFTER]]
// CHECK:           arith.bitcast %[[SHIFTED]] : f32 to i32
// CHECK:           arith.shli
// CHECK:           arith.bitcast %{{.*}} : i32 to f32
// CHECK:           arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[X:.*]] = arith.mulf
// CHECK-NEXT:      %[[N:.*]] = arith.truncf %[[X]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[N]] : f16
// CHECK-NOT:     math.exp
func.func @exp_f16(%a: tensor<16xf16>) -> tensor<16xf16> {
  %0 = "graph.exp"(%a) : (tensor<16xf16>) -> tensor<16xf16>
  return %0 : tensor<16xf16>
}

// -----

// Integer division: divsi on a divisor made safe; x / 0 = 0, x / -1 = 0 - x.
// CHECK-LABEL: func.func @int_div
// CHECK:         ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
// CHECK:           %[[Z:.*]] = arith.cmpi eq, %[[B]], %c0_i32
// CHECK:           %[[M:.*]] = arith.cmpi eq, %[[B]], %c-1_i32
// CHECK:           %[[SAFE:.*]] = arith.select %{{.*}}, %c1_i32, %[[B]] : i32
// CHECK:           %[[Q:.*]] = arith.divsi %[[A]], %[[SAFE]] : i32
// CHECK:           %[[NEG:.*]] = arith.subi %c0_i32, %[[A]] : i32
// CHECK:           %[[Q1:.*]] = arith.select %[[M]], %[[NEG]], %[[Q]] : i32
// CHECK:           %[[Q2:.*]] = arith.select %[[Z]], %c0_i32, %[[Q1]] : i32
// CHECK:           linalg.yield %[[Q2]] : i32
func.func @int_div(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {
  %0 = "graph.div"(%a, %b) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// CHECK-LABEL: func.func @unary_chain
// CHECK:         math.roundeven
// CHECK:         linalg.generic
// CHECK:           math.copysign
// CHECK:         linalg.generic
// CHECK:           math.absf
// CHECK:           arith.negf
// CHECK:           arith.bitcast
// CHECK:           arith.cmpf oge
// CHECK:           arith.select
// CHECK:         linalg.generic
// CHECK:           math.sqrt
// CHECK:           arith.divf
// CHECK-NOT:     graph.
func.func @unary_chain(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "graph.round"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "graph.gelu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "graph.sigmoid"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "graph.rsqrt"(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// Comparisons give i1; select broadcasts all three operands.
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[R:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[I:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @compare_select
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x8xi1>
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4x8xi1>)
// CHECK:           arith.cmpf ogt
// CHECK:         linalg.generic {indexing_maps = [#[[I]], #[[C]], #[[R]], #[[I]]], iterator_types = ["parallel", "parallel"]} ins(%[[G]], %arg0, %arg1 : tensor<4x8xi1>, tensor<4x1xf32>, tensor<8xf32>)
// CHECK:           arith.select
func.func @compare_select(%a: tensor<4x1xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = "graph.greater"(%a, %b) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %0 = "graph.select"(%c, %a, %b) : (tensor<4x8xi1>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// float -> int truncates toward zero and saturates; NaN -> 0.
// CHECK-LABEL: func.func @cast_f32_i8
// CHECK:         ^bb0(%[[A:.*]]: f32, %{{.*}}: i8):
// CHECK:           %[[T:.*]] = math.trunc %[[A]] : f32
// CHECK:           arith.fptosi %{{.*}} : f32 to i8
// CHECK:           arith.constant 127 : i8
// CHECK:           arith.constant -128 : i8
// CHECK:           linalg.yield %{{.*}} : i8
// CHECK-LABEL: func.func @cast_i1_f32
// CHECK:           arith.uitofp %{{.*}} : i1 to f32
// CHECK-LABEL: func.func @cast_i64_i8
// CHECK:           arith.trunci %{{.*}} : i64 to i8
// CHECK-LABEL: func.func @cast_f32_i1
// CHECK:           arith.cmpf une
func.func @cast_f32_i8(%a: tensor<8xf32>) -> tensor<8xi8> {
  %0 = "graph.cast"(%a) : (tensor<8xf32>) -> tensor<8xi8>
  return %0 : tensor<8xi8>
}
func.func @cast_i1_f32(%a: tensor<8xi1>) -> tensor<8xf32> {
  %0 = "graph.cast"(%a) : (tensor<8xi1>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @cast_i64_i8(%a: tensor<8xi64>) -> tensor<8xi8> {
  %0 = "graph.cast"(%a) : (tensor<8xi64>) -> tensor<8xi8>
  return %0 : tensor<8xi8>
}
func.func @cast_f32_i1(%a: tensor<8xf32>) -> tensor<8xi1> {
  %0 = "graph.cast"(%a) : (tensor<8xf32>) -> tensor<8xi1>
  return %0 : tensor<8xi1>
}

// -----

// Dynamic result sizes come from tensor.dim of a dynamic operand; rank-0 operands broadcast with an empty map.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @dynamic
// CHECK:         %[[D:.*]] = tensor.dim %arg0, %c0 : tensor<?x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x8xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<?x8xf32>, tensor<f32>) outs(%[[E]] : tensor<?x8xf32>)
// CHECK:           arith.mulf
func.func @dynamic(%a: tensor<?x8xf32>, %s: tensor<f32>) -> tensor<?x8xf32> {
  %0 = "graph.mul"(%a, %s) : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// pow by a constant integer exponent up to 4 is products (gelu's tanh form cubes its input), not a powf call
// per element; any other exponent stays math.powf.
// CHECK-LABEL: func.func @cube
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT:      %[[CUBE:.*]] = arith.mulf %[[SQ]], %[[X]]
// CHECK-NEXT:      linalg.yield %[[CUBE]] : f32
// CHECK-NOT:     math.powf
func.func @cube(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %three = arith.constant dense<3.0> : tensor<f32>
  %0 = "graph.pow"(%x, %three) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @fractional_power
// CHECK:         math.powf
func.func @fractional_power(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = arith.constant dense<2.5> : tensor<f32>
  %0 = "graph.pow"(%x, %e) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @tensor_power
// CHECK:         math.powf
func.func @tensor_power(%x: tensor<4x8xf32>, %e: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.pow"(%x, %e) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
