"""A compile cache of a bench run's own: cold figures stay cold whatever the user's cache holds, and a warm
start (a later process of the run) finds what the run compiled."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator

__all__ = ["private_compile_cache"]


@contextlib.contextmanager
def private_compile_cache(prefix: str) -> Iterator[str]:
    """graphfuse's compile cache on, in a new directory, for this process and its children while the block runs;
    afterwards the directory is removed and the environment is as it was."""
    saved = {name: os.environ.get(name) for name in ("GRAPHFUSE_CACHE", "GRAPHFUSE_CACHE_DIR")}
    directory = tempfile.mkdtemp(prefix=prefix)
    os.environ.update(GRAPHFUSE_CACHE="1", GRAPHFUSE_CACHE_DIR=directory)
    try:
        yield directory
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(directory, ignore_errors=True)
