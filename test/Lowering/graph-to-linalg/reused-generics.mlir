// graph-to-linalg lowers an elementwise op computing what an op before it computed (same name, attributes and
// types) as a clone of that op's generic: its own operands and init, its own location on the generic and on
// every op of the body. Ops whose bodies differ are built on their own: other attributes, other types, and
// pow, whose body depends on the value of its exponent.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg --mlir-print-debuginfo %s | FileCheck %s

// CHECK-DAG:   #[[FIRST:loc[0-9]+]] = loc("first.py":1:1)
// CHECK-DAG:   #[[SECOND:loc[0-9]+]] = loc("second.py":2:2)
// CHECK-DAG:   #[[THIRD:loc[0-9]+]] = loc("third.py":3:3)
// CHECK-LABEL: func.func @twice(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4x8xf32> loc(#[[FIRST]])
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>) outs(%[[E0]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f32 loc("first.py":1:1), %{{.*}}: f32 loc("first.py":1:1)):
// CHECK:           arith.bitcast {{.*}} loc(#[[FIRST]])
// CHECK:         } -> tensor<4x8xf32> loc(#[[FIRST]])
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<4x8xf32> loc(#[[SECOND]])
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4x8xf32>) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f32 loc("second.py":2:2), %{{.*}}: f32 loc("second.py":2:2)):
// CHECK-NOT:       loc(#[[FIRST]])
// CHECK:           arith.bitcast {{.*}} loc(#[[SECOND]])
// CHECK:         } -> tensor<4x8xf32> loc(#[[SECOND]])
// CHECK:         %[[E2:.*]] = tensor.empty() : tensor<4x8xf32> loc(#[[THIRD]])
// CHECK:         linalg.generic {{.*}} ins(%arg1 : tensor<4x8xf32>) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f32 loc("third.py":3:3), %{{.*}}: f32 loc("third.py":3:3)):
// CHECK-NOT:       loc(#[[FIRST]])
// CHECK:           arith.bitcast {{.*}} loc(#[[THIRD]])
func.func @twice(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("first.py":1:1)
  %b = "graph.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("second.py":2:2)
  %c = "graph.exp"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("third.py":3:3)
  return %b, %c : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Negative: gelu exactly (erf: 1/sqrt 2) and with tanh (sqrt(2/pi)), a sum of f32 and of i32, x ** 2 and x ** 3: six bodies built.
// CHECK-LABEL: func.func @different(
// CHECK:         linalg.generic
// CHECK:           arith.constant 0.707106769 : f32
// CHECK:         linalg.generic
// CHECK:           arith.constant 0.797884583 : f32
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK:           arith.addi
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X2:[a-z0-9_]+]]: f32{{.*}}):
// CHECK-NEXT:      %[[SQUARE:.*]] = arith.mulf %[[X2]], %[[X2]]
// CHECK-NEXT:      linalg.yield %[[SQUARE]]
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X3:[a-z0-9_]+]]: f32{{.*}}):
// CHECK-NEXT:      %[[P2:.*]] = arith.mulf %[[X3]], %[[X3]]
// CHECK-NEXT:      %[[P3:.*]] = arith.mulf %[[P2]], %[[X3]]
// CHECK-NEXT:      linalg.yield %[[P3]]
func.func @different(%x: tensor<8xf32>, %i: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>) {
  %g = "graph.gelu"(%x) {approximate = "none"} : (tensor<8xf32>) -> tensor<8xf32>
  %t = "graph.gelu"(%x) {approximate = "tanh"} : (tensor<8xf32>) -> tensor<8xf32>
  %s = "graph.add"(%x, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %j = "graph.add"(%i, %i) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %three = arith.constant dense<3.0> : tensor<f32>
  %p2 = "graph.pow"(%x, %two) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %p3 = "graph.pow"(%x, %three) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %g, %t, %s, %j, %p2, %p3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>
}
