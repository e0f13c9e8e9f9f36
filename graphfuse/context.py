"""MindSpore's ``context.set_context`` spellings for graph-kernel fusion (``enable_graph_kernel``, ``jit_level``,
``graph_kernel_flags``, ``save_graphs``, ``save_graphs_path``): ``from graphfuse import context``.

The switches live in :mod:`graphfuse.pipelines.context`, below the compiler that reads them.
"""

from graphfuse.pipelines.context import get_context, reset_context, set_context

__all__ = ["get_context", "reset_context", "set_context"]
