// restore-entry-visibility gives the entry back the visibility privatize-entry recorded: none (public), or its own.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(privatize-entry,restore-entry-visibility)' | FileCheck %s
// RUN: not graphfuse-opt %s --split-input-file --restore-entry-visibility 2>&1 | FileCheck %s --check-prefix=UNHIDDEN

// CHECK-LABEL: func.func @public_entry(
// CHECK-SAME:    attributes {graphfuse.cpu.entry}
// UNHIDDEN: error: restore-entry-visibility: the entry was not made private by privatize-entry
func.func @public_entry(%x: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  return
}

// -----

// CHECK-LABEL: func.func private @private_entry(
// CHECK-NOT:     hidden_visibility
func.func private @private_entry(%x: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  return
}
