"""The PyTorch front end: import ``torch.nn.Module`` s into the graph dialect through ``torch.export``.

    import graphfuse.frontends.torch as gft

    imported = gft.import_module(model, (x,))             # ImportedModel: .module, .entry, .numpy_inputs(x)
    compiled = gft.compile_module(model, (x,))            # imported + graphfuse.compile: call it with tensors
    print(gft.compare(model, (x,)).report())              # errors, fusions that fired, time vs PyTorch eager

The model is exported in eval mode under ``torch.no_grad()`` to what
``run_decompositions({})`` gives, in one trace (``export.export_inference``): that functionalizes the program (no
in-place ops, batch_norm in its inference form) and decomposes only
CompositeImplicitAutograd ops such as ``chunk`` and ``reshape``, while
``linear``, ``layer_norm``, ``rms_norm``, ``scaled_dot_product_attention``,
``conv2d`` and the activations stay whole, so that each becomes the graph op
that graphfuse's fusion passes look for.  Every supported ATen op is one
entry of a registry (:func:`supported_ops`); docs/frontend-torch.md lists
them from it.  A node whose tensor inputs are all constants is evaluated by
PyTorch at import time and becomes an ``arith.constant`` (factory ops,
causal masks built with ``torch.triu``, transposed weights), whether or not
its op is in the registry.  A hand-written RMSNorm is imported as its ops:
graph fusion's ``rms_norm_fusion`` makes it one ``graph.rms_norm``, whichever
front end wrote it.

Each graph op carries the location ``loc("fx:<node name>"(<file>:<line>:1))``
of the FX node that produced it (the user's source line when the node has a
stack trace), so verifier messages and fusion logs point at the model.  An
op or a dtype the importer does not handle raises :class:`GraphfuseError`
naming the op and the FX node.

The package, by concern: ``export`` (the one trace), ``importer`` (one converter per FX node),
``converters`` (the ATen ops by family, registered in ``registry``), ``dtypes`` and ``compare`` (compile an
import and measure it against eager).
"""

try:
    import torch  # noqa: F401
except ImportError as _error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "graphfuse.frontends.torch needs PyTorch: install the extra with pip install 'graphfuse[torch]'"
    ) from _error

from graphfuse.frontends.torch import converters  # noqa: F401  (registers every converter)
from graphfuse.frontends.torch.compare import Comparison, CompiledModule, compare, compile_module, fired_fusions
from graphfuse.frontends.torch.dtypes import to_numpy, to_torch
from graphfuse.frontends.torch.importer import ImportedModel, import_module, import_program, import_training_step
from graphfuse.frontends.torch.registry import supported_ops, supported_ops_markdown

__all__ = [
    "Comparison",
    "CompiledModule",
    "ImportedModel",
    "compare",
    "compile_module",
    "fired_fusions",
    "import_module",
    "import_program",
    "import_training_step",
    "supported_ops",
    "supported_ops_markdown",
    "to_numpy",
    "to_torch",
]
