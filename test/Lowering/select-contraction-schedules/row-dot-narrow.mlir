// select-contraction-schedules on few-row products of narrow weights (a decoded token's linear layers): the row
// dots read a bf16 weight, or an int8 weight cast to bf16 then f32, as it is stored and widen each value in the
// product's body (int8 -> bf16 -> f32 folded into one sitofp); the widening copies are erased.  With dot
// products too: the row dots, never a copy of the weight into panels.
// RUN: env GRAPHFUSE_VECTOR_BITS=512 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(select-contraction-schedules{threads=2 dot-products=bf16})' %s | FileCheck %s
// RUN: env GRAPHFUSE_VECTOR_BITS=512 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(select-contraction-schedules{threads=2 dot-products=none})' %s | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// The importer's bf16 linear layer: bf16 operands into f32.
// CHECK-LABEL: func.func @bf16_weight
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x256xbf16>, tensor<128x256xbf16>) outs(%{{.*}} : tensor<1x128xf32>)
// CHECK-SAME:      sequence = "row_dot_16_lanes"
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:           arith.mulf
// CHECK:           arith.addf
func.func @bf16_weight(%x: tensor<1x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<1x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<1x256xbf16>, tensor<128x256xbf16>)
      outs(%fill : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %p : tensor<1x128xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// An int8 weight cast to bf16 (weight-only quantization: linear(x, weight.to(bf16))): read as int8, converted
// once to f32 in the body (exact: bf16 holds every int8); the bf16 copy of the weight is gone.
// CHECK-LABEL: func.func @int8_weight
// CHECK-NOT:     tensor<128x256xbf16>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x256xbf16>, tensor<128x256xi8>) outs(%{{.*}} : tensor<4x128xf32>)
// CHECK-SAME:      sequence = "row_dot_16_lanes"
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:           arith.sitofp %{{.*}} : i8 to f32
// CHECK-NOT:     tensor<128x256xbf16>
func.func @int8_weight(%x: tensor<4x256xbf16>, %w: tensor<128x256xi8>) -> tensor<4x128xf32> {
  %e0 = tensor.empty() : tensor<128x256xbf16>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<128x256xi8>) outs(%e0 : tensor<128x256xbf16>) {
  ^bb0(%in: i8, %out: bf16):
    %v = arith.sitofp %in : i8 to bf16
    linalg.yield %v : bf16
  } -> tensor<128x256xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128xf32>) -> tensor<4x128xf32>
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %wb : tensor<4x256xbf16>, tensor<128x256xbf16>)
      outs(%fill : tensor<4x128xf32>) -> tensor<4x128xf32>
  return %p : tensor<4x128xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Negative: a constant weight is packed when compiling (not the row dots).
// CHECK-LABEL: func.func @constant_weight
// CHECK-NOT:     row_dot
func.func @constant_weight(%x: tensor<1x4xbf16>) -> tensor<1x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<1x4xbf16>, tensor<2x4xbf16>)
      outs(%fill : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %p : tensor<1x2xf32>
}
