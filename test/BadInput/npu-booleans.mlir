// The emulated NPU keeps no boolean buffers: an i1 tensor anywhere is refused up front, at its location, at every
// opt level (fused into a kernel it made an upstream pass of the NPU lowering abort with a segmentation fault).
// COMMAND: graphfuse-run %s --target=npu --opt-level=1
// EXPECT: %s:6:41: error: NPU emulator: boolean (i1) buffers are not supported (tensor<3x4xi1>)

func.func @fuzz(%arg0: tensor<3x4xf16>, %arg1: tensor<3x4xi1>, %arg3: tensor<3x4xf16>) -> (tensor<3x4xf16>, tensor<3x4xi1>) {
  %0 = "graph.logical_not"(%arg1) : (tensor<3x4xi1>) -> tensor<3x4xi1>
  %1 = "graph.logical_not"(%arg1) : (tensor<3x4xi1>) -> tensor<3x4xi1>
  %2 = "graph.logical_or"(%0, %1) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %3 = "graph.logical_or"(%2, %0) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %4 = "graph.logical_and"(%0, %2) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %5 = "graph.select"(%4, %arg3, %arg0) : (tensor<3x4xi1>, tensor<3x4xf16>, tensor<3x4xf16>) -> tensor<3x4xf16>
  %7 = "graph.logical_and"(%4, %3) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %13 = "graph.logical_and"(%7, %0) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  return %5, %13 : tensor<3x4xf16>, tensor<3x4xi1>
}
