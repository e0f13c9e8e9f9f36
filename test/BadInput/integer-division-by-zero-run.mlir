// An integer division by zero at run time raises as eager PyTorch does (RuntimeError: ZeroDivisionError), located
// at the op; before, the compiled code and the reference interpreter both gave 0 there.
// COMMAND: graphfuse-run %s
// EXPECT: %s:8:8: error: integer division by zero in graph.floor_div
func.func @f(%a: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // a divisor with one zero, not folded away: the check runs when the graph does
  %d = arith.constant dense<[1, 2, 3, 0, 5, 6, 7, 8]> : tensor<8xi32>
  %0 = "graph.floor_div"(%a, %d) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}
