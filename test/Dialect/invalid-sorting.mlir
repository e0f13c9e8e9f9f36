// graph-verify's rules for topk and sort.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

func.func @k_larger_than_the_axis(%x: tensor<6x4xf32>) {
  // expected-error@+1 {{'graph.topk' k = 5 must be in [0, 4], the size of axis 1}}
  %v, %i = "graph.topk"(%x) {k = 5 : i64} : (tensor<6x4xf32>) -> (tensor<6x5xf32>, tensor<6x5xi64>)
  return
}

// -----

func.func @negative_k(%x: tensor<6x4xf32>) {
  // expected-error@+1 {{'graph.topk' k = -1 must be in [0, 4], the size of axis 1}}
  %v, %i = "graph.topk"(%x) {k = -1 : i64} : (tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xi64>)
  return
}

// -----

func.func @indices_are_i64(%x: tensor<6x4xf32>) {
  // expected-error@+1 {{'graph.topk' result #1 has type tensor<6x2xi32>, but its operands and attributes give tensor<6x2xi64>}}
  %v, %i = "graph.topk"(%x) {k = 2 : i64} : (tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xi32>)
  return
}

// -----

func.func @topk_of_booleans(%x: tensor<6x4xi1>) {
  // expected-error@+1 {{'graph.topk' operand tensor<6x4xi1> must have}}
  %v, %i = "graph.topk"(%x) {k = 2 : i64} : (tensor<6x4xi1>) -> (tensor<6x2xi1>, tensor<6x2xi64>)
  return
}

// -----

func.func @sort_of_a_scalar(%x: tensor<f32>) {
  // expected-error@+1 {{'graph.sort' operand tensor<f32> must have at least one dimension}}
  %v, %i = "graph.sort"(%x) : (tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return
}

// -----

func.func @sort_axis_out_of_range(%x: tensor<2x7xf32>) {
  // expected-error@+1 {{'graph.sort' axis 2 is out of range for rank 2}}
  %v, %i = "graph.sort"(%x) {axis = 2 : i64} : (tensor<2x7xf32>) -> (tensor<2x7xf32>, tensor<2x7xi64>)
  return
}
