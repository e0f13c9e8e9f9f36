// The schedules are a transform-dialect library upstream's interpreter loads as it is: each file with the
// common steps it declares, here matmul.mlir's @register_tiles included from a sequence of one's own, with
// parameters of one's own.
// RUN: mlir-opt %s --pass-pipeline='builtin.module(transform-preload-library{transform-library-paths=%schedules/common.mlir,%schedules/matmul.mlir},transform-interpreter)' | FileCheck %s
// Without the library the include has nothing to run.
// RUN: not mlir-opt %s --pass-pipeline='builtin.module(transform-interpreter)' 2>&1 | FileCheck %s --check-prefix=UNLOADED

// CHECK-LABEL: func.func @product
// CHECK:         scf.forall (%{{.*}}) in (4) {{.*}} -> (tensor<32x48xf32>)
// CHECK:           linalg.matmul ins({{.*}} : tensor<2x1xf32>, tensor<1x16xf32>) outs({{.*}} : tensor<2x16xf32>)
// UNLOADED:      error: unresolved external named sequence
// UNLOADED-NEXT:   transform.include @register_tiles
module attributes {transform.with_named_sequence} {
  func.func @product(%a: tensor<32x64xf32>, %b: tensor<64x48xf32>, %c: tensor<32x48xf32>) -> tensor<32x48xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<32x64xf32>, tensor<64x48xf32>) outs(%c : tensor<32x48xf32>)
      -> tensor<32x48xf32>
    return %r : tensor<32x48xf32>
  }

  transform.named_sequence private @register_tiles(
      !transform.any_op {transform.consumed}, !transform.param<i64> {transform.readonly},
      !transform.param<i64> {transform.readonly}, !transform.param<i64> {transform.readonly},
      !transform.param<i64> {transform.readonly}, !transform.param<i64> {transform.readonly})

  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %matmuls = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %block = transform.param.constant 32 : i64 -> !transform.param<i64>
    %tile_rows = transform.param.constant 2 : i64 -> !transform.param<i64>
    %tile_columns = transform.param.constant 16 : i64 -> !transform.param<i64>
    transform.include @register_tiles failures(propagate) (%matmuls, %rows, %block, %block, %tile_rows, %tile_columns)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    transform.yield
  }
}
