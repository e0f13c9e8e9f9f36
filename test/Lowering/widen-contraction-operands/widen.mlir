// widen-contraction-operands: a matmul or batched matmul (or a static contraction, made one first) of bf16/f16
// operands into f32 that no dot instruction computes reads f32 copies of its operands; a bf16 matmul of whole pairs
// of K with bf16 dot products keeps them.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(widen-contraction-operands{dot-products=bf16})' | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(widen-contraction-operands{dot-products=none})' | FileCheck %s --check-prefix=NONE
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(widen-contraction-operands{dot-products=x})' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: option 'dot-products' of pass 'widen-contraction-operands' must be host, none or instruction sets joined by '+' (bf16, int8), got 'x'

// Attention's batched product in bf16 (32 batches): widened, then an f32 batched matmul.
// CHECK-LABEL: func.func @batched(
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<32x16x8xbf16>) outs(%{{.*}} : tensor<32x16x8xf32>)
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<32x8x16xbf16>) outs(%{{.*}} : tensor<32x8x16xf32>)
// CHECK:         linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<32x16x8xf32>, tensor<32x8x16xf32>)
func.func @batched(%a: tensor<32x16x8xbf16>, %b: tensor<32x8x16xbf16>) -> tensor<32x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<32x16x8xbf16>, tensor<32x8x16xbf16>) outs(%c : tensor<32x16x16xf32>)
      -> tensor<32x16x16xf32>
  return %r : tensor<32x16x16xf32>
}

// -----

// A 2-D bf16 product: kept for the dot products when K is even (d2 read from A's map: A is [K, M] here), widened
// without them; with an odd K, or f16 operands, widened either way.
// CHECK-LABEL: func.func @two_d(
// CHECK:         linalg.matmul {{.*}} ins(%arg0, %arg1 : tensor<6x4xbf16>, tensor<6x8xbf16>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<5x8xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x6xf32>, tensor<6x8xf32>)
// NONE-LABEL:  func.func @two_d(
// NONE:          linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<6x4xf32>, tensor<6x8xf32>)
func.func @two_d(%at: tensor<6x4xbf16>, %b: tensor<6x8xbf16>, %x: tensor<4x5xbf16>, %y: tensor<5x8xbf16>,
                 %h: tensor<4x6xf16>, %g: tensor<6x8xf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r0 = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>,
                                       affine_map<(i, j, k) -> (i, j)>]
      ins(%at, %b : tensor<6x4xbf16>, tensor<6x8xbf16>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = linalg.matmul ins(%x, %y : tensor<4x5xbf16>, tensor<5x8xbf16>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r2 = linalg.matmul ins(%h, %g : tensor<4x6xf16>, tensor<6x8xf16>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r0, %r1, %r2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Negative: an f32 product, and a bf16 product into bf16 (not summed in f32), are left alone.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.matmul ins(%arg0, %arg1 : tensor<4x6xf32>, tensor<6x8xf32>)
// CHECK:         linalg.matmul ins(%arg2, %arg3 : tensor<4x6xbf16>, tensor<6x8xbf16>) outs(%{{.*}} : tensor<4x8xbf16>)
func.func @left_alone(%a: tensor<4x6xf32>, %b: tensor<6x8xf32>, %x: tensor<4x6xbf16>, %y: tensor<6x8xbf16>,
                      %c: tensor<4x8xf32>, %d: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %r0 = linalg.matmul ins(%a, %b : tensor<4x6xf32>, tensor<6x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = linalg.matmul ins(%x, %y : tensor<4x6xbf16>, tensor<6x8xbf16>) outs(%d : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %r0, %r1 : tensor<4x8xf32>, tensor<4x8xbf16>
}

// -----

// A prompt's tokens (rows counted at run time) through a bf16 linear layer: widened too, the rows' copy sized at
// run time, for the f32 products of dynamic rows; other dynamic sizes (K) are left alone.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK:         %[[ROWS:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x64xbf16>
// CHECK:         tensor.empty(%[[ROWS]]) : tensor<?x64xf32>
// CHECK:         linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<32x64xf32>) outs(%arg2 : tensor<?x32xf32>)
// CHECK:         linalg.matmul ins(%arg3, %arg4 : tensor<4x?xbf16>, tensor<?x8xbf16>)
// NONE-LABEL:  func.func @dynamic_rows(
// NONE:          ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<32x64xf32>)
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @dynamic_rows(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>, %c: tensor<?x32xf32>,
                        %p: tensor<4x?xbf16>, %q: tensor<?x8xbf16>, %d: tensor<4x8xf32>) -> (tensor<?x32xf32>, tensor<4x8xf32>) {
  %r0 = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<?x64xbf16>, tensor<32x64xbf16>)
      outs(%c : tensor<?x32xf32>) -> tensor<?x32xf32>
  %r1 = linalg.matmul ins(%p, %q : tensor<4x?xbf16>, tensor<?x8xbf16>) outs(%d : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r0, %r1 : tensor<?x32xf32>, tensor<4x8xf32>
}

// -----

// Contractions graph-to-linalg writes: attention's rank-4 product of bf16 scores (Gemma 2's) becomes the batched
// matmul of its 32 heads, widened; a rank-3 activation by a weight (no batch dims), the 2-D product of its rows,
// kept bf16 for the dot products and widened without them.
// CHECK-LABEL: func.func @contractions(
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32x64x8xbf16>) outs(%{{.*}} : tensor<32x64x8xf32>)
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32x8x64xbf16>) outs(%{{.*}} : tensor<32x8x64xf32>)
// CHECK:         linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<32x64x8xf32>, tensor<32x8x64xf32>)
// CHECK-NOT:     linalg.contract
// CHECK:         linalg.matmul ins(%{{.*}}, %arg3 : tensor<128x16xbf16>, tensor<16x24xbf16>)
// NONE-LABEL:  func.func @contractions(
// NONE:          linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<32x64x8xf32>, tensor<32x8x64xf32>)
// NONE:          linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<128x16xf32>, tensor<16x24xf32>)
#q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @contractions(%q: tensor<4x8x64x8xbf16>, %k: tensor<4x8x8x64xbf16>, %x: tensor<2x64x16xbf16>,
                        %w: tensor<16x24xbf16>) -> (tensor<4x8x64x64xf32>, tensor<2x64x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x64x64xf32>) -> tensor<4x8x64x64xf32>
  %r0 = linalg.contract indexing_maps = [#q, #k, #s] ins(%q, %k : tensor<4x8x64x8xbf16>, tensor<4x8x8x64xbf16>)
      outs(%c : tensor<4x8x64x64xf32>) -> tensor<4x8x64x64xf32>
  %e1 = tensor.empty() : tensor<2x64x24xf32>
  %c1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x64x24xf32>) -> tensor<2x64x24xf32>
  %r1 = linalg.contract indexing_maps = [#x, #w, #y] ins(%x, %w : tensor<2x64x16xbf16>, tensor<16x24xbf16>)
      outs(%c1 : tensor<2x64x24xf32>) -> tensor<2x64x24xf32>
  return %r0, %r1 : tensor<4x8x64x64xf32>, tensor<2x64x24xf32>
}

// -----

// Negative: an f32 contraction, and a bf16 one of a size known only at run time, stay contractions.
// CHECK-LABEL: func.func @contractions_left_alone(
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.contract {{.*}} ins(%arg0, %arg1 : tensor<4x8x64x8xf32>, tensor<4x8x8x64xf32>)
// CHECK:         linalg.contract {{.*}} ins(%arg3, %arg4 : tensor<?x8x64x8xbf16>, tensor<?x8x8x64xbf16>)
#q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @contractions_left_alone(%q: tensor<4x8x64x8xf32>, %k: tensor<4x8x8x64xf32>, %c: tensor<4x8x64x64xf32>,
                                   %p: tensor<?x8x64x8xbf16>, %l: tensor<?x8x8x64xbf16>, %d: tensor<?x8x64x64xf32>)
    -> (tensor<4x8x64x64xf32>, tensor<?x8x64x64xf32>) {
  %r0 = linalg.contract indexing_maps = [#q, #k, #s] ins(%q, %k : tensor<4x8x64x8xf32>, tensor<4x8x8x64xf32>)
      outs(%c : tensor<4x8x64x64xf32>) -> tensor<4x8x64x64xf32>
  %r1 = linalg.contract indexing_maps = [#q, #k, #s] ins(%p, %l : tensor<?x8x64x8xbf16>, tensor<?x8x8x64xbf16>)
      outs(%d : tensor<?x8x64x64xf32>) -> tensor<?x8x64x64xf32>
  return %r0, %r1 : tensor<4x8x64x64xf32>, tensor<?x8x64x64xf32>
}
