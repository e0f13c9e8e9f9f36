// graph-to-linalg{checks} (the CPU compile pipeline's) checks at run time what eager PyTorch raises on: an
// integer divisor that may be 0, indices that may be out of range.  Before the op, a call of a private check
// function with the operand: one reduction "does any element fail" and an scf.if storing the site's code
// (site << 8 | status: 3 integer division by zero, 4 index out of range) into the status word, unless a code is
// there already; the store names the op and its location.  The op's own lowering is unchanged.  Float division
// (IEEE's x / 0), a constant divisor without a zero and constant indices inside the axis get no check.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg=checks %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg{strict checks})' %s | FileCheck %s
// Without the option (graphfuse-opt's default, the emulated NPU's) nothing is checked.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s --check-prefix=NOCHECK
// NOCHECK-NOT: graphfuse_check
// NOCHECK-NOT: graphfuse_status
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg=checks %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @floor_div_by_a_tensor
// UPSTREAM: call @graphfuse_check_0
// Eight checks in the cases below: none for the float division, the constant divisor without a zero and the
// constant positions.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg=checks --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: graph-to-linalg
// STATS-NEXT: (S) 8 num-checks

// A divisor read through a broadcast: the check reads the divisor itself (8 elements), not the 4x8 result.
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[NONE:.*]] = affine_map<(d0) -> ()>
// CHECK: memref.global "private" @graphfuse_status : memref<1xi32> = dense<0>
// CHECK-LABEL: func.func @floor_div_by_a_tensor
// CHECK-NEXT:    call @graphfuse_check_0(%arg1) : (tensor<8xi32>) -> ()
// CHECK-NEXT:    tensor.empty() : tensor<4x8xi32>
// CHECK-NEXT:    linalg.generic
// CHECK:           arith.divsi
// CHECK-LABEL: func.func private @graphfuse_check_0(%arg0: tensor<8xi32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : i8) outs(%{{.*}} : tensor<i8>) -> tensor<i8>
// CHECK:         %[[ANY:.*]] = linalg.generic {indexing_maps = [#[[ALL]], #[[NONE]]], iterator_types = ["reduction"]} ins(%arg0 : tensor<8xi32>) outs(%[[INIT]] : tensor<i8>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: i32, %[[ACC:.*]]: i8):
// CHECK-NEXT:      %[[IS_ZERO:.*]] = arith.cmpi eq, %[[X]], %[[ZERO]] : i32
// CHECK-NEXT:      %[[BYTE:.*]] = arith.extui %[[IS_ZERO]] : i1 to i8
// CHECK-NEXT:      %[[OR:.*]] = arith.ori %[[ACC]], %[[BYTE]] : i8
// CHECK-NEXT:      linalg.yield %[[OR]] : i8
// CHECK:         %[[FLAG:.*]] = tensor.extract %[[ANY]][] : tensor<i8>
// CHECK:         %[[FAILED:.*]] = arith.cmpi ne, %[[FLAG]], %{{.*}} : i8
// CHECK-NEXT:    scf.if %[[FAILED]] {
// CHECK-NEXT:      %[[WORD:.*]] = memref.get_global @graphfuse_status : memref<1xi32>
// CHECK:           %[[OLD:.*]] = memref.load %[[WORD]][%{{.*}}] : memref<1xi32>
// CHECK:           %[[CODE:.*]] = arith.constant 3 : i32
// CHECK:           %[[CLEAR:.*]] = arith.cmpi eq, %[[OLD]], %{{.*}} : i32
// CHECK-NEXT:      %[[NEW:.*]] = arith.select %[[CLEAR]], %[[CODE]], %[[OLD]] : i32
// CHECK-NEXT:      memref.store %[[NEW]], %[[WORD]][%{{.*}}] {graphfuse.check = {col = 8 : i64, detail = "", file = "{{.*}}run-checks.mlir", line = [[@LINE+4]] : i64, op = "graph.floor_div", site = 0 : i64, status = "INTEGER_DIVISION_BY_ZERO"}} : memref<1xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @floor_div_by_a_tensor(%a: tensor<4x8xi32>, %b: tensor<8xi32>) -> tensor<4x8xi32> {
  %0 = "graph.floor_div"(%a, %b) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

// A scalar divisor is read once, no loop.
// CHECK-LABEL: func.func @mod_by_a_scalar
// CHECK-NEXT:    call @graphfuse_check_0(%arg1) : (tensor<i64>) -> ()
// CHECK-LABEL: func.func private @graphfuse_check_0(%arg0: tensor<i64>)
// CHECK-NOT:     linalg.generic
// CHECK:         %[[D:.*]] = tensor.extract %arg0[] : tensor<i64>
// CHECK-NEXT:    %[[FAILED:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : i64
// CHECK-NEXT:    scf.if %[[FAILED]] {
// CHECK:           memref.store {{.*}} {graphfuse.check = {{{.*}}op = "graph.mod", site = 0 : i64, status = "INTEGER_DIVISION_BY_ZERO"}}
func.func @mod_by_a_scalar(%a: tensor<16xi64>, %b: tensor<i64>) -> tensor<16xi64> {
  %0 = "graph.mod"(%a, %b) : (tensor<16xi64>, tensor<i64>) -> tensor<16xi64>
  return %0 : tensor<16xi64>
}

// -----

// Two checked ops: two sites, numbered in order (code 1 << 8 | 3 for the second).
// CHECK-LABEL: func.func @div_then_floor_mod
// CHECK:         call @graphfuse_check_0(%arg1)
// CHECK:         arith.divsi
// CHECK:         call @graphfuse_check_1(%arg1)
// CHECK-LABEL: func.func private @graphfuse_check_0
// CHECK:         op = "graph.div", site = 0 : i64
// CHECK-LABEL: func.func private @graphfuse_check_1
// CHECK:         arith.constant 259 : i32
// CHECK:         op = "graph.floor_mod", site = 1 : i64
func.func @div_then_floor_mod(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {
  %0 = "graph.div"(%a, %b) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %1 = "graph.floor_mod"(%0, %b) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %1 : tensor<8xi32>
}

// -----

// Not checked: IEEE defines a float x / 0, and a constant divisor without a zero cannot fail.
// CHECK-NOT: graphfuse_status
// CHECK-LABEL: func.func @unchecked_divisions
// CHECK-NOT:     call
// CHECK:         arith.divf
// CHECK:         arith.divsi
// CHECK:         return
// CHECK-NOT: graphfuse_check
func.func @unchecked_divisions(%x: tensor<8xf32>, %y: tensor<8xf32>, %a: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>) {
  %two = arith.constant dense<[2, -2, 3, 1, 7, -1, 5, 9]> : tensor<8xi32>
  %0 = "graph.div"(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = "graph.floor_div"(%a, %two) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %0, %1 : tensor<8xf32>, tensor<8xi32>
}

// -----

// A constant divisor with a zero is checked (it fails at run time, where the interpreter fails too).
// CHECK-LABEL: func.func @constant_zero_divisor
// CHECK:         call @graphfuse_check_0(%{{.*}}) : (tensor<2xi32>) -> ()
func.func @constant_zero_divisor(%a: tensor<2xi32>) -> tensor<2xi32> {
  %d = arith.constant dense<[3, 0]> : tensor<2xi32>
  %0 = "graph.mod"(%a, %d) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// An embedding lookup whose negative indices are out of range (index_select's rule): [0, 10).
// CHECK-LABEL: func.func @embedding
// CHECK-NEXT:    call @graphfuse_check_0(%arg1) : (tensor<2x3xi64>) -> ()
// CHECK:         tensor.extract_slice %arg0
// CHECK-LABEL: func.func private @graphfuse_check_0(%arg0: tensor<2x3xi64>)
// CHECK-DAG:     %[[SIZE:.*]] = arith.constant 10 : index
// CHECK-DAG:     %[[LOW:.*]] = arith.constant 0 : index
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<2x3xi64>)
// CHECK:           %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT:      %[[BELOW:.*]] = arith.cmpi slt, %[[I]], %[[LOW]] : index
// CHECK-NEXT:      %[[ABOVE:.*]] = arith.cmpi sge, %[[I]], %[[SIZE]] : index
// CHECK-NEXT:      arith.ori %[[BELOW]], %[[ABOVE]] : i1
// CHECK:         memref.store {{.*}} {graphfuse.check = {col = 8 : i64, detail = "an index is not in [0, 10) (axis 0)", file = "{{.*}}run-checks.mlir", line = [[@LINE+2]] : i64, op = "graph.gather", site = 0 : i64, status = "INDEX_OUT_OF_RANGE"}}
func.func @embedding(%w: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = "graph.gather"(%w, %ids) {negative_indices = false} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Negative indices counting from the end (the default) and a dynamic axis: [-size, size), the size passed in.
// CHECK-LABEL: func.func @gather_elements_dynamic
// CHECK:         %[[DIM:.*]] = tensor.dim %arg0, %{{.*}} : tensor<4x?xf32>
// CHECK-NEXT:    call @graphfuse_check_0(%arg1, %[[DIM]]) : (tensor<4x2xi32>, index) -> ()
// CHECK-LABEL: func.func private @graphfuse_check_0(%arg0: tensor<4x2xi32>, %arg1: index)
// CHECK:         %[[LOW:.*]] = arith.subi %{{.*}}, %arg1 : index
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK-NEXT:      arith.cmpi slt, %[[I]], %[[LOW]] : index
// CHECK-NEXT:      arith.cmpi sge, %[[I]], %arg1 : index
// CHECK:         detail = "an index is not in [-size, size) (axis 1)"{{.*}}op = "graph.gather_elements"
func.func @gather_elements_dynamic(%x: tensor<4x?xf32>, %i: tensor<4x2xi32>) -> tensor<4x2xf32> {
  %0 = "graph.gather_elements"(%x, %i) {axis = 1 : i64} : (tensor<4x?xf32>, tensor<4x2xi32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// A KV cache written at run-time positions: the scatter's indices are checked too.
// CHECK-LABEL: func.func @cache_write
// CHECK-NEXT:    call @graphfuse_check_0(%arg1) : (tensor<3xi64>) -> ()
// CHECK:         scf.for
// CHECK-LABEL: func.func private @graphfuse_check_0
// CHECK:         detail = "an index is not in [-16, 16) (axis 1)"{{.*}}op = "graph.scatter_update"
func.func @cache_write(%cache: tensor<2x16x8xf32>, %at: tensor<3xi64>, %new: tensor<2x3x8xf32>) -> tensor<2x16x8xf32> {
  %0 = "graph.scatter_update"(%cache, %at, %new) {axis = 1 : i64} : (tensor<2x16x8xf32>, tensor<3xi64>, tensor<2x3x8xf32>) -> tensor<2x16x8xf32>
  return %0 : tensor<2x16x8xf32>
}

// -----

// Constant indices inside the axis (a repeat_interleave's positions) need no check; -1 is inside [-5, 5).
// CHECK-NOT: graphfuse_status
// CHECK-LABEL: func.func @constant_positions
// CHECK-NOT:     call
// CHECK:         scf.for
// CHECK-NOT: graphfuse_check
func.func @constant_positions(%x: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %at = arith.constant dense<[0, 0, 4, -1]> : tensor<4xi64>
  %0 = "graph.gather"(%x, %at) : (tensor<5x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
