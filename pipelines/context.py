"""MindSpore's context switches for graph-kernel fusion, with MindSpore's spellings (``graphfuse.context``).

``from graphfuse import context; context.set_context(enable_graph_kernel=True)`` is MindSpore's way to turn
graph-kernel fusion on (seed 002), ``save_graphs=True`` its way to keep the IR of each pass, and
``graph_kernel_flags`` the context form of ``MS_DEV_GRAPH_KERNEL_FLAGS``.  They set process-wide defaults of
:func:`graphfuse.compile` (and of the tools built on it):

- ``enable_graph_kernel``: ``False`` makes opt level 0 the default (no fusion), ``True`` level 2; a compile's
  own ``opt_level=`` or the flags' ``--opt_level`` still win.  Unset (``None``), graphfuse's default (2) holds.
- ``graph_kernel_flags``: flags read after ``MS_DEV_GRAPH_KERNEL_FLAGS`` and before a compile's own
  ``graph_kernel_flags=`` (later keys win, as everywhere).
- ``save_graphs`` (``True`` or 1-3, MindSpore's levels; ``False`` or 0 off) and ``save_graphs_path``
  (default ``.``): every compile writes the graph after each pass of its graph pipeline to
  ``<save_graphs_path>/graphfuse_ir/<entry>/NNNN_<pass>.mlir``, as ``graphfuse-opt --dump-dir`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphfuse.dialect.diagnostics import GraphfuseError

__all__ = ["get_context", "reset_context", "set_context"]

_DEFAULTS: dict[str, Any] = {"enable_graph_kernel": None, "graph_kernel_flags": "", "save_graphs": 0,
                             "save_graphs_path": "."}
_STATE: dict[str, Any] = dict(_DEFAULTS)


def set_context(**settings: Any) -> None:
    """Set MindSpore's graph-kernel context switches (see the module's docstring); unknown keys are an error."""
    for key, value in settings.items():
        _require_known(key, "set_context")
        if key == "enable_graph_kernel" and not isinstance(value, bool | None):
            raise GraphfuseError(f"set_context: enable_graph_kernel must be True or False, got {value!r}")
        if key == "save_graphs":
            if isinstance(value, bool):
                value = int(value)
            if not isinstance(value, int) or not 0 <= value <= 3:
                raise GraphfuseError(f"set_context: save_graphs must be True, False or 0-3, got {value!r}")
        if key in ("graph_kernel_flags", "save_graphs_path") and not isinstance(value, str | Path):
            raise GraphfuseError(f"set_context: {key} must be a string, got {type(value).__name__}")
        _STATE[key] = str(value) if key == "save_graphs_path" else value


def get_context(key: str) -> Any:
    _require_known(key, "get_context")
    return _STATE[key]


def _require_known(key: str, caller: str) -> None:
    if key not in _DEFAULTS:
        raise GraphfuseError(f"{caller}: unknown key '{key}' (graphfuse knows {', '.join(sorted(_DEFAULTS))})")


def reset_context() -> None:
    """Every switch back to its default."""
    _STATE.clear()
    _STATE.update(_DEFAULTS)
