// graph-decompose rewrites fused, composite and compound graph ops into the simpler graph ops that
// graph-to-linalg lowers (elementwise ops, reductions, matmul, shape ops), to a fixed point, keeping the numbers
// of each op's reference (f16/bf16 computed in f32 and rounded where the reference rounds).
// RUN: graphfuse-opt --split-input-file --graph-decompose %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-decompose)' %s | FileCheck %s
// The count includes the composites a decomposition emits (softmax, rms_norm, layer_norm), decomposed in turn.
// RUN: graphfuse-opt --split-input-file --graph-decompose --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: graph-decompose
// STATS-NEXT: (S) 15 num-decomposed

// The matmul keeps its transpose flags; a 1-D bias along the last axis is a broadcast add.
// CHECK-LABEL: func.func @matmul_bias_add
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%arg0, %arg1) {transpose_b = true} : (tensor<2x8x4xf32>, tensor<16x4xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.add"(%[[M]], %arg2) : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    return %[[R]]
func.func @matmul_bias_add(%a: tensor<2x8x4xf32>, %b: tensor<16x4xf32>, %bias: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %0 = "graph.matmul_bias_add"(%a, %b, %bias) {transpose_b = true} : (tensor<2x8x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// The matmul result is rounded to f16 (its own result type), then gelu: the activation is not decomposed.
// CHECK-LABEL: func.func @matmul_gelu
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%arg0, %arg1) : (tensor<2x4x8xf16>, tensor<8x16xf16>) -> tensor<2x4x16xf16>
// CHECK-NEXT:    %[[R:.*]] = "graph.gelu"(%[[M]]) {approximate = "tanh"} : (tensor<2x4x16xf16>) -> tensor<2x4x16xf16>
// CHECK-NEXT:    return %[[R]]
func.func @matmul_gelu(%a: tensor<2x4x8xf16>, %b: tensor<8x16xf16>) -> tensor<2x4x16xf16> {
  %0 = "graph.matmul_gelu"(%a, %b) {approximate = "tanh"} : (tensor<2x4x8xf16>, tensor<8x16xf16>) -> tensor<2x4x16xf16>
  return %0 : tensor<2x4x16xf16>
}

// -----

// Every result of the fused op is replaced by a piece of the split.
// CHECK-LABEL: func.func @matmul_split
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8x24xf32>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[S:.*]]:3 = "graph.split"(%[[M]]) {axis = 1 : i64, sizes = array<i64: 8, 8, 8>} : (tensor<4x24xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    return %[[S]]#0, %[[S]]#1, %[[S]]#2
func.func @matmul_split(%a: tensor<4x8xf32>, %b: tensor<8x24xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:3 = "graph.matmul_split"(%a, %b) {sizes = array<i64: 8, 8, 8>} : (tensor<4x8xf32>, tensor<8x24xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The first half goes through silu, the second multiplies it.
// CHECK-LABEL: func.func @swiglu
// CHECK-NEXT:    %[[S:.*]]:2 = "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 8, 8>} : (tensor<4x16xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>)
// CHECK-NEXT:    %[[A:.*]] = "graph.silu"(%[[S]]#0) : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%[[A]], %[[S]]#1) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    return %[[R]]
func.func @swiglu(%x: tensor<4x16xbf16>) -> tensor<4x8xbf16> {
  %0 = "graph.swiglu"(%x) {axis = -1 : i64} : (tensor<4x16xbf16>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// Untiled attention: q k^T, times the scale in f32 (0.3 is no f16 value) rounded once, + mask, softmax
// (itself decomposed, in f32), @ v.
// CHECK-LABEL: func.func @flash_attention
// CHECK-NEXT:    %[[QK:.*]] = "graph.matmul"(%arg0, %arg1) {transpose_b = true} : (tensor<2x8x16xf16>, tensor<2x8x16xf16>) -> tensor<2x8x8xf16>
// CHECK-NEXT:    %[[QK32:.*]] = "graph.cast"(%[[QK]]) : (tensor<2x8x8xf16>) -> tensor<2x8x8xf32>
// CHECK-NEXT:    %[[SCALE:.*]] = arith.constant dense<3.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[MUL:.*]] = "graph.mul"(%[[QK32]], %[[SCALE]])
// CHECK-NEXT:    %[[SCALED:.*]] = "graph.cast"(%[[MUL]]) : (tensor<2x8x8xf32>) -> tensor<2x8x8xf16>
// CHECK-NEXT:    %[[MASKED:.*]] = "graph.add"(%[[SCALED]], %arg3) : (tensor<2x8x8xf16>, tensor<8x8xf16>) -> tensor<2x8x8xf16>
// CHECK-NEXT:    %[[X:.*]] = "graph.cast"(%[[MASKED]]) : (tensor<2x8x8xf16>) -> tensor<2x8x8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = "graph.reduce_max"(%[[X]]) {axes = array<i64: 2>, keep_dims = true}
// CHECK-NEXT:    %[[SUB:.*]] = "graph.sub"(%[[X]], %[[MAX]])
// CHECK-NEXT:    %[[EXP:.*]] = "graph.exp"(%[[SUB]])
// CHECK-NEXT:    %[[SUM:.*]] = "graph.reduce_sum"(%[[EXP]]) {axes = array<i64: 2>, keep_dims = true}
// CHECK-NEXT:    %[[P32:.*]] = "graph.div"(%[[EXP]], %[[SUM]])
// CHECK-NEXT:    %[[P:.*]] = "graph.cast"(%[[P32]]) : (tensor<2x8x8xf32>) -> tensor<2x8x8xf16>
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul"(%[[P]], %arg2) : (tensor<2x8x8xf16>, tensor<2x8x16xf16>) -> tensor<2x8x16xf16>
// CHECK-NEXT:    return %[[R]]
func.func @flash_attention(%q: tensor<2x8x16xf16>, %k: tensor<2x8x16xf16>, %v: tensor<2x8x16xf16>, %mask: tensor<8x8xf16>) -> tensor<2x8x16xf16> {
  %0 = "graph.flash_attention"(%q, %k, %v, %mask) {scale = 3.000000e-01 : f32} : (tensor<2x8x16xf16>, tensor<2x8x16xf16>, tensor<2x8x16xf16>, tensor<8x8xf16>) -> tensor<2x8x16xf16>
  return %0 : tensor<2x8x16xf16>
}

// -----

// PyTorch's attention: safe_softmax's probabilities, softmax's steps then 0 where the row's maximum is -inf
// (every key masked); the select keeps softmax's NaN for rows with NaN or +inf.
// CHECK-LABEL: func.func @safe_flash_attention
// CHECK:         %[[MASKED:.*]] = "graph.add"(%{{.*}}, %arg3) : (tensor<2x8x8xf32>, tensor<2x1x8xf32>) -> tensor<2x8x8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = "graph.reduce_max"(%[[MASKED]]) {axes = array<i64: 2>, keep_dims = true}
// CHECK-NEXT:    %[[SUB:.*]] = "graph.sub"(%[[MASKED]], %[[MAX]])
// CHECK-NEXT:    %[[EXP:.*]] = "graph.exp"(%[[SUB]])
// CHECK-NEXT:    %[[SUM:.*]] = "graph.reduce_sum"(%[[EXP]]) {axes = array<i64: 2>, keep_dims = true}
// CHECK-NEXT:    %[[P:.*]] = "graph.div"(%[[EXP]], %[[SUM]])
// CHECK-NEXT:    %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : tensor<f32>
// CHECK-NEXT:    %[[ALL_MASKED:.*]] = "graph.equal"(%[[MAX]], %[[NEG_INF]]) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xi1>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[SAFE:.*]] = "graph.select"(%[[ALL_MASKED]], %[[ZERO]], %[[P]]) : (tensor<2x8x1xi1>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul"(%[[SAFE]], %arg2)
// CHECK-NEXT:    return %[[R]]
func.func @safe_flash_attention(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>, %mask: tensor<2x1x8xf32>) -> tensor<2x8x16xf32> {
  %0 = "graph.flash_attention"(%q, %k, %v, %mask) {scale = 2.500000e-01 : f32, safe_softmax = true} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x1x8xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// In f32: x * scale + offset, rounded half to even; the saturating cast clips to [-128, 127] and maps NaN to 0.
// CHECK-LABEL: func.func @quantize
// CHECK-NEXT:    %[[X:.*]] = "graph.cast"(%arg0) : (tensor<4x16xf16>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%[[X]], %arg1) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%[[M]], %arg2) : (tensor<4x16xf32>, tensor<1xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.round"(%[[A]]) : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[Q:.*]] = "graph.cast"(%[[R]]) : (tensor<4x16xf32>) -> tensor<4x16xi8>
// CHECK-NEXT:    return %[[Q]]
func.func @quantize(%x: tensor<4x16xf16>, %scale: tensor<16xf32>, %offset: tensor<1xf32>) -> tensor<4x16xi8> {
  %0 = "graph.quantize"(%x, %scale, %offset) : (tensor<4x16xf16>, tensor<16xf32>, tensor<1xf32>) -> tensor<4x16xi8>
  return %0 : tensor<4x16xi8>
}

// -----

// scale = max(|x * smooth|, row) / 127 (0 for a zero row, whose q is 0); q = round(x / scale) saturated.
// CHECK-LABEL: func.func @dynamic_quant
// CHECK-NEXT:    %[[X:.*]] = "graph.mul"(%arg0, %arg1) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %[[ABS:.*]] = "graph.abs"(%[[X]])
// CHECK-NEXT:    %[[MAX:.*]] = "graph.reduce_max"(%[[ABS]]) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[MAX0:.*]] = "graph.maximum"(%[[MAX]], %[[ZERO]])
// CHECK-NEXT:    %[[C127:.*]] = arith.constant dense<1.270000e+02> : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = "graph.div"(%[[MAX0]], %[[C127]])
// CHECK-NEXT:    %[[Z:.*]] = "graph.equal"(%[[S]], %[[ZERO]]) : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xi1>
// CHECK-NEXT:    %[[SAFE:.*]] = "graph.select"(%[[Z]], %[[ONE]], %[[S]])
// CHECK-NEXT:    %[[DIV:.*]] = "graph.div"(%[[X]], %[[SAFE]])
// CHECK-NEXT:    %[[SEL:.*]] = "graph.select"(%[[Z]], %[[ZERO]], %[[DIV]])
// CHECK-NEXT:    %[[R:.*]] = "graph.round"(%[[SEL]])
// CHECK-NEXT:    %[[Q:.*]] = "graph.cast"(%[[R]]) : (tensor<4x16xf32>) -> tensor<4x16xi8>
// CHECK-NEXT:    %[[SCALE:.*]] = "graph.reshape"(%[[S]]) : (tensor<4x1xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return %[[Q]], %[[SCALE]]
func.func @dynamic_quant(%x: tensor<4x16xf32>, %smooth: tensor<16xf32>) -> (tensor<4x16xi8>, tensor<4xf32>) {
  %0:2 = "graph.dynamic_quant"(%x, %smooth) : (tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4x16xi8>, tensor<4xf32>
}

// -----

// Mixed precision: bf16 inputs with an f32 gamma add and normalize in f32 (the sum result is f32);
// the normalized result is cast back to bf16.
// CHECK-LABEL: func.func @add_rms_norm_mixed
// CHECK-NEXT:    %[[A:.*]] = "graph.cast"(%arg0) : (tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.cast"(%arg1) : (tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[SUM:.*]] = "graph.add"(%[[A]], %[[B]]) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[SQ:.*]] = "graph.mul"(%[[SUM]], %[[SUM]])
// CHECK-NEXT:    "graph.reduce_sum"(%[[SQ]]) {axes = array<i64: 1>, keep_dims = true}
// CHECK:         %[[RMS:.*]] = "graph.sqrt"
// CHECK-NEXT:    %[[N:.*]] = "graph.div"(%[[SUM]], %[[RMS]])
// CHECK-NEXT:    %[[Y32:.*]] = "graph.mul"(%[[N]], %arg2) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = "graph.cast"(%[[Y32]]) : (tensor<2x8xf32>) -> tensor<2x8xbf16>
// CHECK-NEXT:    return %[[Y]], %[[SUM]] : tensor<2x8xbf16>, tensor<2x8xf32>
func.func @add_rms_norm_mixed(%x1: tensor<2x8xbf16>, %x2: tensor<2x8xbf16>, %gamma: tensor<8xf32>) -> (tensor<2x8xbf16>, tensor<2x8xf32>) {
  %0:2 = "graph.add_rms_norm"(%x1, %x2, %gamma) {epsilon = 9.99999997E-7 : f32} : (tensor<2x8xbf16>, tensor<2x8xbf16>, tensor<8xf32>) -> (tensor<2x8xbf16>, tensor<2x8xf32>)
  return %0#0, %0#1 : tensor<2x8xbf16>, tensor<2x8xf32>
}

// -----

// The residual sum is the second result and feeds the (decomposed) layer norm.
// CHECK-LABEL: func.func @add_layer_norm
// CHECK-NEXT:    %[[SUM:.*]] = "graph.add"(%arg0, %arg1) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK:         "graph.reduce_sum"(%[[SUM]]) {axes = array<i64: 1>, keep_dims = true}
// CHECK:         %[[DEV:.*]] = "graph.sub"(%[[SUM]],
// CHECK:         %[[N:.*]] = "graph.div"(%[[DEV]],
// CHECK-NEXT:    %[[G:.*]] = "graph.mul"(%[[N]], %arg2)
// CHECK-NEXT:    %[[Y:.*]] = "graph.add"(%[[G]], %arg3)
// CHECK-NEXT:    return %[[Y]], %[[SUM]] : tensor<2x8xf32>, tensor<2x8xf32>
// CHECK-NOT:     graph.layer_norm
func.func @add_layer_norm(%x1: tensor<2x8xf32>, %x2: tensor<2x8xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.add_layer_norm"(%x1, %x2, %gamma, %beta) {begin_norm_axis = -1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  return %0#0, %0#1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Composites of graph-kernel-expand use its expanders: add_n sums left to right.
// CHECK-LABEL: func.func @add_n
// CHECK-NEXT:    %[[S:.*]] = "graph.add"(%arg0, %arg1)
// CHECK-NEXT:    %[[R:.*]] = "graph.add"(%[[S]], %arg2)
// CHECK-NEXT:    return %[[R]]
func.func @add_n(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add_n"(%a, %b, %c) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Left whole: the rms_norm it needs does not decompose over a dynamic last dim (its mean divides by the
// static size), so add_rms_norm stays as it is rather than half decomposed; graph-to-linalg{strict} reports it.
// CHECK-LABEL: func.func @add_rms_norm_dynamic
// CHECK-NEXT:    %[[R:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2) {epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
func.func @add_rms_norm_dynamic(%x1: tensor<4x?xf32>, %x2: tensor<4x?xf32>, %gamma: tensor<?xf32>) -> (tensor<4x?xf32>, tensor<4x?xf32>) {
  %0:2 = "graph.add_rms_norm"(%x1, %x2, %gamma) {epsilon = 9.99999997E-7 : f32} : (tensor<4x?xf32>, tensor<4x?xf32>, tensor<?xf32>) -> (tensor<4x?xf32>, tensor<4x?xf32>)
  return %0#0, %0#1 : tensor<4x?xf32>, tensor<4x?xf32>
}

// -----

// Left whole: the halves of a dynamic axis have no static sizes to split it with.
// CHECK-LABEL: func.func @swiglu_dynamic
// CHECK-NEXT:    %[[R:.*]] = "graph.swiglu"(%arg0) {axis = -1 : i64} : (tensor<4x?xf32>) -> tensor<4x?xf32>
// CHECK-NEXT:    return %[[R]]
func.func @swiglu_dynamic(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %0 = "graph.swiglu"(%x) {axis = -1 : i64} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}
