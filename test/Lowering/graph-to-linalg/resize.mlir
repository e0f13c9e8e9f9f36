// graph-to-linalg on graph.resize: a linalg.generic over the result whose body extracts the taps from the
// operand at positions read from 1-D i64 constants (through the result's index on the resized dim); bilinear
// weighs them by 1-D f32 constants, along W first and then along H, in f32, rounded once to the result type.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @bilinear
// UPSTREAM: tensor.extract
// UPSTREAM-LABEL: func.func @nearest

// 5x6 -> 10x4 in f16: rows at half steps (the first at weight 1: its centre falls before row 0), columns at 1.5.
// CHECK-DAG: #[[H:.*]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @bilinear
// CHECK-DAG:     %[[H0:.*]] = arith.constant dense<[0, 0, 0, 1, 1, 2, 2, 3, 3, 4]> : tensor<10xi64>
// CHECK-DAG:     %[[B0:.*]] = arith.constant dense<[1.000000e+00, 7.500000e-01, 2.500000e-01, {{.*}}]> : tensor<10xf32>
// CHECK-DAG:     %[[H1:.*]] = arith.constant dense<[1, 1, 1, 2, 2, 3, 3, 4, 4, 4]> : tensor<10xi64>
// CHECK-DAG:     %[[W0:.*]] = arith.constant dense<[0, 1, 3, 4]> : tensor<4xi64>
// CHECK-DAG:     %[[W1:.*]] = arith.constant dense<[1, 2, 4, 5]> : tensor<4xi64>
// CHECK:         linalg.generic {indexing_maps = [#[[H]], #[[H]], #[[H]], #[[H]], #[[W]], #[[W]], #[[W]], #[[W]], #[[ALL]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[H0]], %[[B0]], %[[H1]], %{{.*}}, %[[W0]], %{{.*}}, %[[W1]], %{{.*}} : tensor<10xi64>, tensor<10xf32>, tensor<10xi64>, tensor<10xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>)
// CHECK-SAME:      outs(%{{.*}} : tensor<2x3x10x4xf16>)
// CHECK:         ^bb0(%[[R0:.*]]: i64, %[[RW0:.*]]: f32, %[[R1:.*]]: i64, %[[RW1:.*]]: f32, %[[C0:.*]]: i64, %[[CW0:.*]]: f32, %[[C1:.*]]: i64, %[[CW1:.*]]: f32, %{{.*}}: f16):
// CHECK-DAG:       %[[I0:.*]] = arith.index_cast %[[R0]] : i64 to index
// CHECK-DAG:       %[[J0:.*]] = arith.index_cast %[[C0]] : i64 to index
// CHECK-DAG:       %[[J1:.*]] = arith.index_cast %[[C1]] : i64 to index
// CHECK:           %[[N:.*]] = linalg.index 0 : index
// CHECK:           %[[C:.*]] = linalg.index 1 : index
// CHECK:           %[[X00:.*]] = tensor.extract %arg0[%[[N]], %[[C]], %[[I0]], %[[J0]]] : tensor<2x3x5x6xf16>
// CHECK:           %[[F00:.*]] = arith.extf %[[X00]] : f16 to f32
// CHECK:           %[[P00:.*]] = arith.mulf %[[F00]], %[[CW0]] : f32
// CHECK:           %[[X01:.*]] = tensor.extract %arg0[%[[N]], %[[C]], %[[I0]], %[[J1]]] : tensor<2x3x5x6xf16>
// CHECK:           %[[F01:.*]] = arith.extf %[[X01]] : f16 to f32
// CHECK:           %[[P01:.*]] = arith.mulf %[[F01]], %[[CW1]] : f32
// CHECK:           %[[T0:.*]] = arith.addf %[[P00]], %[[P01]] : f32
// CHECK:           %[[U0:.*]] = arith.mulf %[[T0]], %[[RW0]] : f32
// CHECK:           %[[T1:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:           %[[U1:.*]] = arith.mulf %[[T1]], %[[RW1]] : f32
// CHECK:           %[[SUM:.*]] = arith.addf %[[U0]], %[[U1]] : f32
// CHECK:           %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK:           linalg.yield %[[OUT]] : f16
// CHECK-NOT:     graph.resize
func.func @bilinear(%x: tensor<2x3x5x6xf16>) -> tensor<2x3x10x4xf16> {
  %0 = "graph.resize"(%x) {size = array<i64: 10, 4>, mode = "bilinear"} : (tensor<2x3x5x6xf16>) -> tensor<2x3x10x4xf16>
  return %0 : tensor<2x3x10x4xf16>
}

// -----

// Nearest along the last dim of integers under a dynamic batch: one extract, no arithmetic.
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @nearest
// CHECK-DAG:     %[[POS:.*]] = arith.constant dense<[0, 1, 3]> : tensor<3xi64>
// CHECK-DAG:     %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x5xi64>
// CHECK:         %[[INIT:.*]] = tensor.empty(%[[D]]) : tensor<?x3xi64>
// CHECK:         linalg.generic {indexing_maps = [#[[LAST]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[POS]] : tensor<3xi64>) outs(%[[INIT]] : tensor<?x3xi64>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT:      %[[J:.*]] = arith.index_cast %[[P]] : i64 to index
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %arg0[%[[I]], %[[J]]] : tensor<?x5xi64>
// CHECK-NEXT:      linalg.yield %[[V]] : i64
func.func @nearest(%x: tensor<?x5xi64>) -> tensor<?x3xi64> {
  %0 = "graph.resize"(%x) {size = array<i64: 3>} : (tensor<?x5xi64>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}
