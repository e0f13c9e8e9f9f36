// reshape(reshape(x)) => one reshape; a reshape to the operand's own type is removed.
// RUN: graphfuse-opt --split-input-file --shape_reshape %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --shape_reshape %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%arg0) : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    return %[[R]]
// COUNTS: GraphFusionPass[shape_reshape]: pattern=ReshapeReshape, matched_times=2, effected_times=2
func.func @chain(%x: tensor<2x4x8xf32>) -> tensor<8x8xf32> {
  %0 = "graph.reshape"(%x) : (tensor<2x4x8xf32>) -> tensor<64xf32>
  %1 = "graph.reshape"(%0) : (tensor<64xf32>) -> tensor<4x16xf32>
  %2 = "graph.reshape"(%1) : (tensor<4x16xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}

// -----

// A round trip and a same-type reshape vanish.
// CHECK-LABEL: func.func @identities
// CHECK-NEXT:    return %arg0, %arg1
func.func @identities(%x: tensor<4x8xi32>, %y: tensor<?x8xf16>) -> (tensor<4x8xi32>, tensor<?x8xf16>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xi32>) -> tensor<32xi32>
  %1 = "graph.reshape"(%0) : (tensor<32xi32>) -> tensor<4x8xi32>
  %2 = "graph.reshape"(%y) : (tensor<?x8xf16>) -> tensor<?x8xf16>
  return %1, %2 : tensor<4x8xi32>, tensor<?x8xf16>
}

// -----

// A dynamic chain: the combined reshape is checked by the catalog (one dynamic dim allowed).
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%arg0) : (tensor<?x4x8xf32>) -> tensor<?x32xf32>
// CHECK-NEXT:    return %[[R]]
func.func @dynamic(%x: tensor<?x4x8xf32>) -> tensor<?x32xf32> {
  %0 = "graph.reshape"(%x) : (tensor<?x4x8xf32>) -> tensor<?xf32>
  %1 = "graph.reshape"(%0) : (tensor<?xf32>) -> tensor<?x32xf32>
  return %1 : tensor<?x32xf32>
}
