"""The numpy view of an entry's arguments: their shapes and dtypes, and whether the buffers fit in memory.

The CPU pipeline's passes check the entry's types with these (an unsupported element type is refused before
anything is rewritten); the runtime describes the compiled function's arguments with them.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError

__all__ = ["DTYPES", "ArgSpec", "arg_spec", "check_fits_in_memory", "dtype_name", "format_bytes", "numpy_dtype",
           "physical_memory_bytes", "spec_bytes"]

#: The element types of compiled functions' arguments by their numpy names (bfloat16 comes from ml_dtypes), as
#: libraries' metadata and the compile cache write them.
DTYPES = {name: np.dtype(t) for name, t in (
    ("float32", np.float32), ("float64", np.float64), ("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16),
    ("bool", np.bool_), ("int8", np.int8), ("int16", np.int16), ("int32", np.int32), ("int64", np.int64),
    ("uint8", np.uint8),
)}


def dtype_name(dtype: np.dtype) -> str:
    """The name :data:`DTYPES` knows ``dtype`` by; an error for others."""
    for name, known in DTYPES.items():
        if known == dtype:
            return name
    raise GraphfuseError(f"no C interface for dtype {dtype}")


@dataclass(frozen=True)
class ArgSpec:
    """One tensor argument (input or output) of the entry function."""

    shape: tuple[int | None, ...]  # None for a dynamic dimension
    dtype: np.dtype  # the numpy dtype callers pass
    type_str: str  # the MLIR type, for messages

    @property
    def rank(self) -> int:
        return len(self.shape)

    def as_json(self) -> dict:
        return {"shape": list(self.shape), "dtype": dtype_name(self.dtype), "type": self.type_str}

    @staticmethod
    def from_json(described: dict) -> ArgSpec:
        """The spec :meth:`as_json` wrote (an error for an unknown dtype)."""
        if described["dtype"] not in DTYPES:
            raise GraphfuseError(f"unknown dtype {described['dtype']!r} in a compiled function's description")
        return ArgSpec(tuple(described["shape"]), DTYPES[described["dtype"]], described["type"])

    def shape_str(self) -> str:
        return (
            "("
            + ", ".join("?" if d is None else str(d) for d in self.shape)
            + ("," if len(self.shape) == 1 else "")
            + ")"
        )


def numpy_dtype(element: ir.Type, where: str) -> np.dtype:
    """The numpy dtype of an MLIR element type, or an error naming ``where`` it was found."""
    if isinstance(element, ir.F32Type):
        return np.dtype(np.float32)
    if isinstance(element, ir.F64Type):
        return np.dtype(np.float64)
    if isinstance(element, ir.F16Type):
        return np.dtype(np.float16)
    if isinstance(element, ir.BF16Type):
        return np.dtype(ml_dtypes.bfloat16)
    if isinstance(element, ir.IntegerType):
        it = ir.IntegerType(element)
        if it.is_signless or it.is_signed:
            found = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}.get(it.width)
            if found is not None:
                return np.dtype(found)
    raise GraphfuseError(
        f"{where}: unsupported element type {element} (supported: f32, f64, f16, bf16, i1, i8, i16, i32, i64)"
    )


def arg_spec(t: ir.Type, where: str) -> ArgSpec:
    """The spec of a ranked tensor type, or an error naming ``where`` it was found."""
    if not isinstance(t, ir.RankedTensorType):
        raise GraphfuseError(f"{where}: expected a ranked tensor type, got {t}")
    rt = ir.RankedTensorType(t)
    if rt.encoding is not None:
        raise GraphfuseError(f"{where}: tensors with an encoding are not supported: {t}")
    shape = tuple(None if rt.is_dynamic_dim(i) else rt.get_dim_size(i) for i in range(rt.rank))
    return ArgSpec(shape, numpy_dtype(rt.element_type, where), str(t))


def physical_memory_bytes() -> int:
    """This machine's physical memory (a huge number where the platform cannot tell)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return 2**62


def format_bytes(count: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def spec_bytes(spec: ArgSpec) -> int | None:
    return None if None in spec.shape else math.prod(spec.shape) * spec.dtype.itemsize


def check_fits_in_memory(buffers: list[tuple[str, int | None]], what: str) -> None:
    """Refuse up front buffers (name, bytes or None when dynamic) that cannot fit in memory together.

    numpy's ``empty`` of a few TiB may "succeed" (the pages are not touched
    yet) and the process is killed later, inside compiled code, with no
    message: a clear error before anything is allocated is the only safe answer.
    """
    sizes = [(name, size) for name, size in buffers if size is not None]
    total = sum(size for _, size in sizes)
    limit = physical_memory_bytes()
    if total <= limit:
        return
    name, largest = max(sizes, key=lambda item: item[1])
    raise GraphfuseError(
        f"{what} need {format_bytes(total)} of memory (the largest, {name}, {format_bytes(largest)}); "
        f"this machine has {format_bytes(limit)}"
    )
