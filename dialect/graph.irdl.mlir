// The graph dialect, for `mlir-opt --irdl-file=dialect/graph.irdl.mlir`.
//
// GENERATED from the graphfuse op catalog (dialect/ops/) by
// `python -m graphfuse.dialect.irdl_gen`: do not edit by hand.
// Each operand and result gets its own constraint value, because reusing one
// IRDL constraint for several values forces their types to be identical.
// Optional attributes are not declared (IRDL has none); graph-verify checks
// them together with element types, ranks and broadcasting.
irdl.dialect @graph {
  // Elementwise absolute value.
  irdl.operation @abs {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise arc cosine in [0, pi] (NaN outside [-1, 1]).
  irdl.operation @acos {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise inverse hyperbolic cosine (NaN below 1).
  irdl.operation @acosh {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Adam: m and v moved toward the gradient and its square, the variable stepped by lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon).
  // optional: use_nesterov (default false)
  irdl.operation @adam {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %in5 = irdl.base "!builtin.tensor"
    %in6 = irdl.base "!builtin.tensor"
    %in7 = irdl.base "!builtin.tensor"
    %in8 = irdl.base "!builtin.tensor"
    %in9 = irdl.base "!builtin.tensor"
    %out10 = irdl.base "!builtin.tensor"
    %out11 = irdl.base "!builtin.tensor"
    %out12 = irdl.base "!builtin.tensor"
    irdl.operands(variable: %in0, m: %in1, v: %in2, beta1_power: %in3, beta2_power: %in4, learning_rate: %in5, beta1: %in6, beta2: %in7, epsilon: %in8, gradient: %in9)
    irdl.results(new_variable: %out10, new_m: %out11, new_v: %out12)
  }

  // BERT's fused AdamW step: new v, new m and the variable less lr * (m / (epsilon + sqrt(v)) + decay * variable).
  irdl.operation @adam_apply_one_with_decay {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %in5 = irdl.base "!builtin.tensor"
    %in6 = irdl.base "!builtin.tensor"
    %in7 = irdl.base "!builtin.tensor"
    %in8 = irdl.base "!builtin.tensor"
    %in9 = irdl.base "!builtin.tensor"
    %in10 = irdl.base "!builtin.tensor"
    %out11 = irdl.base "!builtin.tensor"
    %out12 = irdl.base "!builtin.tensor"
    %out13 = irdl.base "!builtin.tensor"
    irdl.operands(grad: %in0, v: %in1, m: %in2, variable: %in3, learning_rate: %in4, beta1: %in5, one_minus_beta1: %in6, beta2: %in7, one_minus_beta2: %in8, decay: %in9, epsilon: %in10)
    irdl.results(new_v: %out11, new_m: %out12, new_variable: %out13)
  }

  // AdamW: the Adam step of m / (sqrt(v) + epsilon) plus decay * variable, scaled by the learning rate.
  irdl.operation @adam_weight_decay {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %in5 = irdl.base "!builtin.tensor"
    %in6 = irdl.base "!builtin.tensor"
    %in7 = irdl.base "!builtin.tensor"
    %in8 = irdl.base "!builtin.tensor"
    %out9 = irdl.base "!builtin.tensor"
    %out10 = irdl.base "!builtin.tensor"
    %out11 = irdl.base "!builtin.tensor"
    irdl.operands(variable: %in0, m: %in1, v: %in2, learning_rate: %in3, beta1: %in4, beta2: %in5, epsilon: %in6, decay: %in7, gradient: %in8)
    irdl.results(new_variable: %out9, new_m: %out10, new_v: %out11)
  }

  // Elementwise sum.
  irdl.operation @add {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Residual add followed by layer normalization, in one kernel.
  // optional: begin_norm_axis (default -1), epsilon (default 1e-05)
  irdl.operation @add_layer_norm {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    %out5 = irdl.base "!builtin.tensor"
    irdl.operands(x1: %in0, x2: %in1, gamma: %in2, beta: %in3)
    irdl.results(y: %out4, sum: %out5)
  }

  // Sum of two or more tensors of one type (MindSpore AddN).
  irdl.operation @add_n {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(first: %in0, second: %in1, rest: variadic %in2)
    irdl.results(result: %out3)
  }

  // Residual add followed by RMS normalization, in one kernel.
  // optional: epsilon (default 1e-06)
  irdl.operation @add_rms_norm {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    irdl.operands(x1: %in0, x2: %in1, gamma: %in2)
    irdl.results(y: %out3, sum: %out4)
  }

  // add_rms_norm that also returns its normalized output cast to f32.
  // optional: epsilon (default 1e-06)
  irdl.operation @add_rms_norm_cast {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    %out5 = irdl.base "!builtin.tensor"
    irdl.operands(x1: %in0, x2: %in1, gamma: %in2)
    irdl.results(y_cast: %out3, y: %out4, sum: %out5)
  }

  // Residual add, RMS normalization and per-row dynamic int8 quantization.
  // optional: epsilon (default 1e-06)
  irdl.operation @add_rms_norm_dynamic_quant {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    %out5 = irdl.base "!builtin.tensor"
    %out6 = irdl.base "!builtin.tensor"
    irdl.operands(x1: %in0, x2: %in1, gamma: %in2, smooth_scales: optional %in3)
    irdl.results(q: %out4, scale: %out5, sum: %out6)
  }

  // Residual add, RMS normalization and static int8 quantization.
  // optional: epsilon (default 1e-06)
  irdl.operation @add_rms_norm_quant {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %out5 = irdl.base "!builtin.tensor"
    %out6 = irdl.base "!builtin.tensor"
    irdl.operands(x1: %in0, x2: %in1, gamma: %in2, scale: %in3, offset: %in4)
    irdl.results(q: %out5, sum: %out6)
  }

  // x + value * tensor1 * tensor2.
  // optional: value (default 1.0)
  irdl.operation @addcmul {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, tensor1: %in1, tensor2: %in2)
    irdl.results(result: %out3)
  }

  // The ranks' operands concatenated along an axis, on every rank.
  // optional: axis (default 0), group (default "world")
  irdl.operation @all_gather {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.integer"
    irdl.operands(x: %in0)
    irdl.attributes {"group_size" = %a2}
    irdl.results(result: %out1)
  }

  // Every rank gets the sum (max, min) of all ranks' operands.
  // optional: reduction (default "sum"), group (default "world")
  irdl.operation @all_reduce {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.integer"
    irdl.operands(x: %in0)
    irdl.attributes {"group_size" = %a2}
    irdl.results(result: %out1)
  }

  // Momentum SGD: accumulation * momentum + gradient, and the variable stepped by learning_rate times it.
  // optional: use_nesterov (default false)
  irdl.operation @apply_momentum {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %out5 = irdl.base "!builtin.tensor"
    %out6 = irdl.base "!builtin.tensor"
    irdl.operands(variable: %in0, accumulation: %in1, learning_rate: %in2, gradient: %in3, momentum: %in4)
    irdl.results(new_variable: %out5, new_accumulation: %out6)
  }

  // Position of the largest element along an axis (i64).
  // optional: keep_dims (default false)
  irdl.operation @argmax {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.integer"
    irdl.operands(operand: %in0)
    irdl.attributes {"axis" = %a2}
    irdl.results(result: %out1)
  }

  // The position (i32) and the value of the largest element along an axis.
  // optional: axis (default 0), keep_dims (default false)
  irdl.operation @argmax_with_value {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(index: %out1, value: %out2)
  }

  // Position of the smallest element along an axis (i64).
  // optional: keep_dims (default false)
  irdl.operation @argmin {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.integer"
    irdl.operands(operand: %in0)
    irdl.attributes {"axis" = %a2}
    irdl.results(result: %out1)
  }

  // The position (i32) and the value of the smallest element along an axis.
  // optional: axis (default 0), keep_dims (default false)
  irdl.operation @argmin_with_value {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(index: %out1, value: %out2)
  }

  // Elementwise arc sine in [-pi/2, pi/2] (NaN outside [-1, 1]).
  irdl.operation @asin {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise inverse hyperbolic sine.
  irdl.operation @asinh {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // The new value of a variable (MindSpore's Assign): value, broadcast to the variable's shape.
  irdl.operation @assign {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(variable: %in0, value: %in1)
    irdl.results(result: %out2)
  }

  // The variable's new value variable + value (graphs are functional; see graph.assign).
  irdl.operation @assign_add {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(variable: %in0, value: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise arc tangent in [-pi/2, pi/2].
  irdl.operation @atan {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise arc tangent of lhs / rhs in [-pi, pi], by the signs of both.
  irdl.operation @atan2 {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // 2-D average pooling over NCHW.
  // optional: strides (default [1, 1]), pads (default [0, 0, 0, 0]), count_include_pad (default false)
  irdl.operation @avg_pool2d {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(x: %in0)
    irdl.attributes {"kernel" = %a2}
    irdl.results(result: %out1)
  }

  // Inference-mode batch normalization over channel axis 1.
  // optional: epsilon (default 1e-05)
  irdl.operation @batch_norm {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %out5 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, scale: %in1, offset: %in2, mean: %in3, var: %in4)
    irdl.results(result: %out5)
  }

  // The logistic loss of logits, pos_weight on the positive term, weighted, reduced.
  // optional: reduction (default "mean")
  irdl.operation @bce_with_logits_loss {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    irdl.operands(logits: %in0, labels: %in1, weight: %in2, pos_weight: %in3)
    irdl.results(result: %out4)
  }

  // Add a 1-D bias along one axis.
  // optional: axis (default -1)
  irdl.operation @bias_add {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, bias: %in1)
    irdl.results(result: %out2)
  }

  // Gradient of bias_add for its bias: dy summed over every axis but the channel one.
  // optional: axis (default 1)
  irdl.operation @bias_add_grad {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(dy: %in0)
    irdl.results(result: %out1)
  }

  // -weight * (y log(x) + (1 - y) log(1 - x)), reduced.
  // optional: reduction (default "mean")
  irdl.operation @binary_cross_entropy {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(logits: %in0, labels: %in1, weight: %in2)
    irdl.results(result: %out3)
  }

  // Elementwise bitwise and.
  irdl.operation @bitwise_and {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise bitwise complement, ~x (of a boolean: its negation).
  irdl.operation @bitwise_not {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise bitwise or.
  irdl.operation @bitwise_or {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise bitwise exclusive or.
  irdl.operation @bitwise_xor {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Broadcast the operand to the result type's shape (numpy.broadcast_to rules).
  irdl.operation @broadcast_to {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise conversion to the element type of the result.
  irdl.operation @cast {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise round toward +inf.
  irdl.operation @ceil {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // min(max(x, low), high).
  // optional: low (default -inf), high (default inf)
  irdl.operation @clamp_scalar {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // max(select(x > threshold, sqrt(select(x > threshold, x, fill)), x), floor).
  irdl.operation @clip_by_norm_no_div_sum {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, threshold: %in1, fill: %in2, floor: %in3)
    irdl.results(result: %out4)
  }

  // exp to about 1.2e-4, as PyTorch's x86 CPU attention computes its f16/bf16 softmax.
  irdl.operation @coarse_exp {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Join the operands along an axis.
  irdl.operation @concat {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %a4 = irdl.base "#builtin.integer"
    irdl.operands(first: %in0, second: %in1, rest: variadic %in2)
    irdl.attributes {"axis" = %a4}
    irdl.results(result: %out3)
  }

  // 2-D convolution (cross-correlation), NCHW input and OIHW weights.
  // optional: strides (default [1, 1]), pads (default [0, 0, 0, 0]), dilations (default [1, 1]), groups (default 1)
  irdl.operation @conv2d {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, w: %in1, bias: optional %in2)
    irdl.results(result: %out3)
  }

  // Elementwise cosine (radians).
  irdl.operation @cos {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Hyperbolic cosine, (exp(x) + exp(-x)) / 2.
  irdl.operation @cosh {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Running sum along an axis (ONNX CumSum, torch.cumsum).
  // optional: exclusive (default false), reverse (default false)
  irdl.operation @cumsum {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.integer"
    irdl.operands(operand: %in0)
    irdl.attributes {"axis" = %a2}
    irdl.results(result: %out1)
  }

  // The size of one dimension of a tensor, as a rank-0 i64 tensor (a symbolic size used as a value).
  irdl.operation @dimension_size {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.integer"
    irdl.operands(source: %in0)
    irdl.attributes {"axis" = %a2}
    irdl.results(result: %out1)
  }

  // Elementwise quotient.
  irdl.operation @div {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // x / y, rounded as rounding_mode says.
  // optional: rounding_mode (default "none")
  irdl.operation @div_mod {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, y: %in1)
    irdl.results(result: %out2)
  }

  // x * mask / keep_prob with mask 1 where a graph.random_uniform value is below keep_prob, and the mask.
  // optional: keep_prob (default 0.5), seed (default 0)
  irdl.operation @dropout {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(output: %out1, mask: %out2)
  }

  // Gradient of dropout: dy * mask / keep_prob.
  // optional: keep_prob (default 0.5)
  irdl.operation @dropout_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(dy: %in0, mask: %in1)
    irdl.results(result: %out2)
  }

  // Per-row symmetric int8 quantization with a computed scale.
  irdl.operation @dynamic_quant {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, smooth_scales: optional %in1)
    irdl.results(y: %out2, scale: %out3)
  }

  // x where x > 0, else alpha * (exp(x) - 1).
  // optional: alpha (default 1.0)
  irdl.operation @elu {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise lhs == rhs (i1 result).
  irdl.operation @equal {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // How many elements of x equal y's, as an i32 tensor of one element.
  irdl.operation @equal_count {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, y: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise Gauss error function.
  irdl.operation @erf {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Complementary error function, 1 - erf(x).
  irdl.operation @erfc {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise natural exponential.
  irdl.operation @exp {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // x with a dimension of size 1 inserted.
  // optional: axis (default 0)
  irdl.operation @expand_dims {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise exp(x) - 1, accurate near 0.
  irdl.operation @expm1 {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Sigmoid approximation of GELU, x * sigmoid(1.702 x).
  irdl.operation @fast_gelu {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of fast_gelu: dy * (s + 1.702 x s (1 - s)), s = sigmoid(1.702 x).
  irdl.operation @fast_gelu_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(dy: %in0, x: %in1)
    irdl.results(result: %out2)
  }

  // A tensor of `shape` holding the scalar value.
  // optional: shape (default ())
  irdl.operation @fill_v2 {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(value: %in0)
    irdl.results(result: %out1)
  }

  // Scaled dot-product attention in one op.
  // optional: safe_softmax (default false)
  irdl.operation @flash_attention {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    %a5 = irdl.base "#builtin.float"
    irdl.operands(q: %in0, k: %in1, v: %in2, mask: optional %in3)
    irdl.attributes {"scale" = %a5}
    irdl.results(result: %out4)
  }

  // Elementwise round toward -inf.
  irdl.operation @floor {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise quotient rounded toward -inf.
  irdl.operation @floor_div {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise remainder of the floor division (Python's %).
  irdl.operation @floor_mod {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // x * y + z, rounded after the product (no FMA).
  irdl.operation @fused_mul_add {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, y: %in1, z: %in2)
    irdl.results(result: %out3)
  }

  // Take slices of data along an axis at the given indices (ONNX Gather, embedding lookup).
  // optional: axis (default 0), negative_indices (default true)
  irdl.operation @gather {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(data: %in0, indices: %in1)
    irdl.results(result: %out2)
  }

  // Take one element of data per index along an axis (ONNX GatherElements, torch.gather).
  // optional: axis (default 0), negative_indices (default true)
  irdl.operation @gather_elements {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(data: %in0, indices: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise Gaussian error linear unit.
  // optional: approximate (default "none")
  irdl.operation @gelu {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of gelu: dy * (Phi(x) + x phi(x)), or of its tanh form.
  // optional: approximate (default "none")
  irdl.operation @gelu_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(dy: %in0, x: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise lhs > rhs (i1 result).
  irdl.operation @greater {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise lhs >= rhs (i1 result).
  irdl.operation @greater_equal {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Group normalization: each sample's channels normalized in groups.
  // optional: epsilon (default 1e-05)
  irdl.operation @group_norm {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %a4 = irdl.base "#builtin.integer"
    irdl.operands(x: %in0, gamma: %in1, beta: %in2)
    irdl.attributes {"num_groups" = %a4}
    irdl.results(result: %out3)
  }

  // Rows sorted by group, each group's rows times its own matrix.
  // optional: transpose_weights (default false)
  irdl.operation @grouped_matmul {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, weights: %in1, group_ends: %in2)
    irdl.results(result: %out3)
  }

  // Hard shrink: x where |x| > lambd, else 0.
  // optional: lambd (default 0.5)
  irdl.operation @hshrink {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Hard sigmoid: clamp(x / 6 + 0.5, 0, 1).
  irdl.operation @hsigmoid {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Hard swish: x * hsigmoid(x).
  irdl.operation @hswish {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // x itself.
  irdl.operation @identity {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // The positions 0, 1, ... along one dimension of a tensor (arange over a dynamic size).
  irdl.operation @iota {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.integer"
    irdl.operands(like: %in0)
    irdl.attributes {"axis" = %a2}
    irdl.results(result: %out1)
  }

  // Elementwise test for a value that is neither infinite nor NaN (i1 result).
  irdl.operation @isfinite {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise test for +inf or -inf (i1 result).
  irdl.operation @isinf {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise test for NaN (i1 result).
  irdl.operation @isnan {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // LAMB's update direction: bias-corrected m / (sqrt(v) + epsilon) plus the weight decay term, with the new v and m.
  irdl.operation @lamb_apply_optimizer {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %in5 = irdl.base "!builtin.tensor"
    %in6 = irdl.base "!builtin.tensor"
    %in7 = irdl.base "!builtin.tensor"
    %in8 = irdl.base "!builtin.tensor"
    %in9 = irdl.base "!builtin.tensor"
    %in10 = irdl.base "!builtin.tensor"
    %in11 = irdl.base "!builtin.tensor"
    %out12 = irdl.base "!builtin.tensor"
    %out13 = irdl.base "!builtin.tensor"
    %out14 = irdl.base "!builtin.tensor"
    irdl.operands(grad: %in0, v: %in1, m: %in2, variable: %in3, beta1: %in4, one_minus_beta1: %in5, beta2: %in6, one_minus_beta2: %in7, epsilon: %in8, steps: %in9, do_use_weight: %in10, weight_decay_rate: %in11)
    irdl.results(update: %out12, new_v: %out13, new_m: %out14)
  }

  // LAMB's step: param less lr * trust * update, trust = w_norm / g_norm when both are > 0, else 1.
  irdl.operation @lamb_apply_weight {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %out5 = irdl.base "!builtin.tensor"
    irdl.operands(w_norm: %in0, g_norm: %in1, learning_rate: %in2, update: %in3, param: %in4)
    irdl.results(result: %out5)
  }

  // Layer normalization over the trailing axes.
  // optional: begin_norm_axis (default -1), epsilon (default 1e-05)
  irdl.operation @layer_norm {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, gamma: %in1, beta: %in2)
    irdl.results(result: %out3)
  }

  // Gradients of layer_norm for x, gamma and beta, from the forward pass's mean and variance.
  // optional: begin_norm_axis (default -1), begin_params_axis (default -1), epsilon (default 1e-07)
  irdl.operation @layer_norm_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %in4 = irdl.base "!builtin.tensor"
    %out5 = irdl.base "!builtin.tensor"
    %out6 = irdl.base "!builtin.tensor"
    %out7 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, dy: %in1, variance: %in2, mean: %in3, gamma: %in4)
    irdl.results(dx: %out5, dgamma: %out6, dbeta: %out7)
  }

  // x where x > 0, else negative_slope * x.
  // optional: negative_slope (default 0.01)
  irdl.operation @leaky_relu {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise lhs < rhs (i1 result).
  irdl.operation @less {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise lhs <= rhs (i1 result).
  irdl.operation @less_equal {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise natural logarithm (-inf at 0, NaN below).
  irdl.operation @log {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Log of the softmax along one axis (numerically stable).
  // optional: axis (default -1)
  irdl.operation @log_softmax {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of log_softmax from its output: dy - exp(y) * sum(dy, axis).
  // optional: axis (default -1)
  irdl.operation @log_softmax_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(y: %in0, dy: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise boolean and.
  irdl.operation @logical_and {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise boolean negation.
  irdl.operation @logical_not {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise boolean or.
  irdl.operation @logical_or {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Batched matrix product with numpy.matmul semantics.
  // optional: transpose_a (default false), transpose_b (default false)
  irdl.operation @matmul {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(a: %in0, b: %in1)
    irdl.results(result: %out2)
  }

  // Matmul followed by the addition of a tensor broadcast to its result.
  // optional: transpose_a (default false), transpose_b (default false)
  irdl.operation @matmul_add {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(a: %in0, b: %in1, c: %in2)
    irdl.results(result: %out3)
  }

  // A matmul whose partial products are summed over the ranks (MatMulAllReduce), optional bias after.
  // optional: transpose_a (default false), transpose_b (default false), group (default "world"), chunks (default 0)
  irdl.operation @matmul_all_reduce {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %a4 = irdl.base "#builtin.integer"
    irdl.operands(a: %in0, b: %in1, bias: optional %in2)
    irdl.attributes {"group_size" = %a4}
    irdl.results(result: %out3)
  }

  // Matmul followed by a bias along the last axis.
  // optional: transpose_a (default false), transpose_b (default false)
  irdl.operation @matmul_bias_add {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(a: %in0, b: %in1, bias: %in2)
    irdl.results(result: %out3)
  }

  // Matmul followed by gelu.
  // optional: transpose_a (default false), transpose_b (default false), approximate (default "none")
  irdl.operation @matmul_gelu {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(a: %in0, b: %in1)
    irdl.results(result: %out2)
  }

  // Matmul followed by relu.
  // optional: transpose_a (default false), transpose_b (default false)
  irdl.operation @matmul_relu {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(a: %in0, b: %in1)
    irdl.results(result: %out2)
  }

  // Matmul whose result is split along its last axis.
  // optional: transpose_a (default false), transpose_b (default false)
  irdl.operation @matmul_split {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    %a5 = irdl.base "#builtin.dense_array"
    irdl.operands(a: %in0, b: %in1)
    irdl.attributes {"sizes" = %a5}
    irdl.results(first: %out2, second: %out3, rest: variadic %out4)
  }

  // 2-D max pooling over NCHW.
  // optional: strides (default [1, 1]), pads (default [0, 0, 0, 0])
  irdl.operation @max_pool2d {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(x: %in0)
    irdl.attributes {"kernel" = %a2}
    irdl.results(result: %out1)
  }

  // Elementwise maximum.
  irdl.operation @maximum {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Gradients of maximum(x1, x2): dy to x1 where x1 >= x2, else to x2.
  irdl.operation @maximum_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    irdl.operands(x1: %in0, x2: %in1, dy: %in2)
    irdl.results(dx1: %out3, dx2: %out4)
  }

  // Elementwise minimum.
  irdl.operation @minimum {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Gradients of minimum(x1, x2): dy to x1 where x1 <= x2, else to x2.
  irdl.operation @minimum_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    irdl.operands(x1: %in0, x2: %in1, dy: %in2)
    irdl.results(dx1: %out3, dx2: %out4)
  }

  // Elementwise remainder of the division truncated toward zero (C's fmod).
  irdl.operation @mod {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise product.
  irdl.operation @mul {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise negation.
  irdl.operation @neg {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise lhs != rhs (i1 result).
  irdl.operation @not_equal {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // One-hot encoding: on_value where the position along the new axis is the index, else off_value.
  // optional: axis (default -1)
  irdl.operation @one_hot {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %a4 = irdl.base "#builtin.integer"
    irdl.operands(indices: %in0, on_value: %in1, off_value: %in2)
    irdl.attributes {"depth" = %a4}
    irdl.results(result: %out3)
  }

  // Ones of x's shape and type.
  irdl.operation @ones_like {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Pad (or crop, by negative pads) every dimension with a constant, or with the operand reflected, replicated or wrapped around (PyTorch's F.pad).
  // optional: mode (default "constant")
  irdl.operation @pad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    %a3 = irdl.base "#builtin.dense_array"
    %a4 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0, padding_value: optional %in1)
    irdl.attributes {"low" = %a3, "high" = %a4}
    irdl.results(result: %out2)
  }

  // Elementwise power, lhs raised to rhs.
  irdl.operation @pow {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // int8 x int8 batch matmul, dequantized by a scale (Ascend's QuantBatchMatmul), optional float bias.
  // optional: transpose_x1 (default false), transpose_x2 (default false), dtype (default "f16")
  irdl.operation @quant_batch_matmul {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    irdl.operands(x1: %in0, x2: %in1, scale: %in2, bias: optional %in3)
    irdl.results(y: %out4)
  }

  // A quantized batch matmul summed over the ranks, then an add (QuantBatchMatmulAllReduce).
  // optional: transpose_x1 (default false), transpose_x2 (default false), dtype (default "f16"), group (default "world"), chunks (default 0)
  irdl.operation @quant_batch_matmul_all_reduce {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    %a5 = irdl.base "#builtin.integer"
    irdl.operands(x1: %in0, x2: %in1, scale: %in2, x3: optional %in3)
    irdl.attributes {"group_size" = %a5}
    irdl.results(result: %out4)
  }

  // Static int8 quantization with a given scale and offset.
  irdl.operation @quantize {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, scale: %in1, offset: %in2)
    irdl.results(q: %out3)
  }

  // Pseudo-random f32 values in [0, 1) of `like`'s shape: a counter-based hash of (seed, position).
  // optional: seed (default 0)
  irdl.operation @random_uniform {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(like: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise reciprocal, 1 / x.
  irdl.operation @reciprocal {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Maximum over the given axes.
  // optional: keep_dims (default false)
  irdl.operation @reduce_max {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0)
    irdl.attributes {"axes" = %a2}
    irdl.results(result: %out1)
  }

  // Arithmetic mean over the given axes.
  // optional: keep_dims (default false)
  irdl.operation @reduce_mean {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0)
    irdl.attributes {"axes" = %a2}
    irdl.results(result: %out1)
  }

  // Minimum over the given axes.
  // optional: keep_dims (default false)
  irdl.operation @reduce_min {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0)
    irdl.attributes {"axes" = %a2}
    irdl.results(result: %out1)
  }

  // The ranks' operands reduced, rank k keeping the k-th block.
  // optional: axis (default 0), reduction (default "sum"), group (default "world")
  irdl.operation @reduce_scatter {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.integer"
    irdl.operands(x: %in0)
    irdl.attributes {"group_size" = %a2}
    irdl.results(result: %out1)
  }

  // Sum over the given axes.
  // optional: keep_dims (default false)
  irdl.operation @reduce_sum {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0)
    irdl.attributes {"axes" = %a2}
    irdl.results(result: %out1)
  }

  // Elementwise max(x, 0), as PyTorch's: x where it is not below 0 (NaN stays NaN, -0 stays -0).
  irdl.operation @relu {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of relu: dy where x > 0, else 0.
  irdl.operation @relu_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(dy: %in0, x: %in1)
    irdl.results(result: %out2)
  }

  // Each element repeated `repeats` times along `dim`.
  // optional: repeats (default 1), dim (default 0)
  irdl.operation @repeat_interleave {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Reinterpret the operand's elements (row-major order) with the result type's shape.
  irdl.operation @reshape {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0, sizes: optional %in1)
    irdl.results(result: %out2)
  }

  // Resize the last one or two dims: nearest or bilinear (PyTorch's F.interpolate).
  // optional: mode (default "nearest"), align_corners (default false), ratio_h (default 0.0), ratio_w (default 0.0)
  irdl.operation @resize {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(x: %in0)
    irdl.attributes {"size" = %a2}
    irdl.results(result: %out1)
  }

  // Root-mean-square normalization over the last axis.
  // optional: epsilon (default 1e-06)
  irdl.operation @rms_norm {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, gamma: %in1)
    irdl.results(result: %out2)
  }

  // RMS normalization followed by static int8 quantization.
  // optional: epsilon (default 1e-06)
  irdl.operation @rms_norm_quant {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %in3 = irdl.base "!builtin.tensor"
    %out4 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, gamma: %in1, scale: %in2, offset: %in3)
    irdl.results(q: %out4)
  }

  // Elementwise round to nearest integer, halves to even (2.5 -> 2).
  irdl.operation @round {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise reciprocal square root, 1 / sqrt(x).
  irdl.operation @rsqrt {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of rsqrt from its output: -0.5 * dy * y^3.
  irdl.operation @rsqrt_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(y: %in0, dy: %in1)
    irdl.results(result: %out2)
  }

  // Softmax along one axis, 0 for a slice of all -inf (PyTorch's SDPA).
  // optional: axis (default -1)
  irdl.operation @safe_softmax {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Write slices of updates into a copy of data along an axis at the given indices (index_copy).
  // optional: axis (default 0), negative_indices (default true)
  irdl.operation @scatter_update {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(data: %in0, indices: %in1, updates: %in2)
    irdl.results(result: %out3)
  }

  // Elementwise choice: on_true where the condition holds, else on_false.
  irdl.operation @select {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(condition: %in0, on_true: %in1, on_false: %in2)
    irdl.results(result: %out3)
  }

  // Elementwise logistic function, 1 / (1 + exp(-x)).
  irdl.operation @sigmoid {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise logistic loss: max(x, 0) - x z + log(1 + exp(-|x|)).
  irdl.operation @sigmoid_cross_entropy_with_logits {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(logits: %in0, labels: %in1)
    irdl.results(result: %out2)
  }

  // Gradient of the logistic loss for the logits: (sigmoid(x) - z) * dout.
  irdl.operation @sigmoid_cross_entropy_with_logits_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %in2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(logits: %in0, labels: %in1, dout: %in2)
    irdl.results(result: %out3)
  }

  // Gradient of sigmoid from its output: dy * y * (1 - y).
  irdl.operation @sigmoid_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(y: %in0, dy: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise sign: -1, 0 or 1 (+0 for +-0 and NaN, as PyTorch's).
  irdl.operation @sign {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise SiLU (swish), x * sigmoid(x).
  irdl.operation @silu {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of silu: dy * s * (1 + x (1 - s)), s = sigmoid(x).
  irdl.operation @silu_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(dy: %in0, x: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise sine (radians).
  irdl.operation @sin {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Hyperbolic sine, (exp(x) - exp(-x)) / 2.
  irdl.operation @sinh {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Take the strided box start:limit:strides of the operand (StableHLO slice).
  // optional: strides (default none)
  irdl.operation @slice {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    %a3 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0)
    irdl.attributes {"start" = %a2, "limit" = %a3}
    irdl.results(result: %out1)
  }

  // Softmax along one axis (numerically stable).
  // optional: axis (default -1)
  irdl.operation @softmax {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Cross entropy of softmax(logits) against labels along the last axis, and its gradient softmax(logits) - labels.
  irdl.operation @softmax_cross_entropy_with_logits {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(logits: %in0, labels: %in1)
    irdl.results(loss: %out2, backprop: %out3)
  }

  // Gradient of softmax from its output: (dy - sum(dy * y, axis)) * y.
  // optional: axis (default -1)
  irdl.operation @softmax_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(y: %in0, dy: %in1)
    irdl.results(result: %out2)
  }

  // log(1 + exp(beta x)) / beta, x where beta x > threshold (PyTorch's softplus).
  // optional: beta (default 1.0), threshold (default inf)
  irdl.operation @softplus {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of softplus: dy * sigmoid(x).
  irdl.operation @softplus_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(dy: %in0, x: %in1)
    irdl.results(result: %out2)
  }

  // The elements sorted along an axis and the positions they come from (torch.sort).
  // optional: axis (default -1), descending (default false), stable (default false)
  irdl.operation @sort {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(values: %out1, indices: %out2)
  }

  // Cut the operand along an axis into pieces of the given sizes.
  irdl.operation @split {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    %a4 = irdl.base "#builtin.integer"
    %a5 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0)
    irdl.attributes {"axis" = %a4, "sizes" = %a5}
    irdl.results(first: %out1, second: %out2, rest: variadic %out3)
  }

  // Elementwise square root (NaN for negative inputs).
  irdl.operation @sqrt {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of sqrt from its output: dy * 0.5 / y.
  irdl.operation @sqrt_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(y: %in0, dy: %in1)
    irdl.results(result: %out2)
  }

  // Elementwise square, x * x.
  irdl.operation @square {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // The sums of the squares of x and of y (two scalars).
  irdl.operation @square_sum_all {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    %out3 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0, y: %in1)
    irdl.results(x_sum: %out2, y_sum: %out3)
  }

  // Elementwise (a - b)^2 (MindSpore SquaredDifference).
  irdl.operation @squared_difference {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(a: %in0, b: %in1)
    irdl.results(result: %out2)
  }

  // x without its dimensions of size 1 (or those of `axis`).
  // optional: axis (default ())
  irdl.operation @squeeze {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Pseudo-random N(0, 1) values of `like`'s shape (Box-Muller on two graph.random_uniform streams).
  // optional: seed (default 0)
  irdl.operation @standard_normal {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(like: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise difference.
  irdl.operation @sub {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %in0, rhs: %in1)
    irdl.results(result: %out2)
  }

  // SwiGLU: silu of the first half times the second half.
  // optional: axis (default -1)
  irdl.operation @swiglu {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }

  // Elementwise hyperbolic tangent.
  irdl.operation @tanh {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Gradient of tanh from its output: dy * (1 - y^2).
  irdl.operation @tanh_grad {
    %in0 = irdl.base "!builtin.tensor"
    %in1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    irdl.operands(y: %in0, dy: %in1)
    irdl.results(result: %out2)
  }

  // Repeat the operand along each dimension (numpy.tile).
  irdl.operation @tile {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0)
    irdl.attributes {"multiples" = %a2}
    irdl.results(result: %out1)
  }

  // The k largest (or smallest) elements along an axis and their positions (torch.topk).
  // optional: axis (default -1), largest (default true), sorted (default true)
  irdl.operation @topk {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %out2 = irdl.base "!builtin.tensor"
    %a3 = irdl.base "#builtin.integer"
    irdl.operands(operand: %in0)
    irdl.attributes {"k" = %a3}
    irdl.results(values: %out1, indices: %out2)
  }

  // Permute the dimensions: result dim i is operand dim perm[i].
  irdl.operation @transpose {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %in0)
    irdl.attributes {"perm" = %a2}
    irdl.results(result: %out1)
  }

  // Elementwise round toward zero.
  irdl.operation @trunc {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(operand: %in0)
    irdl.results(result: %out1)
  }

  // Zeros of x's shape and type.
  irdl.operation @zeros_like {
    %in0 = irdl.base "!builtin.tensor"
    %out1 = irdl.base "!builtin.tensor"
    irdl.operands(x: %in0)
    irdl.results(result: %out1)
  }
}
