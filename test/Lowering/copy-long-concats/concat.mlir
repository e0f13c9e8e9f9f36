// copy-long-concats: a static chain of insert_slices into an empty tensor with at least min-pieces operands becomes
// one aligned buffer, each operand materialized into its subview, read back as a tensor (bufferization then
// analyses it one op at a time); shorter chains keep their tensor form.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(copy-long-concats{min-pieces=3})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(copy-long-concats{min-pieces=4})' %s | FileCheck %s --check-prefix=SHORT

// CHECK-LABEL: func.func @three
// CHECK-NOT:     tensor.insert_slice
// CHECK:         %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<6x4xf32>
// CHECK:         %[[A:.*]] = memref.subview %[[BUF]][0, 0] [2, 4] [1, 1]
// CHECK:         bufferization.materialize_in_destination %arg0 in writable %[[A]]
// CHECK:         %[[B:.*]] = memref.subview %[[BUF]][2, 0] [3, 4] [1, 1]
// CHECK:         bufferization.materialize_in_destination %arg1 in writable %[[B]]
// CHECK:         %[[C:.*]] = memref.subview %[[BUF]][5, 0] [1, 4] [1, 1]
// CHECK:         bufferization.materialize_in_destination %arg2 in writable %[[C]]
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK:         return %[[T]]
// SHORT-LABEL: func.func @three
// SHORT-NOT:     memref.alloc
// SHORT-COUNT-3: tensor.insert_slice
func.func @three(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>, %c: tensor<1x4xf32>) -> tensor<6x4xf32> {
  %empty = tensor.empty() : tensor<6x4xf32>
  %0 = tensor.insert_slice %a into %empty[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<6x4xf32>
  %1 = tensor.insert_slice %b into %0[2, 0] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<6x4xf32>
  %2 = tensor.insert_slice %c into %1[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<6x4xf32>
  return %2 : tensor<6x4xf32>
}

// -----

// Negative: a chain with a dynamic piece is left to bufferization.
// CHECK-LABEL: func.func @dynamic_piece
// CHECK-NOT:     memref.alloc
// CHECK-COUNT-3: tensor.insert_slice
func.func @dynamic_piece(%a: tensor<2x4xf32>, %b: tensor<?x4xf32>, %c: tensor<1x4xf32>, %n: index)
    -> tensor<?x4xf32> {
  %empty = tensor.empty(%n) : tensor<?x4xf32>
  %0 = tensor.insert_slice %a into %empty[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<?x4xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %b, %c0 : tensor<?x4xf32>
  %1 = tensor.insert_slice %b into %0[2, 0] [%d, 4] [1, 1] : tensor<?x4xf32> into tensor<?x4xf32>
  %2 = tensor.insert_slice %c into %1[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}
