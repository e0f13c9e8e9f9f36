"""The importer's core: ``torch.export`` a module, then build one graph op (or a few) per FX node
of the exported program through the registered converters (:class:`ImportedModel`)."""

from __future__ import annotations

import functools
import operator
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
import torch.utils._pytree as pytree
from mlir import ir
from torch import fx

from graphfuse.dialect.builder import BuildError, FunctionBuilder, GraphBuilder, Tensor
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig, tensor_type
from graphfuse.frontends.torch.dtypes import _DTYPES, _TORCH_DTYPES, to_numpy
from graphfuse.frontends.torch.export import export_inference
from graphfuse.frontends.torch.registry import _REGISTRY, _op_name

ParamsMode = Literal["constants", "arguments"]
MutationsMode = Literal["error", "results"]


class _Const:
    """A value known at import time (a lifted constant, a parameter in "constants" mode, a folded node)."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class _Symbolic:
    """A symbolic size (``sym_size``, arithmetic on sizes) of a dynamic shape: converters read sizes from types.

    ``source`` is the FX node of the tensor and the dim a ``sym_size`` reads (None for arithmetic on sizes);
    ``node`` the FX node computing it (used as a tensor, the size is computed again by graph ops).
    """

    def __init__(self, name: str, source: tuple[fx.Node, int] | None = None, node: fx.Node | None = None):
        self.name = name
        self.source = source
        self.node = node


#: Arithmetic on sizes as graph ops on rank-0 i64 tensors (a size used as a tensor).
_SIZE_ARITHMETIC = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.floordiv: "floor_div"}


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
        return (
            f"imported @{self.entry}: {sum(self.aten_ops.values())} ATen ops ({aten})\n"
            f"  -> {sum(self.graph_ops.values())} graph ops ({graph}); parameters as {self.params}"
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
            program, decomposed = export_inference(target, example_args, example_kwargs,
                                                   dynamic_shapes=dynamic_shapes)
    except GraphfuseError:
        raise
    except Exception as error:  # torch.export reports unsupported Python as many exception types
        raise GraphfuseError(
            f"torch.export could not export {type(module).__name__}.{entry}: {_first_line(error)}"
        ) from None
    finally:
        module.train(was_training)
    return import_program(program, params=params, entry=entry, decomposed=decomposed)


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
    decomposed: bool = False,
) -> ImportedModel:
    """Import an ``ExportedProgram`` (``run_decompositions({})`` is applied first, unless ``decomposed`` says the
    program is already what it gives: :func:`~graphfuse.frontends.torch.export.export_inference`'s).

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
            if not decomposed:
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
        importer.mutated_inputs,
        importer.tensor_inputs,
    )


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
            size = self.size_tensor(value)
            return size if dtype is None or dtype == "i64" else self.emit("cast", size, dtype)
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

    def size_tensor(self, value: _Symbolic) -> Tensor:
        """A symbolic size as a rank-0 i64 tensor: ``dimension_size`` of the dim it reads, graph arithmetic on those
        for a sum, difference, product or floor quotient of sizes (``arange(n) + past_length``)."""
        if value.source is not None:
            tensor_node, dim = value.source
            return self.emit("dimension_size", self.tensor(tensor_node), axis=dim)
        node = value.node
        op = _SIZE_ARITHMETIC.get(node.target) if node is not None else None
        if op is None or len(node.args) != 2 or node.kwargs:
            raise self.unsupported(self.node, f"the symbolic size '{value.name}' used as a tensor")
        return self.emit(op, *(self.tensor(arg, "i64") for arg in node.args))

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
        for node in graph.nodes:
            self.node = node
            if node.op == "placeholder":
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
            return _Symbolic(node.name, (node.args[0], int(node.args[1])) if is_size else None, node)
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
