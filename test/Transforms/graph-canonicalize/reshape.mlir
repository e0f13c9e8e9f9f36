// reshape and broadcast_to: same-type ops vanish, chains collapse.
// RUN: graphfuse-opt --split-input-file --graph-canonicalize %s | FileCheck %s

// CHECK-LABEL: func.func @reshape_same_type
// CHECK-NEXT:    return %arg0
func.func @reshape_same_type(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A dynamic dimension kept as it is: still the operand.
// CHECK-LABEL: func.func @reshape_same_dynamic_type
// CHECK-NEXT:    return %arg0
func.func @reshape_same_dynamic_type(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = "graph.reshape"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<2x16xf32>
// CHECK-NEXT:    return %[[R]]
func.func @reshape_chain(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
  %1 = "graph.reshape"(%0) : (tensor<32xf32>) -> tensor<8x4xf32>
  %2 = "graph.reshape"(%1) : (tensor<8x4xf32>) -> tensor<2x16xf32>
  return %2 : tensor<2x16xf32>
}

// -----

// A round trip is the operand itself.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-NEXT:    return %arg0
func.func @reshape_round_trip(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %0 = "graph.reshape"(%x) : (tensor<4x8xi32>) -> tensor<32xi32>
  %1 = "graph.reshape"(%0) : (tensor<32xi32>) -> tensor<4x8xi32>
  return %1 : tensor<4x8xi32>
}

// -----

// The inner reshape has another use: it stays, the outer one reads %arg0.
// CHECK-LABEL: func.func @reshape_chain_shared
// CHECK-NEXT:    %[[A:.*]] = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.exp"(%[[A]])
// CHECK-NEXT:    return %arg0, %[[B]]
func.func @reshape_chain_shared(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<32xf32>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
  %1 = "graph.reshape"(%0) : (tensor<32xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%0) : (tensor<32xf32>) -> tensor<32xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<32xf32>
}

// -----

// Locations of the replaced op are kept.
// RUN: graphfuse-opt --split-input-file --graph-canonicalize --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC
// LOC-LABEL: func.func @reshape_chain_loc
// LOC:         "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<8x4xf32> loc(#[[OUTER:loc[0-9]*]])
// LOC:         #[[OUTER]] = loc("outer")
func.func @reshape_chain_loc(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32> loc("inner")
  %1 = "graph.reshape"(%0) : (tensor<32xf32>) -> tensor<8x4xf32> loc("outer")
  return %1 : tensor<8x4xf32>
}

// -----

// Negative: a reshape that changes the shape stays.
// CHECK-LABEL: func.func @reshape_changes_shape
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @reshape_changes_shape(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Negative: a reshape fed by another op is not a chain.
// CHECK-LABEL: func.func @reshape_after_exp
// CHECK-NEXT:    "graph.reshape"
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.reshape"
func.func @reshape_after_exp(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
  %1 = "graph.exp"(%0) : (tensor<32xf32>) -> tensor<32xf32>
  %2 = "graph.reshape"(%1) : (tensor<32xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_same_type
// CHECK-NEXT:    return %arg0
func.func @broadcast_same_type(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.broadcast_to"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_chain
// CHECK-NEXT:    %[[B:.*]] = "graph.broadcast_to"(%arg0) : (tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[B]]
func.func @broadcast_chain(%x: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = "graph.broadcast_to"(%x) : (tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.broadcast_to"(%0) : (tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return %1 : tensor<2x4x8xf32>
}

// -----

// Negative: a real broadcast stays.
// CHECK-LABEL: func.func @broadcast_changes_shape
// CHECK-NEXT:    %[[B:.*]] = "graph.broadcast_to"(%arg0) : (tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[B]]
func.func @broadcast_changes_shape(%x: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.broadcast_to"(%x) : (tensor<1x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
