// TbeEltwiseFusionPass: connected elementwise ops become one UB kernel (a private graph.kernel function).
// RUN: graphfuse-opt --split-input-file --TbeEltwiseFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(TbeEltwiseFusionPass{max-ops=3})' %s | FileCheck %s --check-prefix=LIMIT
// RUN: graphfuse-opt --split-input-file --TbeEltwiseFusionPass --log-level=info %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// A chain: sub -> exp -> mul; the intermediates stay in UB, only the last value goes out.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[K:.*]] = call @chain_ub_eltwise_0(%arg0, %arg1)
// CHECK-NEXT:    return %[[K]]
// CHECK-LABEL: func.func private @chain_ub_eltwise_0
// CHECK-SAME:    graph.fusion_kind = "ub_eltwise", graph.kernel, graph.kernel_ops = ["graph.sub", "graph.exp", "graph.mul"]
// CHECK-NEXT:    "graph.sub"(%arg0, %arg1)
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    return
// LOG: [INFO] Run graph kernel pass TbeEltwiseFusionPass in {{[0-9.]+}} us
// LOG-NEXT: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], UBFusionPass[TbeEltwiseFusionPass]: pattern=TbeEltwiseFusion, matched_times=1, effected_times=1
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.sub"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%1, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A DAG (two branches joined), a broadcast operand, and an intermediate also used outside: one kernel, two results.
// CHECK-LABEL: func.func @dag
// CHECK-NEXT:    %[[K:.*]]:2 = call @dag_ub_eltwise_0(%arg0, %arg1)
// CHECK-NEXT:    return %[[K]]#1, %[[K]]#0
// CHECK-LABEL: func.func private @dag_ub_eltwise_0
// CHECK-SAME:    -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-SAME:    graph.kernel_ops = ["graph.exp", "graph.neg", "graph.add", "graph.mul"]
// LOG: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], UBFusionPass[TbeEltwiseFusionPass]: pattern=TbeEltwiseFusion, matched_times=1, effected_times=1
func.func @dag(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.add"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.mul"(%2, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %3, %0 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Five ops in a chain: the default limit (6) takes all; max-ops=3 cuts them into 3 + 2.
// CHECK-LABEL: func.func @long_chain
// CHECK-NEXT:    call @long_chain_ub_eltwise_0
// CHECK-NEXT:    return
// LIMIT-LABEL: func.func @long_chain
// LIMIT-NEXT:    %[[A:.*]] = call @long_chain_ub_eltwise_0(%arg0)
// LIMIT-NEXT:    %[[B:.*]] = call @long_chain_ub_eltwise_1(%[[A]])
// LIMIT-NEXT:    return %[[B]]
// LIMIT:       func.func private @long_chain_ub_eltwise_0
// LIMIT-SAME:    graph.kernel_ops = ["graph.abs", "graph.sqrt", "graph.exp"]
// LIMIT:       func.func private @long_chain_ub_eltwise_1
// LIMIT-SAME:    graph.kernel_ops = ["graph.tanh", "graph.neg"]
// LOG: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], UBFusionPass[TbeEltwiseFusionPass]: pattern=TbeEltwiseFusion, matched_times=1, effected_times=1
func.func @long_chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.abs"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %1 = "graph.sqrt"(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = "graph.exp"(%1) : (tensor<16xf32>) -> tensor<16xf32>
  %3 = "graph.tanh"(%2) : (tensor<16xf32>) -> tensor<16xf32>
  %4 = "graph.neg"(%3) : (tensor<16xf32>) -> tensor<16xf32>
  return %4 : tensor<16xf32>
}

// -----

// Casts, comparisons and select are elementwise too.
// CHECK-LABEL: func.func @mixed_types
// CHECK-NEXT:    call @mixed_types_ub_eltwise_0
// CHECK:       graph.kernel_ops = ["graph.greater", "graph.select", "graph.cast"]
func.func @mixed_types(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf16> {
  %0 = "graph.greater"(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %1 = "graph.select"(%0, %x, %y) : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = "graph.cast"(%1) : (tensor<8xf32>) -> tensor<8xf16>
  return %2 : tensor<8xf16>
}
