// compute-in-copy-targets: a buffer one linalg op writes whole (without reading it), then copied whole into a
// view, is computed in that view: the writer moves to the copy and writes its target; the copy and the
// allocation go.  Not when an op between them writes what the writer reads, has effects the pass does not
// follow, or when the writer reads its output or the target's buffer.
// RUN: graphfuse-opt %s --split-input-file --compute-in-copy-targets | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --compute-in-copy-targets --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// STATS: compute-in-copy-targets
// STATS: 3 num-redirected

#id = affine_map<(d0, d1) -> (d0, d1)>

// Two blocks of a concatenation, computed first and copied after: each is computed in its block.
// CHECK-LABEL: func.func @concat(
// CHECK-NOT:     memref.alloc() : memref<2x4xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK:         %[[LEFT:.*]] = memref.subview %[[OUT]][0, 0] [2, 4] [1, 1]
// CHECK:         linalg.generic {{.*}} ins(%arg0 : memref<2x4xf32>) outs(%[[LEFT]] : memref<2x4xf32, strided<[8, 1]>>)
// CHECK:           math.exp
// CHECK:         %[[RIGHT:.*]] = memref.subview %[[OUT]][0, 4] [2, 4] [1, 1]
// CHECK:         linalg.generic {{.*}} ins(%arg1 : memref<2x4xf32>) outs(%[[RIGHT]] : memref<2x4xf32, strided<[8, 1], offset: 4>>)
// CHECK:           math.tanh
// CHECK-NOT:     memref.copy %{{.*}}, %[[LEFT]]
// CHECK-NOT:     memref.copy %{{.*}}, %[[RIGHT]]
// CHECK:         memref.copy %[[OUT]], %arg2
func.func @concat(%x: memref<2x4xf32>, %y: memref<2x4xf32>, %out: memref<2x8xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>} {
  %a = memref.alloc() : memref<2x4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<2x4xf32>) outs(%a : memref<2x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  %b = memref.alloc() : memref<2x4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : memref<2x4xf32>) outs(%b : memref<2x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  }
  %r = memref.alloc() : memref<2x8xf32>
  %left = memref.subview %r[0, 0] [2, 4] [1, 1] : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1]>>
  memref.copy %a, %left : memref<2x4xf32> to memref<2x4xf32, strided<[8, 1]>>
  %right = memref.subview %r[0, 4] [2, 4] [1, 1] : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %b, %right : memref<2x4xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %r, %out : memref<2x8xf32> to memref<2x8xf32>
  return
}

// -----

// A fill writes its whole output without reading it.
// CHECK-LABEL: func.func @fill(
// CHECK:         %[[VIEW:.*]] = memref.subview
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : memref<4xf32, strided<[1], offset: 4>>)
// CHECK-NEXT:    return
func.func @fill(%out: memref<8xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = () -> tensor<8xf32>} {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
  %view = memref.subview %out[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.copy %a, %view : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
  return
}

// -----

// Negative: the writer reads its output (an accumulation), so it needs the allocation's contents.
// CHECK-LABEL: func.func @reads_output(
// CHECK:         memref.alloc() : memref<4xf32>
// CHECK:         memref.copy
func.func @reads_output(%x: memref<4xf32>, %out: memref<8xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<8xf32>} {
  %a = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  %view = memref.subview %out[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %a, %view : memref<4xf32> to memref<4xf32, strided<[1]>>
  return
}

// -----

// Negative: between the writer and the copy a fill overwrites the buffer the writer reads; moved after it, the
// writer would read the filled values.
// CHECK-LABEL: func.func @input_overwritten(
// CHECK:         linalg.generic {{.*}} outs(%[[A:.*]] : memref<4xf32>)
// CHECK:         linalg.fill
// CHECK:         memref.copy %[[A]]
func.func @input_overwritten(%out: memref<8xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = () -> tensor<8xf32>} {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %src = memref.alloc() : memref<4xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<4xf32>)
  %a = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%src : memref<4xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  linalg.fill ins(%two : f32) outs(%src : memref<4xf32>)
  %view = memref.subview %out[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %a, %view : memref<4xf32> to memref<4xf32, strided<[1]>>
  %high = memref.subview %out[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.copy %src, %high : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
  return
}

// -----

// Negative: a call between them may write anything.
// CHECK-LABEL: func.func @call_between(
// CHECK:         memref.alloc() : memref<4xf32>
// CHECK:         call @opaque
// CHECK:         memref.copy
func.func private @opaque()
func.func @call_between(%x: memref<4xf32>, %out: memref<8xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<8xf32>} {
  %a = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  call @opaque() : () -> ()
  %view = memref.subview %out[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %a, %view : memref<4xf32> to memref<4xf32, strided<[1]>>
  return
}

// -----

// Negative: the writer reads the buffer it would then write (a shift of %r within itself).
// CHECK-LABEL: func.func @reads_target(
// CHECK:         memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
func.func @reads_target(%out: memref<8xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = () -> tensor<8xf32>} {
  %r = memref.alloc() : memref<8xf32>
  %low = memref.subview %r[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %a = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%low : memref<4xf32, strided<[1]>>) outs(%a : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  %high = memref.subview %r[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.copy %a, %high : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.copy %r, %out : memref<8xf32> to memref<8xf32>
  return
}

// -----

// Negative: the allocation is read again after the copy; and a reduction does not write each element once.
// CHECK-LABEL: func.func @used_again(
// CHECK:         memref.alloc() : memref<4xf32>
// CHECK:         memref.copy
// CHECK:         memref.alloc() : memref<4xf32>
// CHECK:         memref.copy
func.func @used_again(%x: memref<4x4xf32>, %out: memref<8xf32>, %out2: memref<4xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4x4xf32>) -> (tensor<8xf32>, tensor<4xf32>)} {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
  %view = memref.subview %out[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %a, %view : memref<4xf32> to memref<4xf32, strided<[1]>>
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %view2 = memref.subview %out[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.copy %b, %view2 : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%out2 : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return
}
