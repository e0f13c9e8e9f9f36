// to-destination-passing-style (the CPU pipeline's first pass): one output argument per result, each result
// materialized into its output; booleans cross the boundary as bytes; a value returned twice is copied from the
// first output into the second. The entry is marked, with its signature as written, for the passes after it.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(to-destination-passing-style{entry=f})' | FileCheck %s
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(to-destination-passing-style)' 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: error: to-destination-passing-style needs the entry function's name: to-destination-passing-style{entry=NAME}

#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[X:.*]]: tensor<8xf32> {bufferization.writable = false}, %[[M:.*]]: tensor<8xi8> {bufferization.writable = false},
// CHECK-SAME:    %[[O0:.*]]: tensor<8xf32>, %[[O1:.*]]: tensor<8xi8>, %[[O2:.*]]: tensor<8xf32>)
// CHECK-SAME:    attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<8xf32>, tensor<8xi1>) -> (tensor<8xf32>, tensor<8xi1>, tensor<8xf32>), llvm.emit_c_interface}
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : i8
// CHECK:         %[[R:.*]] = bufferization.materialize_in_destination %{{.*}} in %[[O0]]
// CHECK:         arith.extui %{{.*}} : i1 to i8
// CHECK:         %[[B:.*]] = bufferization.materialize_in_destination %{{.*}} in %[[O1]]
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<8xf32>) outs(%[[O2]] : tensor<8xf32>)
// CHECK:         %[[R2:.*]] = bufferization.materialize_in_destination %[[COPY]] in %[[O2]]
// CHECK:         return %[[R]], %[[B]], %[[R2]]
func.func @f(%x: tensor<8xf32>, %m: tensor<8xi1>) -> (tensor<8xf32>, tensor<8xi1>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r, %m, %r : tensor<8xf32>, tensor<8xi1>, tensor<8xf32>
}

// -----

// Booleans of a dynamic shape: each byte-to-boolean copy and back sized by the dims of what it converts.
// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[M:.*]]: tensor<?x4xi8> {bufferization.writable = false}, %[[O:.*]]: tensor<?x4xi8>)
// CHECK:         %[[N:.*]] = tensor.dim %[[M]], %{{.*}} : tensor<?x4xi8>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4xi1>
// CHECK-NEXT:    %[[B:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<?x4xi8>) outs(%[[E]] : tensor<?x4xi1>)
// CHECK:           arith.cmpi ne
// CHECK:         %[[NB:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x4xi1>
// CHECK-NEXT:    %[[EB:.*]] = tensor.empty(%[[NB]]) : tensor<?x4xi8>
// CHECK-NEXT:    %[[Y:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<?x4xi1>) outs(%[[EB]] : tensor<?x4xi8>)
// CHECK:           arith.extui
// CHECK:         bufferization.materialize_in_destination %[[Y]] in %[[O]]
func.func @f(%m: tensor<?x4xi1>) -> tensor<?x4xi1> {
  return %m : tensor<?x4xi1>
}

// -----

// Negative: only the entry is rewritten; another function keeps its signature and is not marked.
// CHECK-LABEL: func.func @g(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NOT:     graphfuse.cpu.entry
// CHECK-LABEL: func.func @f(%arg0: tensor<4xf32> {bufferization.writable = false}, %arg1: tensor<4xf32>)
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

