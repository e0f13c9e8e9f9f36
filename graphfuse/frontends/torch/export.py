"""One trace from a module or FX graph to the ATen graph the importer takes.

``torch.export.export`` traces to the training IR, and ``run_decompositions({})`` traces that program again to
the inference IR: functional ATen ops, with the CompositeImplicitAutograd ops that have a functional schema
(``linear``, ``layer_norm``, ``scaled_dot_product_attention``...) kept whole.  The torch.compile backend paid
both traces for every graph Dynamo gave it.  :func:`export_inference` traces once, at ATen dispatch, with those
composite ops kept as ``run_decompositions({})`` keeps them, and gives the same graph: on the model zoo's graphs
the imported modules are the same text but for three models, where the second trace left a padding mask computed
twice.  In the FX graph, a tensor constant built in the model (``torch.tensor([...])``) is read by
``lift_fresh_copy`` where the second trace writes ``clone`` (the importer folds both into the constant), and
export's dtype checks (``_assert_tensor_metadata``, which the importer drops) are not written.  A graph with a
number among its inputs keeps the two traces (see :func:`export_inference`).

It uses torch.export's private entry points (the pinned PyTorch has them); without them it falls back on the two
traces.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.utils._pytree as pytree

__all__ = ["export_inference"]


def export_inference(module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
                     dynamic_shapes: Any = None, strict: bool = False) -> tuple[Any, bool]:
    """``(program, decomposed)``: ``module`` exported on ``args``; ``decomposed`` tells whether it is already the
    inference IR (:func:`~graphfuse.frontends.torch.importer.import_program`'s ``decomposed=``)."""
    try:
        from torch.export._trace import _export
        from torch.export.exported_program import (
            _override_composite_implicit_decomp,
            _split_decomp_table_to_cia_and_python_decomp,
        )
    except ImportError:  # another PyTorch: the public API and a second trace
        _export = None
    # A number input (a size Dynamo passes to a dynamic graph): the training trace makes it a constant unless
    # dynamic_shapes says otherwise, the ATen trace keeps it symbolic.  Such graphs keep the two traces.
    if _export is None or not all(isinstance(leaf, torch.Tensor) for leaf in pytree.tree_leaves((args, kwargs or {}))):
        return torch.export.export(module, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict), False
    # Every composite op with a functional schema is preserved: what an empty decomposition table asks for.
    preserved, _ = _split_decomp_table_to_cia_and_python_decomp({})
    with _override_composite_implicit_decomp(preserved):
        program = _export(module, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict, pre_dispatch=False)
    return program, True
