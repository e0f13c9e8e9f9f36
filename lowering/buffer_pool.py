"""The buffer pool of JIT-compiled code: intermediates of a size known only at run time, kept for the next call.

An intermediate whose size is a dim of an input is allocated and freed at every call (hoist-allocations).
``lowering/native/buffer_pool.c`` implements the allocation functions finalize-memref-to-llvm calls with
``use-generic-functions``: a freed block of 256 KiB or more is kept (16 blocks, 2 GiB at most) and given again to
a request it covers, so a graph called again at the same size reuses warm memory instead of faulting in fresh
pages (a 16 MB intermediate: 4096 page faults per call).  The library is built with graphfuse when a C compiler
is there; without it the JIT code calls malloc and free.  AOT libraries always call malloc and free.
"""

from __future__ import annotations

import ctypes
import importlib.util
from functools import cache

__all__ = ["buffer_pool_library", "pool_state", "release_pool"]


@cache
def buffer_pool_library() -> str | None:
    """The path of the pool's shared library, or None where it was not built."""
    spec = importlib.util.find_spec("graphfuse.lowering._buffer_pool")
    return spec.origin if spec is not None and spec.origin else None


@cache
def _library() -> ctypes.CDLL | None:
    path = buffer_pool_library()
    return None if path is None else ctypes.CDLL(path)


def pool_state() -> tuple[int, int]:
    """(blocks, bytes) the pool keeps now; (0, 0) without the library."""
    library = _library()
    if library is None:
        return 0, 0
    blocks, size = ctypes.c_int64(), ctypes.c_int64()
    library.graphfuse_buffer_pool_state(ctypes.byref(blocks), ctypes.byref(size))
    return blocks.value, size.value


def release_pool() -> None:
    """Return every block the pool keeps to the system."""
    library = _library()
    if library is not None:
        library.graphfuse_buffer_pool_release()
