// graph-to-linalg on graph.grouped_matmul: the result starts as zeros; an scf.for over the groups carries it and
// the previous group's end, reads each end (negative: from the last row; clamped to [0, rows]) and computes the
// group's rows in blocks of static sizes: an scf.for over whole blocks of 32 rows (at most as many as x has), then
// the rest as one last block of the smallest power of two holding it (a ladder of scf.if): the rows copied into a
// block of zeros, the product's first rows written. Each block is a static linalg.matmul of its rows of x with
// the group's matrix, a rank-reducing slice of the weights, written into its rows of the result. With
// 64 columns or more the columns are shared out by an scf.forall of tasks of at least 32 columns.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @experts
// UPSTREAM: scf.forall

// Mixtral's experts: weights [groups, n, k] read through transpose_weights, i32 ends; 96 columns are 3 tasks.
// CHECK-LABEL: func.func @experts
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<100x96xf32>
// CHECK:         %[[ZEROS:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<100x96xf32>)
// CHECK:         scf.forall (%[[TASK:.*]]) in (3) shared_outs(%[[ALL:.*]] = %[[ZEROS]]) -> (tensor<100x96xf32>)
// CHECK:           %[[COLUMN:.*]] = arith.muli %[[TASK]], %{{.*}} : index
// CHECK:           %[[PART:.*]] = tensor.extract_slice %[[ALL]][0, %[[COLUMN]]] [100, 32] [1, 1]
// CHECK:           %[[GROUPS:.*]]:2 = scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %[[PART]], %[[START:.*]] = %{{.*}}) -> (tensor<100x32xf32>, index)
// CHECK:             %[[RAW:.*]] = tensor.extract %arg2[%[[G]]] : tensor<4xi32>
// CHECK:             %[[I:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK:             %[[NEG:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : index
// CHECK:             %[[WRAPPED:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK:             %[[POS:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[I]] : index
// CHECK:             %[[LOW:.*]] = arith.maxsi %[[POS]], %{{.*}} : index
// CHECK:             %[[END:.*]] = arith.minsi %[[LOW]], %{{.*}} : index
// CHECK:             %[[DIFF:.*]] = arith.subi %[[END]], %[[START]] : index
// CHECK:             %[[COUNT:.*]] = arith.maxsi %[[DIFF]], %{{.*}} : index
// CHECK:             %[[W:.*]] = tensor.extract_slice %arg1[%[[G]], %[[COLUMN]], 0] [1, 32, 64] [1, 1, 1] : tensor<4x96x64xf32> to tensor<32x64xf32>
// CHECK:             %[[WHOLE:.*]] = arith.andi %[[COUNT]], %{{.*}} : index
// CHECK:             %[[STOP:.*]] = arith.addi %[[START]], %[[WHOLE]] : index
// CHECK:             %[[BLOCKS:.*]] = scf.for %[[R:.*]] = %[[START]] to %[[STOP]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[OUT]]) -> (tensor<100x32xf32>)
// CHECK:               %[[X:.*]] = tensor.extract_slice %arg0[%[[R]], 0] [32, 64] [1, 1] : tensor<100x64xf32> to tensor<32x64xf32>
// CHECK:               %[[DEST:.*]] = tensor.extract_slice %[[ACC]][%[[R]], 0] [32, 32] [1, 1]
// CHECK:               %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[DEST]] : tensor<32x32xf32>)
// CHECK:               %[[P:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %[[W]] : tensor<32x64xf32>, tensor<32x64xf32>) outs(%[[INIT]] : tensor<32x32xf32>)
// CHECK:               tensor.insert_slice %[[P]] into %[[ACC]][%[[R]], 0] [32, 32] [1, 1]
// CHECK:             %[[ROW:.*]] = arith.addi %[[START]], %[[WHOLE]] : index
// CHECK:             %[[REST:.*]] = arith.subi %[[COUNT]], %[[WHOLE]] : index
// CHECK:             %[[OVER_HALF:.*]] = arith.cmpi sgt, %[[REST]], %{{.*}} : index
// CHECK:             scf.if %[[OVER_HALF]] -> (tensor<100x32xf32>)
// CHECK:               %[[RX:.*]] = tensor.extract_slice %arg0[%[[ROW]], 0] [%[[REST]], 64] [1, 1] : tensor<100x64xf32> to tensor<?x64xf32>
// CHECK:               %[[PAD:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32x64xf32>)
// CHECK:               %[[LX:.*]] = tensor.insert_slice %[[RX]] into %[[PAD]][0, 0] [%[[REST]], 64] [1, 1] : tensor<?x64xf32> into tensor<32x64xf32>
// CHECK:               %[[LP:.*]] = linalg.matmul {{.*}} ins(%[[LX]], %[[W]] : tensor<32x64xf32>, tensor<32x64xf32>) outs(%{{.*}} : tensor<32x32xf32>)
// CHECK:               %[[ROWS:.*]] = tensor.extract_slice %[[LP]][0, 0] [%[[REST]], 32] [1, 1] : tensor<32x32xf32> to tensor<?x32xf32>
// CHECK:               tensor.insert_slice %[[ROWS]] into %[[BLOCKS]][%[[ROW]], 0] [%[[REST]], 32] [1, 1] : tensor<?x32xf32> into tensor<100x32xf32>
// CHECK:             } else {
// CHECK:               scf.if
// CHECK:                 linalg.matmul {{.*}} : tensor<16x64xf32>, tensor<32x64xf32>)
// CHECK:               } else {
// CHECK:                 scf.if
// CHECK:                   linalg.matmul {{.*}} : tensor<8x64xf32>, tensor<32x64xf32>)
// CHECK:                 } else {
// CHECK:                   scf.if
// CHECK:                     linalg.matmul {{.*}} : tensor<4x64xf32>, tensor<32x64xf32>)
// CHECK:                   } else {
// CHECK:                     scf.if
// CHECK:                       linalg.matmul {{.*}} : tensor<2x64xf32>, tensor<32x64xf32>)
// CHECK:                     } else {
// CHECK:                       scf.if
// CHECK:                         linalg.matmul {{.*}} : tensor<1x64xf32>, tensor<32x64xf32>)
// CHECK:                       } else {
// CHECK-NEXT:                    scf.yield %[[BLOCKS]] : tensor<100x32xf32>
// CHECK:             scf.yield %{{.*}}, %[[END]] : tensor<100x32xf32>, index
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %[[GROUPS]]#0 into %[[ALL]][0, %[[COLUMN]]] [100, 32] [1, 1]
// CHECK-NOT:     graph.grouped_matmul
func.func @experts(%x: tensor<100x64xf32>, %w: tensor<4x96x64xf32>, %ends: tensor<4xi32>) -> tensor<100x96xf32> {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) {transpose_weights = true} : (tensor<100x64xf32>, tensor<4x96x64xf32>, tensor<4xi32>) -> tensor<100x96xf32>
  return %0 : tensor<100x96xf32>
}

// -----

// Weights [groups, k, n], i64 ends; 5 columns are one task (no scf.forall); 8 rows make whole blocks of 8, last
// blocks of 8, 4, 2, 1.
// CHECK-LABEL: func.func @few_columns
// CHECK-NOT:     scf.forall
// CHECK:         scf.for {{.*}} -> (tensor<8x5xf32>, index)
// CHECK:           tensor.extract %arg2[%{{.*}}] : tensor<3xi64>
// CHECK:           %[[W:.*]] = tensor.extract_slice %arg1[%{{.*}}, 0, 0] [1, 4, 5] [1, 1, 1] : tensor<3x4x5xf32> to tensor<4x5xf32>
// CHECK:           scf.for
// CHECK:             linalg.matmul ins(%{{.*}}, %[[W]] : tensor<8x4xf32>, tensor<4x5xf32>) outs(%{{.*}} : tensor<8x5xf32>)
// CHECK:           scf.if
// CHECK:             linalg.matmul ins(%{{.*}}, %[[W]] : tensor<8x4xf32>, tensor<4x5xf32>)
// CHECK:           scf.if
// CHECK:             linalg.matmul ins(%{{.*}}, %[[W]] : tensor<4x4xf32>, tensor<4x5xf32>)
// CHECK:           scf.if
// CHECK:             linalg.matmul ins(%{{.*}}, %[[W]] : tensor<2x4xf32>, tensor<4x5xf32>)
// CHECK:           scf.if
// CHECK:             linalg.matmul ins(%{{.*}}, %[[W]] : tensor<1x4xf32>, tensor<4x5xf32>)
// CHECK-NOT:       scf.if
// CHECK:           scf.yield
func.func @few_columns(%x: tensor<8x4xf32>, %w: tensor<3x4x5xf32>, %ends: tensor<3xi64>) -> tensor<8x5xf32> {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<3xi64>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

// bf16: each block accumulates in f32 (the named op widens the operands) and is rounded into the result's rows;
// the last block's rounded rows are written in part.
// CHECK-LABEL: func.func @bf16
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[DEST:.*]] = tensor.extract_slice %{{.*}} [2, 3] [1, 1] : tensor<3x3xbf16> to tensor<2x3xbf16>
// CHECK:             %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:             %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xbf16>, tensor<4x3xbf16>) outs(%[[ACC]] : tensor<2x3xf32>)
// CHECK:             %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<2x3xf32>) outs(%[[DEST]] : tensor<2x3xbf16>)
// CHECK:               arith.truncf %{{.*}} : f32 to bf16
// CHECK:             tensor.insert_slice %[[ROUNDED]]
// CHECK:           scf.if
// CHECK:             %[[LP:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xbf16>, tensor<4x3xbf16>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:             %[[LR:.*]] = linalg.generic {{.*}} ins(%[[LP]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xbf16>)
// CHECK:             %[[PART:.*]] = tensor.extract_slice %[[LR]][0, 0] [%{{.*}}, 3] [1, 1] : tensor<2x3xbf16> to tensor<?x3xbf16>
// CHECK:             tensor.insert_slice %[[PART]]
func.func @bf16(%x: tensor<3x4xbf16>, %w: tensor<2x4x3xbf16>, %ends: tensor<2xi64>) -> tensor<3x3xbf16> {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) : (tensor<3x4xbf16>, tensor<2x4x3xbf16>, tensor<2xi64>) -> tensor<3x3xbf16>
  return %0 : tensor<3x3xbf16>
}

// -----

// One row: blocks of one row, no scf.if.
// CHECK-LABEL: func.func @one_row
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             linalg.matmul {{.*}} : tensor<1x8xf32>, tensor<6x8xf32>) outs(%{{.*}} : tensor<1x6xf32>)
// CHECK-NOT:       scf.if
func.func @one_row(%x: tensor<1x8xf32>, %w: tensor<2x6x8xf32>, %ends: tensor<2xi64>) -> tensor<1x6xf32> {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) {transpose_weights = true} : (tensor<1x8xf32>, tensor<2x6x8xf32>, tensor<2xi64>) -> tensor<1x6xf32>
  return %0 : tensor<1x6xf32>
}

// -----

// No contraction (k = 0): every product is zeros, so is the result.
// CHECK-LABEL: func.func @no_contraction
// CHECK:         %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT:    return %[[ZEROS]]
func.func @no_contraction(%x: tensor<2x0xf32>, %w: tensor<2x0x3xf32>, %ends: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) : (tensor<2x0xf32>, tensor<2x0x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
