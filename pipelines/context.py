"""MindSpore's context switches for graph-kernel fusion, with MindSpore's spellings (``graphfuse.context``).

``from graphfuse import context; context.set_context(enable_graph_kernel=True)`` is MindSpore's way to turn
graph-kernel fusion on (seed 002), ``save_graphs=True`` its way to keep the IR of each pass, and
``graph_kernel_flags`` the context form of ``MS_DEV_GRAPH_KERNEL_FLAGS``.  They set process-wide defaults of
:func:`graphfuse.compile` (and of the tools built on it):

- ``enable_graph_kernel``: ``False`` leaves graph-kernel fusion out of the default pipeline (pattern fusion,
  "enabled by default" in the seed, still runs), ``True`` keeps it in; a compile's own ``opt_level=`` or the
  flags' ``--opt_level`` still win.  Unset (``None``), graphfuse's default (opt level 2, both) holds.
- ``jit_level`` (seed 000: "jit_level=O1 to enable graph kernel fusion"): ``"O0"`` is
  ``enable_graph_kernel=False``, ``"O1"`` and ``"O2"`` are ``True`` (graphfuse compiles whole graphs at every
  level, so O2's whole-graph sinking adds nothing).  ``enable_graph_kernel``, when set, wins.
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

__all__ = ["get_context", "graph_kernel_enabled", "reset_context", "set_context"]

_DEFAULTS: dict[str, Any] = {"enable_graph_kernel": None, "jit_level": None, "graph_kernel_flags": "",
                             "save_graphs": 0, "save_graphs_path": "."}
#: MindSpore's jit levels and whether each runs graph-kernel fusion.
JIT_LEVELS = {"O0": False, "O1": True, "O2": True}
_STATE: dict[str, Any] = dict(_DEFAULTS)


def set_context(**settings: Any) -> None:
    """Set MindSpore's graph-kernel context switches (see the module's docstring); unknown keys are an error."""
    for key, value in settings.items():
        _require_known(key, "set_context")
        if key == "enable_graph_kernel" and not isinstance(value, bool | None):
            raise GraphfuseError(f"set_context: enable_graph_kernel must be True or False, got {value!r}")
        if key == "jit_level" and value is not None and value not in JIT_LEVELS:
            raise GraphfuseError(f"set_context: jit_level must be one of {', '.join(JIT_LEVELS)}, got {value!r}")
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


def graph_kernel_enabled() -> bool | None:
    """Whether the context turns graph-kernel fusion on (True), off (False) or says nothing (None)."""
    if _STATE["enable_graph_kernel"] is not None:
        return _STATE["enable_graph_kernel"]
    level = _STATE["jit_level"]
    return None if level is None else JIT_LEVELS[level]


def _require_known(key: str, caller: str) -> None:
    if key not in _DEFAULTS:
        raise GraphfuseError(f"{caller}: unknown key '{key}' (graphfuse knows {', '.join(sorted(_DEFAULTS))})")


def reset_context() -> None:
    """Every switch back to its default."""
    _STATE.clear()
    _STATE.update(_DEFAULTS)
