// Kernels planned earlier in the same pass count as single nodes in the cycle check.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(TbeEltwiseFusionPass{max-ops=2})' %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(TbeEltwiseFusionPass{max-ops=2})' --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// exp and add fill the first kernel (max-ops=2).  neg and mul have no path between them through other
// ops, but once exp and add are one kernel, neg -> kernel -> mul is one: the second kernel is refused.
// CHECK-LABEL: func.func @crossing
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg1)
// CHECK-NEXT:    %[[K:.*]]:2 = call @crossing_ub_eltwise_0(%arg0, %[[N]])
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%[[N]], %[[K]]#0)
// CHECK-NEXT:    return %[[K]]#1, %[[M]]
// CHECK-NOT:   ub_eltwise_1
// WHY: TbeEltwiseFusionPass: pattern TbeEltwiseFusion not fused at {{.*}}kernel-cycle.mlir:[[#@LINE+4]]:{{[0-9]+}}: graph.add at {{.*}} cannot join it: it is already in another UB kernel; graph.mul at {{.*}} cannot join it: graph.add at {{.*}} lies on a path between ops of the kernel (outside it, the kernel would depend on itself)
// WHY: UBFusionPass[TbeEltwiseFusionPass]: pattern=TbeEltwiseFusion, matched_times=3, effected_times=1
func.func @crossing(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a1 = "graph.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %b2 = "graph.neg"(%y) : (tensor<8xf32>) -> tensor<8xf32>
  %a2 = "graph.add"(%a1, %b2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %b1 = "graph.mul"(%b2, %a1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %a2, %b1 : tensor<8xf32>, tensor<8xf32>
}
