// IR printing around passes (on stderr): --mlir-print-ir-{before,after}[-all], --mlir-print-ir-after-change; graphfuse passes are named by class and argument like upstream ones.
// RUN: graphfuse-opt --mlir-print-ir-after-all --graph-cse --cse --graph-dce %s 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER-ALL
// RUN: graphfuse-opt --mlir-print-ir-before-all --graph-cse --canonicalize %s 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE-ALL
// RUN: graphfuse-opt --mlir-print-ir-before=graph-cse --graph-cse --cse --graph-dce %s 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE-CSE
// RUN: graphfuse-opt --mlir-print-ir-after=graph-dce --graph-cse --cse --graph-dce %s 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER-DCE
// RUN: graphfuse-opt --mlir-print-ir-after=cse,graph-cse --graph-cse --cse --graph-dce %s 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER-LIST
// RUN: graphfuse-opt --mlir-print-ir-after-change --graph-cse --cse --graph-dce --graph-verify --graph-cse %s 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER-CHANGE
// Nothing changes: nothing is printed.
// RUN: graphfuse-opt --mlir-print-ir-after-change --graph-verify --cse %s 2>&1 >/dev/null | FileCheck %s --check-prefix=NO-CHANGE --allow-empty
// RUN: graphfuse-opt --mlir-print-ir-after-change --graph-cse --graph-dce %s | graphfuse-opt --mlir-print-ir-after-change --graph-cse --graph-dce 2>&1 >/dev/null | FileCheck %s --check-prefix=NO-CHANGE --allow-empty
// Upstream passes nested under func.func print the function they ran on; graphfuse passes the module.
// RUN: graphfuse-opt --mlir-print-ir-after-all --pass-pipeline='builtin.module(func.func(cse),graph-dce)' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED
// The dumps go to stderr, the result to stdout.
// RUN: graphfuse-opt --mlir-print-ir-after-all --graph-cse --graph-dce %s 2>/dev/null | FileCheck %s --check-prefix=STDOUT

// AFTER-ALL:      // -----// IR Dump After GraphCSE (graph-cse) //----- //
// AFTER-ALL-NEXT: module {
// AFTER-ALL-NEXT:   func.func @duplicate_and_dead
// AFTER-ALL-NEXT:     %[[A:.*]] = "graph.add"(%arg0, %arg1)
// AFTER-ALL-NEXT:     %[[M:.*]] = "graph.mul"(%[[A]], %[[A]])
// AFTER-ALL-NEXT:     "graph.exp"(%[[M]])
// AFTER-ALL-NEXT:     return %[[M]]
// AFTER-ALL:      // -----// IR Dump After CSE (cse) //----- //
// AFTER-ALL-NEXT: module {
// AFTER-ALL:        "graph.exp"
// AFTER-ALL:      // -----// IR Dump After GraphDCE (graph-dce) //----- //
// AFTER-ALL-NEXT: module {
// AFTER-ALL-NEXT:   func.func @duplicate_and_dead
// AFTER-ALL-NEXT:     %[[A:.*]] = "graph.add"(%arg0, %arg1)
// AFTER-ALL-NEXT:     %[[M:.*]] = "graph.mul"(%[[A]], %[[A]])
// AFTER-ALL-NEXT:     return %[[M]]
// AFTER-ALL-NOT:  IR Dump

// BEFORE-ALL:      // -----// IR Dump Before GraphCSE (graph-cse) //----- //
// BEFORE-ALL-NEXT: module {
// BEFORE-ALL-NEXT:   func.func @duplicate_and_dead
// BEFORE-ALL-NEXT:     "graph.add"(%arg0, %arg1)
// BEFORE-ALL-NEXT:     "graph.add"(%arg0, %arg1)
// BEFORE-ALL:      // -----// IR Dump Before Canonicalizer (canonicalize) //----- //
// BEFORE-ALL-NEXT: module {
// BEFORE-ALL-NEXT:   func.func @duplicate_and_dead
// BEFORE-ALL-NEXT:     "graph.add"(%arg0, %arg1)
// BEFORE-ALL-NEXT:     "graph.mul"
// BEFORE-ALL-NOT:  IR Dump

// BEFORE-CSE-NOT:  IR Dump After
// BEFORE-CSE:      // -----// IR Dump Before GraphCSE (graph-cse) //----- //
// BEFORE-CSE-NEXT: module {
// BEFORE-CSE-NOT:  IR Dump

// AFTER-DCE-NOT:  IR Dump Before
// AFTER-DCE-NOT:  (graph-cse)
// AFTER-DCE-NOT:  (cse)
// AFTER-DCE:      // -----// IR Dump After GraphDCE (graph-dce) //----- //
// AFTER-DCE-NEXT: module {
// AFTER-DCE-NOT:  "graph.exp"
// AFTER-DCE-NOT:  IR Dump

// AFTER-LIST:     // -----// IR Dump After GraphCSE (graph-cse) //----- //
// AFTER-LIST:     // -----// IR Dump After CSE (cse) //----- //
// AFTER-LIST-NOT: IR Dump

// graph-cse and graph-dce change the IR; cse, graph-verify and the second graph-cse do not.
// AFTER-CHANGE:      // -----// IR Dump After GraphCSE (graph-cse) //----- //
// AFTER-CHANGE-NEXT: module {
// AFTER-CHANGE-NOT:  (cse)
// AFTER-CHANGE:      // -----// IR Dump After GraphDCE (graph-dce) //----- //
// AFTER-CHANGE-NEXT: module {
// AFTER-CHANGE-NOT:  IR Dump

// NO-CHANGE-NOT: IR Dump

// NESTED:      // -----// IR Dump After CSE (cse) //----- //
// NESTED-NEXT: func.func @duplicate_and_dead
// NESTED:      // -----// IR Dump After GraphDCE (graph-dce) //----- //
// NESTED-NEXT: module {
// NESTED-NOT:  IR Dump

// STDOUT-NOT:   IR Dump
// STDOUT-LABEL: func.func @duplicate_and_dead
// STDOUT-NOT:   IR Dump

func.func @duplicate_and_dead(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.exp"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
