// The CPU pipeline as graphfuse-opt --print-cpu-pipeline=f prints it for one thread and no streaming (the text of
// lowering/codegen/cpu/pipeline.py): linalg IR to the LLVM dialect, every step named in the IR dumps; the entry
// carries the pipeline's decisions (graphfuse.cpu.*) for the runtime, which removes them before LLVM sees them.
// Each addition becomes a function of its own (outline-chunks), the first writing the arena, the second the output.
// RUN: graphfuse-opt %s --pass-pipeline='builtin.module(to-destination-passing-style{entry=f},narrow-contraction-operands,widen-contraction-operands,select-contraction-schedules{threads=1},apply-contraction-schedules,privatize-entry,store-booleans-as-bytes,split-shared-empties,copy-long-concats,reshape-dynamic-expands,eliminate-empty-tensors,drop-redundant-materializations,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},drop-equivalent-buffer-results,func.func(buffer-loop-hoisting),restore-entry-visibility,align-constants,erase-self-copies,compute-in-copy-targets,compute-results-in-outputs,stack-loop-buffers,free-loop-buffers,drop-results-in-outputs,hoist-allocations,bind-status-word,check-bufferized-entry,forward-loop-results,pack-arguments,strided-copies-as-loops,outline-chunks,func.func(convert-linalg-to-loops,arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32},arith-expand{include-bf16=true}),scf-forall-to-for,hoist-stack-buffers,func.func(convert-vector-to-scf{full-unroll},expand-strided-metadata,lower-affine,convert-scf-to-cf),finalize-memref-to-llvm,func.func(convert-vector-to-llvm{enable-x86vector=1 reassociate-fp-reductions=1},convert-math-to-llvm),convert-math-to-funcs,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s
// RUN: graphfuse-opt %s --pass-pipeline='builtin.module(to-destination-passing-style{entry=f},narrow-contraction-operands,widen-contraction-operands,select-contraction-schedules{threads=1},apply-contraction-schedules,privatize-entry,store-booleans-as-bytes,split-shared-empties,copy-long-concats,reshape-dynamic-expands,eliminate-empty-tensors,drop-redundant-materializations,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},drop-equivalent-buffer-results,func.func(buffer-loop-hoisting),restore-entry-visibility,align-constants,erase-self-copies,compute-in-copy-targets,compute-results-in-outputs,stack-loop-buffers,free-loop-buffers,drop-results-in-outputs,hoist-allocations,bind-status-word,check-bufferized-entry,forward-loop-results,pack-arguments,strided-copies-as-loops,outline-chunks,func.func(convert-linalg-to-loops,arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32},arith-expand{include-bf16=true}),scf-forall-to-for,hoist-stack-buffers,func.func(convert-vector-to-scf{full-unroll},expand-strided-metadata,lower-affine,convert-scf-to-cf),finalize-memref-to-llvm,func.func(convert-vector-to-llvm{enable-x86vector=1 reassociate-fp-reductions=1},convert-math-to-llvm),convert-math-to-funcs,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMPS

// CHECK-LABEL: llvm.func @f(%arg0: !llvm.ptr)
// CHECK-SAME:    graphfuse.cpu.arena, graphfuse.cpu.entry,
// CHECK-SAME:    graphfuse.cpu.signature = (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-SAME:    graphfuse.cpu.workspace = [memref<128xi8>]
// CHECK:         llvm.call @f_part_0(%arg0,
// CHECK:         llvm.call @f_part_1(%arg0,
// CHECK-LABEL: llvm.func @_mlir_ciface_f(%arg0: !llvm.ptr)
// CHECK:         llvm.call @f(%arg0) : (!llvm.ptr) -> ()
// CHECK-LABEL: llvm.func internal @f_part_0(
// CHECK-LABEL: llvm.func internal @f_part_1(

// DUMPS: IR Dump After ToDestinationPassingStyle (to-destination-passing-style)
// DUMPS: IR Dump After SelectContractionSchedules (select-contraction-schedules)
// DUMPS: IR Dump After ApplyContractionSchedules (apply-contraction-schedules)
// DUMPS: IR Dump After OneShotBufferizePass (one-shot-bufferize)
// DUMPS: IR Dump After HoistAllocations (hoist-allocations)
// DUMPS: IR Dump After OutlineChunks (outline-chunks)
// DUMPS: IR Dump After HoistStackBuffers (hoist-stack-buffers)
// DUMPS: IR Dump After ReconcileUnrealizedCastsPass (reconcile-unrealized-casts)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%s, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
