// graph-to-linalg lowers each reduction to one linalg.generic with reduction iterators into a
// linalg.fill-initialised destination (the identity of the combining op); with keep_dims the result map
// (static shapes) writes the kept dims only and a tensor.expand_shape adds the size-1 dims back, so the result
// map stays a projected permutation that tiling can handle (dynamic shapes write the size-1 dims at index 0
// instead, leaving no dynamically sized intermediate); reduce_mean divides the sum by the count in a second, elementwise generic.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @sum_rows
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]]], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[IN]] fastmath<contract> : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<4xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     graph.
// UPSTREAM-LABEL: func.func @sum_rows
// UPSTREAM:         linalg.generic
func.func @sum_rows(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Maximum from -inf, NaN-propagating; keep_dims: reduce into the kept dims, then expand_shape.
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[KEPT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @max_keep_dims
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID3]], #[[KEPT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<4x8x16xf32>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[ACC]], %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NEXT:    } -> tensor<4x8xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[R]] {{\[}}[0], [1, 2]] output_shape [4, 8, 1] : tensor<4x8xf32> into tensor<4x8x1xf32>
// CHECK-NEXT:    return %[[E]]
// UPSTREAM-LABEL: func.func @max_keep_dims
// UPSTREAM:         linalg.generic
func.func @max_keep_dims(%x: tensor<4x8x16xf32>) -> tensor<4x8x1xf32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x8x16xf32>) -> tensor<4x8x1xf32>
  return %0 : tensor<4x8x1xf32>
}

// -----

// Every axis of an integer tensor: a 0-D result, the type's maximum as the identity of min.
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @min_all_i32
// CHECK:         %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[MAX]] : i32) outs(%{{.*}} : tensor<i32>) -> tensor<i32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[ALL]]], iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<4x8xi32>) outs(%[[INIT]] : tensor<i32>)
// CHECK:           arith.minsi
// CHECK:         } -> tensor<i32>
// UPSTREAM-LABEL: func.func @min_all_i32
func.func @min_all_i32(%x: tensor<4x8xi32>) -> tensor<i32> {
  %0 = "graph.reduce_min"(%x) {axes = array<i64: 0, 1>, keep_dims = false} : (tensor<4x8xi32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// f16: summed in f32, multiplied by 1 / count (2 * 4) in f32 and rounded once, then the kept dims expanded.
// CHECK-DAG: #[[MID:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @mean_f16
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[MID]]], iterator_types = ["reduction", "parallel", "reduction"]} ins(%arg0 : tensor<2x6x4xf16>) outs(%[[INIT]] : tensor<6xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[W]] fastmath<contract> : f32
// CHECK:         %[[INV:.*]] = arith.constant 1.250000e-01 : f32
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<6xf32>) outs(%{{.*}} : tensor<6xf16>)
// CHECK-NEXT:    ^bb0(%[[T:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[Q:.*]] = arith.mulf %[[T]], %[[INV]] fastmath<contract> : f32
// CHECK-NEXT:      %[[N:.*]] = arith.truncf %[[Q]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[N]] : f16
// CHECK:         tensor.expand_shape %[[MEAN]] {{\[}}[0, 1, 2]] output_shape [1, 6, 1] : tensor<6xf16> into tensor<1x6x1xf16>
func.func @mean_f16(%x: tensor<2x6x4xf16>) -> tensor<1x6x1xf16> {
  %0 = "graph.reduce_mean"(%x) {axes = array<i64: 0, 2>, keep_dims = true} : (tensor<2x6x4xf16>) -> tensor<1x6x1xf16>
  return %0 : tensor<1x6x1xf16>
}

// -----

// A dynamic reduced axis: the count comes from tensor.dim; one reciprocal of it, a multiply per element.
// CHECK-LABEL: func.func @mean_dynamic
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<?x8xf32>)
// CHECK:         %[[DIM:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x8xf32>
// CHECK-NEXT:    %[[I:.*]] = arith.index_cast %[[DIM]] : index to i64
// CHECK-NEXT:    %[[COUNT:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK:         %[[INV:.*]] = arith.divf %{{.*}}, %[[COUNT]] : f32
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<8xf32>)
// CHECK-NOT:       arith.divf
// CHECK:           arith.mulf %{{.*}}, %[[INV]] fastmath<contract> : f32
// UPSTREAM-LABEL: func.func @mean_dynamic
func.func @mean_dynamic(%x: tensor<?x8xf32>) -> tensor<8xf32> {
  %0 = "graph.reduce_mean"(%x) {axes = array<i64: 0>, keep_dims = false} : (tensor<?x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// No axes: the operand itself.
// CHECK-LABEL: func.func @sum_no_axes
// CHECK-NEXT:    return %arg0 : tensor<4x8xi8>
// UPSTREAM-LABEL: func.func @sum_no_axes
func.func @sum_no_axes(%x: tensor<4x8xi8>) -> tensor<4x8xi8> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64>, keep_dims = false} : (tensor<4x8xi8>) -> tensor<4x8xi8>
  return %0 : tensor<4x8xi8>
}
