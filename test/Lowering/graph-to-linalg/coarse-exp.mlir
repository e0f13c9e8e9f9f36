// graph.coarse_exp (the exponential of PyTorch's CPU attention for f16/bf16) lowers to its defining steps:
// three FMAs for the cubic, a fourth that puts 2^23 (t' + 127) in a float, truncation to i32 and the bits read
// back as f32; no fast-math flag anywhere (a contracted multiply would change the bits it reproduces).
// Its verifier's f32-only rule: test/Dialect/invalid-elementwise.mlir.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s

// CHECK-LABEL: func.func @coarse
// CHECK-NOT:     fastmath
// CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[T:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK:           %[[FLOOR:.*]] = math.floor %[[T]] : f32
// CHECK:           %[[F:.*]] = arith.subf %[[T]], %[[FLOOR]] : f32
// CHECK:           %[[C3:.*]] = math.fma %[[F]], %{{.*}}, %{{.*}} : f32
// CHECK:           %[[C2:.*]] = math.fma %[[F]], %[[C3]], %{{.*}} : f32
// CHECK:           %[[C:.*]] = math.fma %[[F]], %[[C2]], %{{.*}} : f32
// CHECK:           %[[SHIFTED:.*]] = arith.subf %[[T]], %[[C]] : f32
// CHECK:           %[[BIASED:.*]] = math.fma %{{.*}}, %[[SHIFTED]], %{{.*}} : f32
// CHECK:           %[[SAFE:.*]] = arith.select %{{.*}}, %[[BIASED]], %{{.*}} : f32
// CHECK:           %[[I:.*]] = arith.fptosi %[[SAFE]] : f32 to i32
// CHECK:           arith.bitcast %[[I]] : i32 to f32
// CHECK:           arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NOT:     fastmath
func.func @coarse(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.coarse_exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Negative: the exp beside it keeps its own (accurate) lowering; only coarse_exp takes the coarse steps.
// CHECK-LABEL: func.func @exp_stays_accurate
// CHECK-NOT:     math.fma
// CHECK:         linalg.yield
func.func @exp_stays_accurate(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

