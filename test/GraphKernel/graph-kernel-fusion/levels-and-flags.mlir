// graph-kernel-fusion: what each opt level runs, its options, the MindSpore flags that mirror them, and its log.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=0})' %s | FileCheck %s --check-prefix=OFF
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=1})' %s | FileCheck %s --check-prefix=L1
// RUN: graphfuse-opt --graph-kernel-fusion --graph-kernel-flags="--opt_level=1" %s | FileCheck %s --check-prefix=L1
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=3})' %s | FileCheck %s --check-prefix=L3
// RUN: graphfuse-opt --graph-kernel-fusion --graph-kernel-flags="--opt_level=1 --disable_expand_ops=Square" %s | FileCheck %s --check-prefix=NO-SQUARE
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=1 disable-expand-ops=Square})' %s | FileCheck %s --check-prefix=NO-SQUARE
// RUN: graphfuse-opt --graph-kernel-fusion --graph-kernel-flags="--opt_level=1 --disable_pass=graph_kernel.graph-kernel-cluster" %s | FileCheck %s --check-prefix=NO-CLUSTER
// RUN: graphfuse-opt --graph-kernel-fusion --graph-kernel-flags="--opt_level=2" --log-level=info %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: graphfuse-opt --graph-kernel-fusion --graph-kernel-flags="--enable_expand_ops=NoSuchOp" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: not graphfuse-opt --graph-kernel-fusion --graph-kernel-flags="--enable_packet_ops_only=Add" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACKET
// RUN: env MS_DEV_GRAPH_KERNEL_FLAGS="--disable_packet_ops=Mul" not graphfuse-opt --graph-kernel-fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACKET-ENV
// The default level is MindSpore's: 2 (its CSE and simplification steps run).
// RUN: graphfuse-opt --graph-kernel-fusion --log-level=info %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-fusion{opt-level=7})' %s 2>&1 | FileCheck %s --check-prefix=BAD

// OFF-LABEL: func.func @block
// OFF-NEXT:    "graph.add"
// OFF-NOT:     graph.kernel

// Level 1 expands square into mul and clusters it with the add and the reduction; the sub broadcasts
// the reduced value back, so it starts a second kernel.
// L1-LABEL: func.func @block
// L1-NEXT:    %[[K:.*]]:2 = call @block_kernel_0(%arg0, %arg1)
// L1-NEXT:    %[[Y:.*]] = call @block_kernel_1(%[[K]]#0, %[[K]]#1)
// L1-NEXT:    return %[[Y]]
// L1-LABEL: func.func private @block_kernel_0
// L1-SAME:    graph.fusion_kind = "reduction", graph.kernel, graph.kernel_ops = ["graph.add", "graph.mul", "graph.reduce_max"]
// L1-LABEL: func.func private @block_kernel_1
// L1-SAME:    graph.kernel_ops = ["graph.sub", "graph.exp"]

// Level 3 also stitches the softmax (a reduction broadcast back) into the same kernel.
// L3-LABEL: func.func @block
// L3-NEXT:    call @block_kernel_0
// L3-NEXT:    return
// L3:         graph.fusion_kind = "stitch"

// NO-SQUARE: "graph.square"

// NO-CLUSTER-LABEL: func.func @block
// NO-CLUSTER-NOT: call
// NO-CLUSTER-NOT: graph.kernel

// LOG: [INFO] graph kernel passes: graph-kernel-expand,graph-kernel-cse,graph-kernel-simplify,graph-kernel-canonicalize,graph-kernel-dce,graph-kernel-cluster,graph-kernel-stitch,graph-kernel-parallel
// LOG: [INFO] Run graph kernel pass graph-kernel-expand in {{[0-9.]+}} us
// LOG: [INFO] Run graph kernel pass graph-kernel-simplify in {{[0-9.]+}} us
// LOG: [INFO] Run graph kernel pass graph-kernel-cluster in {{[0-9.]+}} us
// LOG: [INFO] graph kernel pass graph-kernel-stitch is disabled
// LOG: [INFO] graph kernel pass graph-kernel-parallel is disabled

// WARN: [WARNING] enable_expand_ops: unknown operator 'NoSuchOp' is ignored

// PACKET: graphfuse-opt: error: --graph-kernel-flags: flag '--enable_packet_ops_only' does not apply to the CPU and emulated-NPU backends: kernel packet is a feature of MindSpore's Ascend backend (docs/fusion-switches.md)
// PACKET-ENV: error: {{.*}}flag '--disable_packet_ops' does not apply to the CPU and emulated-NPU backends

// DEFAULT: [INFO] Run graph kernel pass graph-kernel-cse in {{[0-9.]+}} us
// DEFAULT: [INFO] Run graph kernel pass graph-kernel-simplify in {{[0-9.]+}} us

// BAD: graphfuse-opt: error: invalid pass pipeline 'builtin.module(graph-kernel-fusion{opt-level=7})': option 'opt-level' of pass 'graph-kernel-fusion': opt level must be an integer in [0, 3], got 7

func.func @block(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.square"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.reduce_max"(%1) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %3 = "graph.sub"(%1, %2) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %4 = "graph.exp"(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}
