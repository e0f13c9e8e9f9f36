// Fusion passes run alone by their seed name, written with underscores or dashes, as flags or in pipelines.
// RUN: graphfuse-opt --add_rms_norm_fusion %s | FileCheck %s
// RUN: graphfuse-opt --add-rms-norm-fusion %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(add-rms-norm-fusion)' %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-fusion{enable-pass=add-rms-norm-fusion})' %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-fusion{disable-pass=add-rms-norm-fusion})' %s | FileCheck %s --check-prefix=OFF
// The IR dump header names the pass as the seed does.
// RUN: graphfuse-opt --add-rms-norm-fusion --mlir-print-ir-after-all %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP
// DUMP: // -----// IR Dump After AddRmsNormFusion (add_rms_norm_fusion) //----- //

// CHECK-LABEL: func.func @block
// CHECK:         %{{.*}}:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2)
// CHECK-NOT:     "graph.rms_norm"
// OFF-LABEL: func.func @block
// OFF:         "graph.add"
// OFF:         "graph.rms_norm"
func.func @block(%x1: tensor<2x8xf32>, %x2: tensor<2x8xf32>, %gamma: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = "graph.add"(%x1, %x2) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = "graph.rms_norm"(%0, %gamma) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}
