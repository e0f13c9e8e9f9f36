// Found by the differential fuzzer (test/python/test_fuzz.py's compiled property, shrunk by hypothesis, then by
// hand): an i1 result of shape 1x1 computed in a kernel from a reduction made the CPU runtime's i1 -> i8 store
// rewrite ("storing booleans as bytes") build a vector.transfer_write of vector<1x1xi1> into an i8 tensor,
// which does not verify, so the graph did not compile at opt level >= 1.
// XFAIL: *
// RUN: graphfuse-run %s --opt-level 0 --check | FileCheck %s
// RUN: graphfuse-run %s --opt-level 1 --check | FileCheck %s

// CHECK: check result 0: {{.*}}: ok
func.func @boolean_result_of_unit_shapes(%x: tensor<1x1xf32>, %y: tensor<f32>) -> tensor<1x1xi1> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>, keep_dims = false} : (tensor<1x1xf32>) -> tensor<1xf32>
  %1 = "graph.equal"(%0, %y) : (tensor<1xf32>, tensor<f32>) -> tensor<1xi1>
  %2 = "graph.equal"(%x, %y) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xi1>
  %3 = "graph.logical_and"(%2, %1) : (tensor<1x1xi1>, tensor<1xi1>) -> tensor<1x1xi1>
  return %3 : tensor<1x1xi1>
}
