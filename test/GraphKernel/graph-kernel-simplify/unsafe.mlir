// exp(log x), log(exp x), reciprocal(reciprocal x) -> x and pow(x, 0.5) -> sqrt(x)
// change values: only with unsafe-math (the default), never with unsafe-math=false.
// RUN: graphfuse-opt --split-input-file --graph-kernel-simplify %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=true})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=false})' %s | FileCheck %s --check-prefix=SAFE

// CHECK-LABEL: func.func @exp_log
// CHECK-NEXT:    return %arg0
// SAFE-LABEL:  func.func @exp_log
// SAFE-NEXT:     %[[L:.*]] = "graph.log"(%arg0)
// SAFE-NEXT:     %[[E:.*]] = "graph.exp"(%[[L]])
// SAFE-NEXT:     return %[[E]]
func.func @exp_log(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.log"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// The inner op stays for its other users.
// CHECK-LABEL: func.func @log_exp_shared
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    return %arg0, %[[E]]
// SAFE-LABEL:  func.func @log_exp_shared
// SAFE-NEXT:     %[[E:.*]] = "graph.exp"(%arg0)
// SAFE-NEXT:     %[[L:.*]] = "graph.log"(%[[E]])
// SAFE-NEXT:     return %[[L]], %[[E]]
func.func @log_exp_shared(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %0 = "graph.exp"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  %1 = "graph.log"(%0) : (tensor<4xf16>) -> tensor<4xf16>
  return %1, %0 : tensor<4xf16>, tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @reciprocal_reciprocal
// CHECK-NEXT:    return %arg0
// SAFE-LABEL:  func.func @reciprocal_reciprocal
// SAFE-COUNT-2:  "graph.reciprocal"
func.func @reciprocal_reciprocal(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = "graph.reciprocal"(%x) : (tensor<4xbf16>) -> tensor<4xbf16>
  %1 = "graph.reciprocal"(%0) : (tensor<4xbf16>) -> tensor<4xbf16>
  return %1 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @pow_half
// CHECK-NEXT:    %[[S:.*]] = "graph.sqrt"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[S]]
// SAFE-LABEL:  func.func @pow_half
// SAFE:          "graph.pow"
func.func @pow_half(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = arith.constant dense<0.5> : tensor<8xf32>
  %0 = "graph.pow"(%x, %half) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A chain collapses from the inside out: exp(log(exp(log x))) -> x.
// CHECK-LABEL: func.func @nested
// CHECK-NEXT:    return %arg0
// SAFE-LABEL:  func.func @nested
// SAFE-COUNT-2:  "graph.log"
func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.log"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.log"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.exp"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Negative: exp(exp x), log(sqrt x), reciprocal(rsqrt x) and sqrt(x) * sqrt(x) stay.
// CHECK-LABEL: func.func @unsafe_negative
// CHECK-COUNT-2: "graph.exp"
// CHECK:         "graph.sqrt"
// CHECK-NEXT:    "graph.log"
// CHECK-NEXT:    "graph.rsqrt"
// CHECK-NEXT:    "graph.reciprocal"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    return
func.func @unsafe_negative(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.log"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.rsqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "graph.reciprocal"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = "graph.mul"(%2, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %3, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
