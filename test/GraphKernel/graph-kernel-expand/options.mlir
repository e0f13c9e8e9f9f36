// enable-ops / disable-ops / only-ops (the seed's enable_expand_ops, disable_expand_ops and
// enable_expand_ops_only): MindSpore names (any case) or dialect names.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-expand{enable-ops=Softmax,layer_norm})' %s | FileCheck %s --check-prefix=ENABLE
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-expand{disable-ops=GeLU,square})' %s | FileCheck %s --check-prefix=DISABLE
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu enable-ops=SOFTMAX disable-ops=Softmax,Sigmoid})' %s | FileCheck %s --check-prefix=BOTH
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-expand{only-ops=Sigmoid,LayerNorm enable-ops=Softmax disable-ops=Sigmoid})' %s | FileCheck %s --check-prefix=ONLY
// Unknown names, and ops without an expander, warn and are ignored.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-expand{enable-ops=Sofmax,MatMul})' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-expand{only-ops=Nope})' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN-ONLY
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-expand{backend=gpu})' %s 2>&1 | FileCheck %s --check-prefix=BACKEND
// RUN: graphfuse-opt --graph-kernel-expand --mlir-pass-statistics %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// ENABLE-LABEL: func.func @mixed
// ENABLE-NOT:     "graph.square"
// ENABLE:         "graph.sigmoid"
// ENABLE-NOT:     "graph.{{softmax|gelu|layer_norm|relu}}"
// ENABLE:         return

// DISABLE-LABEL: func.func @mixed
// DISABLE:         "graph.square"
// DISABLE:         "graph.sigmoid"
// DISABLE:         "graph.softmax"
// DISABLE:         "graph.gelu"
// DISABLE:         "graph.layer_norm"
// DISABLE-NOT:     "graph.relu"
// DISABLE:         return

// Disabling wins over enabling.
// BOTH-LABEL: func.func @mixed
// BOTH-NOT:     "graph.square"
// BOTH:         "graph.sigmoid"
// BOTH:         "graph.softmax"
// BOTH-NOT:     "graph.gelu"
// BOTH:         "graph.layer_norm"
// BOTH:         return

// only-ops alone decides: the enable/disable lists and the defaults are ignored.
// ONLY-LABEL: func.func @mixed
// ONLY-NEXT:    "graph.square"
// ONLY-NOT:     "graph.sigmoid"
// ONLY:         "graph.softmax"
// ONLY-NEXT:    "graph.gelu"
// ONLY-NOT:     "graph.layer_norm"
// ONLY:         "graph.relu"
// ONLY-NEXT:    return

// UNKNOWN: [WARNING] enable_expand_ops: unknown operator 'Sofmax' is ignored
// UNKNOWN: [WARNING] enable_expand_ops: matmul cannot be expanded (no expander) and is ignored
// UNKNOWN-LABEL: func.func @mixed
// UNKNOWN:         "graph.sigmoid"
// UNKNOWN:         "graph.softmax"

// UNKNOWN-ONLY: [WARNING] enable_expand_ops_only: unknown operator 'Nope' is ignored
// UNKNOWN-ONLY-LABEL: func.func @mixed
// UNKNOWN-ONLY-NEXT:    "graph.square"

// BACKEND: option 'backend' of pass 'graph-kernel-expand' expects one of cpu, npu, got 'gpu'

// square, gelu and relu expand on the CPU by default.
// STATS:       graph-kernel-expand
// STATS-NEXT:    (S) 3 num-expanded - Number of composite ops expanded into basic ops
func.func @mixed(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.gelu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "graph.layer_norm"(%x, %g, %g) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %5 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
