// graph-to-linalg on graph.pad: a linalg.generic over the result that extracts, at each position, the operand
// element the mode points at (index arithmetic on linalg.index, only on padded dims and only on the sides that
// are padded); constant mode clamps into the operand and selects the padding value outside it. A pad that only
// crops is one extract_slice; an operand with nothing to read gives the padding value alone.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @constant
// UPSTREAM: tensor.extract
// UPSTREAM-LABEL: func.func @crop
// UPSTREAM: tensor.extract_slice

// Constant mode, zero padding: row 3 is below the operand (one bound test), columns before and after it (two).
// CHECK-LABEL: func.func @constant
// CHECK:         %[[ROWS:.*]] = arith.constant 3 : index
// CHECK:         %[[COLS:.*]] = arith.constant 5 : index
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[BELOW:.*]] = arith.cmpi slt, %[[I]], %[[ROWS]] : index
// CHECK:           %[[ROW:.*]] = arith.minsi %[[I]], %{{.*}} : index
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           %[[S:.*]] = arith.subi %[[J]], %{{.*}} : index
// CHECK:           %[[AFTER_START:.*]] = arith.cmpi sge, %[[S]], %{{.*}} : index
// CHECK:           %[[BEFORE_END:.*]] = arith.cmpi slt, %[[S]], %[[COLS]] : index
// CHECK:           %[[IN_COLS:.*]] = arith.andi %[[AFTER_START]], %[[BEFORE_END]] : i1
// CHECK:           %[[HIGH:.*]] = arith.minsi %[[S]], %{{.*}} : index
// CHECK:           %[[COL:.*]] = arith.maxsi %[[HIGH]], %{{.*}} : index
// CHECK:           %[[INSIDE:.*]] = arith.andi %[[BELOW]], %[[IN_COLS]] : i1
// CHECK:           %[[V:.*]] = tensor.extract %arg0[%[[ROW]], %[[COL]]] : tensor<3x5xf32>
// CHECK:           %[[R:.*]] = arith.select %[[INSIDE]], %[[V]], %[[ZERO]] : f32
// CHECK:           linalg.yield %[[R]] : f32
// CHECK-NOT:     graph.pad
func.func @constant(%x: tensor<3x5xf32>) -> tensor<4x8xf32> {
  %0 = "graph.pad"(%x) {low = array<i64: 0, 2>, high = array<i64: 1, 1>} : (tensor<3x5xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Token ids cropped at the front and padded at the end with a given value, read through an empty map.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @constant_value
// CHECK:         linalg.generic {indexing_maps = [#[[SCALAR]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%arg1 : tensor<i64>) outs(%{{.*}} : tensor<4x11xi64>)
// CHECK:         ^bb0(%[[VALUE:.*]]: i64, %{{.*}}: i64):
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[S:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK-NOT:       arith.cmpi sge
// CHECK:           %[[INSIDE:.*]] = arith.cmpi slt, %[[S]], %{{.*}} : index
// CHECK:           %[[COL:.*]] = arith.minsi %[[S]], %{{.*}} : index
// CHECK:           %[[V:.*]] = tensor.extract %arg0[%[[I]], %[[COL]]] : tensor<4x12xi64>
// CHECK:           arith.select %[[INSIDE]], %[[V]], %[[VALUE]] : i64
func.func @constant_value(%x: tensor<4x12xi64>, %v: tensor<i64>) -> tensor<4x11xi64> {
  %0 = "graph.pad"(%x, %v) {low = array<i64: 0, -2>, high = array<i64: 0, 1>} : (tensor<4x12xi64>, tensor<i64>) -> tensor<4x11xi64>
  return %0 : tensor<4x11xi64>
}

// -----

// reflect: |s| before the operand, 2 (n - 1) - s after it.
// CHECK-LABEL: func.func @reflect
// CHECK:         %[[N:.*]] = arith.constant 5 : index
// CHECK:         linalg.generic
// CHECK:           %[[S:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[S]], %{{.*}} : index
// CHECK:           %[[FLIP:.*]] = arith.subi %{{.*}}, %[[S]] : index
// CHECK:           %[[A:.*]] = arith.select %[[NEG]], %[[FLIP]], %[[S]] : index
// CHECK:           %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK:           %[[TWICE:.*]] = arith.addi %[[LAST]], %[[LAST]] : index
// CHECK:           %[[MIRROR:.*]] = arith.subi %[[TWICE]], %[[A]] : index
// CHECK:           %[[PAST:.*]] = arith.cmpi sge, %[[A]], %[[N]] : index
// CHECK:           %[[COL:.*]] = arith.select %[[PAST]], %[[MIRROR]], %[[A]] : index
// CHECK:           tensor.extract %arg0[%{{.*}}, %[[COL]]] : tensor<3x5xf32>
// CHECK-NOT:       arith.select
// CHECK:           linalg.yield
func.func @reflect(%x: tensor<3x5xf32>) -> tensor<3x9xf32> {
  %0 = "graph.pad"(%x) {low = array<i64: 0, 2>, high = array<i64: 0, 2>, mode = "reflect"} : (tensor<3x5xf32>) -> tensor<3x9xf32>
  return %0 : tensor<3x9xf32>
}

// -----

// replicate over a dynamic batch: the result size and the clamp read tensor.dim.
// CHECK-LABEL: func.func @replicate_dynamic
// CHECK:         %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x5xf16>
// CHECK:         %[[SIZE:.*]] = arith.addi %[[D]], %{{.*}} : index
// CHECK:         tensor.empty(%[[SIZE]]) : tensor<?x8xf16>
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[S:.*]] = arith.subi %[[I]], %{{.*}} : index
// CHECK:           %[[ROW:.*]] = arith.maxsi %[[S]], %{{.*}} : index
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           %[[T:.*]] = arith.subi %[[J]], %{{.*}} : index
// CHECK:           %[[COL:.*]] = arith.maxsi %[[T]], %{{.*}} : index
// CHECK:           tensor.extract %arg0[%[[ROW]], %[[COL]]] : tensor<?x5xf16>
func.func @replicate_dynamic(%x: tensor<?x5xf16>) -> tensor<?x8xf16> {
  %0 = "graph.pad"(%x) {low = array<i64: 1, 3>, high = array<i64: 0, 0>, mode = "replicate"} : (tensor<?x5xf16>) -> tensor<?x8xf16>
  return %0 : tensor<?x8xf16>
}

// -----

// circular after a crop: the 4 elements the negative pad leaves are wrapped around (s + 4 before them).
// CHECK-LABEL: func.func @circular
// CHECK:         linalg.generic
// CHECK:           %[[KEPT:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:           %[[S:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[S]], %{{.*}} : index
// CHECK:           %[[WRAPPED:.*]] = arith.addi %[[S]], %[[KEPT]] : index
// CHECK:           %[[COL:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[S]] : index
// CHECK:           tensor.extract %arg0[%{{.*}}, %[[COL]]] : tensor<3x5xf32>
func.func @circular(%x: tensor<3x5xf32>) -> tensor<3x7xf32> {
  %0 = "graph.pad"(%x) {low = array<i64: 0, 3>, high = array<i64: 0, -1>, mode = "circular"} : (tensor<3x5xf32>) -> tensor<3x7xf32>
  return %0 : tensor<3x7xf32>
}

// -----

// Only crops: one slice (reflect or not, nothing is read outside the operand).
// CHECK-LABEL: func.func @crop
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %arg0[0, 1] [3, 2] [1, 1] : tensor<3x5xf32> to tensor<3x2xf32>
// CHECK-NEXT:    return %[[S]]
func.func @crop(%x: tensor<3x5xf32>) -> tensor<3x2xf32> {
  %0 = "graph.pad"(%x) {low = array<i64: 0, -1>, high = array<i64: 0, -2>, mode = "reflect"} : (tensor<3x5xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Nothing to read (a static empty dim): every element is the padding value, no extract; nothing padded: the operand.
// CHECK-LABEL: func.func @nothing_to_read
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%{{.*}}: f32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      linalg.yield %[[ZERO]] : f32
// CHECK:         return %{{.*}}, %arg0
func.func @nothing_to_read(%x: tensor<0x5xf32>) -> (tensor<2x5xf32>, tensor<0x5xf32>) {
  %0 = "graph.pad"(%x) {low = array<i64: 1, 0>, high = array<i64: 1, 0>} : (tensor<0x5xf32>) -> tensor<2x5xf32>
  %1 = "graph.pad"(%x) {low = array<i64: 0, 0>, high = array<i64: 0, 0>, mode = "reflect"} : (tensor<0x5xf32>) -> tensor<0x5xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<0x5xf32>
}
