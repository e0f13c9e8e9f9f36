"""Tensor signatures: the shape/dtype view of MLIR tensor types used by the op catalog.

The catalog infers and checks shapes on plain Python tuples so that inference,
verification, the builder and the reference interpreter share one code path and
none of it needs an MLIR context.  A dimension is an ``int`` or ``None``
(dynamic, printed ``?``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from mlir import ir

Dim = int | None
Shape = tuple[Dim, ...]

#: Element types of the graph dialect, by their MLIR spelling.
NUMPY_DTYPES: dict[str, np.dtype] = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "i8": np.dtype(np.int8),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "i1": np.dtype(np.bool_),
}
FLOAT_DTYPES = frozenset({"f32", "f16", "bf16"})
INT_DTYPES = frozenset({"i8", "i32", "i64"})
BOOL_DTYPE = "i1"
NUMERIC_DTYPES = FLOAT_DTYPES | INT_DTYPES
ALL_DTYPES = frozenset(NUMPY_DTYPES)

_DTYPE_BY_NUMPY = {dt: name for name, dt in NUMPY_DTYPES.items()}


@dataclass(frozen=True)
class TensorSig:
    """A ranked tensor type without an MLIR context: ``TensorSig((4, 8), "f32")``."""

    shape: Shape
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    @property
    def num_elements(self) -> int | None:
        if not self.is_static:
            return None
        # Python ints: np.prod in int64 wraps around silently for huge shapes (10^11 x 10^11).
        return math.prod(self.shape)

    @property
    def num_bytes(self) -> int | None:
        """Storage size of a static tensor (i1 takes one byte, as in numpy), or None when dynamic."""
        count = self.num_elements
        if count is None or self.dtype not in NUMPY_DTYPES:
            return None
        return count * NUMPY_DTYPES[self.dtype].itemsize

    def with_shape(self, shape: Shape) -> TensorSig:
        return TensorSig(tuple(shape), self.dtype)

    def with_dtype(self, dtype: str) -> TensorSig:
        return TensorSig(self.shape, dtype)

    def __str__(self) -> str:
        dims = "".join(f"{'?' if d is None else d}x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"


def dtype_name(element_type: ir.Type) -> str:
    """MLIR spelling of an element type (``f32``, ``i1``, ``index``...)."""
    return str(element_type)


#: Significand bits (the implicit one included) of the float dtypes, and their largest binary exponent.
_SIGNIFICAND = {"bf16": 8, "f16": 11, "f32": 24}
_MAX_EXPONENT = {"bf16": 127, "f16": 15, "f32": 127}
_INT_BITS = {"i8": 8, "i32": 32, "i64": 64}


def holds_exactly(source: str, middle: str) -> bool:
    """Whether dtype ``middle`` holds every value of dtype ``source`` exactly (a cast to it and back is the
    identity; booleans excluded)."""
    if source in _INT_BITS:
        if middle in _INT_BITS:
            return _INT_BITS[middle] >= _INT_BITS[source]
        # |v| <= 2^(bits - 1): exact where the significand has bits - 1 bits
        return middle in _SIGNIFICAND and _SIGNIFICAND[middle] >= _INT_BITS[source] - 1
    if source in _SIGNIFICAND and middle in _SIGNIFICAND:  # f16 subnormals are normal in f32
        return _SIGNIFICAND[middle] >= _SIGNIFICAND[source] and _MAX_EXPONENT[middle] >= _MAX_EXPONENT[source] \
            and (middle == source or middle == "f32")
    return False


def sig_from_type(t: ir.Type) -> TensorSig | None:
    """The signature of a ranked tensor type, or None for any other type."""
    if not isinstance(t, ir.RankedTensorType):
        return None
    shape = tuple(None if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank))
    return TensorSig(shape, dtype_name(t.element_type))


def element_type(dtype: str) -> ir.Type:
    """The MLIR element type for a dtype name, in the current context."""
    if dtype not in NUMPY_DTYPES:
        raise ValueError(f"unsupported element type '{dtype}' (expected one of {', '.join(sorted(NUMPY_DTYPES))})")
    return ir.Type.parse(dtype)


def tensor_type(sig: TensorSig) -> ir.RankedTensorType:
    """The MLIR tensor type of a signature, in the current context."""
    dims = [ir.ShapedType.get_dynamic_size() if d is None else d for d in sig.shape]
    # get() wants a location for its diagnostics; outside a `with loc:` use an unknown one.
    loc = ir.Location.current or ir.Location.unknown()
    return ir.RankedTensorType.get(dims, element_type(sig.dtype), loc=loc)


def numpy_dtype(dtype: str) -> np.dtype:
    return NUMPY_DTYPES[dtype]


def dtype_of_array(array: np.ndarray) -> str | None:
    """The dtype name of a numpy array, or None when the dialect has no such type."""
    return _DTYPE_BY_NUMPY.get(np.dtype(array.dtype))


def sig_of_array(array: np.ndarray) -> TensorSig | None:
    dtype = dtype_of_array(array)
    return None if dtype is None else TensorSig(tuple(int(d) for d in array.shape), dtype)


def shape_matches(declared: Shape, actual: Shape) -> bool:
    """True when ``actual`` fits ``declared`` (a dynamic dimension matches any size)."""
    if len(declared) != len(actual):
        return False
    return all(d is None or a is None or d == a for d, a in zip(declared, actual, strict=True))
