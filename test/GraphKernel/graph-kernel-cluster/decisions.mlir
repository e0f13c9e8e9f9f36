// Why ops are not fused: cycles, reductions after reductions, broadcasts of reduced values,
// matmul as a non-cluster op, the size cap. The reasons print at --log-level=debug.
// RUN: graphfuse-opt --split-input-file --graph-kernel-cluster %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-kernel-cluster --log-level=debug %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-cluster{stitch})' %s | FileCheck %s --check-prefix=STITCH
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-cluster{limit=2})' %s | FileCheck %s --check-prefix=LIMIT
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-cluster{enable-ops=MatMul})' %s | FileCheck %s --check-prefix=MATMUL

// exp -> softmax (not a cluster op) -> mul, with exp also feeding mul: joining mul to exp's kernel
// would put softmax on a path between two ops of one kernel.
// CHECK-LABEL: func.func @cycle
// CHECK-NEXT:    %[[K:.*]] = call @cycle_kernel_0(%arg0)
// CHECK-NEXT:    %[[S:.*]] = "graph.softmax"(%[[K]])
// CHECK-NEXT:    "graph.mul"(%[[S]], %[[K]])
// WHY: graph-kernel-cluster: graph.mul at {{.*}}decisions.mlir:[[@LINE+6]]:8 did not join the kernel of graph.exp: a path between them runs outside the kernel (the kernel would form a cycle)
func.func @cycle(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = arith.constant dense<1.0> : tensor<4x8xf32>
  %0 = "graph.add"(%x, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.softmax"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.mul"(%2, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}
// The add and exp form a kernel that the mul could not join; the kernel has its own copy of the constant.
// CHECK-LABEL: func.func private @cycle_kernel_0
// CHECK-SAME:    graph.kernel_ops = ["graph.add", "graph.exp"]
// CHECK-NEXT:    arith.constant dense<1.000000e+00>

// -----

// A decomposed softmax: max, sub (broadcasting the max back), exp, sum, div.
// Without stitching, broadcasting a reduced value back ends a kernel: only sub, exp and sum fuse.
// With stitching the whole softmax is one kernel.
// CHECK-LABEL: func.func @softmax_parts
// CHECK-NEXT:    "graph.reduce_max"
// CHECK-NEXT:    call @softmax_parts_kernel_0
// CHECK-NEXT:    "graph.div"
// CHECK-LABEL: func.func private @softmax_parts_kernel_0
// CHECK-SAME:    graph.kernel_ops = ["graph.sub", "graph.exp", "graph.reduce_sum"]
// WHY: graph.sub at {{.*}} did not join the kernel of graph.reduce_max: it broadcasts a reduced value back to the full shape (stitching fusion, opt-level 3)
// STITCH-LABEL: func.func @softmax_parts
// STITCH-NEXT:    call @softmax_parts_kernel_0
// STITCH-NEXT:    return
// STITCH-LABEL: func.func private @softmax_parts_kernel_0
// STITCH-SAME:    graph.fusion_kind = "stitch"
func.func @softmax_parts(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = "graph.sub"(%x, %m) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %e = "graph.exp"(%d) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "graph.reduce_sum"(%e) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %y = "graph.div"(%e, %s) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The size cap: with limit=2 a chain of four ops becomes two kernels.
// LIMIT-LABEL: func.func @long_chain
// LIMIT-NEXT:    call @long_chain_kernel_0
// LIMIT-NEXT:    call @long_chain_kernel_1

func.func @long_chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "graph.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "graph.neg"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "graph.abs"(%1) : (tensor<8xf32>) -> tensor<8xf32>
  %3 = "graph.sqrt"(%2) : (tensor<8xf32>) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}

// -----

// matmul is not a default cluster op; with enable-ops=MatMul it heads a kernel with its epilogue.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    call @matmul_epilogue_kernel_0
// MATMUL-LABEL: func.func @matmul_epilogue
// MATMUL-NEXT:    call @matmul_epilogue_kernel_0
// MATMUL-LABEL: func.func private @matmul_epilogue_kernel_0
// MATMUL-SAME:    graph.fusion_kind = "matmul_epilogue"
// MATMUL-SAME:    graph.kernel_ops = ["graph.matmul", "graph.add", "graph.exp"]
func.func @matmul_epilogue(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = "graph.add"(%0, %c) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %2 = "graph.exp"(%1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
