"""The PyTorch front end: import ``torch.nn.Module`` s into the graph dialect through ``torch.export``.

    import graphfuse.frontends.torch as gft

    imported = gft.import_module(model, (x,))             # ImportedModel: .module, .entry, .numpy_inputs(x)
    compiled = gft.compile_module(model, (x,))            # imported + graphfuse.compile: call it with tensors
    print(gft.compare(model, (x,)).report())              # errors, fusions that fired, time vs PyTorch eager

The model is exported in eval mode under ``torch.no_grad()`` and
``run_decompositions({})`` is applied: that functionalizes the program (no
in-place ops, batch_norm in its inference form) and decomposes only
CompositeImplicitAutograd ops such as ``chunk`` and ``reshape``, while
``linear``, ``layer_norm``, ``rms_norm``, ``scaled_dot_product_attention``,
``conv2d`` and the activations stay whole, so that each becomes the graph op
that graphfuse's fusion passes look for.  Every supported ATen op is one
entry of a registry (:func:`supported_ops`); docs/frontend-torch.md lists
them from it.  A node whose tensor inputs are all constants is evaluated by
PyTorch at import time and becomes an ``arith.constant`` (factory ops,
causal masks built with ``torch.triu``, transposed weights), whether or not
its op is in the registry, and a hand-written RMSNorm becomes one
``graph.rms_norm`` (:func:`find_rms_norms`).

Each graph op carries the location ``loc("fx:<node name>"(<file>:<line>:1))``
of the FX node that produced it (the user's source line when the node has a
stack trace), so verifier messages and fusion logs point at the model.  An
op or a dtype the importer does not handle raises :class:`GraphfuseError`
naming the op and the FX node.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import statistics
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import ml_dtypes
import numpy as np
from mlir import ir

from graphfuse.dialect.builder import BuildError, FunctionBuilder, GraphBuilder, Tensor
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import attributes, graph_op_names, producer
from graphfuse.dialect.ops.shape import PAD_MODES
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig, tensor_type
from graphfuse.lowering.compiler import Executable
from graphfuse.lowering.compiler import compile as graphfuse_compile

try:
    import torch
    import torch.utils._pytree as pytree
    from torch import fx
except ImportError as _error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "graphfuse.frontends.torch needs PyTorch: install the extra with pip install 'graphfuse[torch]'"
    ) from _error

__all__ = [
    "Comparison",
    "CompiledModule",
    "ImportedModel",
    "compare",
    "compile_module",
    "import_module",
    "import_program",
    "import_training_step",
    "supported_ops",
    "supported_ops_markdown",
    "to_numpy",
    "to_torch",
]

ParamsMode = Literal["constants", "arguments"]
MutationsMode = Literal["error", "results"]

#: torch dtypes the graph dialect has, by their graph-dialect spelling.
_DTYPES: dict[torch.dtype, str] = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int8: "i8",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.bool: "i1",
}
_TORCH_DTYPES = {name: dtype for dtype, name in _DTYPES.items()}
_FLOATS = ("f32", "f16", "bf16")
#: Float types PyTorch computes in f32 inside its kernels (attention's scores, softmax) and rounds once.
_LOW_PRECISION = ("f16", "bf16")
#: torch's "to the end of the dimension" in slices
_INT64_MAX = 2**63 - 1


# --------------------------------------------------------------------------
# Tensors and arrays.


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A numpy copy of a CPU tensor; bfloat16 becomes an ml_dtypes.bfloat16 array."""
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return tensor.numpy().copy()


def to_torch(array: np.ndarray) -> torch.Tensor:
    """A tensor holding ``array`` (bfloat16 arrays included)."""
    array = np.ascontiguousarray(array)
    if array.dtype == np.dtype(ml_dtypes.bfloat16):
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(array.copy())


# --------------------------------------------------------------------------
# The op registry.

Converter = Callable[["_Importer", fx.Node, dict[str, Any]], Any]


@dataclass(frozen=True)
class SupportedOp:
    """One ATen op the importer translates: its name, the graph ops it becomes, and its limits."""

    name: str
    graph: str
    notes: str
    convert: Converter


_REGISTRY: dict[str, SupportedOp] = {}


def _converts(*names: str, graph: str, notes: str = "") -> Callable[[Converter], Converter]:
    """Register ``fn`` as the converter of the ATen ops ``names`` (``aten.add.Tensor``...)."""

    def register(fn: Converter) -> Converter:
        for name in names:
            assert name not in _REGISTRY, name
            _REGISTRY[name] = SupportedOp(name, graph, notes, fn)
        return fn

    return register


def supported_ops() -> list[str]:
    """The ATen op names (``aten.<op>.<overload>``, plus ``getitem``) the importer translates, sorted."""
    return sorted(_REGISTRY)


def supported_ops_markdown() -> str:
    """The table of supported ops that docs/frontend-torch.md embeds (generated, so it cannot drift)."""
    lines = ["| ATen op | graph ops | notes |", "|---|---|---|"]
    for name in supported_ops():
        op = _REGISTRY[name]
        lines.append(f"| `{name}` | {op.graph} | {op.notes} |")
    return "\n".join(lines) + "\n"


def _op_name(target: Any) -> str:
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # aten.add.Tensor
    return getattr(target, "__name__", str(target))


# --------------------------------------------------------------------------
# Import.


class _Const:
    """A value known at import time (a lifted constant, a parameter in "constants" mode, a folded node)."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class _Symbolic:
    """A symbolic size (``sym_size``, arithmetic on sizes) of a dynamic shape: converters read sizes from types.

    ``source`` is the FX node of the tensor and the dim a ``sym_size`` reads (None for arithmetic on sizes).
    """

    def __init__(self, name: str, source: tuple[fx.Node, int] | None = None):
        self.name = name
        self.source = source


class _Missing:
    """A result of a multi-result ATen op that the import does not provide (e.g. layer_norm's mean)."""

    def __init__(self, what: str):
        self.what = what


@dataclass
class ImportedModel:
    """A PyTorch program imported into the graph dialect.

    ``module`` holds one public function ``entry`` whose arguments are the
    model's tensor inputs (flattened in PyTorch's pytree order), followed,
    with ``params="arguments"``, by the used parameters and buffers
    (``parameter_names`` / ``parameters``, in that order).  Its results are
    the model's tensor outputs, flattened; :meth:`unflatten` rebuilds the
    model's output structure.
    """

    module: ir.Module
    entry: str
    params: ParamsMode
    #: state-dict names and values of the parameters/buffers passed as arguments (params="arguments")
    parameter_names: list[str]
    parameters: list[np.ndarray]
    #: how often each ATen op occurs in the exported program
    aten_ops: Counter[str]
    #: the exported program (after run_decompositions)
    program: Any
    #: patterns of several ATen ops imported as one graph op (hand-written RMSNorm), with their counts
    recognised: Counter[str] = field(default_factory=Counter)
    #: the user inputs (flattened positions) the program writes, in place (``x.copy_(...)``, ``index_copy_``):
    #: only with ``input_mutations="results"``, where the function's first results are their new values
    mutated_inputs: list[int] = field(default_factory=list)
    _tensor_inputs: list[bool] = field(repr=False, default_factory=list)
    #: a training step (:func:`import_training_step`): the parameters whose gradients the function returns after
    #: the loss, in that order
    gradient_names: list[str] = field(default_factory=list)

    @functools.cached_property
    def call_spec(self) -> Any:
        """The exported program's input and output structure (torch.export builds it anew at each access, a new
        namedtuple class each time: 0.17 ms, at every call of a compiled graph)."""
        return self.program.call_spec

    @property
    def graph_ops(self) -> Counter[str]:
        """How often each graph op occurs in the imported function."""
        return Counter(graph_op_names(self.module.operation))

    def numpy_inputs(self, *args: Any, **kwargs: Any) -> list[np.ndarray]:
        """The function's arguments for a call of the model with ``args``/``kwargs``: inputs, then parameters."""
        leaves, spec = pytree.tree_flatten((args, kwargs))
        want = self.call_spec.in_spec
        if want is not None and spec != want:
            raise GraphfuseError(f"the inputs do not have the structure the model was exported with: {want}")
        if len(leaves) != len(self._tensor_inputs):
            raise GraphfuseError(f"expected {len(self._tensor_inputs)} inputs, got {len(leaves)}")
        arrays = []
        for i, (leaf, is_tensor) in enumerate(zip(leaves, self._tensor_inputs, strict=True)):
            if not is_tensor:
                continue  # exported as a constant
            if not isinstance(leaf, torch.Tensor):
                raise GraphfuseError(f"input #{i} is a {type(leaf).__name__}, the model was exported with a tensor")
            if leaf.dtype not in _DTYPES:
                raise GraphfuseError(f"input #{i} has dtype {leaf.dtype}, which the graph dialect does not have")
            arrays.append(to_numpy(leaf))
        return arrays + self.parameters

    def unflatten(self, outputs: Sequence[Any]) -> Any:
        """The model's output structure (a tensor, a tuple, a dict...) holding ``outputs``.

        ``outputs`` are the function's results; the new values of mutated inputs, which come first, are left out.
        """
        return pytree.tree_unflatten(list(outputs)[len(self.mutated_inputs):], self.call_spec.out_spec)

    def run_reference(self, *args: Any, **kwargs: Any) -> list[np.ndarray]:
        """The reference interpreter's flattened results for the model called with ``args``/``kwargs``."""
        return run_function(self.module, self.numpy_inputs(*args, **kwargs), self.entry)

    def summary(self) -> str:
        """One paragraph: ATen ops in, graph ops out."""
        aten = ", ".join(f"{name.removeprefix('aten.')} x{n}" for name, n in sorted(self.aten_ops.items()))
        graph = ", ".join(f"{name.removeprefix('graph.')} x{n}" for name, n in sorted(self.graph_ops.items()))
        recognised = "".join(f"; recognised {name} x{n}" for name, n in sorted(self.recognised.items()))
        return (
            f"imported @{self.entry}: {sum(self.aten_ops.values())} ATen ops ({aten})\n"
            f"  -> {sum(self.graph_ops.values())} graph ops ({graph}); parameters as {self.params}{recognised}"
        )


def import_module(
    module: torch.nn.Module,
    example_args: tuple[Any, ...],
    example_kwargs: dict[str, Any] | None = None,
    *,
    params: ParamsMode = "constants",
    entry: str = "forward",
    dynamic_shapes: Any = None,
) -> ImportedModel:
    """Export ``module.<entry>`` with ``torch.export`` on the example inputs and import it.

    ``params="constants"`` embeds parameters and buffers as constants (what
    folding passes such as ConvBatchnormFusionPass need); ``"arguments"``
    passes them as trailing function arguments (``ImportedModel.parameters``).
    The module is put in eval mode for the export and restored afterwards.
    ``dynamic_shapes`` is handed to ``torch.export.export``; dynamic dims
    become ``?`` dims of the graph's tensor types.
    """
    if not isinstance(module, torch.nn.Module):
        raise GraphfuseError(f"import_module takes a torch.nn.Module, not {type(module).__name__}")
    if not isinstance(example_args, tuple):
        example_args = (example_args,)
    target = module if entry == "forward" else _MethodAsForward(module, entry)
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad(), warnings.catch_warnings():
            # torch.export's own use of a deprecated pytree API warns on every export; nothing the user can change.
            warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
            program = torch.export.export(target, example_args, example_kwargs, dynamic_shapes=dynamic_shapes)
    except GraphfuseError:
        raise
    except Exception as error:  # torch.export reports unsupported Python as many exception types
        raise GraphfuseError(
            f"torch.export could not export {type(module).__name__}.{entry}: {_first_line(error)}"
        ) from None
    finally:
        module.train(was_training)
    return import_program(program, params=params, entry=entry)


def import_training_step(
    module: torch.nn.Module,
    example_args: tuple[Any, ...],
    example_kwargs: dict[str, Any] | None = None,
    *,
    loss_index: int = 0,
) -> ImportedModel:
    """Import one training step of ``module``: its forward and backward, as one graph.

    ``module`` returns its loss as output ``loss_index`` (a scalar).  The forward is exported with
    ``torch.export`` and joined with its backward by PyTorch's own autograd tracing (what
    ``torch.export.experimental._export_forward_backward`` does, with the backward ops of
    :data:`KEPT_BACKWARD_OPS` kept whole: they become MindSpore's gradient ops, ``graph.relu_grad``,
    ``graph.softmax_grad``, ``graph.layer_norm_grad``..., which graph-kernel fusion expands and clusters);
    the imported function takes the inputs, then the parameters (``params="arguments"``), and returns the
    loss and the gradient of each trainable parameter (``gradient_names``), then any other outputs.  The
    module is traced in its own mode (``train()`` or ``eval()``); random ops (dropout in training mode) are
    not imported.  The parameters' update is a separate step (:class:`graphfuse.optim.Adam`, or the
    caller's).
    """
    from torch.export.graph_signature import OutputKind

    if not isinstance(module, torch.nn.Module):
        raise GraphfuseError(f"import_training_step takes a torch.nn.Module, not {type(module).__name__}")
    if not isinstance(example_args, tuple):
        example_args = (example_args,)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
            program = torch.export.export(module, example_args, example_kwargs)
            joint = _joint_program(program, loss_index)
    except Exception as error:  # as in import_module: PyTorch raises many exception types
        raise GraphfuseError(f"could not trace {type(module).__name__}'s training step: {_first_line(error)}") from None
    imported = import_program(joint, params="arguments")
    imported.gradient_names = [spec.target for spec in joint.graph_signature.output_specs
                               if spec.kind == OutputKind.GRADIENT_TO_PARAMETER]
    return imported


#: ATen backward ops a training step keeps whole (PyTorch's core decompositions would spell them as basic ops):
#: each is one of MindSpore's gradient ops (Appendix 1's ReluGrad, SigmoidGrad, ...).
KEPT_BACKWARD_OPS = (
    "threshold_backward", "sigmoid_backward", "tanh_backward", "gelu_backward",
    "_softmax_backward_data", "_log_softmax_backward_data", "native_layer_norm_backward",
)


def _joint_program(program: torch.export.ExportedProgram, loss_index: int) -> torch.export.ExportedProgram:
    """``program`` joined with its backward, decomposed to core ATen but for :data:`KEPT_BACKWARD_OPS`."""
    from torch._decomp import core_aten_decompositions
    from torch.export.experimental import (
        _copy_graph_module_and_signature,
        _decompose_exported_program,
        _remove_detach_pass,
    )

    table = core_aten_decompositions()
    for name in KEPT_BACKWARD_OPS:
        table.pop(getattr(torch.ops.aten, name).default, None)
    joint = _decompose_exported_program(program, cia_to_decomp={}, python_decomp_table=table,
                                        joint_loss_index=loss_index, decompose_custom_triton_ops=False)
    module, signature = _copy_graph_module_and_signature(joint)
    _remove_detach_pass(module, signature)
    return joint._update(module, signature)


def _first_line(error: Exception) -> str:
    """The first line of a PyTorch error's message (its type's name when it has none): the reason, without
    the pages of trace some of them append."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class _MethodAsForward(torch.nn.Module):
    """Exports another method of a module: torch.export always traces ``forward``."""

    def __init__(self, module: torch.nn.Module, method: str):
        super().__init__()
        if not callable(getattr(module, method, None)):
            raise GraphfuseError(f"{type(module).__name__} has no method '{method}'")
        self.inner = module
        self.method = method

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.inner, self.method)(*args, **kwargs)


def import_program(
    program: Any,
    *,
    params: ParamsMode = "constants",
    entry: str = "forward",
    input_mutations: MutationsMode = "error",
    constant_inputs: dict[int, torch.Tensor] | None = None,
) -> ImportedModel:
    """Import an ``ExportedProgram`` (``run_decompositions({})`` is applied first).

    A program that writes one of its inputs in place is an error with ``input_mutations="error"``; with
    ``"results"`` the function returns the new values of those inputs first (``ImportedModel.mutated_inputs``
    says which) and the caller writes them back.  ``constant_inputs`` maps flattened user-input positions to
    tensors imported as constants instead of arguments (what ``torch.compile`` gives as parameters).
    """
    if input_mutations not in ("error", "results"):
        raise GraphfuseError(f"input_mutations must be 'error' or 'results', got {input_mutations!r}")
    if params not in ("constants", "arguments"):
        raise GraphfuseError(f"params must be 'constants' or 'arguments', got {params!r}")
    if not isinstance(program, torch.export.ExportedProgram):
        raise GraphfuseError(f"import_program takes a torch.export.ExportedProgram, not {type(program).__name__}")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
            program = program.run_decompositions({})
    except Exception as error:  # as in import_module: PyTorch raises many exception types
        raise GraphfuseError(f"run_decompositions failed on the exported program: {_first_line(error)}") from None
    importer = _Importer(program, params, entry, input_mutations, constant_inputs or {})
    importer.run()
    return ImportedModel(
        importer.builder.module,
        entry,
        params,
        importer.parameter_names,
        importer.parameter_arrays,
        importer.aten_ops,
        program,
        importer.recognised,
        importer.mutated_inputs,
        importer.tensor_inputs,
    )


@dataclass
class RmsNormMatch:
    """``x * rsqrt(mean(x^2, -1, keepdim) + eps) [* w]`` in an FX graph (see :func:`find_rms_norms`)."""

    root: fx.Node
    x: fx.Node
    weight: fx.Node | None
    epsilon: float
    #: the nodes the match replaces besides the root (each used only inside the match)
    absorbed: tuple[fx.Node, ...]


def _is_call(node: Any, *targets: Any) -> bool:
    return isinstance(node, fx.Node) and node.op == "call_function" and node.target in targets


def _only_user(node: fx.Node, user: fx.Node) -> bool:
    return list(node.users) == [user]


def _float_tensor(node: Any) -> torch.Tensor | None:
    """The example value of a node holding a float tensor, else None."""
    val = node.meta.get("val") if isinstance(node, fx.Node) else None
    floats = (torch.float32, torch.float16, torch.bfloat16)
    return val if isinstance(val, torch.Tensor) and val.dtype in floats else None


def _match_rms_norm(rsqrt: fx.Node) -> RmsNormMatch | None:
    """The RMSNorm around ``rsqrt``, or None: the square, mean, add and products must be used only in the chain."""
    aten = torch.ops.aten
    add = rsqrt.args[0]
    if not _is_call(add, aten.add.Tensor, aten.add.Scalar) or not isinstance(add.args[1], float):
        return None
    if add.kwargs.get("alpha", 1) != 1 or len(add.args) > 2:
        return None
    mean = add.args[0]
    if not _is_call(mean, aten.mean.dim):
        return None
    if not (mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)):
        return None
    square = mean.args[0]
    x_val = _float_tensor(square)
    if x_val is None or list(mean.args[1]) not in ([-1], [x_val.dim() - 1]) or mean.kwargs.get("dtype"):
        return None
    if _is_call(square, aten.pow.Tensor_Scalar) and square.args[1] == 2:
        x = square.args[0]
    elif _is_call(square, aten.mul.Tensor) and square.args[0] is square.args[1]:
        x = square.args[0]
    else:
        return None
    users = list(rsqrt.users)
    if len(users) != 1 or not _is_call(users[0], aten.mul.Tensor) or set(users[0].args) != {x, rsqrt}:
        return None
    normed = users[0]
    for node, user in ((square, mean), (mean, add), (add, rsqrt)):
        if not _only_user(node, user):
            return None
    if any(_float_tensor(n) is None or _float_tensor(n).dtype != x_val.dtype for n in (x, normed)):
        return None
    root, weight, absorbed = normed, None, (square, mean, add, rsqrt)
    # ``normed.to(x.dtype)`` when x already has that dtype leaves only export's metadata check on ``normed``
    # (HF's RMSNorms in fp32): a check that the weight's product can take over.
    checks = tuple(u for u in normed.users if _is_call(u, aten._assert_tensor_metadata.default))
    scaled = [u for u in normed.users if u not in checks]
    if len(scaled) == 1 and _is_call(scaled[0], aten.mul.Tensor):
        other = next((a for a in scaled[0].args if a is not normed), None)
        w_val = _float_tensor(other)
        out_val = _float_tensor(scaled[0])
        same_shape = out_val is not None and tuple(out_val.shape) == tuple(_float_tensor(normed).shape)
        if w_val is not None and w_val.dim() == 1 and w_val.dtype == x_val.dtype and same_shape:
            root, weight, absorbed = scaled[0], other, (*absorbed, normed, *checks)
    return RmsNormMatch(root, x, weight, float(add.args[1]), absorbed)


def find_rms_norms(graph: fx.Graph) -> dict[fx.Node, RmsNormMatch]:
    """Hand-written RMSNorms, ``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`` optionally ``* weight``
    (either operand order), by the node that produces their result.

    The mean must be over the last dim only, eps a Python float, every
    intermediate used only by the next op of the chain, and all values of
    one float dtype (the mixed-precision form with casts around the
    statistics is not matched); ``weight`` must be 1-D.  Each match becomes
    one ``graph.rms_norm``, so add_rms_norm_fusion sees it.
    """
    matches = {}
    for node in graph.nodes:
        if _is_call(node, torch.ops.aten.rsqrt.default):
            match = _match_rms_norm(node)
            if match is not None:
                matches[match.root] = match
    return matches


_STACK_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in [^\n]*\n(?P<code>[^\n]*)')


def _user_frame(node: fx.Node) -> tuple[str, int, str] | None:
    """(file, line, source text) of the innermost frame of the node's stack trace, when it has one."""
    trace = node.meta.get("stack_trace")
    if not trace:
        return None
    frames = list(_STACK_FRAME.finditer(trace))
    if not frames:
        return None
    last = frames[-1]
    return last["file"], int(last["line"]), last["code"].strip()


class _Importer:
    """Walks the FX graph of an ExportedProgram once, building one graph-dialect function."""

    def __init__(
        self,
        program: Any,
        params: ParamsMode,
        entry: str,
        input_mutations: MutationsMode = "error",
        constant_inputs: dict[int, torch.Tensor] | None = None,
    ):
        self.program = program
        self.params = params
        self.input_mutations = input_mutations
        self.constant_inputs = constant_inputs or {}
        self.mutated_inputs: list[int] = []
        #: flattened user-input position by placeholder name
        self.user_inputs: dict[str, int] = {}
        self.builder: FunctionBuilder = GraphBuilder(entry)
        self.context = self.builder.context
        self.values: dict[fx.Node, Any] = {}
        self.node: fx.Node | None = None
        self.parameter_names: list[str] = []
        self.parameter_arrays: list[np.ndarray] = []
        self.tensor_inputs: list[bool] = []
        self.aten_ops: Counter[str] = Counter()
        self.recognised: Counter[str] = Counter()
        self._constants: dict[tuple[str, str], Tensor] = {}

    # -- errors and locations -------------------------------------------------

    def location(self, node: fx.Node) -> ir.Location:
        with self.context:
            frame = _user_frame(node)
            child = ir.Location.file(frame[0], frame[1], 1) if frame else ir.Location.unknown()
            return ir.Location.name(f"fx:{node.name}", childLoc=child)

    def error(self, message: str, node: fx.Node | None = None) -> GraphfuseError:
        """A GraphfuseError located at the node's source line, naming the node and quoting the line."""
        node = node or self.node
        where = None
        if node is not None:
            frame = _user_frame(node)
            if frame is not None:
                where = SourceLoc(frame[0], frame[1], 1)
                if frame[2]:
                    message = f"{message}: {frame[2]}"
        return GraphfuseError([Diagnostic("error", message, where)])

    def unsupported(self, node: fx.Node, why: str = "") -> GraphfuseError:
        detail = f" ({why})" if why else ""
        return self.error(f"unsupported ATen op '{_op_name(node.target)}' at FX node '{node.name}'{detail}", node)

    # -- values ---------------------------------------------------------------

    def graph_dtype(self, dtype: torch.dtype, what: str) -> str:
        """The graph dtype of a torch dtype; ``what`` names the value for the error (it names the FX node)."""
        if dtype not in _DTYPES:
            supported = ", ".join(str(d).removeprefix("torch.") for d in _DTYPES)
            raise self.error(f"unsupported dtype {dtype} of {what} (the graph dialect has {supported})")
        return _DTYPES[dtype]

    def meta(self, arg: Any) -> Any:
        """The example value torch.export recorded for a node (a FakeTensor, a list of them, a number)."""
        return arg.meta.get("val") if isinstance(arg, fx.Node) else arg

    def out_dtype(self, node: fx.Node, index: int | None = None) -> str:
        val = self.meta(node)
        if index is not None:
            val = val[index]
        return self.graph_dtype(val.dtype, f"the result of FX node '{node.name}'")

    def out_shape(self, node: fx.Node, index: int | None = None) -> tuple[int | None, ...]:
        val = self.meta(node)
        if index is not None:
            val = val[index]
        return tuple(d if isinstance(d, int) else None for d in val.shape)

    def static_shape(self, value: Tensor, what: str = "operand") -> tuple[int, ...]:
        if not value.sig.is_static:
            raise self.unsupported(self.node, f"the {what} has a dynamic shape {value.sig}")
        return tuple(int(d) for d in value.shape)

    def emit(self, name: str, *operands: Any, **attrs: Any) -> Any:
        """Build ``graph.<name>`` located at the current FX node."""
        result = self.builder.op(name, *operands, **attrs)
        first = result[0] if isinstance(result, tuple) else result
        first.value.owner.location = self.location(self.node)
        return result

    def const(self, array: Any, dtype: str) -> Tensor:
        """A constant of ``dtype`` located at the current FX node."""
        value = self.builder.const(np.asarray(array).astype(NUMPY_DTYPES[dtype]), dtype)
        value.value.owner.location = self.location(self.node)
        return value

    def tensor(self, arg: Any, dtype: str | None = None) -> Tensor:
        """The graph value of an FX argument (node, constant or Python number), cast to ``dtype`` when given."""
        value = self.values[arg] if isinstance(arg, fx.Node) else arg
        if isinstance(value, _Missing):
            raise self.error(f"FX node '{self.node.name}' uses {value.what}, which the import does not provide")
        if isinstance(value, _Symbolic):
            raise self.unsupported(self.node, f"the symbolic size '{value.name}' used as a tensor")
        if isinstance(value, _Const):
            return self.materialize(arg.name, value.tensor, dtype)
        if isinstance(value, Tensor):
            if dtype is not None and value.dtype != dtype:
                return self.emit("cast", value, dtype)
            return value
        if isinstance(value, bool | int | float):
            if dtype is None:
                dtype = "i1" if isinstance(value, bool) else "i64" if isinstance(value, int) else "f32"
            return self.const(np.asarray(value), dtype)
        raise self.error(f"FX node '{self.node.name}' takes {type(value).__name__} where a tensor is expected")

    def materialize(self, name: str, tensor: torch.Tensor, dtype: str | None) -> Tensor:
        """An arith.constant for a known tensor, once per (name, dtype)."""
        if dtype is None:
            dtype = self.graph_dtype(tensor.dtype, f"constant '{name}'")
        key = (name, dtype)
        if key not in self._constants:
            converted = tensor.to(_TORCH_DTYPES[dtype]) if _TORCH_DTYPES[dtype] != tensor.dtype else tensor
            self._constants[key] = self.const(to_numpy(converted), dtype)
        return self._constants[key]

    def constant_value(self, arg: Any) -> torch.Tensor | None:
        """The tensor ``arg`` holds when it is known at import time."""
        value = self.values.get(arg) if isinstance(arg, fx.Node) else None
        return value.tensor if isinstance(value, _Const) else None

    def promoted_dtype(self, lhs: Any, rhs: Any) -> str:
        """PyTorch's result type of two operands (tensors, 0-dim tensors, Python numbers) as a graph dtype."""
        protos: list[Any] = []
        for arg in (lhs, rhs):
            val = self.meta(arg)
            if isinstance(val, torch.Tensor):
                # result_type depends on the dtype and on whether the tensor is 0-dim, not on its sizes.
                protos.append(torch.empty((1,) * val.dim(), dtype=val.dtype, device="meta"))
            else:
                protos.append(val)
        return self.graph_dtype(torch.result_type(*protos), f"the operands of FX node '{self.node.name}'")

    # -- the walk ---------------------------------------------------------------

    def run(self) -> None:
        with self.context:
            self.builder.func.location = ir.Location.name(f"torch.export:{self.builder.name}")
        graph = self.program.graph
        placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
        self._bind_inputs(placeholders)
        rms_norms = find_rms_norms(graph)
        absorbed = {n for match in rms_norms.values() for n in match.absorbed}
        for node in graph.nodes:
            self.node = node
            if node.op == "placeholder" or node in absorbed:
                continue
            if node in rms_norms:
                self.values[node] = self._rms_norm(rms_norms[node])
                continue
            if node.op == "output":
                self._finish(node)
            elif node.op == "call_function":
                self.values[node] = self._call(node)
            else:
                raise self.error(f"unsupported FX node '{node.name}' ({node.op} {node.target})")

    def _bind_inputs(self, placeholders: dict[str, fx.Node]) -> None:
        from torch.export.graph_signature import InputKind

        specs = self.program.graph_signature.input_specs
        state = self.program.state_dict
        # User inputs first, so the function starts with the model's own arguments.
        for spec in specs:
            if spec.kind != InputKind.USER_INPUT:
                continue
            node = placeholders[spec.arg.name]
            self.node = node
            position = len(self.tensor_inputs)
            self.user_inputs[node.name] = position
            val = self.meta(node)
            constant = self.constant_inputs.get(position)
            self.tensor_inputs.append(isinstance(val, torch.Tensor) and constant is None)
            if constant is not None:
                self.values[node] = _Const(constant.detach())
            else:
                self.values[node] = self._argument(node, val) if isinstance(val, torch.Tensor) else val
        for spec in specs:
            node = placeholders.get(getattr(spec.arg, "name", ""))
            self.node = node
            if spec.kind == InputKind.USER_INPUT or node is None:
                continue
            if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                tensor = state[spec.target] if spec.target in state else self.program.constants[spec.target]
            elif spec.kind == InputKind.CONSTANT_TENSOR:
                tensor = self.program.constants[spec.target]
            else:
                raise self.error(f"unsupported input '{node.name}' of kind {spec.kind.name}")
            if not isinstance(tensor, torch.Tensor):
                raise self.error(f"unsupported input '{node.name}': a {type(tensor).__name__}, not a tensor")
            tensor = tensor.detach()
            if self.params == "arguments" and spec.kind != InputKind.CONSTANT_TENSOR:
                if not node.users:
                    continue  # e.g. batch_norm's num_batches_tracked: nothing reads it
                self.values[node] = self._argument(node, tensor)
                self.parameter_names.append(spec.target)
                self.parameter_arrays.append(to_numpy(tensor))
            else:
                self.values[node] = _Const(tensor)

    def _argument(self, node: fx.Node, val: torch.Tensor) -> Tensor:
        dtype = self.graph_dtype(val.dtype, f"input '{node.name}' (FX node '{node.name}')")
        shape = tuple(d if isinstance(d, int) else None for d in val.shape)
        with self.context:
            value = self.builder.block.add_argument(tensor_type(TensorSig(shape, dtype)), self.location(node))
        return Tensor(self.builder, value)

    def _call(self, node: fx.Node) -> Any:
        name = _op_name(node.target)
        if name != "getitem":
            self.aten_ops[name] += 1
        if isinstance(self.meta(node), torch.SymInt | torch.SymFloat | torch.SymBool):
            # a size computation: the ops that use it read sizes from their types (arange: from its source)
            is_size = name == "aten.sym_size.int" and isinstance(node.args[0], fx.Node)
            return _Symbolic(node.name, (node.args[0], int(node.args[1])) if is_size else None)
        folded = self._fold(node)
        if folded is not None:
            return folded
        op = _REGISTRY.get(name)
        if op is None:
            raise self.unsupported(node)
        try:
            value = op.convert(self, node, _bind(node))
        except BuildError as error:
            message = error.diagnostics[0].message if error.diagnostics else str(error)
            raise self.error(f"cannot import FX node '{node.name}' ({name}): {message}") from None
        except GraphfuseError:
            raise
        except (TypeError, ValueError, IndexError, KeyError) as error:
            # e.g. a symbolic size where the converter needs a number
            raise self.unsupported(node, f"arguments it cannot take: {error}") from None
        self._check(node, value)
        return value

    def _rms_norm(self, match: RmsNormMatch) -> Tensor:
        """A recognised hand-written RMSNorm as one ``graph.rms_norm`` (its ATen ops counted as imported)."""
        for op in (*match.absorbed, match.root):
            self.aten_ops[_op_name(op.target)] += 1
        self.recognised["rms_norm (hand-written)"] += 1
        dtype = self.out_dtype(match.root)
        x = self.tensor(match.x, dtype)
        width = x.shape[-1]
        if match.weight is None:
            gamma = self.const(np.ones(width), dtype)
        else:
            gamma = self.tensor(match.weight, dtype)
        value = self.emit("rms_norm", x, gamma, epsilon=match.epsilon)
        self._check(match.root, value)
        return value

    def _fold(self, node: fx.Node) -> Any:
        """Evaluate the node with PyTorch when all its tensor inputs are known constants."""
        if not isinstance(node.target, torch._ops.OpOverload):
            return None
        if torch.Tag.nondeterministic_seeded in node.target.tags:
            return None
        inputs = node.all_input_nodes
        if any(not isinstance(self.values.get(n), _Const) for n in inputs):
            return None
        val = self.meta(node)
        results = val if isinstance(val, list | tuple) else [val]
        if not all(isinstance(r, torch.Tensor) and all(isinstance(d, int) for d in r.shape) for r in results):
            return None
        args, kwargs = fx.node.map_arg((node.args, node.kwargs), lambda n: self.values[n].tensor)
        try:
            with torch.no_grad():
                out = node.target(*args, **kwargs)
        except Exception:  # PyTorch cannot evaluate it eagerly here: translate it instead
            return None
        if isinstance(out, list | tuple):
            return tuple(_Const(t) for t in out)
        return _Const(out)

    def _check(self, node: fx.Node, value: Any) -> None:
        """Compare each produced value with the type torch.export recorded (an importer bug otherwise)."""
        val = self.meta(node)
        pairs = zip(value, val, strict=False) if isinstance(value, tuple) else [(value, val)]
        for got, want in pairs:
            if not isinstance(got, Tensor) or not isinstance(want, torch.Tensor):
                continue
            want_dtype = _DTYPES.get(want.dtype)
            want_shape = tuple(d if isinstance(d, int) else None for d in want.shape)
            same_shape = len(want_shape) == len(got.shape) and all(
                w is None or g is None or w == g for w, g in zip(want_shape, got.shape, strict=True)
            )
            if got.dtype != want_dtype or not same_shape:
                raise self.error(
                    f"internal: FX node '{node.name}' ({_op_name(node.target)}) imported as {got.sig}, "
                    f"torch.export says {TensorSig(want_shape, str(want_dtype))}"
                )

    def _finish(self, node: fx.Node) -> None:
        from torch.export.graph_signature import OutputKind

        flat = node.args[0]
        written: list[Tensor] = []  # the new values of mutated inputs come first
        results: list[Tensor] = []
        for i, (spec, arg) in enumerate(zip(self.program.graph_signature.output_specs, flat, strict=True)):
            mutated = self.user_inputs.get(spec.target) if spec.kind == OutputKind.USER_INPUT_MUTATION else None
            if mutated is not None and self.input_mutations == "results":
                if not self.tensor_inputs[mutated]:
                    raise self.error(f"the model writes its input '{spec.target}', which is imported as a constant")
                self.mutated_inputs.append(mutated)
            elif spec.kind not in (OutputKind.USER_OUTPUT, OutputKind.LOSS_OUTPUT, OutputKind.GRADIENT_TO_PARAMETER,
                                   OutputKind.GRADIENT_TO_USER_INPUT):
                raise self.error(f"the model mutates '{spec.target}' ({spec.kind.name}): graphs are pure")
            value = self.values.get(arg) if isinstance(arg, fx.Node) else arg
            if not isinstance(value, _Const | Tensor):
                raise self.error(f"output #{i} is a {type(value).__name__}, not a tensor")
            (written if mutated is not None else results).append(self.tensor(arg))
        results = written + results
        with self.context:
            self.builder.ret(*results)
            list(self.builder.block.operations)[-1].location = self.location(node)


def _bind(node: fx.Node) -> dict[str, Any]:
    """The node's arguments by schema name, defaults filled in."""
    if node.target is operator.getitem:
        return {"self": node.args[0], "index": node.args[1]}
    schema = node.target._schema
    bound: dict[str, Any] = {}
    positional = list(node.args)
    for i, argument in enumerate(schema.arguments):
        if i < len(positional) and not argument.kwarg_only:
            bound[argument.name] = positional[i]
        elif argument.name in node.kwargs:
            bound[argument.name] = node.kwargs[argument.name]
        elif argument.has_default_value():
            bound[argument.name] = argument.default_value
        else:
            bound[argument.name] = None
    return bound


# --------------------------------------------------------------------------
# Converters: elementwise.


def _axis(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


_UNARY_FLOAT = ("exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "erf", "silu", "sin", "cos",
                "acos", "asin", "atan", "acosh", "asinh", "expm1")
_UNARY_NUMERIC = ("abs", "neg", "relu", "sign")
_UNARY_ROUNDING = ("floor", "ceil", "round", "trunc")


def _unary(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        x = imp.tensor(a["self"], dtype)
        if graph_op in _UNARY_ROUNDING and dtype not in _FLOATS:
            return x  # integers are already whole
        return imp.emit(graph_op, x)

    return convert


for _name in (*_UNARY_FLOAT, *_UNARY_NUMERIC, *_UNARY_ROUNDING):
    _converts(
        f"aten.{_name}.default",
        graph=f"`{_name}`",
        notes="integer input: identity" if _name in _UNARY_ROUNDING else "",
    )(_unary(_name))


@_converts("aten.gelu.default", graph="`gelu`", notes="`approximate` none or tanh")
def _gelu(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("gelu", imp.tensor(a["self"], imp.out_dtype(node)), approximate=a["approximate"])


@_converts("aten.logical_not.default", graph="`cast` to i1, `logical_not`")
def _logical_not(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("logical_not", imp.tensor(a["self"], "i1"))


@_converts("aten.isfinite.default", graph="`isfinite`", notes="integer input: all true")
def _isfinite(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    if x.dtype not in _FLOATS:
        return imp.emit("broadcast_to", imp.const(np.asarray(True), "i1"), x.shape)
    return imp.emit("isfinite", x)


@_converts("aten.isnan.default", graph="`isnan`", notes="integer input: all false")
def _isnan(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _float_test(imp, imp.tensor(a["self"]), "isnan")


@_converts("aten.isinf.default", graph="`isinf`", notes="integer input: all false")
def _isinf(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _float_test(imp, imp.tensor(a["self"]), "isinf")


def _float_test(imp: _Importer, x: Tensor, graph_op: str) -> Tensor:
    """``graph_op`` (isnan, isinf) of a float tensor; an integer one is neither: all false."""
    if x.dtype not in _FLOATS:
        return imp.emit("broadcast_to", imp.const(np.asarray(False), "i1"), x.shape)
    return imp.emit(graph_op, x)


def _scaled(imp: _Importer, value: Tensor, alpha: Any) -> Tensor:
    if alpha is None or alpha == 1:
        return value
    return imp.emit("mul", value, imp.const(np.asarray(alpha), value.dtype))


def _binary(graph_op: str, swap: bool = False, with_alpha: bool = False) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        lhs, rhs = imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype)
        if with_alpha:
            rhs = _scaled(imp, rhs, a.get("alpha"))
        if swap:
            lhs, rhs = rhs, lhs
        return imp.emit(graph_op, lhs, rhs)

    return convert


_converts("aten.add.Tensor", "aten.add.Scalar", graph="`add` (`mul` by alpha)", notes="promotion as PyTorch")(
    _binary("add", with_alpha=True)
)
_converts("aten.sub.Tensor", "aten.sub.Scalar", graph="`sub` (`mul` by alpha)", notes="promotion as PyTorch")(
    _binary("sub", with_alpha=True)
)
_converts("aten.rsub.Scalar", "aten.rsub.Tensor", graph="`sub` (`mul` by alpha)", notes="other - alpha * self")(
    lambda imp, node, a: _rsub(imp, node, a)
)
_converts("aten.mul.Tensor", "aten.mul.Scalar", graph="`mul`", notes="promotion as PyTorch")(_binary("mul"))
_converts("aten.maximum.default", graph="`maximum`", notes="NaN propagates")(_binary("maximum"))
_converts("aten.minimum.default", graph="`minimum`", notes="NaN propagates")(_binary("minimum"))


def _rsub(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    scaled = _scaled(imp, imp.tensor(a["self"], dtype), a.get("alpha"))
    return imp.emit("sub", imp.tensor(a["other"], dtype), scaled)


@_converts(
    "aten.div.Tensor",
    "aten.div.Scalar",
    graph="`div`",
    notes="true division (integers divide as floats); rounding modes unsupported",
)
def _div(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    return imp.emit("div", imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype))


@_converts("aten.div.Tensor_mode", "aten.div.Scalar_mode", graph="`div`, `floor_div`; `trunc` of a float quotient",
           notes="rounding_mode None, 'floor' or 'trunc'")
def _div_mode(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    lhs, rhs = imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype)
    mode = a.get("rounding_mode")
    if mode == "floor":
        return imp.emit("floor_div", lhs, rhs)
    quotient = imp.emit("div", lhs, rhs)  # integers: truncated already
    return imp.emit("trunc", quotient) if mode == "trunc" and dtype in _FLOATS else quotient


_converts("aten.floor_divide.default", "aten.floor_divide.Scalar", graph="`floor_div`",
          notes="rounds toward -inf, as PyTorch")(_binary("floor_div"))
_converts("aten.fmod.Tensor", "aten.fmod.Scalar", graph="`mod`", notes="the dividend's sign (C's fmod)")(
    _binary("mod"))
_converts("aten.remainder.Tensor", "aten.remainder.Scalar", graph="`floor_mod`",
          notes="the divisor's sign (Python's %)")(_binary("floor_mod"))
_converts("aten.atan2.default", graph="`atan2`", notes="integers promoted to float")(_binary("atan2"))


#: pow(x, c) for the exponents PyTorch computes by a dedicated kernel, as the graph op computing the same
_POW_SPECIAL = {2: "square", 0.5: "sqrt", -0.5: "rsqrt", -1: "reciprocal"}


@_converts(
    "aten.pow.Tensor_Scalar",
    "aten.pow.Tensor_Tensor",
    "aten.pow.Scalar",
    graph="`pow`; `square`, `sqrt`, `rsqrt`, `reciprocal` for exponents 2, 0.5, -0.5, -1",
)
def _pow(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    base, exponent = a["self"], a["exponent"]
    if isinstance(exponent, int | float) and not isinstance(exponent, bool):
        if exponent == 1:
            return imp.tensor(base, dtype)
        special = _POW_SPECIAL.get(exponent)
        if special is not None and (special == "square" or dtype in _FLOATS):
            return imp.emit(special, imp.tensor(base, dtype))
    return imp.emit("pow", imp.tensor(base, dtype), imp.tensor(exponent, dtype))


_COMPARISONS = {
    "eq": "equal",
    "ne": "not_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "lt": "less",
    "le": "less_equal",
}


def _comparison(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.promoted_dtype(a["self"], a["other"])
        return imp.emit(graph_op, imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype))

    return convert


for _name, _graph_op in _COMPARISONS.items():
    _converts(
        f"aten.{_name}.Tensor", f"aten.{_name}.Scalar", graph=f"`{_graph_op}`", notes="operands promoted first"
    )(_comparison(_graph_op))
# torch.greater & co. stay under their long names in an exported program
for _name, _graph_op in (("greater", "greater"), ("greater_equal", "greater_equal"), ("less", "less"),
                         ("less_equal", "less_equal"), ("not_equal", "not_equal")):
    _converts(
        f"aten.{_name}.Tensor", f"aten.{_name}.Scalar", graph=f"`{_graph_op}`", notes="operands promoted first"
    )(_comparison(_graph_op))


def _logical(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        return imp.emit(graph_op, imp.tensor(a["self"], "i1"), imp.tensor(a["other"], "i1"))

    return convert


_converts("aten.logical_and.default", graph="`logical_and`", notes="operands cast to i1")(_logical("logical_and"))
_converts("aten.logical_or.default", graph="`logical_or`", notes="operands cast to i1")(_logical("logical_or"))


def _bitwise(graph_op: str) -> Converter:
    """``&``, ``|``, ``^`` (transformers combines its padding and causal masks so): on booleans the logical ops
    (xor is ``not_equal``), on integers the bitwise ops, operands promoted as PyTorch promotes them."""
    boolean = {"bitwise_and": "logical_and", "bitwise_or": "logical_or", "bitwise_xor": "not_equal"}[graph_op]

    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        if dtype in _FLOATS:
            raise imp.unsupported(node, f"a bitwise operation on {dtype}")
        lhs, rhs = imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype)
        return imp.emit(boolean if dtype == "i1" else graph_op, lhs, rhs)

    return convert


for _name, _graph_op in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")):
    _converts(f"aten.bitwise_{_name}.Tensor", f"aten.bitwise_{_name}.Scalar", f"aten.__{_name}__.Tensor",
              f"aten.__{_name}__.Scalar", graph=f"`{_graph_op}`; on booleans `logical_{_name}`"
              if _name != "xor" else "`bitwise_xor`; on booleans `not_equal`",
              notes="booleans and integers, promoted as PyTorch")(_bitwise(_graph_op))


@_converts("aten.bitwise_not.default", graph="`bitwise_not`; on booleans `logical_not`",
           notes="booleans and integers (`~mask`)")
def _bitwise_not(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    if dtype in _FLOATS:
        raise imp.unsupported(node, f"a bitwise operation on {dtype}")
    return imp.emit("logical_not" if dtype == "i1" else "bitwise_not", imp.tensor(a["self"], dtype))


@_converts(
    "aten.where.self", "aten.where.ScalarOther", "aten.where.ScalarSelf", "aten.where.Scalar", graph="`select`"
)
def _where(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    cond = imp.tensor(a["condition"], "i1")
    return imp.emit("select", cond, imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype))


@_converts("aten.masked_fill.Scalar", "aten.masked_fill.Tensor", graph="`select`")
def _masked_fill(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    return imp.emit("select", imp.tensor(a["mask"], "i1"), imp.tensor(a["value"], dtype), imp.tensor(a["self"], dtype))


@_converts(
    "aten.clamp.default",
    "aten.clamp_min.default",
    "aten.clamp_max.default",
    graph="`maximum`, `minimum`",
    notes="scalar bounds",
)
def _clamp(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    low = a.get("min")
    high = a.get("max")
    if low is not None:
        x = imp.emit("maximum", x, imp.tensor(low, dtype))
    if high is not None:
        x = imp.emit("minimum", x, imp.tensor(high, dtype))
    return x


@_converts("aten.hardtanh.default", "aten.relu6.default", graph="`maximum`, `minimum`",
           notes="relu6 is hardtanh(0, 6)")
def _hardtanh(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    relu6 = _op_name(node.target) == "aten.relu6.default"
    low = imp.tensor(0.0 if relu6 else float(a.get("min_val", -1.0)), dtype)
    high = imp.tensor(6.0 if relu6 else float(a.get("max_val", 1.0)), dtype)
    return imp.emit("minimum", imp.emit("maximum", x, low), high)


def _relu6_of_shifted(imp: _Importer, x: Tensor, dtype: str) -> Tensor:
    """``min(max(x + 3, 0), 6)``: PyTorch's hardsigmoid and hardswish before their division by 6."""
    shifted = imp.emit("add", x, imp.tensor(3.0, dtype))
    return imp.emit("minimum", imp.emit("maximum", shifted, imp.tensor(0.0, dtype)), imp.tensor(6.0, dtype))


@_converts("aten.hardsigmoid.default", graph="`add`, `maximum`, `minimum`, `div`",
           notes="`min(max(x + 3, 0), 6) / 6` as PyTorch computes it")
def _hardsigmoid(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    return imp.emit("div", _relu6_of_shifted(imp, x, dtype), imp.tensor(6.0, dtype))


@_converts("aten.hardswish.default", graph="`add`, `maximum`, `minimum`, `mul`, `div`",
           notes="`x * min(max(x + 3, 0), 6) / 6` as PyTorch computes it")
def _hardswish(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    return imp.emit("div", imp.emit("mul", x, _relu6_of_shifted(imp, x, dtype)), imp.tensor(6.0, dtype))


# --------------------------------------------------------------------------
# Converters: dtype changes and identities.


@_converts(
    "aten._to_copy.default",
    "aten.type_as.default",
    graph="`cast` (none when the dtype stays)",
    notes="CPU only",
)
def _to(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    device = a.get("device")
    if device is not None and torch.device(device).type != "cpu":
        raise imp.unsupported(node, f"a copy to device {device}")
    return imp.tensor(a["self"], imp.out_dtype(node))


@_converts("aten.clone.default", "aten.alias.default", "aten.detach.default", graph="none (the operand)")
def _identity(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.tensor(a["self"])


@_converts("aten.copy.default", graph="`broadcast_to` and `cast` of the source (none when it fits)",
           notes="`x.copy_(src)` (functionalized): src broadcast to x's shape and cast to its dtype; into a "
           "model input it is a mutated input the caller writes back")
def _copy(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _to_node_shape(imp, node, imp.tensor(a["src"], imp.out_dtype(node)), "broadcast_to")


# --------------------------------------------------------------------------
# torch.distributed's functional collectives (a tensor-parallel model's all-reduces).

_COLLECTIVE_REDUCTIONS = {"sum": "sum", "max": "max", "min": "min"}


def _collective_group(imp: _Importer, node: fx.Node, name: str, size: int | None) -> dict[str, Any]:
    """The graph ops' group attributes of a process group named ``name`` (the default group: "world")."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        from torch.distributed.distributed_c10d import _resolve_process_group

        try:
            group = _resolve_process_group(name)
        except (RuntimeError, ValueError):
            group = None
        if group is not None:
            if size is None:
                size = group.size()
            if group == dist.group.WORLD:
                name = "world"
    if size is None:
        raise imp.error(f"FX node '{node.name}': the size of process group '{name}' is unknown: import the model "
                        "where torch.distributed is initialized (torchrun)")
    return {"group": name, "group_size": int(size)}


def _collective_reduction(imp: _Importer, node: fx.Node, op: str) -> str:
    if op.lower() not in _COLLECTIVE_REDUCTIONS:
        raise imp.error(f"FX node '{node.name}': the reduction '{op}' of a collective is not supported (sum, max, "
                        "min)")
    return _COLLECTIVE_REDUCTIONS[op.lower()]


@_converts("_c10d_functional.all_reduce.default", graph="`all_reduce`",
           notes="sum, max, min; the group's size from torch.distributed")
def _all_reduce(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("all_reduce", imp.tensor(a["input"]), reduction=_collective_reduction(imp, node, a["reduce_op"]),
                    **_collective_group(imp, node, a["group_name"], None))


@_converts("_c10d_functional.all_gather_into_tensor.default", graph="`all_gather` (axis 0)")
def _all_gather(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("all_gather", imp.tensor(a["input"]), axis=0,
                    **_collective_group(imp, node, a["group_name"], a["group_size"]))


@_converts("_c10d_functional.reduce_scatter_tensor.default", graph="`reduce_scatter` (axis 0)", notes="sum, max, min")
def _reduce_scatter(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("reduce_scatter", imp.tensor(a["input"]), axis=0,
                    reduction=_collective_reduction(imp, node, a["reduce_op"]),
                    **_collective_group(imp, node, a["group_name"], a["group_size"]))


@_converts("_c10d_functional.wait_tensor.default", graph="none (the operand)",
           notes="a collective's result is ready when its graph op is")
def _wait_tensor(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.tensor(a["tensor"])


@_converts(
    "aten._assert_tensor_metadata.default",
    graph="none (dropped)",
    notes="export's checks of dtypes and sizes, which the graph's tensor types fix",
)
def _assertion(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> None:
    return None


@_converts("aten._assert_scalar.default", graph="none (dropped)",
           notes="export's checks of data-dependent sizes (`u0 >= 0` after a repeat_interleave by constant "
           "repeats); the imported graph's sizes are computed from the constants")
def _scalar_assertion(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> None:
    return None


@_converts("getitem", graph="none (picks a result)", notes="results of multi-result ops")
def _getitem(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Any:
    value = imp.values[a["self"]]
    if not isinstance(value, list | tuple):
        raise imp.unsupported(node, f"indexing a {type(value).__name__}")
    item = value[a["index"]]
    if isinstance(item, _Missing):
        raise imp.error(f"FX node '{node.name}' uses {item.what}, which the import does not provide")
    return item


# --------------------------------------------------------------------------
# Converters: reductions.


def _dims(dim: Any, rank: int) -> list[int]:
    """Reduced axes: None or [] means all of them (PyTorch's convention for sum/mean/amax)."""
    if dim is None or (isinstance(dim, list | tuple) and len(dim) == 0):
        return list(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({_axis(d, rank) for d in dims})


def _reduction(graph_op: str, all_dims: bool = False) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        x = imp.tensor(a["self"], imp.out_dtype(node))
        dims = list(range(len(x.shape))) if all_dims else _dims(a.get("dim"), len(x.shape))
        return imp.emit(graph_op, x, axes=dims, keep_dims=bool(a.get("keepdim", False)))

    return convert


@_converts("aten.any.dim", "aten.any.default", graph="`cast` to i32, `reduce_max`, `not_equal` 0",
           notes="a constant false over an empty dim")
def _any(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"], "i32")
    dims = list(range(len(x.shape))) if a.get("dim") is None else _dims(a["dim"], len(x.shape))
    shape = imp.out_shape(node)
    if any(x.shape[d] == 0 for d in dims) and None not in shape:  # any of nothing is false; reduce_max has no identity
        return imp.const(np.zeros(shape, np.bool_), "i1")
    largest = imp.emit("reduce_max", x, axes=dims, keep_dims=bool(a.get("keepdim", False)))
    return imp.emit("not_equal", largest, imp.const(np.asarray(0), "i32"))


_converts("aten.sum.dim_IntList", "aten.sum.default", graph="`reduce_sum`", notes="integers and bools sum as i64")(
    _reduction("reduce_sum")
)
_converts("aten.mean.dim", "aten.mean.default", graph="`reduce_mean`")(_reduction("reduce_mean"))
_converts("aten.amax.default", graph="`reduce_max`")(_reduction("reduce_max"))
_converts("aten.amin.default", graph="`reduce_min`")(_reduction("reduce_min"))
_converts("aten.max.default", graph="`reduce_max` over all axes")(_reduction("reduce_max", all_dims=True))
_converts("aten.min.default", graph="`reduce_min` over all axes")(_reduction("reduce_min", all_dims=True))


def _arg_extreme(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        x = imp.tensor(a["self"])
        dim, keepdim = a.get("dim"), bool(a.get("keepdim", False))
        if dim is None:  # over all elements, of the tensor flattened
            if None in x.shape:
                raise imp.unsupported(node, "argmax/argmin over all elements of a tensor of dynamic shape")
            flat = imp.emit("reshape", x, (math.prod(x.shape),)) if len(x.shape) != 1 else x
            index = imp.emit(graph_op, flat, axis=0, keep_dims=False)
            return imp.emit("reshape", index, (1,) * len(x.shape) if keepdim else ())
        return imp.emit(graph_op, x, axis=_axis(dim, len(x.shape)), keep_dims=keepdim)

    return convert


_converts("aten.argmax.default", graph="`argmax` (`reshape` for dim=None)",
          notes="first maximum; NaN counts as largest")(_arg_extreme("argmax"))
_converts("aten.argmin.default", graph="`argmin` (`reshape` for dim=None)",
          notes="first minimum; NaN counts as smallest")(_arg_extreme("argmin"))


@_converts(
    "aten.var.correction",
    "aten.var.dim",
    graph="`reduce_mean`, `sub`, `square`, `reduce_sum`, `div`",
    notes="two-pass variance, divided by count - correction",
)
def _var(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    dims = _dims(a.get("dim"), len(x.shape))
    shape = imp.static_shape(x)
    count = math.prod(shape[d] for d in dims)
    if "unbiased" in a:
        correction = 1 if a["unbiased"] else 0
    else:
        correction = 1 if a.get("correction") is None else a["correction"]
    mean = imp.emit("reduce_mean", x, axes=dims, keep_dims=True)
    squares = imp.emit("square", imp.emit("sub", x, mean))
    total = imp.emit("reduce_sum", squares, axes=dims, keep_dims=bool(a.get("keepdim", False)))
    return imp.emit("div", total, imp.const(np.asarray(max(count - correction, 0)), dtype))


# --------------------------------------------------------------------------
# Converters: shapes.


@_converts(
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.squeeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.unsqueeze.default",
    graph="`reshape` (none when the shape stays)",
    notes="at most one dynamic dim in the result",
)
def _reshape(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _to_node_shape(imp, node, imp.tensor(a["self"]), "reshape")


@_converts("aten.expand.default", graph="`broadcast_to` (none when the shape stays)")
def _expand(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _to_node_shape(imp, node, imp.tensor(a["self"]), "broadcast_to")


def _to_node_shape(imp: _Importer, node: fx.Node, x: Tensor, graph_op: str) -> Tensor:
    """``graph_op`` (reshape or broadcast_to) of ``x`` to the node's shape; ``x`` itself when it has it."""
    shape = imp.out_shape(node)
    if shape == x.shape and x.sig.is_static:
        return x
    return imp.emit(graph_op, x, shape)


@_converts("aten.permute.default", graph="`transpose`")
def _permute(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    perm = [_axis(d, len(x.shape)) for d in a["dims"]]
    return x if perm == sorted(perm) else imp.emit("transpose", x, perm=perm)


def _swap(imp: _Importer, x: Tensor, dim0: int, dim1: int) -> Tensor:
    rank = len(x.shape)
    perm = list(range(rank))
    d0, d1 = _axis(dim0, rank), _axis(dim1, rank)
    if d0 == d1:
        return x
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return imp.emit("transpose", x, perm=perm)


@_converts("aten.transpose.int", graph="`transpose`")
def _transpose(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _swap(imp, imp.tensor(a["self"]), a["dim0"], a["dim1"])


@_converts("aten.t.default", graph="`transpose`", notes="rank <= 2")
def _t(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    return x if len(x.shape) < 2 else _swap(imp, x, 0, 1)


def _concat(imp: _Importer, values: list[Tensor], axis: int) -> Tensor:
    """concat of any number of values; IRDL wants the values after the first two to share one type."""
    if len(values) == 1:
        return values[0]
    first, second, *rest = values
    if all(v.sig == rest[0].sig for v in rest):
        return imp.emit("concat", first, second, *rest, axis=axis)
    return _concat(imp, [imp.emit("concat", first, second, axis=axis), *rest], axis)


def _has_no_elements(imp: _Importer, arg: Any) -> bool:
    """Whether an FX argument is a tensor with a static zero-size dimension."""
    val = imp.meta(arg)
    return isinstance(val, torch.Tensor) and any(isinstance(d, int) and d == 0 for d in val.shape)


@_converts("aten.cat.default", graph="`concat` (nested when shapes differ)",
           notes="operands promoted first; empty operands dropped")
def _cat(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    shape = imp.out_shape(node)
    # An empty operand adds nothing; PyTorch's legacy rule also skips 1-D operands of shape [0] whatever the rank of
    # the others (transformers' DynamicCache starts each layer with torch.tensor([])).  Dropped before they are
    # imported, they leave no empty tensor in the graph.
    kept = [t for t in a["tensors"] if not _has_no_elements(imp, t)]
    if not kept:
        if None in shape:
            raise imp.unsupported(node, "every operand is empty and the result has a dynamic shape")
        return imp.const(np.zeros(shape), dtype)
    return _concat(imp, [imp.tensor(t, dtype) for t in kept], _axis(a["dim"], len(shape)))


@_converts("aten.stack.default", graph="`reshape`, `concat`")
def _stack(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    out_shape = imp.out_shape(node)
    axis = _axis(a["dim"], len(out_shape))
    pieces = []
    for t in a["tensors"]:
        value = imp.tensor(t, dtype)
        shape = list(value.shape)
        shape.insert(axis, 1)
        pieces.append(imp.emit("reshape", value, tuple(shape)))
    return _concat(imp, pieces, axis)


def _split(imp: _Importer, x: Tensor, axis: int, sizes: list[int]) -> tuple[Tensor, ...]:
    """split into ``sizes``; IRDL wants the pieces after the first two to share one type (else nested splits)."""
    if len(sizes) == 1:
        return (x,)
    if len(sizes) == 2 or all(s == sizes[2] for s in sizes[2:]):
        return tuple(imp.emit("split", x, axis=axis, sizes=sizes))
    first, rest = imp.emit("split", x, axis=axis, sizes=[sizes[0], sum(sizes[1:])])
    return (first, *_split(imp, rest, axis, sizes[1:]))


@_converts(
    "aten.split.Tensor",
    "aten.split_with_sizes.default",
    "aten.unbind.int",
    graph="`split` (`reshape` for unbind)",
    notes="static size along the split axis",
)
def _split_op(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, ...]:
    x = imp.tensor(a["self"])
    axis = _axis(a["dim"], len(x.shape))
    pieces = imp.meta(node)
    sizes = [int(p.shape[axis]) if node.target != torch.ops.aten.unbind.int else 1 for p in pieces]
    parts = _split(imp, x, axis, sizes)
    if node.target == torch.ops.aten.unbind.int:
        parts = tuple(imp.emit("reshape", p, imp.out_shape(node, i)) for i, p in enumerate(parts))
    return parts


def _slice_box(imp: _Importer, x: Tensor, axis: int, start: int, end: int, step: int) -> Tensor:
    shape = imp.static_shape(x)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, max(start, end), step
    if starts == [0] * len(shape) and limits == list(shape) and step == 1:
        return x
    return imp.emit("slice", x, start=starts, limit=limits, strides=strides)


def _bound(value: Any, size: int, default: int) -> int:
    """A slice bound as PyTorch reads it: None is the default, negatives count from the end, then clamped."""
    if value is None:
        return default
    value = int(value)
    if value < 0:
        value += size
    return min(max(value, 0), size)


@_converts("aten.slice.Tensor", graph="`slice`", notes="positive step; static shape")
def _slice(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    if isinstance(a["end"], fx.Node):
        return _slice_to_symbolic_end(imp, node, x, a)
    axis, start, end, step = _slice_bounds(imp, node, a, imp.static_shape(x))
    return _slice_box(imp, x, axis, start, end, step)


def _slice_bounds(imp: _Importer, node: fx.Node, a: dict[str, Any], shape: tuple[int, ...]) -> tuple[int, ...]:
    """(axis, start, end, step) of a ``slice`` / ``slice_scatter`` node over ``shape``, bounds as PyTorch reads
    them; a step below 1 is unsupported."""
    axis = _axis(a["dim"], len(shape))
    size = shape[axis]
    start = _bound(a["start"], size, 0)
    end = _bound(None if a["end"] == _INT64_MAX else a["end"], size, size)
    if a["step"] < 1:
        raise imp.unsupported(node, f"slice step {a['step']}")
    return axis, start, end, int(a["step"])


def _slice_to_symbolic_end(imp: _Importer, node: fx.Node, x: Tensor, a: dict[str, Any]) -> Tensor:
    """``x[..., :s]`` with ``s`` read from another tensor's dim: a ``gather`` at ``iota`` of that dim, exact when
    torch.export's range for ``s`` keeps it within the static size (the slice never clamps)."""
    axis = _axis(a["dim"], len(x.shape))
    size = x.shape[axis]
    end = imp.meta(a["end"])
    ranges = getattr(imp.program, "range_constraints", {})
    bound = ranges.get(end.node.expr) if isinstance(end, torch.SymInt) else None
    try:
        upper = int(bound.upper)  # sympy's oo (no bound) does not convert
    except (AttributeError, TypeError, ValueError):
        upper = None
    if a["start"] not in (0, None) or a["step"] != 1 or size is None or upper is None or upper > size:
        raise imp.unsupported(node, f"a slice to the symbolic size {a['end'].name} that may exceed dimension {axis} "
                                    f"of {x.sig}, or with a start or step")
    tensor_node, dim = _symbolic_dim(imp, node, a["end"])
    return imp.emit("gather", x, imp.emit("iota", imp.tensor(tensor_node), axis=dim), axis=axis)


@_converts("aten.select.int", graph="`slice`, `reshape`")
def _select(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    shape = imp.static_shape(x)
    axis = _axis(a["dim"], len(shape))
    index = a["index"] + shape[axis] if a["index"] < 0 else a["index"]
    return imp.emit("reshape", _slice_box(imp, x, axis, index, index + 1, 1), imp.out_shape(node))


def _gather(imp: _Importer, node: fx.Node, x: Tensor, index_arg: Any, axis: int) -> Tensor:
    """``graph.gather`` of ``x`` along ``axis`` at ``index_arg``, a negative index out of range as PyTorch's
    index_select and embedding have it; known indices are range-checked as PyTorch checks them."""
    indices = _indices(imp, node, index_arg, axis, imp.static_shape(x)[axis])
    return imp.emit("gather", x, indices, axis=axis, negative_indices=False)


def _indices(imp: _Importer, node: fx.Node, index_arg: Any, axis: int, size: int) -> Tensor:
    """The index tensor of a gather or scatter along ``axis`` of ``size``; known indices are range-checked as
    PyTorch checks them (run-time ones are checked by the graph ops, which raise an IndexError as eager does)."""
    known = imp.constant_value(index_arg)
    if known is not None and known.numel() and not (0 <= int(known.min()) and int(known.max()) < size):
        raise imp.error(f"FX node '{node.name}': indices {known.reshape(-1).tolist()[:8]} are out of range for "
                        f"dimension {axis} of size {size}", node)
    indices = imp.tensor(index_arg)
    if indices.dtype not in ("i32", "i64"):
        raise imp.unsupported(node, f"indices of dtype {indices.dtype}")
    return indices


def _flat_index(imp: _Importer, node: fx.Node, shape: tuple[int, ...], entries: list[Any]) -> tuple[int, int, Tensor]:
    """The integer index tensors of ``entries`` (one per dim, None for a whole dim) as one index into the
    indexed dims flattened: ``(first indexed dim, how many, sum(ik * stride_k))`` over the broadcast indices.

    Constant indices are range-checked as PyTorch checks them; run-time ones are counted from the end when
    negative, and one still out of range for its dim makes the sum out of range for the flattened dim (its term
    is that dim's whole size), so the gather or scatter raises the IndexError eager raises.
    """
    used = [k for k, entry in enumerate(entries) if entry is not None]
    if used != list(range(used[0], used[-1] + 1)):
        raise imp.unsupported(node, "index tensors on dims that are not adjacent")
    first, dims = used[0], shape[used[0]:used[-1] + 1]
    metas = [imp.meta(entries[k]) for k in used]
    if any(not isinstance(m, torch.Tensor) or m.dtype == torch.bool or m.is_floating_point() for m in metas):
        raise imp.unsupported(node, "an index that is not an integer tensor (boolean masks included)")
    common = tuple(torch.broadcast_shapes(*(m.shape for m in metas)))
    strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]
    known = [imp.values.get(entries[k]) for k in used]
    if all(isinstance(value, _Const) for value in known):
        flat = np.zeros(common, np.int64)
        for axis, (value, size, stride) in enumerate(zip(known, dims, strides, strict=True)):
            index = np.broadcast_to(value.tensor.numpy().astype(np.int64), common)
            if index.size and not (-size <= int(index.min()) and int(index.max()) < size):
                raise imp.error(f"FX node '{node.name}': an index is out of range for dimension {first + axis} "
                                f"of size {size}", node)
            flat = flat + np.where(index < 0, index + size, index) * stride
        return first, len(dims), imp.const(flat, "i64")
    indices = None
    outside = imp.tensor(math.prod(dims), "i64")
    for k, size, stride in zip(used, dims, strides, strict=True):
        index = imp.tensor(entries[k], "i64")
        wrapped = imp.emit("add", index, imp.tensor(size, "i64"))
        index = imp.emit("select", imp.emit("less", index, imp.tensor(0, "i64")), wrapped, index)
        out_of_range = imp.emit("logical_or", imp.emit("less", index, imp.tensor(0, "i64")),
                                imp.emit("greater_equal", index, imp.tensor(size, "i64")))
        term = imp.emit("mul", index, imp.tensor(stride, "i64")) if stride != 1 else index
        term = imp.emit("select", out_of_range, outside, term)
        indices = term if indices is None else imp.emit("add", indices, term)
    assert indices is not None
    if tuple(indices.shape) != common:
        indices = imp.emit("broadcast_to", indices, common)
    return first, len(dims), indices


def _merged(shape: tuple[int, ...], first: int, count: int) -> tuple[int, ...]:
    """``shape`` with dims ``first .. first + count - 1`` as one."""
    return (*shape[:first], math.prod(shape[first:first + count]), *shape[first + count:])


@_converts("aten.index.Tensor", graph="`gather` of the indexed dims flattened into one",
           notes="integer index tensors on adjacent dims; constant indices range-checked, run-time ones out of range "
                 "raise when the graph runs")
def _index(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """Advanced indexing ``x[..., i0, i1, ...]``: the indexed dims are flattened into one and gathered at
    ``sum(ik * stride_k)`` over the broadcast index tensors, the result's dims in numpy's order."""
    x = imp.tensor(a["self"])
    shape = imp.static_shape(x)
    entries = list(a["indices"])
    if all(entry is None for entry in entries):
        return x
    first, count, indices = _flat_index(imp, node, shape, entries)
    merged = _merged(shape, first, count)
    flat_x = x if tuple(shape) == merged else imp.emit("reshape", x, merged)
    return imp.emit("gather", flat_x, indices, axis=first)


@_converts("aten.index_put.default", graph="`scatter_update` of the indexed dims flattened into one; "
           "`select` for a boolean mask", notes="integer index tensors on adjacent dims, or one boolean mask with "
           "a single value; not accumulate")
def _index_put(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``x[..., i0, i1, ...] = values``: the values broadcast to the indexed positions are written by
    ``scatter_update`` into x with the indexed dims flattened; ``x[mask] = v`` is a ``select``."""
    if a["accumulate"]:
        raise imp.unsupported(node, "accumulate=True")
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"])
    shape = imp.static_shape(x)
    entries = list(a["indices"])
    metas = [imp.meta(entry) for entry in entries if entry is not None]
    if len(metas) == 1 and isinstance(metas[0], torch.Tensor) and metas[0].dtype == torch.bool:
        mask_at = next(k for k, entry in enumerate(entries) if entry is not None)
        value = imp.meta(a["values"])
        if mask_at != 0 or (isinstance(value, torch.Tensor) and value.numel() != 1):
            raise imp.unsupported(node, "a boolean mask that is not leading, or more than one value for it")
        mask = imp.tensor(entries[0], "i1")
        if len(mask.shape) < len(shape):  # x[mask] with a mask over the leading dims: broadcast it
            mask = imp.emit("reshape", mask, tuple(mask.shape) + (1,) * (len(shape) - len(mask.shape)))
        fill = imp.tensor(a["values"], dtype)
        if len(fill.shape):
            fill = imp.emit("reshape", fill, ())
        return imp.emit("select", mask, fill, x)
    first, count, indices = _flat_index(imp, node, shape, entries)
    merged = _merged(shape, first, count)
    flat_x = x if tuple(shape) == merged else imp.emit("reshape", x, merged)
    rows = (*merged[:first], *indices.shape, *merged[first + 1:])
    # numpy's rule: with the index tensors adjacent, the indexed dims sit where they were, before broadcasting.
    values = imp.tensor(a["values"], dtype)
    if tuple(values.shape) != rows:
        values = imp.emit("broadcast_to", values, rows)
    written = imp.emit("scatter_update", flat_x, indices, values, axis=first)
    return written if tuple(shape) == merged else imp.emit("reshape", written, shape)


@_converts("aten.index_copy.default", graph="`scatter_update` (`negative_indices = false`)",
           notes="constant indices are range-checked, run-time ones out of range (negative ones too) raise when the "
                 "graph runs")
def _index_copy(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    axis = _axis(a["dim"], len(x.shape))
    indices = _indices(imp, node, a["index"], axis, imp.static_shape(x)[axis])
    return imp.emit("scatter_update", x, indices, imp.tensor(a["source"], x.dtype), axis=axis,
                    negative_indices=False)


@_converts("aten.slice_scatter.default", graph="`scatter_update` at the constant positions of the slice",
           notes="positive step; static shape")
def _slice_scatter(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``x[..., start:end:step, ...] = src`` (a view written in place, functionalized)."""
    x = imp.tensor(a["self"])
    shape = imp.static_shape(x)
    axis, start, end, step = _slice_bounds(imp, node, a, shape)
    positions = np.arange(start, max(start, end), step, dtype=np.int64)
    if positions.size == shape[axis]:
        return imp.tensor(a["src"], x.dtype)  # the whole dim is written
    return imp.emit("scatter_update", x, imp.const(positions, "i64"), imp.tensor(a["src"], x.dtype), axis=axis)


@_converts("aten.select_scatter.default", graph="`scatter_update` at one constant position")
def _select_scatter(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``x[..., index, ...] = src`` (a view written in place, functionalized)."""
    x = imp.tensor(a["self"])
    shape = imp.static_shape(x)
    axis = _axis(a["dim"], len(shape))
    index = int(a["index"])
    if not -shape[axis] <= index < shape[axis]:
        raise imp.error(f"FX node '{node.name}': index {index} is out of range for dimension {axis} of size "
                        f"{shape[axis]}", node)
    position = imp.const(np.asarray(index % shape[axis], np.int64), "i64")
    return imp.emit("scatter_update", x, position, imp.tensor(a["src"], x.dtype), axis=axis)


@_converts("aten.gather.default", graph="`gather_elements` (`negative_indices = false`)",
           notes="constant indices are range-checked, run-time ones out of range (negative ones too) raise when the "
                 "graph runs; not sparse_grad")
def _gather_along(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    axis = _axis(a["dim"], len(x.shape))
    indices = _indices(imp, node, a["index"], axis, imp.static_shape(x)[axis])
    return imp.emit("gather_elements", x, indices, axis=axis, negative_indices=False)


@_converts("aten.cumsum.default", graph="`cumsum` (a `cast` first to the result type: int64 for integers "
           "and booleans, or the given dtype)")
def _cumsum(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"], imp.out_dtype(node))
    if not x.shape:  # a 0-d tensor is its own running sum
        return x
    return imp.emit("cumsum", x, axis=_axis(a["dim"], len(x.shape)))


@_converts("aten.arange.default", "aten.arange.start", "aten.arange.start_step",
           graph="`iota` along the dim the size is read from (a `cast` to a float dtype)",
           notes="only over a symbolic size (`arange(x.shape[1])`, start 0, step 1); arange over numbers is "
           "computed when importing")
def _arange(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``torch.arange(x.shape[d])`` under a dynamic shape; a constant arange never reaches here (folded)."""
    end, start, step = a.get("end"), a.get("start", 0), a.get("step", 1)
    size = imp.values.get(end) if isinstance(end, fx.Node) else None
    if not isinstance(size, _Symbolic) or size.source is None or start != 0 or step != 1:
        raise imp.unsupported(node, "arange over a size that is not one dim of a tensor, or with a start or step")
    tensor_node, dim = size.source
    positions = imp.emit("iota", imp.tensor(tensor_node), axis=dim)
    dtype = imp.out_dtype(node)
    return positions if dtype == "i64" else imp.emit("cast", positions, dtype)


def _symbolic_dim(imp: _Importer, node: fx.Node, size: Any) -> tuple[fx.Node, int]:
    """The tensor and dim a symbolic size was read from (``x.shape[d]``)."""
    value = imp.values.get(size) if isinstance(size, fx.Node) else None
    if not isinstance(value, _Symbolic) or value.source is None:
        raise imp.unsupported(node, f"a size ({size}) that is neither a number nor one dim of a tensor")
    return value.source


def _filled(imp: _Importer, node: fx.Node, sizes: Sequence[Any], value: Any, dtype: str) -> Tensor:
    """A tensor of ``sizes`` (numbers, or symbolic sizes read from tensors' dims) holding ``value``.

    Each symbolic dim comes from an ``iota`` along the dim it was read from, placed at its position; their
    conjunction (all true) selects ``value`` and a ``broadcast_to`` adds the static dims: a dynamic dim is
    always carried by an operand, as the lowering needs.
    """
    rank = len(sizes)
    fill = imp.tensor(value, dtype)
    if fill.shape:
        fill = imp.emit("reshape", fill, ())
    condition = None
    for position, size in enumerate(sizes):
        if isinstance(size, int):
            continue
        tensor_node, dim = _symbolic_dim(imp, node, size)
        line = imp.emit("iota", imp.tensor(tensor_node), axis=dim)
        placed = imp.emit("reshape", line, tuple(None if k == position else 1 for k in range(rank)))
        present = imp.emit("greater_equal", placed, imp.tensor(0, "i64"))
        condition = present if condition is None else imp.emit("logical_and", condition, present)
    if condition is not None:
        fill = imp.emit("select", condition, fill, fill)
    shape = tuple(size if isinstance(size, int) else None for size in sizes)
    if tuple(fill.shape) != shape:
        fill = imp.emit("broadcast_to", fill, shape)
    return fill


@_converts("aten.full.default", "aten.new_full.default", "aten.ones.default", "aten.new_ones.default",
           "aten.zeros.default", "aten.new_zeros.default",
           graph="`select` on `iota`s of the symbolic dims, `broadcast_to`",
           notes="only with a symbolic size (numbers are computed when importing)")
def _full(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """A factory over a symbolic shape (``x.new_ones(b, s)`` under a dynamic sequence length)."""
    name = _op_name(node.target)
    value = a.get("fill_value", 1 if "ones" in name else 0)
    return _filled(imp, node, list(a["size"]), value, imp.out_dtype(node))


@_converts("aten.full_like.default", "aten.zeros_like.default", "aten.ones_like.default",
           graph="`broadcast_to` of a constant (`select` on `iota`s for symbolic dims)")
def _full_like(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    name = _op_name(node.target)
    value = a.get("fill_value", 1 if "ones" in name else 0)
    return _filled(imp, node, list(a["self"].meta["val"].shape), value, imp.out_dtype(node))


@_converts("aten.scalar_tensor.default", graph="a rank-0 constant")
def _scalar_tensor(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.const(np.asarray(a["s"]), imp.out_dtype(node))


@_converts("aten.scatter.value", graph="`select` of `equal(index, iota)`",
           notes="one index per row along dim (index of size 1 there, as nll_loss's backward writes)")
def _scatter_value(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``self`` with ``value`` at ``index`` along ``dim``: where the position along dim equals the row's index."""
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    rank = len(x.shape)
    dim = _axis(a["dim"], rank)
    index = imp.tensor(a["index"], "i64")
    others = [d for d in range(rank) if d != dim]
    if len(index.shape) != rank or index.shape[dim] != 1 or any(index.shape[d] != x.shape[d] for d in others):
        raise imp.unsupported(node, f"an index of shape {index.shape} (one index per row along dim {dim})")
    positions = imp.emit("iota", x, axis=dim)
    positions = imp.emit("reshape", positions, tuple(x.shape[dim] if d == dim else 1 for d in range(rank)))
    hit = imp.emit("equal", index, positions)
    return imp.emit("select", hit, imp.const(np.asarray(a["value"]), dtype), x)


@_converts("aten.embedding.default", graph="`gather` along axis 0 (`negative_indices = false`)",
           notes="padding_idx only matters for training; constant indices are range-checked, run-time ones out of "
                 "range (negative ones too) raise when the graph runs")
def _embedding(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _gather(imp, node, imp.tensor(a["weight"]), a["indices"], 0)


@_converts("aten.index_select.default", graph="`gather` (`negative_indices = false`)",
           notes="constant indices are range-checked, run-time ones out of range (negative ones too) raise when the "
                 "graph runs")
def _index_select(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    return _gather(imp, node, x, a["index"], _axis(a["dim"], len(x.shape)))


@_converts("aten.repeat.default", graph="`tile` (`reshape` first when repeats add dims)")
def _repeat(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    repeats = list(a["repeats"])
    if len(repeats) > len(x.shape):
        x = imp.emit("reshape", x, (1,) * (len(repeats) - len(x.shape)) + tuple(x.shape))
    return imp.emit("tile", x, multiples=repeats)


@_converts("aten.repeat_interleave.self_int", graph="`repeat_interleave` (`reshape` to 1-D first for dim=None)",
           notes="each element repeated along dim, as torch.repeat_interleave (GPT-J's and Cohere's rotary)")
def _repeat_interleave_int(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    repeats = a["repeats"]
    if not isinstance(repeats, int):
        raise imp.unsupported(node, f"a symbolic repeat count ({repeats})")
    if a.get("dim") is None:  # over the elements flattened
        x = imp.emit("reshape", x, (math.prod(imp.static_shape(x)),))
        return imp.emit("repeat_interleave", x, repeats=repeats, dim=0)
    return imp.emit("repeat_interleave", x, repeats=repeats, dim=_axis(a["dim"], len(x.shape)))


@_converts("aten.repeat_interleave.self_Tensor", graph="`gather` at the constant repeated positions",
           notes="constant repeats only (one per element along dim, or one for all)")
def _repeat_interleave_tensor(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``x.repeat_interleave(r, dim)`` with ``r`` known when importing: position i along dim is read r[i] times."""
    repeats = imp.constant_value(a["repeats"])
    if repeats is None:
        raise imp.unsupported(node, "repeats computed at run time (the result's size would depend on them)")
    x = imp.tensor(a["self"])
    if a.get("dim") is None:
        x = imp.emit("reshape", x, (math.prod(imp.static_shape(x)),))
    axis = 0 if a.get("dim") is None else _axis(a["dim"], len(x.shape))
    size = imp.static_shape(x)[axis]
    counts = np.broadcast_to(repeats.reshape(-1).numpy().astype(np.int64), (size,))
    positions = np.repeat(np.arange(size, dtype=np.int64), counts)
    return imp.emit("gather", x, imp.const(positions, "i64"), axis=axis)


# --------------------------------------------------------------------------
# Converters: sorting and mixture-of-experts routing (Mixtral's, Qwen2-MoE's).


@_converts("aten.topk.default", graph="`topk`",
           notes="any dim, largest or smallest, sorted or not; NaN is the largest; ties in the CPU kernel's order")
def _topk(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, Tensor]:
    x = imp.tensor(a["self"])
    if not x.shape:  # a 0-d tensor is its own top-1
        return x, imp.const(np.asarray(0), "i64")
    return tuple(imp.emit("topk", x, k=int(a["k"]), axis=_axis(a["dim"], len(x.shape)), largest=bool(a["largest"]),
                          sorted=bool(a["sorted"])))


@_converts("aten.sort.default", "aten.sort.stable", graph="`sort`",
           notes="any dim, either order; stable or in the CPU kernel's order of ties; NaN is the largest")
def _sort(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, Tensor]:
    x = imp.tensor(a["self"])
    if not x.shape:
        return x, imp.const(np.asarray(0), "i64")
    return tuple(imp.emit("sort", x, axis=_axis(a["dim"], len(x.shape)), descending=bool(a["descending"]),
                          stable=bool(a.get("stable") or False)))


def _f32_order(values: np.ndarray) -> np.ndarray:
    """f32 values as int64 keys in the same order (the sign bit flipped for positives, all bits for negatives)."""
    bits = values.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def _f32_of_order(keys: np.ndarray) -> np.ndarray:
    bits = np.where(keys < 0, (-keys) | -0x80000000, keys).astype(np.int64)
    return (bits & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def _histc_thresholds(low: float, high: float, bins: int) -> np.ndarray:
    """For each bin b in 1..bins-1 the smallest f32 x in [low, high] that PyTorch's histc puts in bin b or later:
    its bin is ``int(((x - low) * bins) / (high - low))`` in f32, which never decreases with x, so counting the
    elements at or above each threshold gives the exact histogram with comparisons only (no division, which
    fast-math code may round differently).  A bin no f32 value reaches gets +inf."""
    low32, high32 = np.float32(low), np.float32(high)
    width = np.float32(high32 - low32)

    def bin_of(keys: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return ((_f32_of_order(keys) - low32) * np.float32(bins) / width).astype(np.int64)

    first, last = int(_f32_order(np.asarray(low32))), int(_f32_order(np.asarray(high32)))
    lo = np.full(bins - 1, first, np.int64)
    hi = np.full(bins - 1, last + 1, np.int64)  # last + 1: not reached
    wanted = np.arange(1, bins, dtype=np.int64)
    while np.any(lo < hi):  # bisection over the f32 values of [low, high], all bins at once
        mid = (lo + hi) // 2
        reached = bin_of(np.minimum(mid, last)) >= wanted
        hi, lo = np.where(reached & (lo < hi), mid, hi), np.where(~reached & (lo < hi), mid + 1, lo)
    return np.where(lo > last, np.inf, _f32_of_order(np.minimum(lo, last))).astype(np.float32)


@_converts("aten.histc.default", graph="`greater_equal` / `less_equal` against constant thresholds, `cast`, "
           "`reduce_sum`, `sub`", notes="f32; min < max given (not taken from the data); exact: each bin's "
           "threshold is PyTorch's own f32 bin arithmetic solved when importing")
def _histc(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """The counts of the elements in [min, max] by bin (Mixtral's tokens per expert)."""
    x = imp.tensor(a["self"])
    bins, low, high = int(a["bins"]), float(a["min"]), float(a["max"])
    if x.dtype != "f32":
        raise imp.unsupported(node, f"a histogram of {x.dtype} (PyTorch rounds each count to it)")
    if not np.float32(low) < np.float32(high) or not math.isfinite(low) or not math.isfinite(high):
        raise imp.unsupported(node, f"the range [{low}, {high}] (min == max takes it from the data)")
    flat = imp.emit("reshape", x, (math.prod(imp.static_shape(x)), 1)) if len(x.shape) != 2 or x.shape[1] != 1 else x
    starts = np.concatenate([[np.float32(low)], _histc_thresholds(low, high, bins)]).astype(np.float32)
    at_or_above = imp.emit("greater_equal", flat, imp.const(starts, "f32"))  # [N, bins]: the bins up to x's
    in_range = imp.emit("logical_and", at_or_above, imp.emit("less_equal", flat, imp.const(np.float32(high), "f32")))
    cumulative = imp.emit("reduce_sum", imp.emit("cast", in_range, "f32"), axes=[0])  # elements in bin b or later
    later = imp.emit("concat", imp.emit("slice", cumulative, start=[1], limit=[bins]), imp.const(np.zeros(1), "f32"),
                     axis=0) if bins > 1 else imp.const(np.zeros(1), "f32")
    return imp.emit("sub", cumulative, later)


@_converts("transformers.grouped_mm_fallback.default",
           graph="`grouped_matmul` (a transpose of the weights' last two dims folded into `transpose_weights`)",
           notes="transformers' grouped expert matmul: rows sorted by expert, offs the cumulative row counts "
           "(i32 or i64); rows past the last group are 0")
def _grouped_mm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``out[s] = input[s] @ weight[g]`` for the rows ``offs[g - 1] <= s < offs[g]``."""
    return _grouped_rows_matmul(imp, node, a["input"], a["weight"], a["offs"])


@_converts("aten._grouped_mm.default",
           graph="`grouped_matmul` (a transpose of the weights' last two dims folded into `transpose_weights`)",
           notes="2-D rows sorted by group times 3-D weights with `offs` (what transformers' experts call in "
           "bf16), no bias; the other forms (2-D x 2-D grouping the reduction, 3-D x 3-D) are unsupported")
def _aten_grouped_mm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    rows, weights, offs = a["self"], a["mat2"], a.get("offs")
    ranks = [value.meta["val"].dim() for value in (rows, weights)]
    if offs is None or a.get("bias") is not None or ranks != [2, 3]:
        raise imp.unsupported(node, "only rows [m, k] times per-group weights [g, k, n] with offs and no bias")
    return _grouped_rows_matmul(imp, node, rows, weights, offs)


def _grouped_rows_matmul(imp: _Importer, node: fx.Node, rows: Any, weights: Any, offs: Any) -> Tensor:
    """``grouped_matmul`` of ``rows`` and ``weights`` in the node's result dtype.

    transformers passes a linear layer's experts ([E, N, K]) transposed; reading them through the transpose
    (``transpose_weights``) spares a copy of every expert's weights per call."""
    dtype = imp.out_dtype(node)
    x, weight = imp.tensor(rows, dtype), imp.tensor(weights, dtype)
    offs = imp.tensor(offs)
    ends = offs if offs.dtype in ("i32", "i64") else imp.emit("cast", offs, "i64")
    transpose = producer(weight.value, "graph.transpose")
    if transpose is not None and attributes(transpose)["perm"] == [0, 2, 1]:
        source = Tensor(imp.builder, transpose.operands[0])
        return imp.emit("grouped_matmul", x, source, ends, transpose_weights=True)
    return imp.emit("grouped_matmul", x, weight, ends)


@_converts("aten.one_hot.default", graph="`one_hot` (i64 ones and zeros)",
           notes="num_classes given; an index outside [0, num_classes) gives a row of zeros (PyTorch raises)")
def _one_hot(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    classes = int(a["num_classes"])
    if classes < 0:
        raise imp.unsupported(node, "num_classes = -1 (the result's size would be the largest index + 1)")
    one, zero = imp.const(np.asarray(1), "i64"), imp.const(np.asarray(0), "i64")
    return imp.emit("one_hot", imp.tensor(a["self"], "i64"), one, zero, depth=classes, axis=-1)


@_converts("aten.empty_like.default", "aten.empty.memory_format", "aten.new_empty.default",
           graph="`broadcast_to` of 0 (`select` on `iota`s for symbolic dims)",
           notes="uninitialized memory in PyTorch: zeros here")
def _empty(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    sizes = list(a["self"].meta["val"].shape) if "self" in a and "size" not in a else list(a["size"])
    return _filled(imp, node, sizes, 0, imp.out_dtype(node))


# --------------------------------------------------------------------------
# Converters: neural-network ops.


def _matmul_operands(imp: _Importer, node: fx.Node, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    dtype = imp.out_dtype(node)
    return imp.tensor(a, dtype), imp.tensor(b, dtype)


@_converts(
    "aten.matmul.default",
    "aten.mm.default",
    "aten.bmm.default",
    graph="`matmul`",
    notes="numpy.matmul semantics (1-D operands, batch broadcasting) as torch.matmul",
)
def _matmul(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    lhs, rhs = _matmul_operands(imp, node, a["self"], a.get("other", a.get("mat2")))
    return imp.emit("matmul", lhs, rhs)


def _weight_transposed(imp: _Importer, weight: Any, dtype: str) -> tuple[Tensor, bool]:
    """W^T for x @ W^T: a transposed constant when W is known, else W with matmul's transpose_b flag."""
    known = imp.constant_value(weight)
    if known is not None and known.dim() == 2:
        return imp.materialize(f"{weight.name}^T", known.t().contiguous(), dtype), False
    return imp.tensor(weight, dtype), True


def _plus_bias(imp: _Importer, node: fx.Node, lhs: Any, rhs: Any | Tensor, bias: Any, alpha: Any = 1,
               beta: Any = 1, **flags: bool) -> Tensor:
    """``beta * bias + alpha * (lhs @ rhs)`` as PyTorch's CPU addmm/baddbmm/linear compute it.

    In f32 the product and the sum are each rounded to f32 (PyTorch's order of the two is within that
    rounding).  In f16/bf16 PyTorch adds the bias to the f32 accumulator and rounds once: rounding the
    product first, as a bf16 ``matmul`` then ``add`` would, changes about a quarter of the results by one
    step.  So there the operands are widened (exactly), multiplied and summed in f32 and rounded once.
    ``rhs`` may be a graph value already (a linear's transposed weight)."""
    dtype = imp.out_dtype(node)
    work = "f32" if dtype in _LOW_PRECISION else dtype
    rhs = rhs if isinstance(rhs, Tensor) else imp.tensor(rhs, work)
    if rhs.dtype != work:
        rhs = imp.emit("cast", rhs, work)
    product = _scaled(imp, imp.emit("matmul", imp.tensor(lhs, work), rhs, **flags), alpha)
    if beta == 0:  # PyTorch ignores the bias then, NaN in it too
        total = product
    else:
        total = imp.emit("add", product, _scaled(imp, imp.tensor(bias, work), beta))
    return total if work == dtype else imp.emit("cast", total, dtype)


@_converts(
    "aten.linear.default",
    graph="`matmul` (`transpose_b`, or a transposed constant weight), `add` of the bias",
    notes="static batched input: `reshape` to rows and back (one 2-D GEMM, as PyTorch computes it); "
          "f16/bf16 with a bias: computed in f32 and rounded once, as PyTorch",
)
def _linear(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """x @ W^T + b.  A static [..., in] input is flattened to [rows, in] first: the fused matmul + bias kernel of a
    batched matmul with a broadcast weight compiles to far slower CPU code than the 2-D one (60x measured on
    [2, 64, 128] x [128, 512])."""
    dtype = imp.out_dtype(node)
    out_shape = imp.out_shape(node)
    x = imp.tensor(a["input"], dtype)
    if len(x.shape) > 2 and x.sig.is_static:
        x = imp.emit("reshape", x, (math.prod(x.shape[:-1]), x.shape[-1]))
    bias = a.get("bias")
    work = "f32" if dtype in _LOW_PRECISION and bias is not None else dtype
    w, transpose_b = _weight_transposed(imp, a["weight"], work)
    flags = {"transpose_b": True} if transpose_b else {}
    y = imp.emit("matmul", x, w, **flags) if bias is None else _plus_bias(imp, node, x, w, bias, **flags)
    if y.shape != out_shape:
        y = imp.emit("reshape", y, out_shape)
    return y


@_converts("aten.addmm.default", graph="`matmul`, `add` (`mul` by alpha/beta)",
           notes="f16/bf16: computed in f32 and rounded once, as PyTorch")
def _addmm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _plus_bias(imp, node, a["mat1"], a["mat2"], a["self"], a["alpha"], a["beta"])


@_converts("aten.baddbmm.default", graph="`matmul`, `mul` by alpha and beta, `add`",
           notes="beta * input + alpha * (batch1 @ batch2); beta = 0 ignores input (NaN in it too), as PyTorch; "
                 "f16/bf16: computed in f32 and rounded once, as PyTorch")
def _baddbmm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """BLOOM's ALiBi scores: the biases plus the scaled batched product."""
    return _plus_bias(imp, node, a["batch1"], a["batch2"], a["self"], a["alpha"], a["beta"])


def _pair(value: Any) -> list[int]:
    values = [value] if isinstance(value, int) else list(value)
    return values * 2 if len(values) == 1 else values


def _conv(
    imp: _Importer,
    node: fx.Node,
    x_arg: Any,
    w_arg: Any,
    bias_arg: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    """conv2d (and conv1d as a conv2d of height 1; unbatched inputs get a batch of 1), bias_add of the bias."""
    dtype = imp.out_dtype(node)
    x, w = imp.tensor(x_arg, dtype), imp.tensor(w_arg, dtype)
    spatial = len(w.shape) - 2
    if spatial not in (1, 2):
        raise imp.unsupported(node, f"{spatial}-D convolution")
    unbatched = len(x.shape) == spatial + 1
    if unbatched:
        x = imp.emit("reshape", x, (1, *x.shape))
    if spatial == 1:
        x = imp.emit("reshape", x, (x.shape[0], x.shape[1], 1, x.shape[2]))
        w = imp.emit("reshape", w, (w.shape[0], w.shape[1], 1, w.shape[2]))
        stride, dilation = [1, *_pair(stride)[:1]], [1, *_pair(dilation)[:1]]
        padding = padding if isinstance(padding, str) else [0, *_pair(padding)[:1]]
    strides, dilations = _pair(stride), _pair(dilation)
    if isinstance(padding, str):
        pads = _string_pads(imp, node, padding, w, strides, dilations)
    else:
        ph, pw = _pair(padding)
        pads = [ph, pw, ph, pw]
    y = imp.emit("conv2d", x, w, strides=strides, pads=pads, dilations=dilations, groups=int(groups))
    if bias_arg is not None:
        y = imp.emit("bias_add", y, imp.tensor(bias_arg, dtype), axis=1)
    out_shape = imp.out_shape(node)
    if y.shape != out_shape:
        y = imp.emit("reshape", y, out_shape)
    return y


def _string_pads(
    imp: _Importer, node: fx.Node, padding: str, w: Tensor, strides: list[int], dilations: list[int]
) -> list[int]:
    if padding == "valid":
        return [0, 0, 0, 0]
    if padding != "same":
        raise imp.unsupported(node, f"padding '{padding}'")
    # PyTorch's "same": total = dilation * (k - 1), the odd extra cell after (bottom/right).
    kh, kw = imp.static_shape(w, "weight")[2:]
    total_h, total_w = dilations[0] * (kh - 1), dilations[1] * (kw - 1)
    return [total_h // 2, total_w // 2, total_h - total_h // 2, total_w - total_w // 2]


@_converts(
    "aten.conv2d.default",
    "aten.conv2d.padding",
    "aten.conv1d.default",
    "aten.conv1d.padding",
    graph="`conv2d`, `bias_add` (axis 1)",
    notes="padding ints, 'valid' or 'same'; conv1d as a conv2d of height 1",
)
def _conv_nd(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _conv(
        imp, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"], a["dilation"], a["groups"]
    )


@_converts("aten.convolution.default", graph="`conv2d`, `bias_add` (axis 1)", notes="1-D/2-D, not transposed")
def _convolution(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    if a["transposed"]:
        raise imp.unsupported(node, "transposed convolution")
    return _conv(
        imp, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"], a["dilation"], a["groups"]
    )


def _channel_params(imp: _Importer, node: fx.Node, a: dict[str, Any], dtype: str, channels: int) -> list[Tensor]:
    """scale, offset, mean, var of an inference batch_norm (a missing weight is 1, a missing bias 0)."""
    if a["running_mean"] is None or a["running_var"] is None:
        raise imp.unsupported(node, "batch_norm without running statistics")
    defaults = {"weight": 1.0, "bias": 0.0}
    values = []
    for key in ("weight", "bias", "running_mean", "running_var"):
        arg = a[key]
        values.append(imp.const(np.full(channels, defaults[key]), dtype) if arg is None else imp.tensor(arg, dtype))
    return values


def _batch_norm(imp: _Importer, node: fx.Node, a: dict[str, Any], index: int) -> Tensor:
    dtype = imp.out_dtype(node, index)
    x = imp.tensor(a["input"], dtype)
    channels = x.shape[1]
    if channels is None:
        raise imp.unsupported(node, "a dynamic channel count")
    params = _channel_params(imp, node, a, dtype, channels)
    return imp.emit("batch_norm", x, *params, epsilon=float(a["eps"]))


@_converts(
    "aten._native_batch_norm_legit_no_training.default",
    graph="`batch_norm`",
    notes="eval-mode batch_norm; result 0 only",
)
def _native_batch_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Any, ...]:
    y = _batch_norm(imp, node, a, 0)
    return (y, _Missing("batch_norm's saved mean"), _Missing("batch_norm's saved inverse std"))


def _layer_norm(imp: _Importer, node: fx.Node, a: dict[str, Any], index: int | None) -> Tensor:
    dtype = imp.out_dtype(node, index)
    x = imp.tensor(a["input"], dtype)
    normalized = tuple(a["normalized_shape"])
    begin = len(x.shape) - len(normalized)
    gamma = imp.const(np.ones(normalized), dtype) if a["weight"] is None else imp.tensor(a["weight"], dtype)
    beta = imp.const(np.zeros(normalized), dtype) if a["bias"] is None else imp.tensor(a["bias"], dtype)
    return imp.emit("layer_norm", x, gamma, beta, begin_norm_axis=begin, epsilon=float(a["eps"]))


@_converts("aten.layer_norm.default", graph="`layer_norm`")
def _layer_norm_op(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _layer_norm(imp, node, a, None)


@_converts("aten.native_layer_norm.default", graph="`layer_norm`; the saved mean and inverse std (a training "
           "graph's backward reads them) as `reduce_mean`, `sub`, `mul`, `add`, `rsqrt`",
           notes="mean and rstd keep the normalized dims as size 1, as PyTorch")
def _native_layer_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Any, ...]:
    y = _layer_norm(imp, node, a, 0)
    # the statistics, in the type PyTorch saves them in; unused ones are removed by graph-dce
    dtype = imp.out_dtype(node, 1)
    x = imp.tensor(a["input"], dtype)
    axes = list(range(len(x.shape) - len(tuple(a["normalized_shape"])), len(x.shape)))
    mean = imp.emit("reduce_mean", x, axes=axes, keep_dims=True)
    centered = imp.emit("sub", x, mean)
    variance = imp.emit("reduce_mean", imp.emit("mul", centered, centered), axes=axes, keep_dims=True)
    rstd = imp.emit("rsqrt", imp.emit("add", variance, imp.const(np.asarray(float(a["eps"])), dtype)))
    return (y, mean, rstd)


@_converts(
    "aten.rms_norm.default",
    graph="`rms_norm` (`reshape` around it when normalizing several trailing dims)",
    notes="eps None: the dtype's machine epsilon, as PyTorch",
)
def _rms_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["input"], dtype)
    normalized = tuple(a["normalized_shape"])
    eps = a["eps"] if a["eps"] is not None else float(torch.finfo(_TORCH_DTYPES[dtype]).eps)
    width = math.prod(normalized)
    gamma = imp.const(np.ones(width), dtype) if a["weight"] is None else imp.tensor(a["weight"], dtype)
    if len(normalized) == 1:
        return imp.emit("rms_norm", x, gamma, epsilon=float(eps))
    lead = x.shape[: len(x.shape) - len(normalized)]
    flat = imp.emit("reshape", x, (*lead, width))
    if a["weight"] is not None:
        gamma = imp.emit("reshape", gamma, (width,))
    y = imp.emit("rms_norm", flat, gamma, epsilon=float(eps))
    return imp.emit("reshape", y, x.shape)


# -------------------------------------------------------------------------- backward ops of training steps


@_converts("aten.threshold_backward.default", graph="`relu_grad` (threshold 0); else `greater`, `select`")
def _threshold_backward(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    grad, x = imp.tensor(a["grad_output"], dtype), imp.tensor(a["self"], dtype)
    if float(a["threshold"]) == 0.0:
        return imp.emit("relu_grad", grad, x)
    above = imp.emit("greater", x, imp.const(np.asarray(float(a["threshold"])), dtype))
    return imp.emit("select", above, grad, imp.const(np.asarray(0.0), dtype))


def _by_output(graph_op: str) -> Converter:
    """``aten.<op>_backward(grad_output, output)`` -> ``graph.<op>_grad(y = output, dy = grad_output)``."""

    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        return imp.emit(graph_op, imp.tensor(a["output"], dtype), imp.tensor(a["grad_output"], dtype))

    return convert


_converts("aten.sigmoid_backward.default", graph="`sigmoid_grad`")(_by_output("sigmoid_grad"))
_converts("aten.tanh_backward.default", graph="`tanh_grad`")(_by_output("tanh_grad"))


@_converts("aten.gelu_backward.default", graph="`gelu_grad` (either approximation)")
def _gelu_backward(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    approximate = a.get("approximate", "none")
    return imp.emit("gelu_grad", imp.tensor(a["grad_output"], dtype), imp.tensor(a["self"], dtype),
                    approximate=None if approximate == "none" else approximate)


def _softmax_backward(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        y, dy = imp.tensor(a["output"], dtype), imp.tensor(a["grad_output"], dtype)
        return imp.emit(graph_op, y, dy, axis=_axis(a["dim"], len(y.shape)))

    return convert


_converts("aten._softmax_backward_data.default", graph="`softmax_grad`")(_softmax_backward("softmax_grad"))
_converts("aten._log_softmax_backward_data.default", graph="`log_softmax_grad`")(
    _softmax_backward("log_softmax_grad"))


@_converts("aten.native_layer_norm_backward.default",
           graph="`layer_norm_grad` (the saved inverse std as a variance: `rsqrt` of it squared)",
           notes="a missing weight is ones; the gradients output_mask leaves out are not computed")
def _native_layer_norm_backward(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Any, ...]:
    dtype = imp.out_dtype(node, 0)
    x, dy = imp.tensor(a["input"], dtype), imp.tensor(a["grad_out"], dtype)
    normalized = tuple(a["normalized_shape"])
    begin = len(x.shape) - len(normalized)
    rstd = imp.tensor(a["rstd"], dtype)
    # layer_norm_grad takes the variance and epsilon; 1 / rstd^2 with epsilon 0 gives rstd back
    variance = imp.emit("reciprocal", imp.emit("mul", rstd, rstd))
    gamma = (imp.const(np.ones(normalized), dtype) if a["weight"] is None else imp.tensor(a["weight"], dtype))
    dx, dgamma, dbeta = imp.emit("layer_norm_grad", x, dy, variance, imp.tensor(a["mean"], dtype), gamma,
                                 begin_norm_axis=begin, begin_params_axis=begin, epsilon=0.0)
    mask = list(a["output_mask"])
    return (dx if mask[0] else None, dgamma if mask[1] and a["weight"] is not None else None,
            dbeta if mask[2] and a["bias"] is not None else None)


def _softmax_like(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        x = imp.tensor(a["self"], imp.out_dtype(node))
        return imp.emit(graph_op, x, axis=_axis(a["dim"], len(x.shape)))

    return convert


_converts("aten.softmax.int", "aten._softmax.default", graph="`softmax`")(_softmax_like("softmax"))
_converts("aten.log_softmax.int", "aten._log_softmax.default", graph="`log_softmax`")(_softmax_like("log_softmax"))
_converts("aten._safe_softmax.default", graph="`safe_softmax`", notes="0 for a row of all -inf")(
    _softmax_like("safe_softmax"))


def _causal_mask(length: int, source: int, dtype: str) -> np.ndarray:
    """0 where key j <= query i (PyTorch's top-left aligned causal mask), -inf elsewhere."""
    allowed = np.tril(np.ones((length, source), dtype=bool))
    return np.where(allowed, 0.0, -np.inf).astype(NUMPY_DTYPES[dtype])


def _additive_mask(imp: _Importer, mask_arg: Any, dtype: str) -> Tensor:
    """An attention mask to add to the scores: a boolean mask (True = attend) becomes 0 / -inf."""
    known = imp.constant_value(mask_arg)
    meta = imp.meta(mask_arg)
    if meta.dtype != torch.bool:
        return imp.tensor(mask_arg, dtype)
    if known is not None:
        return imp.const(np.where(known.numpy(), 0.0, -np.inf), dtype)
    zero, minus_inf = imp.const(np.asarray(0.0), dtype), imp.const(np.asarray(-np.inf), dtype)
    return imp.emit("select", imp.tensor(mask_arg, "i1"), zero, minus_inf)


def _repeat_heads(imp: _Importer, x: Tensor, heads: int) -> Tensor:
    """[B, Hkv, S, E] -> [B, heads, S, E], each kv head repeated heads / Hkv times (grouped-query attention)."""
    *batch, kv_heads, seq, dim = x.shape
    group = heads // kv_heads
    wide = imp.emit("reshape", x, (*batch, kv_heads, 1, seq, dim))
    wide = imp.emit("broadcast_to", wide, (*batch, kv_heads, group, seq, dim))
    return imp.emit("reshape", wide, (*batch, heads, seq, dim))


@_converts(
    "aten.scaled_dot_product_attention.default",
    graph="`matmul` (`transpose_b`), `mul` by the scale, `add` of the mask, `safe_softmax`, `matmul`",
    notes="FlashAttentionFusionV1's form; bool or float mask, is_causal, scale, GQA; dropout_p = 0; a query row "
          "whose mask hides every key gives 0, as PyTorch; in f16/bf16 computed as PyTorch's CPU kernel computes "
          "it (scores, softmax and the division by its sum in f32, its `coarse_exp` on whole vectors of keys, "
          "the exponentials rounded for the product with V)",
)
def _sdpa(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    q, k, v = (imp.tensor(a[key], dtype) for key in ("query", "key", "value"))
    if a["dropout_p"]:
        raise imp.unsupported(node, f"dropout_p = {a['dropout_p']}")
    if a["attn_mask"] is not None and a["is_causal"]:
        raise imp.unsupported(node, "both attn_mask and is_causal")
    if a.get("enable_gqa") and len(q.shape) >= 3 and q.shape[-3] != k.shape[-3]:
        k, v = _repeat_heads(imp, k, q.shape[-3]), _repeat_heads(imp, v, q.shape[-3])
    if dtype in _LOW_PRECISION:
        return _low_precision_attention(imp, node, a, q, k, v, dtype)
    probs, _ = _attention_probs(imp, node, a, q, k, dtype)
    return imp.emit("matmul", probs, v)


def _low_precision_attention(imp: _Importer, node: fx.Node, a: dict[str, Any], q: Tensor, k: Tensor, v: Tensor,
                             dtype: str) -> Tensor:
    """f16/bf16 attention rounded where PyTorch's CPU kernel rounds: the scores, their maximum, exponentials and
    sum in f32; the exponentials rounded to ``dtype`` for the product with V, accumulated in f32; multiplied by
    the reciprocal of the sum in f32 and rounded once.  (Rounding the normalized probabilities instead puts the
    logits of a bf16 Llama one rounding step further from eager's.)  A row whose mask hides every key gives 0.

    The exponentials are the kernel's own (:func:`_attention_exponentials`): with the true exp, 5% of a bf16
    attention's outputs differ from eager's by a rounding step, enough to flip a mixture-of-experts router."""
    scores, _ = _attention_scores(imp, node, a, imp.emit("cast", q, "f32"), imp.emit("cast", k, "f32"), "f32")
    last = len(scores.shape) - 1
    largest = imp.emit("reduce_max", scores, axes=[last], keep_dims=True)
    hidden = imp.emit("equal", largest, imp.const(np.asarray(-np.inf), "f32"))
    zero = imp.const(np.asarray(0.0), "f32")
    exps = _attention_exponentials(imp, imp.emit("sub", scores, imp.emit("select", hidden, zero, largest)))
    total = imp.emit("reduce_sum", exps, axes=[last], keep_dims=True)
    rounded = imp.emit("cast", imp.emit("cast", exps, dtype), "f32")
    weighted = imp.emit("matmul", rounded, imp.emit("cast", v, "f32"))
    normalized = imp.emit("mul", weighted, imp.emit("reciprocal", total))
    return imp.emit("cast", imp.emit("select", hidden, zero, normalized), dtype)


#: The f32 vector width of PyTorch's CPU kernels by its dispatch level, where the flash-attention kernel takes
#: the coarse exponential for f16/bf16 (x86 AVX2 and AVX-512 builds; elsewhere it is the accurate exp).
_COARSE_EXP_WIDTH = {"AVX2": 8, "AVX512": 16}


def _attention_exponentials(imp: _Importer, shifted: Tensor) -> Tensor:
    """exp of the shifted f32 scores as PyTorch's CPU flash attention computes it for f16/bf16 on this host:
    ``coarse_exp`` on the keys its vector loop covers (whole vectors of the dispatch level's width), the
    accurate exp on the remainder.  A dynamic key count takes ``coarse_exp`` throughout."""
    width = _COARSE_EXP_WIDTH.get(torch.backends.cpu.get_cpu_capability())
    if width is None:
        return imp.emit("exp", shifted)
    keys = shifted.shape[-1]
    vectorized = keys if keys is None else keys // width * width
    if vectorized == 0:
        return imp.emit("exp", shifted)
    coarse = imp.emit("coarse_exp", shifted)
    if vectorized == keys or keys is None:
        return coarse
    remainder = imp.const(np.arange(keys) >= vectorized, "i1")
    return imp.emit("select", remainder, imp.emit("exp", shifted), coarse)


def _attention_probs(imp: _Importer, node: fx.Node, a: dict[str, Any], q: Tensor, k: Tensor, dtype: str
                     ) -> tuple[Tensor, Tensor]:
    """safe_softmax(q k^T * scale [+ mask]) over the keys, and the scale as a constant (SDPA and its backward).

    PyTorch's attention gives a query row whose mask hides every key probabilities of 0 (its ``_safe_softmax``),
    not softmax's NaN: the rows of left padding in a batch of a decoder LM."""
    scores, scale = _attention_scores(imp, node, a, q, k, dtype)
    return imp.emit("safe_softmax", scores, axis=-1), scale


def _attention_scores(imp: _Importer, node: fx.Node, a: dict[str, Any], q: Tensor, k: Tensor, dtype: str
                      ) -> tuple[Tensor, Tensor]:
    """q k^T * scale [+ mask, or the causal mask], and the scale as a constant."""
    head_dim = q.shape[-1]
    if a.get("scale") is None and head_dim is None:
        raise imp.unsupported(node, "a dynamic head dim without an explicit scale")
    scale = imp.const(np.asarray(a["scale"] if a.get("scale") is not None else 1.0 / math.sqrt(head_dim)), dtype)
    scores = imp.emit("mul", imp.emit("matmul", q, k, transpose_b=True), scale)
    if a.get("attn_mask") is not None:
        scores = imp.emit("add", scores, _additive_mask(imp, a["attn_mask"], dtype))
    elif a["is_causal"]:
        length, source = q.shape[-2], k.shape[-2]
        if length is None or source is None:
            raise imp.unsupported(node, "is_causal with a dynamic sequence length")
        scores = imp.emit("add", scores, imp.const(_causal_mask(length, source, dtype), dtype))
    return scores, scale


@_converts(
    "aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
    graph="the attention recomputed (`matmul`, `mul`, mask `add`, `safe_softmax`), then `matmul`s, `mul`, `sub`, "
          "`reduce_sum` for dQ, dK, dV",
    notes="a training graph's attention backward; the saved logsumexp is not read; dropout_p = 0",
)
def _sdpa_backward(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, Tensor, Tensor]:
    """dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO * O)), dQ = dS K s, dK = dS^T Q s with P = softmax(Q K^T s)."""
    dtype = imp.out_dtype(node, 0)
    d_out, q, k, v, out = (imp.tensor(a[key], dtype) for key in ("grad_out", "query", "key", "value", "out"))
    if a["dropout_p"]:
        raise imp.unsupported(node, f"dropout_p = {a['dropout_p']}")
    if q.shape[-3:-2] != k.shape[-3:-2]:
        raise imp.unsupported(node, "grouped-query attention (fewer key heads than query heads)")
    probs, scale = _attention_probs(imp, node, a, q, k, dtype)
    d_value = imp.emit("matmul", probs, d_out, transpose_a=True)
    d_probs = imp.emit("matmul", d_out, v, transpose_b=True)
    row = imp.emit("reduce_sum", imp.emit("mul", d_out, out), axes=[len(q.shape) - 1], keep_dims=True)
    d_scores = imp.emit("mul", probs, imp.emit("sub", d_probs, row))
    d_query = imp.emit("mul", imp.emit("matmul", d_scores, k), scale)
    d_key = imp.emit("mul", imp.emit("matmul", d_scores, q, transpose_a=True), scale)
    return (d_query, d_key, d_value)


def _pool_args(a: dict[str, Any]) -> tuple[list[int], list[int], list[int]]:
    kernel = _pair(a["kernel_size"])
    strides = _pair(a["stride"]) if a["stride"] else kernel
    ph, pw = _pair(a["padding"])
    return kernel, strides, [ph, pw, ph, pw]


def _ceil_pads(
    imp: _Importer, node: fx.Node, x: Tensor, kernel: list[int], strides: list[int], pads: list[int], index: int | None
) -> list[int]:
    """Pads for ceil_mode: extra bottom/right cells until floor division gives PyTorch's output size."""
    out = imp.out_shape(node, index)
    shape = imp.static_shape(x)
    pads = list(pads)
    for axis, (size, want) in enumerate(zip(shape[-2:], out[-2:], strict=True)):
        while (size + pads[axis] + pads[axis + 2] - kernel[axis]) // strides[axis] + 1 < want:
            pads[axis + 2] += 1
    return pads


def _max_pool(imp: _Importer, node: fx.Node, a: dict[str, Any], index: int | None) -> Tensor:
    x = imp.tensor(a["self"])
    kernel, strides, pads = _pool_args(a)
    if any(d != 1 for d in _pair(a["dilation"])):
        raise imp.unsupported(node, "dilated max pooling")
    if a["ceil_mode"]:
        pads = _ceil_pads(imp, node, x, kernel, strides, pads, index)
    unbatched = len(x.shape) == 3
    if unbatched:
        x = imp.emit("reshape", x, (1, *x.shape))
    y = imp.emit("max_pool2d", x, kernel=kernel, strides=strides, pads=pads)
    return imp.emit("reshape", y, y.shape[1:]) if unbatched else y


@_converts("aten.max_pool2d.default", graph="`max_pool2d`", notes="no dilation; ceil_mode by extra padding")
def _max_pool2d(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _max_pool(imp, node, a, None)


@_converts("aten.max_pool2d_with_indices.default", graph="`max_pool2d`", notes="result 0 only (no indices)")
def _max_pool2d_with_indices(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Any, ...]:
    return (_max_pool(imp, node, a, 0), _Missing("max_pool2d's indices"))


@_converts(
    "aten.avg_pool2d.default",
    graph="`avg_pool2d`",
    notes="count_include_pad; no divisor_override; ceil_mode only where it keeps the size",
)
def _avg_pool2d(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    kernel, strides, pads = _pool_args(a)
    if a["divisor_override"] is not None:
        raise imp.unsupported(node, "divisor_override")
    if a["ceil_mode"] and _ceil_pads(imp, node, x, kernel, strides, pads, None) != pads:
        raise imp.unsupported(node, "ceil_mode that adds a partial window")
    unbatched = len(x.shape) == 3
    if unbatched:
        x = imp.emit("reshape", x, (1, *x.shape))
    y = imp.emit(
        "avg_pool2d", x, kernel=kernel, strides=strides, pads=pads, count_include_pad=bool(a["count_include_pad"])
    )
    return imp.emit("reshape", y, y.shape[1:]) if unbatched else y


@_converts(
    "aten.adaptive_avg_pool2d.default",
    "aten._adaptive_avg_pool2d.default",
    graph="`reduce_mean` (global pool) or `avg_pool2d`",
    notes="output size dividing the input size",
)
def _adaptive_avg_pool2d(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    rank = len(x.shape)
    height, width = imp.static_shape(x)[-2:]
    out_h, out_w = imp.out_shape(node)[-2:]
    if (out_h, out_w) == (1, 1):
        return imp.emit("reduce_mean", x, axes=[rank - 2, rank - 1], keep_dims=True)
    if height % out_h or width % out_w:
        raise imp.unsupported(node, f"output size {out_h}x{out_w} that does not divide {height}x{width}")
    kernel = [height // out_h, width // out_w]
    if rank == 3:
        x = imp.emit("reshape", x, (1, *x.shape))
    y = imp.emit("avg_pool2d", x, kernel=kernel, strides=kernel)
    return imp.emit("reshape", y, y.shape[1:]) if rank == 3 else y


@_converts("aten.adaptive_avg_pool1d.default", graph="`reduce_mean` (`reshape` first for an output size above 1)",
           notes="output size dividing the input size")
def _adaptive_avg_pool1d(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    rank, length = len(x.shape), imp.static_shape(x)[-1]
    out = imp.out_shape(node)[-1]
    if out == 1:
        return imp.emit("reduce_mean", x, axes=[rank - 1], keep_dims=True)
    if length % out:
        raise imp.unsupported(node, f"output size {out} that does not divide {length}")
    windows = imp.emit("reshape", x, (*x.shape[:-1], out, length // out))
    return imp.emit("reduce_mean", windows, axes=[rank], keep_dims=False)


# --------------------------------------------------------------------------
# Converters: padding, resizing, group norm, softplus.

#: The padding ATen ops with a fixed mode (aten.pad names its mode in an argument).
_FIXED_MODE_PADS = {
    "aten.constant_pad_nd.default": "constant",
    **{f"aten.reflection_pad{n}d.default": "reflect" for n in (1, 2, 3)},
    **{f"aten.replication_pad{n}d.default": "replicate" for n in (1, 2, 3)},
    "aten._pad_circular.default": "circular",
}


@_converts("aten.pad.default", *_FIXED_MODE_PADS, graph="`pad`",
           notes="every mode of F.pad (constant of any value, reflect, replicate, circular) on any element type; "
                 "negative pads crop")
def _pad(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    name = _op_name(node.target)
    mode = _FIXED_MODE_PADS.get(name) or a.get("mode") or "constant"
    pads = [int(p) for p in (a["pad"] if "pad" in a else a["padding"])]
    rank = len(x.shape)
    if mode not in PAD_MODES or len(pads) % 2 or len(pads) > 2 * rank:
        raise imp.unsupported(node, f"mode {mode!r} with pads {pads} on rank {rank}")
    # (before, after) pairs from the last dim backwards, as F.pad takes them
    low, high = [0] * rank, [0] * rank
    for pair in range(len(pads) // 2):
        low[rank - 1 - pair], high[rank - 1 - pair] = pads[2 * pair], pads[2 * pair + 1]
    value = a.get("value")
    if mode != "constant" or value is None or (value == 0 and math.copysign(1.0, value) > 0):
        return imp.emit("pad", x, low=low, high=high, mode=mode)
    # PyTorch fills with the value converted to the tensor's type (an integer tensor truncates it)
    return imp.emit("pad", x, imp.const(np.asarray(value), x.dtype), low=low, high=high, mode=mode)


#: The resizing ATen ops: (graph.resize's mode, how many trailing dims they resize).  upsample_bilinear2d.default
#: never reaches the importer: run_decompositions spells it as index arithmetic and _unsafe_index.
_RESIZE_OPS = {
    **{f"aten.upsample_nearest{n}d.{form}": ("nearest", n) for n in (1, 2) for form in ("vec", "default")},
    **{f"aten._upsample_nearest_exact{n}d.{form}": ("nearest_exact", n) for n in (1, 2) for form in ("vec", "default")},
    "aten.upsample_linear1d.vec": ("bilinear", 1),
    "aten.upsample_linear1d.default": ("bilinear", 1),
    "aten.upsample_bilinear2d.vec": ("bilinear", 2),
}


@_converts(*_RESIZE_OPS, graph="`resize`",
           notes="F.interpolate's nearest, nearest-exact, linear and bilinear modes, sizes or scale factors, "
                 "align_corners; bilinear sums may differ from PyTorch's by an ulp (its FMAs)")
def _resize(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    mode, dims = _RESIZE_OPS[_op_name(node.target)]
    dtype = imp.out_dtype(node)
    x = imp.tensor(a.get("input", a.get("self")), dtype)
    align_corners = bool(a.get("align_corners") or False)
    if "scale_factors" in a:  # the .vec forms: one scale factor per resized dim, or none
        scales = list(a["scale_factors"] or [None] * dims)
    else:
        scales = [a["scales"]] if dims == 1 else [a["scales_h"], a["scales_w"]]
    # PyTorch's kernels step by 1 / scale_factor (in double, rounded to f32) when it is given, else by in / out;
    # align_corners ignores the scale factors
    ratios = [0.0 if align_corners or not s or s <= 0 else float(np.float32(1.0 / s)) for s in scales]
    if dims == 1:
        ratios = [0.0, *ratios]
    size = list(imp.out_shape(node)[-dims:])
    return imp.emit("resize", x, size=size, mode=mode, align_corners=align_corners, ratio_h=ratios[0],
                    ratio_w=ratios[1])


def _affine_or(imp: _Importer, arg: Any, fill: float, channels: int, dtype: str) -> Tensor:
    """A norm's per-channel weight or bias, or ``fill`` repeated when the module has none (affine=False)."""
    return imp.const(np.full(channels, fill), dtype) if arg is None else imp.tensor(arg, dtype)


def _group_norm_of(imp: _Importer, node: fx.Node, x_arg: Any, weight: Any, bias: Any, groups: int, eps: float,
                   index: int | None) -> Tensor:
    dtype = imp.out_dtype(node, index)
    x = imp.tensor(x_arg, dtype)
    channels = x.shape[1] if len(x.shape) > 1 else None
    if channels is None:
        raise imp.unsupported(node, f"an input {x.sig} without a static channel dim")
    gamma, beta = (_affine_or(imp, arg, fill, channels, dtype) for arg, fill in ((weight, 1.0), (bias, 0.0)))
    return imp.emit("group_norm", x, gamma, beta, num_groups=int(groups), epsilon=float(eps))


@_converts("aten.group_norm.default", graph="`group_norm`", notes="without affine: weight 1, bias 0")
def _group_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _group_norm_of(imp, node, a["input"], a["weight"], a["bias"], a["num_groups"], a["eps"], None)


@_converts("aten.native_group_norm.default", graph="`group_norm`; the saved mean and inverse std as `reshape`, "
           "`reduce_mean`, `sub`, `mul`, `add`, `rsqrt`", notes="mean and rstd of shape (N, groups), as PyTorch")
def _native_group_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, Tensor, Tensor]:
    groups = int(a["group"])
    y = _group_norm_of(imp, node, a["input"], a["weight"], a["bias"], groups, a["eps"], 0)
    # the statistics, in the type PyTorch saves them in; unused ones are removed by graph-dce
    dtype = imp.out_dtype(node, 1)
    x = imp.tensor(a["input"], dtype)
    shape = imp.static_shape(x)
    grouped = imp.emit("reshape", x, (shape[0], groups, math.prod(shape[1:]) // groups))
    mean = imp.emit("reduce_mean", grouped, axes=[2], keep_dims=True)
    centered = imp.emit("sub", grouped, mean)
    variance = imp.emit("reduce_mean", imp.emit("mul", centered, centered), axes=[2], keep_dims=False)
    rstd = imp.emit("rsqrt", imp.emit("add", variance, imp.const(np.asarray(float(a["eps"])), dtype)))
    return (y, imp.emit("reshape", mean, (shape[0], groups)), rstd)


@_converts("aten.softplus.default", graph="`softplus` (beta, threshold)", notes="x where beta x > threshold")
def _softplus(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"], imp.out_dtype(node))
    return imp.emit("softplus", x, beta=float(a["beta"]), threshold=float(a["threshold"]))


@_converts("aten._weight_norm.default", graph="`mul`, `reduce_sum`, `sqrt`, `div`",
           notes="v * g / the 2-norm of v over every dim but `dim` (folded when v and g are constants)")
def _weight_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    v, g = imp.tensor(a["v"], dtype), imp.tensor(a["g"], dtype)
    rank = len(v.shape)
    kept = None if a["dim"] == -1 else _axis(a["dim"], rank)  # -1: the norm of the whole tensor
    axes = [d for d in range(rank) if d != kept]
    norm = imp.emit("sqrt", imp.emit("reduce_sum", imp.emit("mul", v, v), axes=axes, keep_dims=True))
    return imp.emit("mul", v, imp.emit("div", g, norm))


# --------------------------------------------------------------------------
# Compile, run, compare.


@dataclass
class CompiledModule:
    """A model imported and compiled by graphfuse: call it like the model, with tensors."""

    imported: ImportedModel
    executable: Executable
    #: fusion_result.json of the graph pipeline that compiled it: group -> pass -> match_times/effect_times
    fusion_result: dict[str, dict[str, dict[str, str]]]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        outputs = self.executable(*self.imported.numpy_inputs(*args, **kwargs))
        return self.imported.unflatten([to_torch(o) for o in outputs])

    @property
    def fusions(self) -> dict[str, int]:
        """Fusion pass name -> how many times it rewrote the graph (passes that fired only)."""
        return fired_fusions(self.fusion_result)


def fired_fusions(fusion_result: dict[str, dict[str, dict[str, str]]]) -> dict[str, int]:
    """The passes of a fusion_result.json whose effect_times is not 0, with that count."""
    return {
        name: int(counts["effect_times"])
        for group in fusion_result.values()
        for name, counts in group.items()
        if int(counts["effect_times"])
    }


def compile_module(
    module: torch.nn.Module,
    example_args: tuple[Any, ...],
    example_kwargs: dict[str, Any] | None = None,
    *,
    params: ParamsMode = "constants",
    entry: str = "forward",
    dynamic_shapes: Any = None,
    **compile_options: Any,
) -> CompiledModule:
    """Import ``module`` (see :func:`import_module`) and compile it with :func:`graphfuse.compile`.

    ``compile_options`` go to ``graphfuse.compile`` (``opt_level``,
    ``graph_kernel_flags``, ``fusion_switch_file``...).
    """
    imported = import_module(
        module, example_args, example_kwargs, params=params, entry=entry, dynamic_shapes=dynamic_shapes
    )
    executable = graphfuse_compile(imported.module, entry=entry, **compile_options)
    return CompiledModule(imported, executable, executable.fusion_result)


@dataclass
class Comparison:
    """graphfuse against PyTorch eager on one model: errors, fusions and time."""

    name: str
    imported: ImportedModel
    executable: Executable
    #: max |graphfuse - PyTorch| over all outputs: compiled code, reference interpreter
    max_abs_error: float
    reference_max_abs_error: float
    fusions: dict[str, int]
    graphfuse_seconds: float
    torch_seconds: float
    repeat: int
    torch_threads: int

    def report(self) -> str:
        fused = ", ".join(f"{name} x{n}" for name, n in sorted(self.fusions.items())) or "none"
        speedup = self.torch_seconds / self.graphfuse_seconds if self.graphfuse_seconds else float("inf")
        return "\n".join(
            [
                f"== {self.name}",
                self.imported.summary(),
                f"fusions fired: {fused}",
                f"fused graph: {self.executable.kernels} kernels",
                f"max abs error vs PyTorch: compiled {self.max_abs_error:.3g}, "
                f"reference interpreter {self.reference_max_abs_error:.3g}",
                f"time per call (median of {self.repeat}): graphfuse {self.graphfuse_seconds * 1e3:.3f} ms, "
                f"PyTorch eager {self.torch_seconds * 1e3:.3f} ms ({self.torch_threads} thread"
                f"{'s' if self.torch_threads != 1 else ''}): {speedup:.2f}x",
            ]
        )


def max_abs_error(got: Iterable[np.ndarray], want: Iterable[Any]) -> float:
    """The largest |got - want| over all outputs (in float64); inf when shapes differ."""
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        w = to_numpy(w) if isinstance(w, torch.Tensor) else np.asarray(w)
        g64, w64 = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g64.shape != w64.shape:
            return math.inf
        if g64.size:
            worst = max(worst, float(np.max(np.abs(g64 - w64))))
    return worst


def _median_seconds(fn: Callable[[], Any], repeat: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compare(
    module: torch.nn.Module,
    example_args: tuple[Any, ...],
    example_kwargs: dict[str, Any] | None = None,
    *,
    name: str | None = None,
    params: ParamsMode = "constants",
    repeat: int = 20,
    torch_threads: int | None = 1,
    **compile_options: Any,
) -> Comparison:
    """Import, fuse, compile and run ``module``; compare with PyTorch eager on the example inputs.

    ``torch_threads`` sets PyTorch's intra-op threads while timing (1 by
    default: graphfuse's compiled code runs on one thread); None keeps the
    current setting.
    """
    kwargs = example_kwargs or {}
    compiled = compile_module(module, example_args, kwargs, params=params, **compile_options)
    imported, executable = compiled.imported, compiled.executable
    arrays = imported.numpy_inputs(*example_args, **kwargs)
    was_training = module.training
    module.eval()
    previous = torch.get_num_threads()
    try:
        with torch.no_grad():
            want = pytree.tree_leaves(module(*example_args, **kwargs))
        got = executable(*arrays)
        reference = run_function(imported.module, arrays, imported.entry)
        if torch_threads is not None:
            torch.set_num_threads(torch_threads)
        with torch.no_grad():
            torch_seconds = _median_seconds(lambda: module(*example_args, **kwargs), repeat)
        outputs = [np.empty([d or 0 for d in shape], dtype) for shape, dtype in executable.outputs]
        if all(all(d is not None for d in shape) for shape, _ in executable.outputs):
            graphfuse_seconds = _median_seconds(lambda: executable(*arrays, out=outputs), repeat)
        else:
            graphfuse_seconds = _median_seconds(lambda: executable(*arrays), repeat)
        threads = torch.get_num_threads()
    finally:
        torch.set_num_threads(previous)
        module.train(was_training)
    return Comparison(
        name or type(module).__name__,
        imported,
        executable,
        max_abs_error(got, want),
        max_abs_error(reference, want),
        compiled.fusions,
        graphfuse_seconds,
        torch_seconds,
        repeat,
        threads,
    )
