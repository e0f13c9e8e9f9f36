"""graph-to-linalg for the structured ops: reductions, matmul, conv2d, the 2-D poolings and resize.

Every reduction, contraction and window op computes into a
``linalg.fill``-initialised destination, in the accumulator type of the op's
reference semantics
(``graphfuse.dialect.ops.reduction``, ``.nn`` and ``.spatial``): f32 for
f16/bf16 operands (the interpreter widens them and rounds each result once), the
operand type otherwise.  A final elementwise ``linalg.generic`` rounds an f32
accumulator back to f16/bf16 (``arith.truncf``).

- ``reduce_sum/mean/max/min``: one ``linalg.generic`` with the reduced axes as
  reduction iterators into a destination filled with the identity (0,
  -inf/+inf, the integer type's minimum/maximum).  max/min use
  ``arith.maximumf``/``arith.minimumf`` (a NaN anywhere gives NaN) or
  ``arith.maxsi``/``arith.minsi``, in the operand type (exact, no widening).
  Integer sums wrap in the operand type.  ``reduce_mean`` divides the f32 (or
  operand-type) sum by the element count converted to that type, in a second
  elementwise generic that also rounds f16/bf16; the count of a dynamic axis
  comes from ``tensor.dim``.  An empty axis gives 0 for a sum and NaN (0/0)
  for a mean.  With ``keep_dims`` the destination has the size-1 dims and the
  result map reads them at index 0 (``(d0, d1, d2) -> (d0, 0, d2)``), so the
  reduction writes the result directly, with no reshape after it; an empty
  ``axes`` is the operand itself.
  A dynamic axis that turns out empty gives the identity (-inf, +inf, integer
  extremes) for max/min, where the reference raises.
- ``matmul`` (numpy.matmul semantics): named ops where they apply exactly:
  ``linalg.matmul`` for 2-D x 2-D (a transpose flag becomes the op's
  ``indexing_maps``), ``linalg.matvec``/``linalg.vecmat``/``linalg.dot`` for
  1-D operands, ``linalg.batch_matmul`` for equal batch dims (several batch
  dims are collapsed into one and expanded back), and ``linalg.matmul`` on
  ``a`` with its batch dims collapsed into the rows when ``b`` has no batch dims
  and ``a`` is not transposed.  With static shapes those last two forms are one
  ``linalg.contract`` instead, with no reshape around it (``_contract``
  explains why).  Broadcast batch dims (a static size-1 dim
  against a larger or dynamic one, or a batch on ``b`` only) use a
  ``linalg.generic`` with parallel/reduction iterators and the broadcast read
  through the indexing maps.  Floats multiply and accumulate in f32; integers
  wrap in their type (the reference's int64 sum narrowed is the same value).
  Two dynamic batch dims are taken to be equal (no runtime broadcasting).
- ``conv2d``: ``tensor.pad`` with zeros ([top, left, bottom, right] on H and
  W), then, for f32 with groups == 1, unit strides and dilations, static shapes
  and output rows of a register tile or wider, one generic reading the padded
  input directly (``_direct_conv``, scheduled by the runtime), for other
  groups == 1 convolutions with static shapes im2col + ``linalg.contract``
  (``_conv_as_matmul``), else ``linalg.conv_2d_nchw_fchw`` (groups == 1),
  for f32 depthwise ones (groups == C == O, one filter per channel) with
  unit strides and dilations the direct generic with one input channel per
  filter, other depthwise ones ``linalg.depthwise_conv_2d_nchw_chw``, or
  ``linalg.conv_2d_ngchw_gfchw`` on the input and weights expanded to a
  group dim (other groups), strides and dilations as op attributes.
  Every form accumulates into a tensor filled with zeros, or with the bias
  operand broadcast over the output (``_accumulator``): the bias is summed in
  place, the seed's conv + biasAdd, not added by a second pass.
- ``max_pool2d``: ``tensor.pad`` with -inf (integers: the type's minimum) and
  ``linalg.pooling_nchw_max`` into a destination filled the same way (NaN
  propagates through ``arith.maximumf``).  ``avg_pool2d``: zero padding,
  ``linalg.pooling_nchw_sum`` in f32, then a division by ``kh * kw``
  (``count_include_pad``) or by the number of unpadded cells of each window:
  a constant ``(OH, OW)`` tensor computed at compile time when H and W are
  static, ``linalg.index`` arithmetic in the division's body otherwise.
- ``resize``: one ``linalg.generic`` over the result whose body
  ``tensor.extract`` s the taps (one for the nearest modes, two per resized
  dim for bilinear) at positions read from 1-D i64 constants, weighted by 1-D
  f32 constants (``dialect.ops.spatial.resize_taps``, the reference's own), summed
  along W then along H in f32 and rounded once: bit-exact against the
  reference, and a gather-like loop the elementwise ops after it fuse with.

Dynamic dims are supported throughout: sizes come from ``tensor.dim`` and,
for the spatial output dims, from ``(padded - extent) floordiv stride + 1`` in
index arithmetic.  Unranked operands are not lowered (the lowering returns
False and the op stays a graph op); so is a conv2d whose kernel size is
dynamic, which the op catalog rejects anyway.

The package, by op family: ``reductions``, ``matmul``, ``conv`` (conv2d and the poolings), ``resize`` and
``attention`` (flash_attention over lengths known at run time, tiled), on the shared ``builders``.  Importing it
registers every lowering (``register_lowering``).
"""

from graphfuse.lowering.structured_ops.attention import lower_tiled_attention
from graphfuse.lowering.structured_ops.conv import lower_conv2d, lower_pool2d
from graphfuse.lowering.structured_ops.matmul import lower_matmul
from graphfuse.lowering.structured_ops.reductions import lower_reduction
from graphfuse.lowering.structured_ops.resize import lower_resize

__all__ = ["lower_conv2d", "lower_matmul", "lower_pool2d", "lower_reduction", "lower_resize", "lower_tiled_attention"]
