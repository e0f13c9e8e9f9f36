// gelu, tanh and erf have no exact expansion into basic ops: documented approximations (tanh and erf within
// 3 ulp in f32, gelu within 3e-6 relative; see the expanders' docstrings and test_graph_kernel_expand.py).
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu})' %s | FileCheck %s

// gelu "tanh": 0.5 x (1 + tanh(z)) = x * sigmoid(2z), 2z = x (c1 + c2 x^2), c1 = 2 sqrt(2/pi), c2 = 0.044715 c1.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT:    %[[C1:.*]] = arith.constant dense<1.59576917> : tensor<f32>
// CHECK-NEXT:    %[[C2:.*]] = arith.constant dense<0.0713548139> : tensor<f32>
// CHECK-NEXT:    %[[X2:.*]] = "graph.mul"(%arg0, %arg0)
// CHECK-NEXT:    %[[T:.*]] = "graph.mul"(%[[C2]], %[[X2]])
// CHECK-NEXT:    %[[P:.*]] = "graph.add"(%[[C1]], %[[T]])
// CHECK-NEXT:    %[[W:.*]] = "graph.mul"(%arg0, %[[P]])
// CHECK-NEXT:    "graph.abs"(%[[W]])
// CHECK:         %[[NUM:.*]] = "graph.select"
// CHECK-NEXT:    %[[S:.*]] = "graph.div"(%[[NUM]],
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%arg0, %[[S]])
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     "graph.tanh"
func.func @gelu_tanh(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.gelu"(%x) {approximate = "tanh"} : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// gelu "none": 0.5 x (1 + erf(z)), z = x / sqrt(2); 1 + erf(z) is 1 + z P(z^2) for |z| < 1, erfc(|z|) below -1,
// 2 - erfc(z) above 1 (erfc(a) = t exp(-a^2 + Q(t)), t = 1 / (1 + a/2)).
// CHECK-LABEL: func.func @gelu_erf
// CHECK-NEXT:    %[[RSQRT2:.*]] = arith.constant dense<0.707106769> : tensor<f32>
// CHECK-NEXT:    %[[Z:.*]] = "graph.mul"(%arg0, %[[RSQRT2]])
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[HX:.*]] = "graph.mul"(%arg0, %[[HALF]])
// CHECK-NEXT:    %[[A:.*]] = "graph.abs"(%[[Z]])
// CHECK:         %[[EXP:.*]] = "graph.exp"
// CHECK-NEXT:    %[[ERFC:.*]] = "graph.mul"(%{{.*}}, %[[EXP]])
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[NEG:.*]] = "graph.less"(%[[Z]], %[[ZERO]])
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[UPPER:.*]] = "graph.sub"(%[[TWO]], %[[ERFC]])
// CHECK-NEXT:    %[[LARGE:.*]] = "graph.select"(%[[NEG]], %[[ERFC]], %[[UPPER]])
// CHECK-NEXT:    %[[IS_SMALL:.*]] = "graph.less"(%[[A]], %{{.*}})
// CHECK-NEXT:    %[[ONE_PLUS_ERF:.*]] = "graph.select"(%[[IS_SMALL]], %{{.*}}, %[[LARGE]])
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%[[HX]], %[[ONE_PLUS_ERF]])
// CHECK-NEXT:    return %[[R]]
func.func @gelu_erf(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.gelu"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// tanh: x + x^3 P(x^2) below |x| = 0.625, else sign(x) (1 - e) / (1 + e) with e = exp(-2|x|).
// CHECK-LABEL: func.func @tanh
// CHECK-NEXT:    %[[A:.*]] = "graph.abs"(%arg0)
// CHECK-NEXT:    %[[X2:.*]] = "graph.mul"(%arg0, %arg0)
// CHECK:         %[[XP:.*]] = "graph.mul"(%arg0, %{{.*}})
// CHECK-NEXT:    %[[SMALL:.*]] = "graph.add"(%arg0, %[[XP]])
// CHECK-NEXT:    %[[M2:.*]] = arith.constant dense<-2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ARG:.*]] = "graph.mul"(%[[A]], %[[M2]])
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%[[ARG]])
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[NUM:.*]] = "graph.sub"(%[[ONE]], %[[E]])
// CHECK-NEXT:    %[[DEN:.*]] = "graph.add"(%[[ONE]], %[[E]])
// CHECK-NEXT:    %[[T:.*]] = "graph.div"(%[[NUM]], %[[DEN]])
// CHECK:         %[[LARGE:.*]] = "graph.select"
// CHECK-NEXT:    %[[THRESHOLD:.*]] = arith.constant dense<6.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[IS_SMALL:.*]] = "graph.less"(%[[A]], %[[THRESHOLD]])
// CHECK-NEXT:    %[[R:.*]] = "graph.select"(%[[IS_SMALL]], %[[SMALL]], %[[LARGE]])
// CHECK-NEXT:    return %[[R]]
func.func @tanh(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.tanh"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// erf: x P(x^2) below |x| = 1, else sign(x) (1 - erfc(|x|)); bf16 is computed in f32 between casts.
// CHECK-LABEL: func.func @erf_bf16
// CHECK-NEXT:    %[[X:.*]] = "graph.cast"(%arg0) : (tensor<16xbf16>) -> tensor<16xf32>
// CHECK-NEXT:    %[[A:.*]] = "graph.abs"(%[[X]])
// CHECK:         arith.constant dense<1.12837911> : tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = "graph.add"
// CHECK-NEXT:    %[[SMALL:.*]] = "graph.mul"(%[[X]], %[[P]])
// CHECK:         "graph.exp"
// CHECK:         %[[LARGE:.*]] = "graph.select"
// CHECK-NEXT:    %[[IS_SMALL:.*]] = "graph.less"(%[[A]], %{{.*}})
// CHECK-NEXT:    %[[R:.*]] = "graph.select"(%[[IS_SMALL]], %[[SMALL]], %[[LARGE]])
// CHECK-NEXT:    %[[Y:.*]] = "graph.cast"(%[[R]]) : (tensor<16xf32>) -> tensor<16xbf16>
// CHECK-NEXT:    return %[[Y]]
func.func @erf_bf16(%x: tensor<16xbf16>) -> tensor<16xbf16> {
  %0 = "graph.erf"(%x) : (tensor<16xbf16>) -> tensor<16xbf16>
  return %0 : tensor<16xbf16>
}
