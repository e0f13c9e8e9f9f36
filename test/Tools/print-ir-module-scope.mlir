// Module-scope IR printing around upstream passes works (MLIR needs multithreading off for it).
// RUN: graphfuse-opt --mlir-print-ir-after-all --mlir-print-ir-module-scope --cse %s -o /dev/null 2>&1 | FileCheck %s
// RUN: graphfuse-opt --mlir-print-ir-after=cse --pass-pipeline='builtin.module(func.func(canonicalize,cse))' %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED

// CHECK: // -----// IR Dump After CSE (cse) ('builtin.module' operation) //----- //
// CHECK-NEXT: module {
// NESTED-NOT: Canonicalizer
// NESTED: // -----// IR Dump After CSE (cse) //----- //
// NESTED-NOT: Canonicalizer
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
