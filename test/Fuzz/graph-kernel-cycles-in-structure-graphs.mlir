// Found by the differential fuzzer's structure family (three graphs of a 200-graph run of
// python -m graphfuse.tools.fuzz on the unfixed clustering, shrunk with --reduce, then by hand): graph-kernel-fusion
// at opt levels 1-3 clustered ops around an op that stays outside every kernel (sin, cos, or an op on other
// shapes) so that a kernel's call read a value defined after it: "operand #N does not dominate this use". Each
// graph has a value read twice, once by the outside op and once by an op that joins a kernel the outside op's
// result feeds.
// graphfuse-opt verifies after every pass: invalid IR fails the RUN line itself; the CHECK lines pin the order.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=1})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=2})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=3})' %s | FileCheck %s
// RUN: graphfuse-run %s --entry add_n_around_a_sine --opt-level 1 --check | FileCheck %s --check-prefix=CHECKED
// RUN: graphfuse-run %s --entry add_n_around_a_sine --opt-level 3 --check | FileCheck %s --check-prefix=CHECKED
// RUN: graphfuse-run %s --entry unit_dims_read_twice --opt-level 1 --check | FileCheck %s --check-prefix=CHECKED
// RUN: graphfuse-run %s --entry unit_dims_read_twice --opt-level 3 --check | FileCheck %s --check-prefix=CHECKED
// RUN: graphfuse-run %s --entry scalar_read_by_two_kernels --opt-level 1 --check | FileCheck %s --check-prefix=CHECKED
// RUN: graphfuse-run %s --entry scalar_read_by_two_kernels --opt-level 3 --check | FileCheck %s --check-prefix=CHECKED
// CHECKED: check result 0: {{.*}}: ok

// add_n (expanded into adds) reads relu(c) and sin(relu(c)): relu may not join the adds' kernel before the sin.
// CHECK-LABEL: func.func @add_n_around_a_sine
// CHECK:         %[[SIN:.*]] = "graph.sin"
// CHECK:         call @add_n_around_a_sine_kernel_{{[0-9]+}}({{.*}}%[[SIN]]
func.func @add_n_around_a_sine(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>, %c: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "graph.sub"(%b, %a) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = "graph.relu"(%c) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = "graph.sin"(%1) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %3 = "graph.add_n"(%0, %2, %1) : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %3 : tensor<4x3xf32>
}

// -----

// f16 with unit dims: the 1x1 sub is read by the 1x1 squared_difference and by the 8x1 mul.
// CHECK-LABEL: func.func @unit_dims_read_twice
// CHECK:         %[[SQUARED:.*]] = "graph.squared_difference"
// CHECK:         call @unit_dims_read_twice_kernel_{{[0-9]+}}({{.*}}%[[SQUARED]]
func.func @unit_dims_read_twice(%a: tensor<8x1xf16>, %b: tensor<8x1xf16>, %c: tensor<1x1xf16>) -> tensor<8x1xf16> {
  %cst = arith.constant dense<0.75> : tensor<1x1xf16>
  %0 = "graph.add"(%a, %b) : (tensor<8x1xf16>, tensor<8x1xf16>) -> tensor<8x1xf16>
  %1 = "graph.sub"(%c, %cst) : (tensor<1x1xf16>, tensor<1x1xf16>) -> tensor<1x1xf16>
  %2 = "graph.squared_difference"(%1, %cst) : (tensor<1x1xf16>, tensor<1x1xf16>) -> tensor<1x1xf16>
  %3 = "graph.minimum"(%2, %0) : (tensor<1x1xf16>, tensor<8x1xf16>) -> tensor<8x1xf16>
  %4 = "graph.mul"(%3, %1) : (tensor<8x1xf16>, tensor<1x1xf16>) -> tensor<8x1xf16>
  return %4 : tensor<8x1xf16>
}

// -----

// A scalar read by a kernel and, through cos, by another: diamonds of vector ops around it.
// CHECK-LABEL: func.func @scalar_read_by_two_kernels
// CHECK:         %[[COS:.*]] = "graph.cos"
// CHECK:         call @scalar_read_by_two_kernels_kernel_{{[0-9]+}}({{.*}}%[[COS]]
func.func @scalar_read_by_two_kernels(%s: tensor<f32>, %t: tensor<f32>, %a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.maximum"(%s, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "graph.cos"(%0) : (tensor<f32>) -> tensor<f32>
  %2 = "graph.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.maximum"(%0, %2) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.sub"(%c, %d) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = "graph.mul"(%4, %1) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = "graph.squared_difference"(%4, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = "graph.mul"(%6, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = "graph.squared_difference"(%7, %5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = "graph.add"(%3, %8) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %9 : tensor<4xf32>
}
