"""The native op walk (``dialect/native/op_walk.c``): the ops of a region tree whose names match, found by MLIR's
C API instead of a Python callback per op.

The helper is built at install time when a C compiler is there (an optional extension, like the runtime's),
and loaded with ctypes: the MLIR C API library the bindings loaded is made global first, so that the helper
resolves its functions there (it links against nothing).  Ops travel as the bindings' capsules.  Without the
helper, :func:`native_ops_named` returns None and callers walk in Python.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Sequence
from pathlib import Path

from mlir import ir

__all__ = ["native_ops_named", "operation_address"]

#: The capsule name the bindings give an operation (``op._CAPIPtr``, ``ir.Operation._CAPICreate``).
_CAPSULE = b"mlir.ir.Operation._CAPIPtr"
_OUT_OF_MEMORY = ctypes.c_size_t(-1).value

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def operation_address(op: ir.Operation) -> int:
    """The address of the C++ operation behind ``op`` (an ``ir.Operation``, not a view)."""
    return _capsule_pointer(op._CAPIPtr, _CAPSULE)


@functools.cache
def _library() -> ctypes.CDLL | None:
    """The helper, loaded once; None when it was not built or does not load."""
    built = sorted(Path(__file__).parent.glob("_op_walk*.so"))
    if not built:
        return None
    import mlir._mlir_libs as bindings

    try:
        ctypes.CDLL(str(Path(bindings.__file__).parent / "libMLIRPythonCAPI.so"), mode=os.RTLD_GLOBAL)
        library = ctypes.CDLL(str(built[0]))
    except OSError:
        return None
    library.graphfuse_ops_named.restype = ctypes.c_size_t
    library.graphfuse_ops_named.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t,
        ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p))]
    library.graphfuse_free_ops.restype = None
    library.graphfuse_free_ops.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    return library


def native_ops_named(root: ir.Operation, patterns: Sequence[str]) -> list[ir.Operation] | None:
    """The ops nested in ``root`` (not ``root``), in pre-order, whose name is one of ``patterns`` (a pattern
    ending in '.' is a prefix: ``"linalg."``); None without the helper."""
    library = _library()
    if library is None:
        return None
    encoded = [p.encode() for p in patterns]
    names = (ctypes.c_char_p * len(encoded))(*encoded)
    lengths = (ctypes.c_size_t * len(encoded))(*(len(p) for p in encoded))
    found = ctypes.POINTER(ctypes.c_void_p)()
    count = library.graphfuse_ops_named(operation_address(root), names, lengths, len(encoded), ctypes.byref(found))
    if count == _OUT_OF_MEMORY:
        raise MemoryError("walking the IR for ops by name")
    try:
        return [ir.Operation._CAPICreate(_new_capsule(found[k], _CAPSULE, None)) for k in range(count)]
    finally:
        library.graphfuse_free_ops(found)
