"""The importer's core: load a model (external data included), then build graph ops node by node
through the registered converters, folding what constants decide (:class:`ImportedModel`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnx.external_data_helper
from mlir import ir
from onnx import helper, numpy_helper

from graphfuse.dialect.builder import FunctionBuilder, GraphBuilder, Tensor
from graphfuse.dialect.catalog import VerifyError, lookup_op, read_attributes
from graphfuse.dialect.constants import attr_to_array
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.parsing import MAX_TENSOR_BYTES
from graphfuse.dialect.run_checks import RunCheckError
from graphfuse.dialect.types import NUMPY_DTYPES, dtype_of_array, sig_from_type
from graphfuse.frontends.onnx.dtypes import _element_type
from graphfuse.frontends.onnx.registry import CONVERTERS, _NodeError
from graphfuse.pipelines import log

#: Integer results of at most this many elements computed from constants are folded (shape arithmetic).
_FOLD_LIMIT = 4096

#: Default-domain opsets the importer's semantics are tested on: opset 6 (the PyTorch-converted models of
#: onnx's backend data) to 28 (onnx 1.23's node cases).  Outside it, an import warns: an op whose meaning
#: changed in another opset could be read with the wrong one.
SUPPORTED_OPSETS = range(6, 29)


def load_onnx(source: str | Path | bytes | onnx.ModelProto) -> onnx.ModelProto:
    """The model from a path, serialized bytes or a ModelProto, or a GraphfuseError saying why not."""
    if isinstance(source, onnx.ModelProto):
        return source
    if isinstance(source, bytes):
        data, name = source, "<bytes>"
    else:
        path = Path(source)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise GraphfuseError(f"could not open '{path}': no such file") from None
        except OSError as error:
            raise GraphfuseError(f"could not read '{path}': {error.strerror or error}") from None
        name = str(path)
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception:  # protobuf's DecodeError, or a RuntimeWarning-like failure of the C++ parser
        raise GraphfuseError(f"'{name}' is not an ONNX model (protobuf parse failed)") from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise GraphfuseError(f"'{name}' is not an ONNX model (it holds no graph)")
    broken = _first_non_utf8_string(model)
    if broken is not None:
        raise GraphfuseError(f"'{name}' is not a valid ONNX model: its {broken} is not UTF-8 text")
    external = _external_tensors(model.graph)
    if external and isinstance(source, bytes):
        raise GraphfuseError(f"'{name}': tensor '{external[0].name}' keeps its data in an external file; load the "
                             "model from its path so that the file can be found next to it")
    if external:
        _load_external_data(model, external, Path(source))
    return model


def _first_non_utf8_string(message: Any, path: str = "model") -> str | None:
    """The path of the first string field of ``message`` that is not UTF-8 (ONNX's schema is proto2: protobuf
    hands such a field over as bytes, not str), or None."""
    from google.protobuf.descriptor import FieldDescriptor

    for descriptor, value in message.ListFields():
        where = f"{path}.{descriptor.name}"
        values = value if descriptor.is_repeated else [value]
        if descriptor.type == FieldDescriptor.TYPE_STRING:
            if any(isinstance(v, bytes) for v in values):
                return where
        elif descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            for k, inner in enumerate(values):
                found = _first_non_utf8_string(inner, f"{where}[{k}]" if descriptor.is_repeated else where)
                if found is not None:
                    return found
    return None


def _external_tensors(graph: onnx.GraphProto) -> list[onnx.TensorProto]:
    """The tensors of ``graph`` (initializers, node attributes, subgraphs) whose data is in an external file."""
    found = [t for t in graph.initializer if onnx.external_data_helper.uses_external_data(t)]
    for node in graph.node:
        for attribute in node.attribute:
            tensors = [attribute.t] if attribute.HasField("t") else list(attribute.tensors)
            found += [t for t in tensors if onnx.external_data_helper.uses_external_data(t)]
            for subgraph in ([attribute.g] if attribute.HasField("g") else list(attribute.graphs)):
                found += _external_tensors(subgraph)
    return found


def _load_external_data(model: onnx.ModelProto, tensors: list[onnx.TensorProto], path: Path) -> None:
    """Read the external data of ``tensors`` from files in the model's folder (a location that leaves the
    folder is refused: a model file must not make the importer read elsewhere)."""
    folder = path.resolve().parent
    for tensor in tensors:
        location = onnx.external_data_helper.ExternalDataInfo(tensor).location
        target = (folder / location).resolve()
        if Path(location).is_absolute() or not target.is_relative_to(folder):
            raise GraphfuseError(f"{path}: tensor '{tensor.name}' keeps its data at '{location}', outside the "
                                 "model's folder: refused")
        if not target.is_file():
            raise GraphfuseError(f"{path}: tensor '{tensor.name}' keeps its data in '{location}', which is not a file "
                                 "in the model's folder")
    try:
        onnx.external_data_helper.load_external_data_for_model(model, str(folder))
    except (OSError, ValueError) as error:
        raise GraphfuseError(f"{path}: could not read the external data: {error}") from None


@dataclass
class ImportedModel:
    """The module, its entry function and how ONNX names map to its arguments and results."""

    module: ir.Module
    entry: str
    #: graph input names, one per function argument, in order
    inputs: list[str] = field(default_factory=list)
    #: graph output names, one per function result, in order
    outputs: list[str] = field(default_factory=list)
    #: graph inputs that were bound to constants (not arguments)
    bound_inputs: list[str] = field(default_factory=list)
    #: the default-domain opset version the model imports
    opset: int = 0


def constant_input_names(model: onnx.ModelProto) -> list[str]:
    """Graph inputs (not initializers) used where a claimed op needs a constant (Reshape's shape, ...).

    Such inputs must be bound with ``constant_inputs=`` to import the model.
    """
    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = {i.name for i in model.graph.input} - initializers
    names: list[str] = []
    for node in model.graph.node:
        spec = CONVERTERS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if spec is None:
            continue
        for position in sorted(spec.constant_operands):
            if position < len(node.input) and node.input[position] in graph_inputs:
                if node.input[position] not in names:
                    names.append(node.input[position])
    return names


def import_model(
    source: str | Path | bytes | onnx.ModelProto,
    *,
    entry: str = "main",
    constant_inputs: Mapping[str, np.ndarray] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> ir.Module:
    """The graph-dialect module of an ONNX model; see :func:`convert_model` for the arguments."""
    return convert_model(source, entry=entry, constant_inputs=constant_inputs, input_shapes=input_shapes).module


def convert_model(
    source: str | Path | bytes | onnx.ModelProto,
    *,
    entry: str = "main",
    constant_inputs: Mapping[str, np.ndarray] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> ImportedModel:
    """Import an ONNX model as function ``entry``, with the mapping of ONNX names to arguments and results.

    ``constant_inputs`` binds graph inputs to values (they become constants);
    ``input_shapes`` fixes the shapes of inputs whose declared shapes have
    symbolic or unknown dimensions.
    """
    model = load_onnx(source)
    if isinstance(source, str | Path):
        source_name = str(source)
    else:
        source_name = (model.graph.name or "model") + ".onnx"
    return _Importer(model, source_name, entry, dict(constant_inputs or {}), dict(input_shapes or {})).run()


def _numpy_to_graph(array: np.ndarray, what: str) -> np.ndarray:
    if dtype_of_array(array) is None:
        raise _NodeError(f"{what} has numpy dtype {array.dtype}, which the graph dialect does not have "
                         f"(it has {', '.join(NUMPY_DTYPES)})")
    return array


def tensor_to_array(proto: onnx.TensorProto, what: str = "tensor") -> np.ndarray:
    """A TensorProto as a numpy array of the dialect's element types (bf16 as ml_dtypes.bfloat16)."""
    try:
        return _proto_array(proto, what)
    except _NodeError as error:
        raise GraphfuseError(str(error)) from None


def _stored_values(proto: onnx.TensorProto) -> int | None:
    """How many values a TensorProto holds in its own fields (None when not countable here, e.g. external data)."""
    if proto.HasField("raw_data"):
        itemsize = helper.tensor_dtype_to_np_dtype(proto.data_type).itemsize
        return len(proto.raw_data) // itemsize if itemsize else None
    if proto.data_location == onnx.TensorProto.EXTERNAL:
        return None
    return len(getattr(proto, helper.tensor_dtype_to_field(proto.data_type)))


def _proto_array(proto: onnx.TensorProto, what: str) -> np.ndarray:
    _element_type(proto.data_type, what)
    if onnx.external_data_helper.uses_external_data(proto):
        location = onnx.external_data_helper.ExternalDataInfo(proto).location
        raise _NodeError(f"{what} keeps its data in the external file '{location}', which was not read: import the "
                         "model from its path (or onnx.load it with its external data)")
    dims = list(proto.dims)
    if any(d < 0 for d in dims):  # numpy would read -1 as "infer this size" and give a wrong shape silently
        raise _NodeError(f"{what} has a negative dimension: dims {dims}")
    stored = _stored_values(proto)
    if stored is not None and stored != math.prod(dims):
        raise _NodeError(f"{what} has dims {dims} ({math.prod(dims)} values) but holds {stored} value(s)")
    if proto.data_type == onnx.TensorProto.BFLOAT16:
        # numpy_helper returns bf16 as raw uint16 bit patterns in some versions; reinterpret explicitly.
        raw = numpy_helper.to_array(proto)
        if raw.dtype != ml_dtypes.bfloat16:
            raw = raw.astype(np.uint16).view(ml_dtypes.bfloat16)
        return raw
    return np.asarray(numpy_helper.to_array(proto))


class _Importer:
    def __init__(self, model: onnx.ModelProto, source_name: str, entry: str,
                 constant_inputs: dict[str, np.ndarray], input_shapes: dict[str, Sequence[int]]):
        self.model = model
        self.graph = model.graph
        self.source_name = source_name
        self.entry = entry
        self.constant_inputs = constant_inputs
        self.input_shapes = input_shapes
        self.opset = 0
        for opset in model.opset_import:
            if opset.domain in ("", "ai.onnx"):
                self.opset = opset.version
        if self.opset and self.opset not in SUPPORTED_OPSETS:
            log.warning(f"{source_name}: the model imports opset {self.opset}, outside the opsets the importer is "
                        f"tested on ({SUPPORTED_OPSETS.start}-{SUPPORTED_OPSETS.stop - 1}): an op whose meaning "
                        "changed there may be read with another opset's")
        self.builder: FunctionBuilder = GraphBuilder(entry)
        self.context = self.builder.context
        #: values by ONNX name: built tensors, and values known at import time (materialized on first use)
        self.tensors: dict[str, Tensor] = {}
        self.constants: dict[str, np.ndarray] = {}

    # -- errors ---------------------------------------------------------------

    def _graph_error(self, message: str) -> GraphfuseError:
        return GraphfuseError([Diagnostic("error", f"{self.source_name}: {message}")])

    # -- values ---------------------------------------------------------------

    def tensor(self, name: str) -> Tensor:
        found = self.tensors.get(name)
        if found is not None:
            return found
        if name in self.constants:
            found = self.builder.const(self.constants[name])
            self.tensors[name] = found
            return found
        raise _NodeError(f"input '{name}' is not produced by any earlier node, initializer or graph input")

    def run(self) -> ImportedModel:
        for name in self.constant_inputs:
            if name not in {i.name for i in self.graph.input}:
                raise self._graph_error(f"constant_inputs names '{name}', which is not a graph input")
        for proto in self.graph.initializer:
            try:
                self.constants[proto.name] = _proto_array(proto, f"initializer '{proto.name}'")
            except _NodeError as error:
                raise self._graph_error(str(error)) from None
        if self.graph.sparse_initializer:
            raise self._graph_error("sparse initializers are not supported")
        arg_names: list[str] = []
        bound: list[str] = []
        for value_info in self.graph.input:
            name = value_info.name
            if name in self.constant_inputs:
                try:
                    self.constants[name] = _numpy_to_graph(np.asarray(self.constant_inputs[name]),
                                                           f"the value bound to input '{name}'")
                except _NodeError as error:
                    raise self._graph_error(str(error)) from None
                bound.append(name)
                continue
            if name in self.constants:
                continue  # an initializer listed as an input (IR version < 4 style): a constant
            self.tensors[name] = self._argument(value_info)
            arg_names.append(name)
        for index, node in enumerate(self.graph.node):
            self._convert_node(index, node)
        first = len(self.builder.block.operations)
        results: list[Tensor] = []
        for value_info in self.graph.output:
            if value_info.name not in self.tensors and value_info.name not in self.constants:
                raise self._graph_error(f"graph output '{value_info.name}' is not produced by any node")
            results.append(self.tensor(value_info.name))
        self.builder.ret(*results)
        with self.context:
            self.builder.func.operation.location = ir.Location.file(self.source_name, 0, 0)
            # The return (and constants it returns) sit after the last node: on the line after the last node's.
            self._relocate_new_ops(first, ir.Location.file(self.source_name, len(self.graph.node) + 1, 1))
        return ImportedModel(self.builder.module, self.entry, arg_names, [o.name for o in self.graph.output], bound,
                             self.opset)

    def _argument(self, value_info: onnx.ValueInfoProto) -> Tensor:
        name = value_info.name
        kind = value_info.type.WhichOneof("value")
        if kind != "tensor_type":
            raise self._graph_error(f"graph input '{name}' is a {kind or 'value of unknown type'}, not a tensor")
        tensor_type = value_info.type.tensor_type
        try:
            dtype = _element_type(tensor_type.elem_type, f"graph input '{name}'")
        except _NodeError as error:
            raise self._graph_error(str(error)) from None
        if name in self.input_shapes:
            shape = tuple(self.input_shapes[name])
            if not all(isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0 for d in shape):
                raise self._graph_error(f"input_shapes gives graph input '{name}' the shape {list(shape)}; "
                                        "sizes must be non-negative integers")
            shape = tuple(int(d) for d in shape)
        else:
            if not tensor_type.HasField("shape"):
                raise self._graph_error(f"graph input '{name}' has no shape; give it one with input_shapes")
            dims = []
            for k, dim in enumerate(tensor_type.shape.dim):
                if dim.HasField("dim_value"):
                    dims.append(dim.dim_value)
                else:
                    symbol = f"'{dim.dim_param}'" if dim.dim_param else "unknown"
                    raise self._graph_error(f"graph input '{name}' has a dynamic dimension {k} ({symbol}); "
                                            "only static shapes are supported (fix it with input_shapes)")
            shape = tuple(dims)
        size = math.prod(shape) * NUMPY_DTYPES[dtype].itemsize
        if size > MAX_TENSOR_BYTES:  # the builder's types, and every size computed on them, are 64-bit
            raise self._graph_error(f"graph input '{name}' of shape {list(shape)} would hold {size} bytes, more "
                                    "than a 64-bit size can count")
        tensor = self.builder.arg(shape, dtype)
        position = len(self.builder.block.arguments)
        with self.context:
            tensor.value.set_location(ir.Location.name(name, childLoc=ir.Location.file(self.source_name, 0,
                                                                                         position)))
        return tensor

    # -- nodes ----------------------------------------------------------------

    def _node_location(self, index: int, label: str) -> ir.Location:
        with self.context:
            return ir.Location.name(label, childLoc=ir.Location.file(self.source_name, index + 1, 1))

    def _relocate_new_ops(self, first: int, location: ir.Location) -> None:
        """Give the ops appended to the entry block since position ``first`` the location ``location``."""
        operations = self.builder.block.operations
        for k in range(first, len(operations)):
            operations[k].location = location

    def _convert_node(self, index: int, node: onnx.NodeProto) -> None:
        label = node.name or f"{node.op_type}_{index}"
        where = SourceLoc(self.source_name, index + 1, 1)

        def fail(message: str) -> GraphfuseError:
            return GraphfuseError([Diagnostic("error", f"node '{label}' ({node.op_type}): {message}", where)])

        spec = CONVERTERS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if spec is None:
            domain = f" of domain '{node.domain}'" if node.domain not in ("", "ai.onnx") else ""
            present = [name for name in node.input if name]
            if domain or not present or not all(name in self.constants for name in present):
                raise fail(f"op {node.op_type}{domain} is not supported by the ONNX importer")
            try:
                self._fold_with_onnx_reference(node)
            except Exception as error:  # the ONNX reference's own failure on this node: its message says why
                raise fail(f"op {node.op_type} is not supported by the ONNX importer, and evaluating it on its "
                           f"constant inputs failed: {type(error).__name__}: {error}") from None
            return
        first = len(self.builder.block.operations)
        known_names = set(self.tensors)
        try:
            outputs = spec.convert(_Node(self, node, label))
        except _NodeError as error:
            raise fail(str(error)) from None
        except GraphfuseError as error:  # a BuildError from the builder: the ops do not accept these operands
            message = "; ".join(d.message for d in error.diagnostics)
            raise fail(message) from None
        except (TypeError, ValueError, IndexError) as error:  # a malformed node: missing or ill-typed attributes
            raise fail(f"malformed node ({type(error).__name__}: {error})") from None
        with self.context:
            self._relocate_new_ops(first, self._node_location(index, label))
        for name, value in zip(node.output, outputs, strict=False):
            if not name:
                continue
            if value is None:
                raise fail(f"output '{name}' is not supported")
            self.tensors[name] = value
        for name in node.output[len(outputs):]:
            if name:
                raise fail(f"output '{name}' (output #{list(node.output).index(name)}) is not supported")
        if self._fold_shape_arithmetic(node, first):
            # The node's ops are replaced by constants, made where they are used; none of its ops has a use
            # outside the node, so erasing them last to first never erases an op with uses.
            operations = self.builder.block.operations
            for k in reversed(range(first, len(operations))):
                operations[k].erase()
            for name in set(self.tensors) - known_names:
                del self.tensors[name]

    def _fold_with_onnx_reference(self, node: onnx.NodeProto) -> None:
        """Evaluate a node the importer has no converter for, whose inputs are all constants (stored weights
        that an exporter left a computation on, such as BERT's GatherElements of two initializers), with ONNX's
        reference implementation; its outputs become constants."""
        from onnx.reference import ReferenceEvaluator

        present = [name for name in node.input if name]
        inputs = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(self.constants[name].dtype),
                                                self.constants[name].shape) for name in present]
        outputs = [helper.make_tensor_value_info(name, onnx.TensorProto.UNDEFINED, None)
                   for name in node.output if name]
        graph = helper.make_graph([node], "fold", inputs, outputs)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset or 17)])
        results = ReferenceEvaluator(model).run(None, {name: self.constants[name] for name in present})
        for output, array in zip(outputs, results, strict=True):
            array = np.asarray(array)
            if dtype_of_array(array) is None:
                raise _NodeError(f"output '{output.name}' has dtype {array.dtype}, which the dialect does not have")
            self.constants[output.name] = array

    def _fold_shape_arithmetic(self, node: onnx.NodeProto, first: int) -> bool:
        """Compute small integer results of a node whose inputs are all constants (shape arithmetic); True if done.

        Models compute shapes and axes (Shape -> Gather -> Concat -> Reshape, Size - axis -> ConstantOfShape);
        ops that need those values at import time can then use them.  The values come from the reference
        semantics of the graph ops just built for the node.
        """
        present = [name for name in node.input if name]
        outputs = [name for name in node.output if name]
        if not outputs or any(name in self.constants for name in outputs):
            return False  # Constant, Shape, ...: already known, and their ops are constants already
        if not all(name in self.constants for name in present):
            return False
        for name in outputs:
            sig = self.tensors[name].sig
            if sig.dtype not in ("i8", "i32", "i64", "i1") or (sig.num_elements or 0) > _FOLD_LIMIT:
                return False
        values: dict[ir.Value, np.ndarray] = {}
        for name in present:
            values[self.tensor(name).value] = self.constants[name]
        operations = self.builder.block.operations
        for k in range(first, len(operations)):
            op = operations[k].operation
            if op.name == "arith.constant":
                results = [attr_to_array(op.attributes["value"])]
            else:
                spec = lookup_op(op.name)
                if spec is None or any(v not in values for v in op.operands):
                    return False
                declared = [sig_from_type(r.type) for r in op.results]
                try:
                    results = evaluate_op(spec.name, [values[v] for v in op.operands], read_attributes(spec, op),
                                          declared)
                except (VerifyError, RunCheckError):
                    return False  # left to run time, where the same error is reported with its location
            for result, array in zip(op.results, results, strict=True):
                values[result] = array
        for name in outputs:
            self.constants[name] = values[self.tensors[name].value]
        return True


class _Node:
    """What a converter sees: the node, its attributes, operands and the builder."""

    def __init__(self, importer: _Importer, node: onnx.NodeProto, label: str):
        self.importer = importer
        self.node = node
        self.label = label
        self.b = importer.builder
        self.opset = importer.opset
        self.attrs: dict[str, Any] = {}
        for attribute in node.attribute:
            if attribute.ref_attr_name:
                raise _NodeError(f"attribute '{attribute.name}' refers to a function attribute")
            try:
                value = onnx.helper.get_attribute_value(attribute)
            except ValueError:  # a type number ONNX does not define
                value = None
            if value is None:
                raise _NodeError(f"attribute '{attribute.name}' has no value of a type ONNX defines "
                                 f"(type {attribute.type})")
            self.attrs[attribute.name] = value

    # -- attributes -----------------------------------------------------------

    def attr(self, name: str, default: Any = None) -> Any:
        value = self.attrs.get(name, default)
        if isinstance(value, bytes):
            return value.decode()
        return value

    def ints(self, name: str, default: Sequence[int] | None = None) -> list[int] | None:
        value = self.attrs.get(name)
        return list(default) if value is None and default is not None else (
            None if value is None else [int(v) for v in value])

    # -- operands -------------------------------------------------------------

    @property
    def num_inputs(self) -> int:
        return len(self.node.input)

    def has_input(self, position: int) -> bool:
        return position < len(self.node.input) and self.node.input[position] != ""

    def input(self, position: int) -> Tensor:
        if not self.has_input(position):
            raise _NodeError(f"needs input #{position}")
        return self.importer.tensor(self.node.input[position])

    def inputs(self) -> list[Tensor]:
        return [self.input(k) for k in range(self.num_inputs) if self.has_input(k)]

    def constant(self, position: int, what: str) -> np.ndarray | None:
        """The value of optional input ``position``, which must be known at import time; None when absent."""
        if not self.has_input(position):
            return None
        name = self.node.input[position]
        if name not in self.importer.constants:
            raise _NodeError(f"input '{name}' ({what}) must be a constant (an initializer, a Constant node or a "
                             "bound graph input), not a value computed at run time")
        return self.importer.constants[name]

    def const_like(self, value: float | int | np.ndarray, like: Tensor) -> Tensor:
        """A scalar (rank-0) constant of ``like``'s element type."""
        return self.b.const(np.asarray(value, dtype=NUMPY_DTYPES[like.dtype]))

    def require_float(self, x: Tensor) -> None:
        if x.dtype not in ("f32", "f16", "bf16"):
            raise _NodeError(f"operand element type {x.dtype} is not supported (float types only)")


def _axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        raise _NodeError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _known_value(n: _Node, value: np.ndarray) -> Tensor:
    """A constant result that also stays known at import time (Shape, Size, Constant)."""
    name = n.node.output[0]
    n.importer.constants[name] = value
    return n.b.const(value)
