// The cluster-op flags: enable_cluster_ops, disable_cluster_ops and enable_cluster_ops_only (which replaces the list).
// RUN: graphfuse-opt --graph-kernel-cluster %s | FileCheck %s --check-prefix=DEFAULT
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-cluster{disable-ops=Exp})' %s | FileCheck %s --check-prefix=DISABLE
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-cluster{only-ops=Exp,Neg enable-ops=Add})' %s | FileCheck %s --check-prefix=ONLY
// RUN: graphfuse-opt --graph-kernel-fusion --graph-kernel-flags="--opt_level=1 --disable_cluster_ops=Exp" %s | FileCheck %s --check-prefix=DISABLE
// RUN: graphfuse-opt --graph-kernel-fusion --graph-kernel-flags="--opt_level=1 --enable_cluster_ops_only=Exp,Neg --enable_cluster_ops=Add" %s | FileCheck %s --check-prefix=ONLY
// RUN: graphfuse-opt --log-level=debug %s -o /dev/null --pass-pipeline='builtin.module(graph-kernel-cluster{disable-ops=Exp})' 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-cluster{enable-ops=NoSuchOp})' %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// DEFAULT-LABEL: func.func private @flags_kernel_0
// DEFAULT-SAME:    graph.kernel_ops = ["graph.add", "graph.exp", "graph.neg"]

// Without exp in the list, add and neg are separated by it and no kernel has two ops.
// DISABLE-LABEL: func.func @flags
// DISABLE-NEXT:    "graph.add"
// DISABLE-NEXT:    "graph.exp"
// DISABLE-NEXT:    "graph.neg"
// DISABLE-NOT:     graph.kernel
// WHY: graph-kernel-cluster: graph.exp at {{.*}}flags.mlir:{{[0-9]+}}:8 is not a cluster op (see enable_cluster_ops)

// With only exp and neg (enable_cluster_ops ignored), add stays outside.
// ONLY-LABEL: func.func @flags
// ONLY-NEXT:    "graph.add"
// ONLY-NEXT:    call @flags_kernel_0
// ONLY-LABEL: func.func private @flags_kernel_0
// ONLY-SAME:    graph.kernel_ops = ["graph.exp", "graph.neg"]

// UNKNOWN: [WARNING] enable_cluster_ops: unknown operator 'NoSuchOp' is ignored
func.func @flags(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.neg"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
