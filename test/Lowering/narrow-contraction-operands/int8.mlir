// narrow-contraction-operands with int8 dot products: an i32 matmul of two operands sign-extended from int8 (an
// extsi generic, or an i32 constant of values in [-128, 127]), K a multiple of 4, reads the int8 values;
// anything else is left alone, and nothing is narrowed without int8 dot products.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(narrow-contraction-operands{dot-products=int8})' | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(narrow-contraction-operands{dot-products=bf16})' | FileCheck %s --check-prefix=NOINT8
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(narrow-contraction-operands{dot-products=bf16+int8})' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// quant_batch_matmul's decomposition with a transposed weight: both operands sign-extended.
// CHECK-LABEL: func.func @widened(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xi8>, %[[W:.*]]: tensor<6x8xi8>
// CHECK-NOT:     arith.extsi
// CHECK:         linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %[[W]] : tensor<4x8xi8>, tensor<6x8xi8>) outs(%{{.*}} : tensor<4x6xi32>)
// NOINT8-LABEL: func.func @widened(
// NOINT8:         linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<6x8xi32>)
func.func @widened(%x: tensor<4x8xi8>, %w: tensor<6x8xi8>) -> tensor<4x6xi32> {
  %e0 = tensor.empty() : tensor<4x8xi32>
  %xi = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xi8>) outs(%e0 : tensor<4x8xi32>) {
  ^bb0(%in: i8, %out: i32):
    %v = arith.extsi %in : i8 to i32
    linalg.yield %v : i32
  } -> tensor<4x8xi32>
  %e1 = tensor.empty() : tensor<6x8xi32>
  %wi = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<6x8xi8>) outs(%e1 : tensor<6x8xi32>) {
  ^bb0(%in: i8, %out: i32):
    %v = arith.extsi %in : i8 to i32
    linalg.yield %v : i32
  } -> tensor<6x8xi32>
  %zero = arith.constant 0 : i32
  %e2 = tensor.empty() : tensor<4x6xi32>
  %c = linalg.fill ins(%zero : i32) outs(%e2 : tensor<4x6xi32>) -> tensor<4x6xi32>
  %r = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%xi, %wi : tensor<4x8xi32>, tensor<6x8xi32>)
      outs(%c : tensor<4x6xi32>) -> tensor<4x6xi32>
  return %r : tensor<4x6xi32>
}

// -----

// An int8 weight held as an i32 constant of int8 values (the extremes -128 and 127 included) becomes an i8
// constant of the same values.
// CHECK-LABEL: func.func @constant_weight(
// CHECK:         %[[W:.*]] = arith.constant dense<{{\[}}[-128, 127], [0, -1], [5, 6], [-7, 8]]> : tensor<4x2xi8>
// CHECK:         linalg.matmul ins(%{{.*}}, %[[W]] : tensor<4x4xi8>, tensor<4x2xi8>)
func.func @constant_weight(%x: tensor<4x4xi8>) -> tensor<4x2xi32> {
  %e0 = tensor.empty() : tensor<4x4xi32>
  %xi = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xi8>) outs(%e0 : tensor<4x4xi32>) {
  ^bb0(%in: i8, %out: i32):
    %v = arith.extsi %in : i8 to i32
    linalg.yield %v : i32
  } -> tensor<4x4xi32>
  %w = arith.constant dense<[[-128, 127], [0, -1], [5, 6], [-7, 8]]> : tensor<4x2xi32>
  %zero = arith.constant 0 : i32
  %e2 = tensor.empty() : tensor<4x2xi32>
  %c = linalg.fill ins(%zero : i32) outs(%e2 : tensor<4x2xi32>) -> tensor<4x2xi32>
  %r = linalg.matmul ins(%xi, %w : tensor<4x4xi32>, tensor<4x2xi32>) outs(%c : tensor<4x2xi32>) -> tensor<4x2xi32>
  return %r : tensor<4x2xi32>
}

// -----

// Negatives: a constant with a value outside int8 (128), an operand zero-extended (unsigned) rather than
// sign-extended, and K = 6 (no whole quads); each matmul keeps its i32 operands.
// CHECK-LABEL: func.func @not_int8(
// CHECK:         arith.constant dense<{{.*}}> : tensor<4x2xi32>
// CHECK-COUNT-2: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xi32>, tensor<4x2xi32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x6xi32>, tensor<6x2xi32>)
func.func @not_int8(%x: tensor<3x4xi8>, %u: tensor<4x2xi8>, %x6: tensor<3x6xi8>, %w6: tensor<6x2xi8>)
    -> (tensor<3x2xi32>, tensor<3x2xi32>, tensor<3x2xi32>) {
  %e0 = tensor.empty() : tensor<3x4xi32>
  %xi = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xi8>) outs(%e0 : tensor<3x4xi32>) {
  ^bb0(%in: i8, %out: i32):
    %v = arith.extsi %in : i8 to i32
    linalg.yield %v : i32
  } -> tensor<3x4xi32>
  %big = arith.constant dense<[[128, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi32>
  %e1 = tensor.empty() : tensor<4x2xi32>
  %ui = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<4x2xi8>) outs(%e1 : tensor<4x2xi32>) {
  ^bb0(%in: i8, %out: i32):
    %v = arith.extui %in : i8 to i32
    linalg.yield %v : i32
  } -> tensor<4x2xi32>
  %e2 = tensor.empty() : tensor<3x6xi32>
  %x6i = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x6 : tensor<3x6xi8>) outs(%e2 : tensor<3x6xi32>) {
  ^bb0(%in: i8, %out: i32):
    %v = arith.extsi %in : i8 to i32
    linalg.yield %v : i32
  } -> tensor<3x6xi32>
  %e3 = tensor.empty() : tensor<6x2xi32>
  %w6i = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%w6 : tensor<6x2xi8>) outs(%e3 : tensor<6x2xi32>) {
  ^bb0(%in: i8, %out: i32):
    %v = arith.extsi %in : i8 to i32
    linalg.yield %v : i32
  } -> tensor<6x2xi32>
  %zero = arith.constant 0 : i32
  %e4 = tensor.empty() : tensor<3x2xi32>
  %c = linalg.fill ins(%zero : i32) outs(%e4 : tensor<3x2xi32>) -> tensor<3x2xi32>
  %r0 = linalg.matmul ins(%xi, %big : tensor<3x4xi32>, tensor<4x2xi32>) outs(%c : tensor<3x2xi32>) -> tensor<3x2xi32>
  %r1 = linalg.matmul ins(%xi, %ui : tensor<3x4xi32>, tensor<4x2xi32>) outs(%c : tensor<3x2xi32>) -> tensor<3x2xi32>
  %r2 = linalg.matmul ins(%x6i, %w6i : tensor<3x6xi32>, tensor<6x2xi32>) outs(%c : tensor<3x2xi32>) -> tensor<3x2xi32>
  return %r0, %r1, %r2 : tensor<3x2xi32>, tensor<3x2xi32>, tensor<3x2xi32>
}
