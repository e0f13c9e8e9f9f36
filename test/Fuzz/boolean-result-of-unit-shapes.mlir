// Found by the differential fuzzer (test/python/test_fuzz.py's compiled property, shrunk by hypothesis, then by
// hand): an i1 result of shape 1x1 computed in a kernel from a reduction is vectorized without a loop, and the CPU
// runtime's i1 -> i8 store rewrite ("storing booleans as bytes") left a vector.transfer_write of vector<1x1xi1>
// into the (now) i8 tensor, which does not verify, so the graph did not compile at opt level >= 1.  The rewrite
// now zero-extends the vector before the write (and truncates after a read).
// Random inputs make both comparisons false; x == y == 2 makes the result true, so both values are checked.
// RUN: graphfuse-run %s --opt-level 0 --check --random | FileCheck %s
// RUN: graphfuse-run %s --opt-level 1 --check --random | FileCheck %s
// RUN: graphfuse-run %s --opt-level 3 --check --random | FileCheck %s
// RUN: %PYTHON -c "import numpy as n; n.savez('%t.npz', arg0=n.full((1, 1), 2, n.float32), arg1=n.float32(2))"
// RUN: graphfuse-run %s --opt-level 1 --check --inputs %t.npz --output %t.out.npz | FileCheck %s
// RUN: %PYTHON -c "import numpy as n; r = n.load('%t.out.npz')['out0']; print(r.dtype, r.tolist())" \
// RUN:   | FileCheck %s --check-prefix=TRUE

// CHECK: result 0: bool[1, 1]
// CHECK: check result 0: {{.*}}: ok
// TRUE: bool {{\[\[}}True]]
func.func @boolean_result_of_unit_shapes(%x: tensor<1x1xf32>, %y: tensor<f32>) -> tensor<1x1xi1> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>, keep_dims = false} : (tensor<1x1xf32>) -> tensor<1xf32>
  %1 = "graph.equal"(%0, %y) : (tensor<1xf32>, tensor<f32>) -> tensor<1xi1>
  %2 = "graph.equal"(%x, %y) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xi1>
  %3 = "graph.logical_and"(%2, %1) : (tensor<1x1xi1>, tensor<1xi1>) -> tensor<1x1xi1>
  return %3 : tensor<1x1xi1>
}
