// Two functions with foldable arith and a dead private one: input of mlir-opt-parity-instrumentation.test.
func.func @f(%a: i32, %x: tensor<4x8xf32>) -> (i32, tensor<4x8xf32>) {
  %c = arith.constant 0 : i32
  %b = arith.addi %a, %c : i32
  %d = arith.addi %a, %c : i32
  %e = arith.muli %b, %d : i32
  %y = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %e, %y : i32, tensor<4x8xf32>
}
func.func @g(%a: i32, %x: i32) -> i32 {
  %b = arith.muli %a, %x : i32
  %c = arith.muli %a, %x : i32
  %d = arith.xori %b, %c : i32
  return %d : i32
}
func.func private @dead(%a: i32) -> i32 {
  return %a : i32
}
