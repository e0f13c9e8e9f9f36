"""numpy arrays <-> ``arith.constant dense<...>`` attributes, for every dialect dtype."""

from __future__ import annotations

import re

import numpy as np
from mlir import ir

from graphfuse.dialect.types import TensorSig, element_type, numpy_dtype, sig_from_type, sig_of_array, tensor_type


def array_to_attr(array: np.ndarray) -> ir.DenseElementsAttr:
    """A DenseElementsAttr holding ``array`` (current context)."""
    sig = sig_of_array(array)
    if sig is None:
        raise ValueError(f"numpy dtype {array.dtype} has no graph-dialect element type")
    if array.ndim == 0:
        # The bindings read shape=[] as "no shape" and would build tensor<1xT>: splat instead.
        return ir.DenseElementsAttr.get_splat(tensor_type(sig), array_to_attr(array.reshape(1)).get_splat_value())
    array = np.ascontiguousarray(array)  # note: this would turn a rank-0 array into rank 1
    shape = list(array.shape)
    if sig.dtype == "i1":
        # i1 storage is bit-packed, little-endian within a byte.
        packed = np.packbits(array.reshape(-1), bitorder="little")
        if array.size == 0:
            return ir.DenseElementsAttr.get_splat(tensor_type(sig), ir.BoolAttr.get(False))
        if np.all(array) or not np.any(array):
            return ir.DenseElementsAttr.get_splat(tensor_type(sig), ir.BoolAttr.get(bool(array.reshape(-1)[0])))
        return ir.DenseElementsAttr.get(packed, type=element_type("i1"), shape=shape)
    if sig.dtype == "bf16":
        return ir.DenseElementsAttr.get(array.view(np.uint16), type=element_type("bf16"), shape=shape)
    return ir.DenseElementsAttr.get(array, type=element_type(sig.dtype), shape=shape)


def attr_to_array(attr: ir.Attribute) -> np.ndarray:
    """The numpy value of a dense elements attribute (splats expanded)."""
    sig = sig_from_type(attr.type)
    if sig is None or not sig.is_static:
        raise ValueError(f"cannot read constant of type {attr.type}")
    dtype = numpy_dtype(sig.dtype)
    if attr.is_splat:
        return np.full(sig.shape, _scalar_value(attr.get_splat_value()), dtype=dtype)
    if sig.dtype == "bf16":
        return _bf16_from_text(str(attr), sig)
    return np.array(attr).astype(dtype, copy=False).reshape(sig.shape)


def _scalar_value(attr: ir.Attribute):
    if isinstance(attr, ir.BoolAttr | ir.IntegerAttr | ir.FloatAttr):
        return attr.value
    raise ValueError(f"unexpected constant element {attr}")


_NUMBER = re.compile(r"[-+]?(?:inf|nan|0x[0-9A-Fa-f]+|[0-9.]+(?:[eE][-+]?[0-9]+)?)")


def _bf16_from_text(text: str, sig: TensorSig) -> np.ndarray:
    """bf16 arrays cannot leave the bindings as buffers; read the printed form instead."""
    body = text[text.index("<") + 1 : text.rindex(">", 0, text.index(":"))]
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        return np.frombuffer(raw, dtype=np.uint16).view(numpy_dtype("bf16")).reshape(sig.shape).copy()
    values = []
    for token in _NUMBER.findall(body):
        if token.lower().startswith("0x"):
            values.append(np.array([int(token, 16)], np.uint16).view(numpy_dtype("bf16"))[0])
        else:
            values.append(float(token))
    return np.array(values, dtype=np.float32).astype(numpy_dtype("bf16")).reshape(sig.shape)
