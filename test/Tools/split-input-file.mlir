// --split-input-file: chunks are parsed and transformed independently, printed joined by `// -----`, and an error in one chunk (located in the whole file) does not stop the others.
// RUN: not graphfuse-opt --split-input-file --graph-cse %s -o %t 2>&1 | FileCheck %s --check-prefix=ERR --implicit-check-not=error: --implicit-check-not=Traceback
// RUN: FileCheck %s < %t
// Without the flag the file is one module: parsing stops at the first syntax error and nothing is printed.
// RUN: not graphfuse-opt --graph-cse %s 2>&1 | FileCheck %s --check-prefix=WHOLE --implicit-check-not=error: --implicit-check-not=func.func
// A custom split marker; the output is still joined by `// -----`.
// RUN: sed -e 's|^// -----$|// =====|' %s > %t.custom.mlir
// RUN: not graphfuse-opt --split-input-file='// =====' --graph-cse %t.custom.mlir 2>&1 >/dev/null | FileCheck %s --check-prefix=CUSTOM --implicit-check-not=error:
// RUN: not graphfuse-opt --split-input-file='// =====' --graph-cse %t.custom.mlir 2>/dev/null | FileCheck %s

// CHECK-LABEL: func.func @first
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    "graph.add"(%[[E]], %[[E]])
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: // -----
// CHECK-NEXT: module {
func.func @first(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// The failing chunk prints nothing, not even an empty module or a second separator.
// CHECK-NOT: @second
// CHECK-NOT: // -----
func.func @second(%a: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<4x8xf32> {
  // ERR: {{.*}}split-input-file.mlir:[[@LINE+2]]:8: error: 'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible
  // CUSTOM: {{.*}}split-input-file.mlir.tmp.custom.mlir:[[@LINE+1]]:8: error: 'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The same function name in another chunk is no redefinition: each chunk is its own module.
// CHECK-LABEL: func.func @first
// CHECK-NEXT:    "graph.neg"(%arg0)
func.func @first(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A syntax error late in the file is located in the whole file too.
func.func @fourth(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: {{.*}}split-input-file.mlir:[[@LINE+3]]:20: error: use of undeclared SSA value name
  // WHOLE: {{.*}}split-input-file.mlir:[[@LINE+2]]:20: error: use of undeclared SSA value name
  // CUSTOM: {{.*}}split-input-file.mlir.tmp.custom.mlir:[[@LINE+1]]:20: error: use of undeclared SSA value name
  %0 = "graph.neg"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK:      // -----
// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @last
// CHECK-NOT:  // -----
func.func @last(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
