// --mlir-pass-statistics counts every rewrite; unsafe-math=false counts only the safe ones.
// RUN: graphfuse-opt --graph-kernel-simplify --mlir-pass-statistics %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=false})' --mlir-pass-statistics %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=SAFE
// RUN: graphfuse-opt --graph-kernel-simplify --graph-kernel-simplify --mlir-pass-statistics %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=false})' --dump-pass-pipeline %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=maybe})' %s 2>&1 | FileCheck %s --check-prefix=BAD

// STATS:         ... Pass statistics report ...
// STATS:       graph-kernel-simplify
// STATS-NEXT:    (S) 6 num-simplified - Number of arithmetic simplifications

// SAFE:        graph-kernel-simplify
// SAFE-NEXT:     (S) 3 num-simplified - Number of arithmetic simplifications

// A second run finds nothing left to do.
// TWICE:       graph-kernel-simplify
// TWICE-NEXT:    (S) 6 num-simplified
// TWICE-NEXT:  graph-kernel-simplify
// TWICE-NEXT:    (S) 0 num-simplified

// PIPE: graph-kernel-simplify{unsafe-math=false}
// BAD: option 'unsafe-math' of pass 'graph-kernel-simplify' expects true or false, got 'maybe'

// Safe: x * 1, x - neg(y), pow(x, 2).  Unsafe: exp(log x), x / 3, reciprocal(reciprocal x).
func.func @counted(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %three = arith.constant dense<3.0> : tensor<f32>
  %0 = "graph.mul"(%x, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %n = "graph.neg"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.sub"(%0, %n) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.pow"(%x, %two) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %l = "graph.log"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.exp"(%l) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.div"(%y, %three) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r = "graph.reciprocal"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "graph.reciprocal"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
