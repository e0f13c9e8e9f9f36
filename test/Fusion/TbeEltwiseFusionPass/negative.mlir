// What TbeEltwiseFusionPass must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --TbeEltwiseFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --TbeEltwiseFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// One elementwise op between non-elementwise ops: nothing to fuse with (no match, nothing logged).
// CHECK-LABEL: func.func @alone
// CHECK-NOT:     call
// CHECK:         "graph.matmul"
// CHECK-NEXT:    "graph.relu"
// CHECK-NEXT:    "graph.softmax"
// WHY: UBFusionPass[TbeEltwiseFusionPass]: pattern=TbeEltwiseFusion, matched_times=0, effected_times=0
func.func @alone(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// exp and add are neighbours, but the path exp -> softmax -> add leaves the group: the kernel would
// depend on itself.
// CHECK-LABEL: func.func @cycle
// CHECK-NOT:     call
// CHECK:         "graph.exp"
// CHECK-NEXT:    "graph.softmax"
// CHECK-NEXT:    "graph.add"
// WHY: TbeEltwiseFusionPass: pattern TbeEltwiseFusion not fused at {{.*}}negative.mlir:{{[0-9]+}}:{{[0-9]+}}: graph.add at {{.*}} cannot join it: graph.softmax at {{.*}} lies on a path between ops of the kernel (outside it, the kernel would depend on itself)
// WHY: TbeEltwiseFusionPass: pattern TbeEltwiseFusion not fused at {{.*}}: graph.exp at {{.*}} cannot join it: graph.softmax {{.*}} lies on a path between ops of the kernel
// WHY: UBFusionPass[TbeEltwiseFusionPass]: pattern=TbeEltwiseFusion, matched_times=2, effected_times=0
func.func @cycle(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.add"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Seven ops: the first six fill a kernel (the default max-ops=6); the seventh is left alone, its only
// neighbour being in that kernel.
// CHECK-LABEL: func.func @over_the_limit
// CHECK-NEXT:    %[[K:.*]] = call @over_the_limit_ub_eltwise_0(%arg0)
// CHECK-NEXT:    %[[L:.*]] = "graph.neg"(%[[K]])
// CHECK-NEXT:    return %[[L]]
// WHY: TbeEltwiseFusionPass: graph.neg at {{.*}}negative.mlir:[[#LINE:]]:{{[0-9]+}} stays out of the kernel of graph.abs at {{.*}}: the kernel already has max-ops=6 ops
// WHY: TbeEltwiseFusionPass: pattern TbeEltwiseFusion not fused at {{.*}}negative.mlir:[[#LINE]]:{{[0-9]+}}: graph.tanh at {{.*}} cannot join it: it is already in another UB kernel
// WHY: UBFusionPass[TbeEltwiseFusionPass]: pattern=TbeEltwiseFusion, matched_times=2, effected_times=1
func.func @over_the_limit(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.abs"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %1 = "graph.sqrt"(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = "graph.exp"(%1) : (tensor<16xf32>) -> tensor<16xf32>
  %3 = "graph.sin"(%2) : (tensor<16xf32>) -> tensor<16xf32>
  %4 = "graph.cos"(%3) : (tensor<16xf32>) -> tensor<16xf32>
  %5 = "graph.tanh"(%4) : (tensor<16xf32>) -> tensor<16xf32>
  %6 = "graph.neg"(%5) : (tensor<16xf32>) -> tensor<16xf32>
  return %6 : tensor<16xf32>
}

// -----

// Functions that are already kernels are left alone.
// CHECK-LABEL: func.func private @done
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.neg"
// CHECK-NEXT:    return
func.func private @done(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
