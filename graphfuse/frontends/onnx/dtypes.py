"""ONNX element types as the graph dialect spells them."""

from __future__ import annotations

import onnx
import onnx.external_data_helper

from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.frontends.onnx.registry import _NodeError

#: ONNX element types the dialect has, by TensorProto data type.
_ELEMENT_TYPES: dict[int, str] = {
    onnx.TensorProto.FLOAT: "f32",
    onnx.TensorProto.FLOAT16: "f16",
    onnx.TensorProto.BFLOAT16: "bf16",
    onnx.TensorProto.INT8: "i8",
    onnx.TensorProto.INT32: "i32",
    onnx.TensorProto.INT64: "i64",
    onnx.TensorProto.BOOL: "i1",
}


def _type_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"data type {elem_type}"


def _element_type(elem_type: int, what: str) -> str:
    dtype = _ELEMENT_TYPES.get(elem_type)
    if dtype is None:
        raise _NodeError(f"{what} has element type {_type_name(elem_type)}, which the graph dialect does not have "
                         f"(it has {', '.join(NUMPY_DTYPES)})")
    return dtype
