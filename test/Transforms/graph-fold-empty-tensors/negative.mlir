// graph-fold-empty-tensors leaves graphs without empty tensors alone, and refuses with one located error naming
// the op what it cannot fold: an op reading an empty tensor into a non-empty result with no fold, an empty value
// of dynamic type that is used, a collective of an empty tensor.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics --graph-fold-empty-tensors %s | FileCheck %s
// RUN: not graphfuse-opt --split-input-file --graph-fold-empty-tensors %s 2>&1 | FileCheck %s --check-prefix=ERROR

// Nothing empty: nothing changes.
// CHECK-LABEL: func.func @nothing_empty
// CHECK-NEXT:    %[[S:.*]] = "graph.reduce_sum"(%arg0)
// CHECK-NEXT:    %[[C:.*]] = "graph.concat"(%arg0, %arg0)
// CHECK-NEXT:    return %[[S]], %[[C]]
func.func @nothing_empty(%x: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  %1 = "graph.concat"(%x, %x) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<3xf32>, tensor<4x3xf32>
}

// -----

// Attention over an empty head dim weighs the values equally: no fold makes that from the values.
func.func @attention_over_an_empty_head_dim(%q: tensor<1x1x4x0xf32>, %k: tensor<1x1x3x0xf32>, %v: tensor<1x1x3x8xf32>) -> tensor<1x1x4x8xf32> {
  // ERROR: negative.mlir:[[@LINE+2]]:8: error: 'graph.flash_attention' reads the empty tensor<1x1x4x0xf32> (operand #0) into the non-empty tensor<1x1x4x8xf32>, and graph-fold-empty-tensors has no fold for it: the CPU code generator does not compile empty tensors
  // expected-error @+1 {{'graph.flash_attention' reads the empty tensor<1x1x4x0xf32> (operand #0) into the non-empty tensor<1x1x4x8xf32>}}
  %0 = "graph.flash_attention"(%q, %k, %v) {scale = 1.0 : f32} : (tensor<1x1x4x0xf32>, tensor<1x1x3x0xf32>, tensor<1x1x3x8xf32>) -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// No constant has a dynamic type.
func.func @dynamic_and_empty(%x: tensor<?x0xf32>) -> tensor<?x0xf32> {
  // ERROR: negative.mlir:[[@LINE+2]]:8: error: 'graph.exp' makes the empty tensor<?x0xf32>, whose dynamic dimension no constant can stand for
  // expected-error @+1 {{'graph.exp' makes the empty tensor<?x0xf32>, whose dynamic dimension no constant can stand for}}
  %0 = "graph.exp"(%x) : (tensor<?x0xf32>) -> tensor<?x0xf32>
  return %0 : tensor<?x0xf32>
}

// -----

// Every rank must call the same collectives: none is folded away.
func.func @collective(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // ERROR: negative.mlir:[[@LINE+2]]:8: error: 'graph.all_reduce' communicates an empty tensor
  // expected-error @+1 {{'graph.all_reduce' communicates an empty tensor}}
  %0 = "graph.all_reduce"(%x) {group_size = 2 : i64} : (tensor<0x4xf32>) -> tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

// reduce_max has no identity: the dialect rejects it over an empty axis before any pass runs, as PyTorch does.
func.func @reduce_max_of_nothing(%x: tensor<3x0xf32>) -> tensor<3xf32> {
  // ERROR: negative.mlir:[[@LINE+2]]:8: error: 'graph.reduce_max' cannot reduce an empty axis with reduce_max
  // expected-error @+1 {{'graph.reduce_max' cannot reduce an empty axis with reduce_max}}
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
