// graph-to-linalg on graph.cumsum: an scf.for along the axis carrying the result and the running sum of one
// slice (f32 for f16/bf16, filled with 0); each step adds the operand's slice into the running sum in place
// and writes it, rounded, into the result's slice; exclusive writes before adding, reverse counts the step
// down from the end of the axis.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @position_ids
// UPSTREAM: scf.for

// HF's position ids from a padding mask: an i64 running sum along the sequence.
// CHECK-LABEL: func.func @position_ids
// CHECK-DAG:     %[[LEN:.*]] = arith.constant 10 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         %[[OUT:.*]] = tensor.empty() : tensor<2x10xi64>
// CHECK:         %[[SUM0:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<2x1xi64>)
// CHECK:         scf.for %[[I:.*]] = %[[ZERO]] to %[[LEN]] step %{{.*}} iter_args(%[[RES:.*]] = %[[OUT]], %[[SUM:.*]] = %[[SUM0]])
// CHECK:           %[[X:.*]] = tensor.extract_slice %arg0[0, %[[I]]] [2, 1] [1, 1] : tensor<2x10xi64> to tensor<2x1xi64>
// CHECK:           %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x1xi64>) outs(%[[SUM]] : tensor<2x1xi64>)
// CHECK:             arith.addi
// CHECK:           %[[DEST:.*]] = tensor.extract_slice %[[RES]][0, %[[I]]] [2, 1] [1, 1]
// CHECK:           %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[NEXT]] : tensor<2x1xi64>) outs(%[[DEST]] : tensor<2x1xi64>)
// CHECK:           %[[WRITTEN:.*]] = tensor.insert_slice %[[COPY]] into %[[RES]][0, %[[I]]] [2, 1] [1, 1]
// CHECK:           scf.yield %[[WRITTEN]], %[[NEXT]] : tensor<2x10xi64>, tensor<2x1xi64>
// CHECK-NOT:     graph.cumsum
func.func @position_ids(%mask: tensor<2x10xi64>) -> tensor<2x10xi64> {
  %0 = "graph.cumsum"(%mask) {axis = 1 : i64} : (tensor<2x10xi64>) -> tensor<2x10xi64>
  return %0 : tensor<2x10xi64>
}

// -----

// bf16, exclusive and reverse: the f32 sum is rounded (truncf) into the result before it is added to, and the
// step runs from the last position down.
// CHECK-LABEL: func.func @exclusive_reverse_bf16
// CHECK-DAG:     %[[LEN:.*]] = arith.constant 7 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x1xf32>)
// CHECK:         scf.for %[[I:[^ ]+]] =
// CHECK:           %[[LAST:.*]] = arith.subi %[[LEN]], %[[ONE]] : index
// CHECK:           %[[J:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK:           tensor.extract_slice %{{.*}}[0, %[[J]]] [3, 1] [1, 1] : tensor<3x7xbf16> to tensor<3x1xbf16>
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:           tensor.insert_slice
// CHECK:           tensor.extract_slice %arg0[0, %[[J]]] [3, 1] [1, 1] : tensor<3x7xbf16> to tensor<3x1xbf16>
// CHECK:           arith.extf %{{.*}} : bf16 to f32
func.func @exclusive_reverse_bf16(%x: tensor<3x7xbf16>) -> tensor<3x7xbf16> {
  %0 = "graph.cumsum"(%x) {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<3x7xbf16>) -> tensor<3x7xbf16>
  return %0 : tensor<3x7xbf16>
}
