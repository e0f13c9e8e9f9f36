"""Import ONNX models into the graph dialect (optional extra ``graphfuse[onnx]``).

    from graphfuse.frontends.onnx import import_model
    module = import_model("model.onnx")            # an ir.Module with one public function, @main

Graph inputs become the function's arguments, in order (initializers that are
also listed as inputs are constants, not arguments); graph outputs are its
results, in order.  Initializers and ``Constant`` nodes become
``arith.constant dense<...>``.  Every ONNX node maps to one or more graph ops,
composed from the dialect's ops where ONNX has no direct counterpart (Gemm,
Elu, HardSwish, ReduceL2, ...); :data:`CONVERTERS` is the claimed op set, and
docs/frontend-onnx.md is generated from it.

Locations: every op built for node number ``k`` (1-based, in ``graph.node``
order) gets ``loc("<node name>"("<model file>":k:1))``, a name location
around a file location whose line is the node's index.  A node without a name
is called ``<op_type>_<k-1>``.  Verifier and pass errors on imported IR thus
print ``model.onnx:k:1: error: ...`` and name the node.  Line 0 is the graph
itself: the function is at ``0:0`` and graph input ``j`` (1-based) at
``loc("<input name>"("<model file>":0:j))``; the return is on the line after
the last node.

Shapes must be static.  Operands ONNX passes as tensors but the dialect needs
at import time (Reshape's shape, Slice's starts, the axes of reductions,
...) must be constants: initializers, ``Constant`` outputs, values folded
from static shapes (``Shape``, ``Size``) and from small integer arithmetic on
constants, or graph inputs bound to values with ``constant_inputs=``.
Anything unsupported -- an op, an attribute value, an element type (the
dialect has f32, f16, bf16, i8, i32, i64 and i1), a dynamic dimension --
raises :class:`GraphfuseError` naming the node, e.g.
``model.onnx:4:1: error: node 'Conv_3' (Conv): input of rank 5 is not supported ...``.
"""

try:
    import onnx  # noqa: F401
except ImportError as _error:  # pragma: no cover - exercised only without the extra
    raise ImportError("the ONNX front end needs the onnx package: pip install 'graphfuse[onnx]'") from _error

from graphfuse.frontends.onnx import converters  # noqa: F401  (registers every converter)
from graphfuse.frontends.onnx.importer import (
    SUPPORTED_OPSETS,
    ImportedModel,
    constant_input_names,
    convert_model,
    import_model,
    load_onnx,
    tensor_to_array,
)
from graphfuse.frontends.onnx.registry import CONVERTERS, OnnxOp, support_table_markdown

__all__ = [
    "CONVERTERS",
    "SUPPORTED_OPSETS",
    "ImportedModel",
    "OnnxOp",
    "constant_input_names",
    "convert_model",
    "import_model",
    "load_onnx",
    "support_table_markdown",
    "tensor_to_array",
]
