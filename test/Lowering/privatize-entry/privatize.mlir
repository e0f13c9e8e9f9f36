// privatize-entry: the entry is private while bufferization runs (drop-equivalent-buffer-results leaves public
// functions alone); its own visibility is kept on it for restore-entry-visibility ("" for none).
// RUN: not graphfuse-opt %s --split-input-file --privatize-entry 2>/dev/null | FileCheck %s
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(privatize-entry)' 2>&1 | FileCheck %s --check-prefix=NOENTRY

// CHECK-LABEL: func.func private @public_entry(
// CHECK-SAME:    attributes {graphfuse.cpu.entry, graphfuse.cpu.hidden_visibility = ""}
func.func @public_entry(%x: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  return
}

// -----

// CHECK-LABEL: func.func private @private_entry(
// CHECK-SAME:    graphfuse.cpu.hidden_visibility = "private"
func.func private @private_entry(%x: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  return
}

// -----

// Negative: a function not marked as the entry stays public.
// CHECK-LABEL: func.func @helper(
// CHECK-LABEL: func.func private @entry(
func.func @helper(%x: memref<4xf32>) {
  return
}
func.func @entry(%x: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  call @helper(%x) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: without an entry the pass fails (and prints nothing for this input).
// NOENTRY: error: privatize-entry: no function is marked graphfuse.cpu.entry; run to-destination-passing-style{entry=NAME} first
// CHECK-NOT: @unmarked
func.func @unmarked(%x: memref<4xf32>) {
  return
}
