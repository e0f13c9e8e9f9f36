// narrow-contraction-operands: an f32 matmul of two widened bf16 operands (an extf generic, or an f32 constant
// holding bf16 values) reads the bf16 values, when bf16 dot products are used; anything else is left alone.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(narrow-contraction-operands{dot-products=bf16})' | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(narrow-contraction-operands{dot-products=none})' | FileCheck %s --check-prefix=NONE
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(narrow-contraction-operands{dot-products=f8})' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: option 'dot-products' of pass 'narrow-contraction-operands' must be host, none or instruction sets joined by '+' (bf16, int8), got 'f8'

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// The linear layer's form: x and the weight widened, the weight read transposed, more rows than the row dots take.
// CHECK-LABEL: func.func @widened(
// CHECK-SAME:    %[[X:.*]]: tensor<40x6xbf16>, %[[W:.*]]: tensor<8x6xbf16>
// CHECK-NOT:     arith.extf
// CHECK-NOT:     tensor<40x6xf32>
// CHECK:         linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %[[W]] : tensor<40x6xbf16>, tensor<8x6xbf16>) outs(%{{.*}} : tensor<40x8xf32>)
// NONE-LABEL:  func.func @widened(
// NONE:          linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<40x6xf32>, tensor<8x6xf32>)
func.func @widened(%x: tensor<40x6xbf16>, %w: tensor<8x6xbf16>) -> tensor<40x8xf32> {
  %e0 = tensor.empty() : tensor<40x6xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<40x6xbf16>) outs(%e0 : tensor<40x6xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<40x6xf32>
  %e1 = tensor.empty() : tensor<8x6xf32>
  %wf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x6xbf16>) outs(%e1 : tensor<8x6xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<40x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e2 : tensor<40x8xf32>) -> tensor<40x8xf32>
  %r = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%xf, %wf : tensor<40x6xf32>, tensor<8x6xf32>)
      outs(%c : tensor<40x8xf32>) -> tensor<40x8xf32>
  return %r : tensor<40x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A few rows (4) by a weight read at run time: left to the row dots, which read the bf16 weight as it is.
// CHECK-LABEL: func.func @few_rows(
// CHECK:         linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x6xf32>, tensor<8x6xf32>)
func.func @few_rows(%x: tensor<4x6xbf16>, %w: tensor<8x6xbf16>) -> tensor<4x8xf32> {
  %e0 = tensor.empty() : tensor<4x6xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x6xbf16>) outs(%e0 : tensor<4x6xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x6xf32>
  %e1 = tensor.empty() : tensor<8x6xf32>
  %wf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x6xbf16>) outs(%e1 : tensor<8x6xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%xf, %wf : tensor<4x6xf32>, tensor<8x6xf32>)
      outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A bf16 weight imported as an f32 constant: its values are bf16's (1.5, -0.0, Inf, 2^-130, a quiet NaN, -2, 0.25), so it
// becomes a bf16 constant of the same values.
// CHECK-LABEL: func.func @constant_weight(
// CHECK:         %[[W:.*]] = arith.constant dense<{{\[}}[1.500000e+00, -0.000000e+00], [0x7F80, 7.346840e-40], [0x7FC0, 1.000000e+00], [-2.000000e+00, 2.500000e-01]]> : tensor<4x2xbf16>
// CHECK:         linalg.matmul ins(%{{.*}}, %[[W]] : tensor<4x4xbf16>, tensor<4x2xbf16>)
func.func @constant_weight(%x: tensor<4x4xbf16>) -> tensor<4x2xf32> {
  %e0 = tensor.empty() : tensor<4x4xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xbf16>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %w = arith.constant dense<[[1.5, -0.0], [0x7F800000, 0x00080000], [0x7FC00000, 1.0], [-2.0, 0.25]]> : tensor<4x2xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.matmul ins(%xf, %w : tensor<4x4xf32>, tensor<4x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Negatives: a constant with a value below bf16's precision (1 + 2^-10), an operand that is f32 itself, an f16
// widening; each matmul keeps its f32 operands.
// CHECK-LABEL: func.func @not_bf16(
// CHECK:         arith.constant dense<{{.*}}> : tensor<3x2xf32>
// CHECK-COUNT-3: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3x2xf32>)
func.func @not_bf16(%x: tensor<4x3xbf16>, %y: tensor<3x2xf32>, %h: tensor<3x2xf16>)
    -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %e0 = tensor.empty() : tensor<4x3xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3xbf16>) outs(%e0 : tensor<4x3xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<3x2xf32>
  %hf = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<3x2xf16>) outs(%e1 : tensor<3x2xf32>) {
  ^bb0(%in: f16, %out: f32):
    %v = arith.extf %in : f16 to f32
    linalg.yield %v : f32
  } -> tensor<3x2xf32>
  %w = arith.constant dense<[[1.0009765625, 1.0], [1.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r0 = linalg.matmul ins(%xf, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r1 = linalg.matmul ins(%xf, %y : tensor<4x3xf32>, tensor<3x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r2 = linalg.matmul ins(%xf, %hf : tensor<4x3xf32>, tensor<3x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r0, %r1, %r2 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Negative: K odd (no whole pairs of K steps): the f32 product is kept.
// CHECK-LABEL: func.func @odd_depth(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<5x2xf32>)
func.func @odd_depth(%x: tensor<4x5xbf16>, %w: tensor<5x2xbf16>) -> tensor<4x2xf32> {
  %e0 = tensor.empty() : tensor<4x5xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x5xbf16>) outs(%e0 : tensor<4x5xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<5x2xf32>
  %wf = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<5x2xbf16>) outs(%e1 : tensor<5x2xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<5x2xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.matmul ins(%xf, %wf : tensor<4x5xf32>, tensor<5x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}
