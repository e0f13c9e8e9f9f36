// Off by default, as in CANN: graph-fusion runs it only when enabled.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-fusion)' %s | FileCheck %s --check-prefix=OFF
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-fusion{enable-pass=SoftmaxSmallOpFusionPass})' %s | FileCheck %s --check-prefix=ON
// A fusion_switch.cfg turns it on by name, also after "ALL": "off".
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"Switch":{"GraphFusion":{"ALL":"off","SoftmaxSmallOpFusionPass":"on"}}}' > %t/on.cfg
// RUN: graphfuse-opt --fusion-switch-file=%t/on.cfg --pass-pipeline='builtin.module(graph-fusion)' %s | FileCheck %s --check-prefix=ON
// RUN: echo '{"Switch":{"GraphFusion":{"ALL":"on"}}}' > %t/all.cfg
// RUN: graphfuse-opt --fusion-switch-file=%t/all.cfg --pass-pipeline='builtin.module(graph-fusion)' %s | FileCheck %s --check-prefix=ON
// The seed's name for it, SoftmaxFusionPass, switches it too: the seed's own config turns it off under ALL on.
// RUN: echo '{"Switch":{"GraphFusion":{"ALL":"on","SoftmaxFusionPass":"off"}}}' > %t/seed.cfg
// RUN: graphfuse-opt --fusion-switch-file=%t/seed.cfg --pass-pipeline='builtin.module(graph-fusion)' %s 2>&1 | FileCheck %s --check-prefix=OFF --implicit-check-not=warning
// RUN: graphfuse-opt --graph-kernel-flags=--enable_pass=SoftmaxFusionPass --strict-flags --pass-pipeline='builtin.module(graph-fusion)' %s | FileCheck %s --check-prefix=ON
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-fusion{enable-pass=SoftmaxFusionPass})' %s | FileCheck %s --check-prefix=ON
// RUN: graphfuse-opt --pass-pipeline='builtin.module(SoftmaxFusionPass)' %s | FileCheck %s --check-prefix=ON

// OFF-LABEL: func.func @softmax
// OFF:         "graph.reduce_max"
// OFF-NOT:     graph.softmax
// ON-LABEL: func.func @softmax
// ON-NEXT:    "graph.softmax"(%arg0) {axis = 1 : i64}
// ON-NEXT:    return
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %4 = "graph.div"(%2, %3) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}
