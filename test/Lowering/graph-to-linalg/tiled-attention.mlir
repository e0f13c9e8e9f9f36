// graph-to-linalg on graph.flash_attention over a query or key count known only at run time (f32): the tiled
// online-softmax form. One scf.forall of tasks, one per batch index and block of 64 query rows (the last block
// the rows left, padded with zero rows). Each task folds the keys into its running max, sum and accumulator:
// an scf.for over the whole blocks of 256 keys, then scf.ifs on the keys left, padded with zero rows to the
// narrowest of 256, 128, 64, 32 or 16 that holds them, their scores -inf. A step reads its keys and values once,
// then computes the task's query rows in tiles of 8: two static serial matmuls (the scores, then the
// probabilities times the values) around vector code: per row the masked scores and their maximum, the
// tile's new maxima and rescaling factors as one vector, per row the probabilities and their sums. The task's rows are divided by their
// sums and inserted into the result. Other element types and static lengths keep the decomposition.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @self_attention
// UPSTREAM: scf.forall

// CHECK-LABEL: func.func @self_attention
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x?x16xf32>, %[[K:.*]]: tensor<2x?x16xf32>, %[[V:.*]]: tensor<2x?x8xf32>)
// CHECK:         %[[OUT:.*]] = tensor.empty(%{{.*}}) : tensor<2x?x8xf32>
// CHECK:         %[[QUERIES:.*]] = tensor.dim %[[Q]]
// CHECK:         %[[BLOCKS:.*]] = arith.ceildivui %[[QUERIES]], %c64{{.*}} : index
// CHECK:         %[[RESULT:.*]] = scf.forall (%[[B:.*]], %[[BLOCK:.*]]) in (%{{.*}}, %[[BLOCKS]]) shared_outs(%[[ALL:.*]] = %[[OUT]])
// CHECK:           %[[FIRST:.*]] = arith.muli %[[BLOCK]], %c64{{.*}} : index
// CHECK:           %[[LEFT_ROWS:.*]] = arith.subi %[[QUERIES]], %[[FIRST]] : index
// CHECK:           %[[ROWS:.*]] = arith.minui %c64{{.*}}, %[[LEFT_ROWS]] : index
// CHECK:           %[[QROWS:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[FIRST]], 0] [1, %[[ROWS]], 16] [1, 1, 1] : tensor<2x?x16xf32> to tensor<?x16xf32>
// CHECK:           %[[QTILE:.*]] = tensor.pad %[[QROWS]]
// CHECK:           } : tensor<?x16xf32> to tensor<64x16xf32>
// CHECK:           %[[TILES:.*]] = arith.ceildivui %[[ROWS]], %c8{{.*}} : index
// CHECK:           %[[KEYS:.*]] = tensor.dim %[[K]]
// CHECK:           %[[STATE:.*]]:3 = scf.for {{.*}} -> (tensor<64xf32>, tensor<64xf32>, tensor<64x8xf32>)
// CHECK:             %[[KTILE:.*]] = tensor.extract_slice %[[K]][%[[B]], %{{.*}}, 0] [1, 256, 16] [1, 1, 1] : tensor<2x?x16xf32> to tensor<256x16xf32>
// CHECK:             %[[VTILE:.*]] = tensor.extract_slice %[[V]][%[[B]], %{{.*}}, 0] [1, 256, 8] [1, 1, 1] : tensor<2x?x8xf32> to tensor<256x8xf32>
// CHECK:             %[[KT:.*]] = linalg.transpose ins(%[[KTILE]] : tensor<256x16xf32>)
// CHECK:             %[[TILED:.*]]:3 = scf.for %[[T:.*]] = %{{.*}} to %[[TILES]] step %{{.*}} iter_args(%[[MAX:.*]] = %{{.*}}, %[[SUM:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x8xf32>)
// CHECK:               %[[ROW:.*]] = arith.muli %[[T]], %c8{{.*}} : index
// CHECK:               %[[QT:.*]] = tensor.extract_slice %[[QTILE]][%[[ROW]], 0] [8, 16] [1, 1] : tensor<64x16xf32> to tensor<8x16xf32>
// CHECK:               %[[ACCT:.*]] = tensor.extract_slice %[[ACC]][%[[ROW]], 0] [8, 8] [1, 1] : tensor<64x8xf32> to tensor<8x8xf32>
// CHECK:               %[[SCORES:.*]] = linalg.matmul {graph.serial} ins(%[[QT]], %[[KT]] : tensor<8x16xf32>, tensor<16x256xf32>)
// CHECK:               %[[MASKED:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[SCORES]], %{{.*}} = %{{.*}}) -> (tensor<8x256xf32>, tensor<8xf32>)
// CHECK:                 vector.reduction <maximumf>, %{{.*}} : vector<256xf32> into f32
// CHECK:               arith.maximumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:               %[[PROBS:.*]]:3 = scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[ACCT]]) -> (tensor<8x256xf32>, tensor<8xf32>, tensor<8x8xf32>)
// CHECK:                 vector.transfer_read %[[MASKED]]#0{{.*}} : tensor<8x256xf32>, vector<256xf32>
// CHECK:                 vector.reduction <add>, %{{.*}} : vector<256xf32> into f32
// CHECK:               %[[PV:.*]] = linalg.matmul {graph.serial} ins(%[[PROBS]]#0, %[[VTILE]] : tensor<8x256xf32>, tensor<256x8xf32>) outs(%[[PROBS]]#2 : tensor<8x8xf32>)
// CHECK:               tensor.insert_slice %[[PV]] into %[[ACC]][%[[ROW]], 0] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<64x8xf32>
// CHECK:           %[[LEFT:.*]] = arith.subi %[[KEYS]], %{{.*}} : index
// CHECK:           %[[MANY:.*]] = arith.cmpi ugt, %[[LEFT]], %c128{{.*}} : index
// CHECK:           %[[LAST:.*]]:3 = scf.if %[[MANY]]
// CHECK:             %[[KREST:.*]] = tensor.extract_slice %[[K]][%[[B]], %{{.*}}, 0] [1, %[[LEFT]], 16]
// CHECK:             tensor.pad %[[KREST]] low[0, 0] high[%{{.*}}, 0]
// CHECK:             } : tensor<?x16xf32> to tensor<256x16xf32>
// CHECK:             vector.create_mask %[[LEFT]] : vector<256xi1>
// CHECK:           } else {
// CHECK:             arith.cmpi ugt, %[[LEFT]], %c64{{.*}} : index
// CHECK:               } : tensor<?x16xf32> to tensor<128x16xf32>
// CHECK:               vector.create_mask %[[LEFT]] : vector<128xi1>
// CHECK:             } else {
// CHECK:               arith.cmpi ugt, %[[LEFT]], %c32{{.*}} : index
// CHECK:                 vector.create_mask %[[LEFT]] : vector<64xi1>
// CHECK:               } else {
// CHECK:                 arith.cmpi ugt, %[[LEFT]], %c16{{.*}} : index
// CHECK:                   vector.create_mask %[[LEFT]] : vector<32xi1>
// CHECK:                 } else {
// CHECK:                   arith.cmpi ugt, %[[LEFT]], %c0{{.*}} : index
// CHECK:                     vector.create_mask %[[LEFT]] : vector<16xi1>
// CHECK:                   } else {
// CHECK:                     scf.yield %[[STATE]]#0, %[[STATE]]#1, %[[STATE]]#2
// CHECK:           %[[NORMALIZED:.*]] = scf.for %{{.*}} = %{{.*}} to %[[ROWS]] step %{{.*}} iter_args(%{{.*}} = %[[LAST]]#2)
// CHECK:             arith.divf
// CHECK:           %[[DONE:.*]] = tensor.extract_slice %[[NORMALIZED]][0, 0] [%[[ROWS]], 8] [1, 1] : tensor<64x8xf32> to tensor<?x8xf32>
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %[[DONE]] into %[[ALL]][%[[B]], %[[FIRST]], 0] [1, %[[ROWS]], 8] [1, 1, 1] : tensor<?x8xf32> into tensor<2x?x8xf32>
// CHECK:         return %[[RESULT]]
func.func @self_attention(%q: tensor<2x?x16xf32>, %k: tensor<2x?x16xf32>, %v: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %0 = "graph.flash_attention"(%q, %k, %v) {scale = 0.25 : f32} : (tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}

// -----

// A token's step over a cache: one query row (static), the keys dynamic; one head of keys for four query heads
// (index 0 of the keys' head dim); an additive mask [b, 1, 1, keys] read per block, -inf past its end in the
// last block (a masked read), with safe_softmax's 0 for a row whose every key is hidden.
// CHECK-LABEL: func.func @decode_step
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x4x1x16xf32>, %[[K:.*]]: tensor<2x1x?x16xf32>, %{{.*}}: tensor<2x1x?x16xf32>, %[[MASK:.*]]: tensor<2x1x1x?xf32>)
// CHECK:         scf.forall (%[[B:.*]], %[[H:.*]], %{{.*}}) in
// CHECK:           tensor.extract_slice %[[K]][%[[B]], 0, %{{.*}}, 0] [1, 1, 256, 16]
// CHECK:           vector.transfer_read %[[MASK]][%[[B]], %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<2x1x1x?xf32>, vector<256xf32>
// CHECK:           scf.if
// CHECK:             vector.transfer_read %[[MASK]][%[[B]], %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} : tensor<2x1x1x?xf32>, vector<256xf32>
// CHECK:             vector.transfer_read %[[MASK]][%[[B]], %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} : tensor<2x1x1x?xf32>, vector<64xf32>
// CHECK:           arith.cmpf oeq
func.func @decode_step(%q: tensor<2x4x1x16xf32>, %k: tensor<2x1x?x16xf32>, %v: tensor<2x1x?x16xf32>, %mask: tensor<2x1x1x?xf32>) -> tensor<2x4x1x16xf32> {
  %0 = "graph.flash_attention"(%q, %k, %v, %mask) {scale = 0.25 : f32, safe_softmax = true} : (tensor<2x4x1x16xf32>, tensor<2x1x?x16xf32>, tensor<2x1x?x16xf32>, tensor<2x1x1x?xf32>) -> tensor<2x4x1x16xf32>
  return %0 : tensor<2x4x1x16xf32>
}

// -----

// Static lengths keep the decomposition (the score matrix, which the contraction schedules tile).
// CHECK-LABEL: func.func @static_lengths
// CHECK-NOT:     scf.forall
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     scf.forall
func.func @static_lengths(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %0 = "graph.flash_attention"(%q, %k, %v) {scale = 0.25 : f32} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// bf16 keeps the decomposition: every step rounded to bf16 as the unfused graph is.
// CHECK-LABEL: func.func @bf16
// CHECK-NOT:     scf.forall
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     scf.forall
func.func @bf16(%q: tensor<2x?x16xbf16>, %k: tensor<2x?x16xbf16>, %v: tensor<2x?x16xbf16>) -> tensor<2x?x16xbf16> {
  %0 = "graph.flash_attention"(%q, %k, %v) {scale = 0.25 : f32} : (tensor<2x?x16xbf16>, tensor<2x?x16xbf16>, tensor<2x?x16xbf16>) -> tensor<2x?x16xbf16>
  return %0 : tensor<2x?x16xbf16>
}
