// The 11-op reproducer of the graph-kernel clustering cycle: on this small valid graph, graph-kernel-fusion at
// opt levels 1-3 (and so graphfuse.compile, graphfuse-run) built invalid IR, "operand #1 does not dominate this
// use": mul and maximum formed one kernel, the sigmoid of the mul stayed outside, and the add reading the
// sigmoid joined the same kernel through the ops it shares with the first one, so the kernel's call needed the
// sigmoid, which needed the call. Random graphs of a dozen ops never had this shape; the structure family of the
// differential fuzzer (heavy reuse, diamonds, long chains) meets it in a quarter of its small graphs.
// graphfuse-opt and graphfuse-run verify after every pass: invalid IR fails the RUN line itself.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=1})' %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=2})' %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=3})' %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=0})' %s \
// RUN:   | FileCheck %s --check-prefix=UNFUSED
// RUN: graphfuse-run %s --opt-level 0 --check | FileCheck %s --check-prefix=CHECKED
// RUN: graphfuse-run %s --opt-level 1 --check | FileCheck %s --check-prefix=CHECKED
// RUN: graphfuse-run %s --opt-level 2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: graphfuse-run %s --opt-level 3 --check | FileCheck %s --check-prefix=CHECKED

// The sigmoid sits between two kernels: the first produces its operand, the second reads its result.
// CHECK-LABEL: func.func @sigmoid_between_two_kernels
// CHECK:         %[[FIRST:.*]]:2 = call @sigmoid_between_two_kernels_kernel_{{[0-9]+}}(%arg0)
// CHECK-NEXT:    %[[SIGMOID:.*]] = "graph.sigmoid"(%[[FIRST]]#0)
// CHECK-NEXT:    %[[SECOND:.*]] = call @sigmoid_between_two_kernels_kernel_{{[0-9]+}}({{.*}}%[[SIGMOID]]{{.*}})
// CHECK-NEXT:    return %[[SECOND]]
// UNFUSED-LABEL: func.func @sigmoid_between_two_kernels
// UNFUSED-NOT:   call
// CHECKED: check result 0: {{.*}}: ok
func.func @sigmoid_between_two_kernels(%a0: tensor<16x16xf32>, %a1: tensor<16x16xf32>, %a2: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %v15 = "graph.mul"(%a0, %a0) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v18 = "graph.sigmoid"(%v15) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %v21 = "graph.relu"(%a0) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %v25 = "graph.minimum"(%a0, %v21) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v28 = "graph.add"(%v25, %v18) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v30 = "graph.maximum"(%v15, %a0) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v33 = "graph.abs"(%v28) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %v35 = "graph.minimum"(%v30, %v25) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v36 = "graph.sub"(%v35, %v21) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v37 = "graph.tanh"(%v33) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %v38 = "graph.sub"(%v36, %v37) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %v38 : tensor<16x16xf32>
}
