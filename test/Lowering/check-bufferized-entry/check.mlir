// check-bufferized-entry refuses an entry the runtime could not call: a result not written in place (the entry
// still returns it), a boolean buffer (LLVM's memref lowering aborts on its stores), buffers larger than memory.
// An entry returning nothing, with byte buffers, passes unchanged.
// RUN: not graphfuse-opt %s --split-input-file --allow-unregistered-dialect --check-bufferized-entry 2>/dev/null | FileCheck %s
// RUN: not graphfuse-opt %s --split-input-file --allow-unregistered-dialect --check-bufferized-entry 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @fine(
// CHECK-SAME:    graphfuse.cpu.entry
func.func @fine(%x: memref<4xi8>, %out: memref<4xi8>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xi1>) -> tensor<4xi1>} {
  memref.copy %x, %out : memref<4xi8> to memref<4xi8>
  return
}

// -----

// ERR: error: @returns: result(s) could not be written in place into the output buffers (bufferized signature (memref<4xf32>, memref<4xf32>) -> memref<4xf32>)
func.func @returns(%x: memref<4xf32>, %out: memref<4xf32>) -> memref<4xf32> attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<4xf32>} {
  return %x : memref<4xf32>
}

// -----

// ERR: error: @booleans: a boolean (i1) intermediate would be stored in memory (memref<4xi1>, from test.make)
func.func @booleans(%x: memref<4xf32>, %out: memref<4xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<4xf32>} {
  %m = "test.make"() : () -> memref<4xi1>
  return
}

// -----

// ERR: error: @huge: its results and intermediate buffers need {{.*}} of memory (the largest, result 0 tensor<1000000x1000000xf32>
func.func @huge(%x: memref<1xf32>, %out: memref<1000000x1000000xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<1xf32>) -> tensor<1000000x1000000xf32>} {
  return
}
