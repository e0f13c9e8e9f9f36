// 10^22 elements: more than a 64-bit size can count.
// COMMAND: graphfuse-opt %s --graph-kernel-fusion
// EXPECT: %s:4:14: error: tensor type tensor<100000000000x100000000000xf32> has 10000000000000000000000 elements (40000000000000000000000 bytes), more than a 64-bit size can count
func.func @f(%a: tensor<100000000000x100000000000xf32>) -> tensor<100000000000x100000000000xf32> {
  %0 = "graph.exp"(%a) : (tensor<100000000000x100000000000xf32>) -> tensor<100000000000x100000000000xf32>
  return %0 : tensor<100000000000x100000000000xf32>
}
