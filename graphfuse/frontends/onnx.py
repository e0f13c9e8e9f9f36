"""Import ONNX models into the graph dialect (optional extra ``graphfuse[onnx]``).

    from graphfuse.frontends.onnx import import_model
    module = import_model("model.onnx")            # an ir.Module with one public function, @main

Graph inputs become the function's arguments, in order (initializers that are
also listed as inputs are constants, not arguments); graph outputs are its
results, in order.  Initializers and ``Constant`` nodes become
``arith.constant dense<...>``.  Every ONNX node maps to one or more graph ops,
composed from the dialect's ops where ONNX has no direct counterpart (Gemm,
Elu, HardSwish, ReduceL2, ...); :data:`CONVERTERS` is the claimed op set, and
docs/frontend-onnx.md is generated from it.

Locations: every op built for node number ``k`` (1-based, in ``graph.node``
order) gets ``loc("<node name>"("<model file>":k:1))``, a name location
around a file location whose line is the node's index.  A node without a name
is called ``<op_type>_<k-1>``.  Verifier and pass errors on imported IR thus
print ``model.onnx:k:1: error: ...`` and name the node.  Line 0 is the graph
itself: the function is at ``0:0`` and graph input ``j`` (1-based) at
``loc("<input name>"("<model file>":0:j))``; the return is on the line after
the last node.

Shapes must be static.  Operands ONNX passes as tensors but the dialect needs
at import time (Reshape's shape, Slice's starts, the axes of reductions,
...) must be constants: initializers, ``Constant`` outputs, values folded
from static shapes (``Shape``, ``Size``) and from small integer arithmetic on
constants, or graph inputs bound to values with ``constant_inputs=``.
Anything unsupported -- an op, an attribute value, an element type (the
dialect has f32, f16, bf16, i8, i32, i64 and i1), a dynamic dimension --
raises :class:`GraphfuseError` naming the node, e.g.
``model.onnx:4:1: error: node 'Conv_3' (Conv): input of rank 5 is not supported ...``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from mlir import ir

from graphfuse.dialect.builder import FunctionBuilder, GraphBuilder, Tensor
from graphfuse.dialect.catalog import VerifyError, lookup_op, read_attributes
from graphfuse.dialect.constants import attr_to_array
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.parsing import MAX_TENSOR_BYTES
from graphfuse.dialect.run_checks import RunCheckError
from graphfuse.dialect.types import NUMPY_DTYPES, dtype_of_array, sig_from_type
from graphfuse.pipelines import log

try:
    import onnx
    import onnx.external_data_helper
    from onnx import helper, numpy_helper
except ImportError as _error:  # pragma: no cover - exercised only without the extra
    raise ImportError("the ONNX front end needs the onnx package: pip install 'graphfuse[onnx]'") from _error

__all__ = [
    "CONVERTERS",
    "SUPPORTED_OPSETS",
    "ImportedModel",
    "OnnxOp",
    "constant_input_names",
    "convert_model",
    "import_model",
    "load_onnx",
    "support_table_markdown",
    "tensor_to_array",
]

#: Integer results of at most this many elements computed from constants are folded (shape arithmetic).
_FOLD_LIMIT = 4096

#: Default-domain opsets the importer's semantics are tested on: opset 6 (the PyTorch-converted models of
#: onnx's backend data) to 28 (onnx 1.23's node cases).  Outside it, an import warns: an op whose meaning
#: changed in another opset could be read with the wrong one.
SUPPORTED_OPSETS = range(6, 29)

#: ONNX element types the dialect has, by TensorProto data type.
_ELEMENT_TYPES: dict[int, str] = {
    onnx.TensorProto.FLOAT: "f32",
    onnx.TensorProto.FLOAT16: "f16",
    onnx.TensorProto.BFLOAT16: "bf16",
    onnx.TensorProto.INT8: "i8",
    onnx.TensorProto.INT32: "i32",
    onnx.TensorProto.INT64: "i64",
    onnx.TensorProto.BOOL: "i1",
}


def _type_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"data type {elem_type}"


class _NodeError(Exception):
    """Raised by converters; turned into a located GraphfuseError naming the node."""


def _element_type(elem_type: int, what: str) -> str:
    dtype = _ELEMENT_TYPES.get(elem_type)
    if dtype is None:
        raise _NodeError(f"{what} has element type {_type_name(elem_type)}, which the graph dialect does not have "
                         f"(it has {', '.join(NUMPY_DTYPES)})")
    return dtype


# --------------------------------------------------------------------------
# The converter registry


@dataclass(frozen=True)
class OnnxOp:
    """One claimed ONNX op: its converter, the operand positions that must be constants, and a doc note."""

    op_type: str
    convert: Callable[[_Node], list[Tensor | None]]
    constant_operands: frozenset[int]
    lowering: str


#: Every claimed ONNX op (default domain), by op_type.
CONVERTERS: dict[str, OnnxOp] = {}


def _converter(*op_types: str, lowering: str | Mapping[str, str], constant_operands: Sequence[int] = ()):
    """Register a converter for ``op_types``; ``lowering`` (one text, or one per op type) documents it."""

    def register(fn: Callable[[_Node], list[Tensor | None]]):
        for op_type in op_types:
            text = lowering if isinstance(lowering, str) else lowering[op_type]
            CONVERTERS[op_type] = OnnxOp(op_type, fn, frozenset(constant_operands), text)
        return fn

    return register


# --------------------------------------------------------------------------
# Loading


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


# --------------------------------------------------------------------------
# Results


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


# --------------------------------------------------------------------------
# The importer


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


# --------------------------------------------------------------------------
# Elementwise


_UNARY = {
    "Abs": "abs", "Neg": "neg", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Reciprocal": "reciprocal",
    "Tanh": "tanh", "Sigmoid": "sigmoid", "Erf": "erf", "Relu": "relu", "Floor": "floor", "Ceil": "ceil",
    "Round": "round", "Sign": "sign", "Sin": "sin", "Cos": "cos", "Not": "logical_not",
}


@_converter(*_UNARY, lowering={k: f"`{v}`" for k, v in _UNARY.items()})
def _unary(n: _Node) -> list[Tensor]:
    return [n.b.op(_UNARY[n.node.op_type], n.input(0))]


_BINARY = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "And": "logical_and", "Or": "logical_or",
    "Xor": "not_equal", "Equal": "equal", "Greater": "greater", "GreaterOrEqual": "greater_equal", "Less": "less",
    "LessOrEqual": "less_equal",
}


@_converter(*_BINARY, lowering={k: f"`{v}` (numpy broadcasting)" for k, v in _BINARY.items()})
def _binary(n: _Node) -> list[Tensor]:
    return [n.b.op(_BINARY[n.node.op_type], n.input(0), n.input(1))]


@_converter("Pow", lowering="`pow`; an exponent of another element type is cast to the base's (an integer base with "
                            "a float exponent: computed in the float type, then cast back)")
def _pow(n: _Node) -> list[Tensor]:
    base, exponent = n.input(0), n.input(1)
    if base.dtype in ("i8", "i32", "i64") and exponent.dtype not in ("i8", "i32", "i64"):
        # ONNX computes an integer base to a float power in floating point and truncates back.
        result = n.b.pow(n.b.cast(base, exponent.dtype), exponent)
        return [n.b.cast(result, base.dtype)]
    if exponent.dtype != base.dtype:
        exponent = n.b.cast(exponent, base.dtype)
    return [n.b.pow(base, exponent)]


_VARIADIC = {"Max": "maximum", "Min": "minimum", "Sum": "add", "Mean": "add"}


@_converter(*_VARIADIC, lowering={k: f"a left fold of `{v}`" + (", divided by the count" if k == "Mean" else "")
                                  for k, v in _VARIADIC.items()})
def _variadic(n: _Node) -> list[Tensor]:
    values = n.inputs()
    if not values:
        raise _NodeError("needs at least one input")
    result = values[0]
    for value in values[1:]:
        result = n.b.op(_VARIADIC[n.node.op_type], result, value)
    if n.node.op_type == "Mean":
        result = n.b.div(result, n.const_like(len(values), result))
    elif len(values) == 1:
        result = n.b.broadcast_to(result, result.shape)  # a copy: the output is a new value, not the input
    return [result]


@_converter("Where", lowering="`select`")
def _where(n: _Node) -> list[Tensor]:
    return [n.b.select(n.input(0), n.input(1), n.input(2))]


@_converter("Cast", lowering="`cast` (element types of the dialect only; `saturate` concerns float8 types only)")
def _cast(n: _Node) -> list[Tensor]:
    target = _element_type(int(n.attr("to")), "the target type 'to'")
    x = n.input(0)
    return [x if x.dtype == target else n.b.cast(x, target)]


@_converter("CastLike", lowering="`cast` to the second input's element type")
def _cast_like(n: _Node) -> list[Tensor]:
    x, like = n.input(0), n.input(1)
    return [x if x.dtype == like.dtype else n.b.cast(x, like.dtype)]


@_converter("Identity", lowering="the input value itself (no op)")
def _identity(n: _Node) -> list[Tensor]:
    return [n.input(0)]


@_converter("Dropout", constant_operands=(1, 2),
            lowering="the input itself, the optional mask all true: inference, or training with a constant ratio 0")
def _dropout(n: _Node) -> list[Tensor]:
    training = n.constant(2, "training_mode")
    if training is not None and bool(np.asarray(training)):
        ratio = n.constant(1, "ratio")
        if ratio is None or float(np.asarray(ratio)) != 0.0:
            raise _NodeError("training_mode=true with a nonzero ratio drops random elements: not supported")
    x = n.input(0)
    outputs: list[Tensor] = [x]
    if len(n.node.output) > 1 and n.node.output[1]:
        outputs.append(n.b.const(np.ones(x.shape, np.bool_)))
    return outputs


@_converter("IsNaN", lowering="`not_equal(x, x)`")
def _isnan(n: _Node) -> list[Tensor]:
    x = n.input(0)
    return [n.b.not_equal(x, x)]


@_converter("IsInf", lowering="`equal` with +inf and/or -inf (`detect_positive`, `detect_negative`)")
def _isinf(n: _Node) -> list[Tensor]:
    x = n.input(0)
    n.require_float(x)
    positive, negative = int(n.attr("detect_positive", 1)), int(n.attr("detect_negative", 1))
    tests = []
    if positive:
        tests.append(n.b.equal(x, n.const_like(np.inf, x)))
    if negative:
        tests.append(n.b.equal(x, n.const_like(-np.inf, x)))
    if not tests:
        return [n.b.const(np.zeros(x.shape, np.bool_))]
    return [tests[0] if len(tests) == 1 else n.b.logical_or(tests[0], tests[1])]


# --------------------------------------------------------------------------
# Activations composed from elementwise ops


def _composed(fn: Callable[[_Node, Tensor], Tensor]) -> Callable[[_Node], list[Tensor]]:
    """An activation composed of several ops, computed in f32 for f16/bf16 inputs and rounded once at the end.

    ONNX's reference evaluates these formulas in f32 or wider; rounding every
    step to bf16 would drift by several ulps.
    """

    def convert(n: _Node) -> list[Tensor]:
        x = n.input(0)
        if x.dtype in ("f16", "bf16"):
            return [n.b.cast(fn(n, n.b.cast(x, "f32")), x.dtype)]
        return [fn(n, x)]

    convert.__name__ = fn.__name__
    return convert


@_converter("Gelu", lowering="`gelu` with the same `approximate`")
def _gelu(n: _Node) -> list[Tensor]:
    approximate = n.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise _NodeError(f"approximate={approximate} is not supported")
    return [n.b.gelu(n.input(0), approximate=approximate)]


@_converter("LeakyRelu", lowering="`select(x < 0, alpha * x, x)`")
@_composed
def _leaky_relu(n: _Node, x: Tensor) -> Tensor:
    alpha = n.const_like(n.attr("alpha", 0.01), x)
    zero = n.const_like(0, x)
    return n.b.select(n.b.less(x, zero), n.b.mul(x, alpha), x)


@_converter("PRelu", lowering="`select(x < 0, slope * x, x)` (slope broadcast to x; before opset 7 a 1-D slope "
                              "of the channel count is per channel)")
def _prelu(n: _Node) -> list[Tensor]:
    x, slope = n.input(0), n.input(1)
    if n.opset < 7 and len(slope.shape) == 1 and len(x.shape) > 2 and slope.shape[0] == x.shape[1] > 1:
        slope = n.b.reshape(slope, (slope.shape[0],) + (1,) * (len(x.shape) - 2))
    zero = n.const_like(0, x)
    return [n.b.select(n.b.less(x, zero), n.b.mul(x, slope), x)]


def _exp_minus_one(n: _Node, x: Tensor) -> Tensor:
    return n.b.sub(n.b.exp(x), n.const_like(1, x))


@_converter("Elu", lowering="`select(x > 0, x, alpha * (exp(x) - 1))`")
@_composed
def _elu(n: _Node, x: Tensor) -> Tensor:
    negative = n.b.mul(_exp_minus_one(n, x), n.const_like(n.attr("alpha", 1.0), x))
    return n.b.select(n.b.greater(x, n.const_like(0, x)), x, negative)


@_converter("Selu", lowering="`gamma * select(x > 0, x, alpha * exp(x) - alpha)`")
@_composed
def _selu(n: _Node, x: Tensor) -> Tensor:
    alpha = n.const_like(n.attr("alpha", 1.67326319217681884765625), x)
    gamma = n.const_like(n.attr("gamma", 1.05070102214813232421875), x)
    negative = n.b.sub(n.b.mul(n.b.exp(x), alpha), alpha)
    return n.b.mul(n.b.select(n.b.greater(x, n.const_like(0, x)), x, negative), gamma)


@_converter("Celu", lowering="`max(x, 0) + min(alpha * (exp(x / alpha) - 1), 0)`")
@_composed
def _celu(n: _Node, x: Tensor) -> Tensor:
    alpha = n.const_like(n.attr("alpha", 1.0), x)
    zero = n.const_like(0, x)
    negative = n.b.mul(_exp_minus_one(n, n.b.div(x, alpha)), alpha)
    return n.b.add(n.b.maximum(x, zero), n.b.minimum(negative, zero))


@_converter("ThresholdedRelu", lowering="`select(x > alpha, x, 0)`")
@_composed
def _thresholded_relu(n: _Node, x: Tensor) -> Tensor:
    alpha = n.const_like(n.attr("alpha", 1.0), x)
    return n.b.select(n.b.greater(x, alpha), x, n.b.broadcast_to(n.const_like(0, x), x.shape))


def _hard_sigmoid(n: _Node, x: Tensor, alpha: float, beta: float) -> Tensor:
    linear = n.b.add(n.b.mul(x, n.const_like(alpha, x)), n.const_like(beta, x))
    return n.b.minimum(n.b.maximum(linear, n.const_like(0, x)), n.const_like(1, x))


@_converter("HardSigmoid", lowering="`min(max(alpha * x + beta, 0), 1)`")
@_composed
def _hard_sigmoid_op(n: _Node, x: Tensor) -> Tensor:
    return _hard_sigmoid(n, x, n.attr("alpha", 0.2), n.attr("beta", 0.5))


@_converter("HardSwish", lowering="`x * min(max(x / 6 + 1 / 2, 0), 1)`")
@_composed
def _hard_swish(n: _Node, x: Tensor) -> Tensor:
    return n.b.mul(x, _hard_sigmoid(n, x, 1.0 / 6.0, 0.5))


def _softplus(n: _Node, x: Tensor) -> Tensor:
    return n.b.log(n.b.add(n.b.exp(x), n.const_like(1, x)))


@_converter("Softplus", lowering="`log(exp(x) + 1)`")
@_composed
def _softplus_op(n: _Node, x: Tensor) -> Tensor:
    return _softplus(n, x)


@_converter("Softsign", lowering="`x / (1 + abs(x))`")
@_composed
def _softsign(n: _Node, x: Tensor) -> Tensor:
    return n.b.div(x, n.b.add(n.b.abs(x), n.const_like(1, x)))


@_converter("Mish", lowering="`x * tanh(log(exp(x) + 1))`")
@_composed
def _mish(n: _Node, x: Tensor) -> Tensor:
    return n.b.mul(x, n.b.tanh(_softplus(n, x)))


@_converter("Swish", lowering="`x * sigmoid(alpha * x)`")
@_composed
def _swish(n: _Node, x: Tensor) -> Tensor:
    alpha = float(n.attr("alpha", 1.0))
    scaled = x if alpha == 1.0 else n.b.mul(x, n.const_like(alpha, x))
    return n.b.mul(x, n.b.sigmoid(scaled))


@_converter("Tan", lowering="`sin(x) / cos(x)`")
@_composed
def _tan(n: _Node, x: Tensor) -> Tensor:
    return n.b.div(n.b.sin(x), n.b.cos(x))


@_converter("Sinh", "Cosh", lowering={"Sinh": "`(exp(x) - exp(-x)) / 2`", "Cosh": "`(exp(x) + exp(-x)) / 2`"})
@_composed
def _sinh_cosh(n: _Node, x: Tensor) -> Tensor:
    e_pos, e_neg = n.b.exp(x), n.b.exp(n.b.neg(x))
    combined = n.b.sub(e_pos, e_neg) if n.node.op_type == "Sinh" else n.b.add(e_pos, e_neg)
    return n.b.mul(combined, n.const_like(0.5, x))


@_converter("Clip", lowering="`minimum(maximum(x, min), max)`; opset < 11 takes min/max as attributes")
def _clip(n: _Node) -> list[Tensor]:
    x = n.input(0)
    if n.opset < 11:
        low = n.const_like(n.attr("min"), x) if "min" in n.attrs else None
        high = n.const_like(n.attr("max"), x) if "max" in n.attrs else None
    else:
        low = n.input(1) if n.has_input(1) else None
        high = n.input(2) if n.has_input(2) else None
    result = x
    if low is not None:
        result = n.b.maximum(result, low)
    if high is not None:
        result = n.b.minimum(result, high)
    if result is x:
        result = n.b.broadcast_to(x, x.shape)  # a copy, as for Sum of one input
    return [result]


# --------------------------------------------------------------------------
# Linear algebra, convolution, pooling, normalization


@_converter("MatMul", lowering="`matmul` (numpy.matmul semantics, as ONNX)")
def _matmul(n: _Node) -> list[Tensor]:
    return [n.b.matmul(n.input(0), n.input(1))]


@_converter("Gemm", lowering="`alpha * matmul(A, B, transpose_a, transpose_b) + beta * C`")
def _gemm(n: _Node) -> list[Tensor]:
    a, b = n.input(0), n.input(1)
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    result = n.b.matmul(a, b, transpose_a=bool(n.attr("transA", 0)), transpose_b=bool(n.attr("transB", 0)))
    if alpha != 1.0:
        result = n.b.mul(result, n.const_like(alpha, result))
    if n.has_input(2):
        c = n.input(2)
        if beta != 1.0:
            c = n.b.mul(c, n.const_like(beta, c))
        result = n.b.add(result, c)
    return [result]


def _spatial_attrs(n: _Node, spatial: Sequence[int], kernel: Sequence[int], dilations: Sequence[int],
                   strides: Sequence[int]) -> list[int]:
    """ONNX pads [begin..., end...] from `pads` or `auto_pad`."""
    rank = len(spatial)
    auto_pad = n.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = n.ints("pads", [0] * (2 * rank))
        if len(pads) != 2 * rank:
            raise _NodeError(f"pads {pads} should hold {2 * rank} values")
        return pads
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise _NodeError(f"auto_pad={auto_pad} is not supported")
    begin, end = [], []
    for size, k, d, s in zip(spatial, kernel, dilations, strides, strict=True):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


def _as_2d(n: _Node, x: Tensor, what: str) -> tuple[Tensor, bool]:
    """NCHW view of an NCW (1-D spatial) or NCHW tensor; True when a width-only tensor was widened."""
    if x.dtype not in ("f32", "f16", "bf16"):
        raise _NodeError(f"{what} element type {x.dtype} is not supported (float types only)")
    if len(x.shape) == 4:
        return x, False
    if len(x.shape) == 3:
        return n.b.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])), True
    raise _NodeError(f"{what} of rank {len(x.shape)} is not supported (1-D and 2-D spatial data only)")


def _widen(values: list[int], one_d: bool, fill: int) -> list[int]:
    """[a] -> [fill, a] and [begin, end] -> [fill, begin, fill, end] for 1-D data seen as 2-D."""
    if not one_d:
        return values
    if len(values) == 1:
        return [fill, values[0]]
    return [fill, values[0], fill, values[1]]


def _narrow(n: _Node, y: Tensor, one_d: bool) -> Tensor:
    return n.b.reshape(y, (y.shape[0], y.shape[1], y.shape[3])) if one_d else y


@_converter("Conv", lowering="`conv2d` (+ `bias_add` on axis 1); 1-D convolutions run as 2-D ones of height 1")
def _conv(n: _Node) -> list[Tensor]:
    x, one_d = _as_2d(n, n.input(0), "input")
    w = n.input(1)
    if len(w.shape) != len(n.input(0).shape):
        raise _NodeError(f"weight rank {len(w.shape)} does not match the input rank")
    if one_d:
        w = n.b.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
    kernel = n.ints("kernel_shape", list(w.shape[2:]))
    spatial_rank = 1 if one_d else 2
    dilations = n.ints("dilations", [1] * spatial_rank)
    strides = n.ints("strides", [1] * spatial_rank)
    spatial = n.input(0).shape[2:]
    pads = _spatial_attrs(n, spatial, kernel[-spatial_rank:], dilations, strides)
    y = n.b.conv2d(x, w, strides=_widen(strides, one_d, 1), pads=_widen(pads, one_d, 0),
                   dilations=_widen(dilations, one_d, 1), groups=int(n.attr("group", 1)))
    if n.has_input(2):
        y = n.b.bias_add(y, n.input(2), axis=1)
    return [_narrow(n, y, one_d)]


def _pool_geometry(n: _Node, x: Tensor, one_d: bool) -> tuple[list[int], list[int], list[int]]:
    """kernel, strides and pads (2-D, ONNX order) of a pooling node, with ceil_mode folded into the end pads."""
    spatial_rank = 1 if one_d else 2
    kernel = n.ints("kernel_shape")
    if kernel is None or len(kernel) != spatial_rank:
        raise _NodeError(f"kernel_shape {kernel} does not match {spatial_rank}-D spatial data")
    dilations = n.ints("dilations", [1] * spatial_rank)
    if any(d != 1 for d in dilations):
        raise _NodeError(f"dilations={dilations} are not supported (pooling without dilation only)")
    strides = n.ints("strides", [1] * spatial_rank)
    spatial = list(x.shape[2:])
    pads = _spatial_attrs(n, spatial, kernel, dilations, strides)
    if int(n.attr("ceil_mode", 0)):
        for k in range(spatial_rank):
            padded = spatial[k] + pads[k] + pads[k + spatial_rank]
            floor_out = (padded - kernel[k]) // strides[k] + 1
            ceil_out = -(-(padded - kernel[k]) // strides[k]) + 1
            # ONNX drops a last window that would start in the end padding.
            if (ceil_out - 1) * strides[k] >= spatial[k] + pads[k]:
                ceil_out -= 1
            pads[k + spatial_rank] += (ceil_out - floor_out) * strides[k]
    return _widen(kernel, one_d, 1), _widen(strides, one_d, 1), _widen(pads, one_d, 0)


def _pad_spatial(n: _Node, x: Tensor, begin: Sequence[int], end: Sequence[int], fill: float) -> Tensor:
    """``x`` (N, C, spatial...) padded with ``fill`` by ``begin``/``end`` cells per spatial axis (concats)."""
    for k, (low, high) in enumerate(zip(begin, end, strict=True)):
        axis = 2 + k
        parts = []
        for size in (low, high):
            shape = list(x.shape)
            shape[axis] = size
            parts.append(n.b.const(np.full(shape, fill, NUMPY_DTYPES[x.dtype])) if size else None)
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        if len(pieces) > 1:
            x = n.b.concat(*pieces, axis=axis)  # at most one value after (first, second): any shapes
    return x


def _pool_by_windows(n: _Node, x: Tensor, kind: str) -> Tensor:
    """Pooling of any spatial rank, with dilations and ceil_mode: one strided slice per kernel offset, combined.

    The fallback for what max_pool2d / avg_pool2d do not express.  The average's divisor (cells of each window
    inside the input, or inside the padded input with count_include_pad) is computed here, as a constant.
    """
    spatial = list(x.shape[2:])
    rank = len(spatial)
    kernel = n.ints("kernel_shape")
    if kernel is None or len(kernel) != rank:
        raise _NodeError(f"kernel_shape {kernel} does not match {rank}-D spatial data")
    dilations = n.ints("dilations", [1] * rank)
    strides = n.ints("strides", [1] * rank)
    pads = _spatial_attrs(n, spatial, kernel, dilations, strides)
    begin, end = pads[:rank], pads[rank:]
    ceil_mode = bool(int(n.attr("ceil_mode", 0)))
    outputs, extra = [], []
    for k in range(rank):
        span = (kernel[k] - 1) * dilations[k] + 1
        padded = spatial[k] + begin[k] + end[k]
        count = (-(-(padded - span) // strides[k]) if ceil_mode else (padded - span) // strides[k]) + 1
        if ceil_mode and (count - 1) * strides[k] >= spatial[k] + begin[k]:
            count -= 1  # ONNX drops a last window that would start in the end padding
        if count < 1:
            raise _NodeError(f"the window does not fit spatial axis {k} of size {spatial[k]}")
        outputs.append(count)
        extra.append(max((count - 1) * strides[k] + span - padded, 0))
    is_float = x.dtype in ("f32", "f16", "bf16")
    if kind == "max":
        fill = -np.inf if is_float else np.iinfo(NUMPY_DTYPES[x.dtype]).min
    else:
        fill = 0
    padded_x = _pad_spatial(n, x, begin, [e + x_ for e, x_ in zip(end, extra, strict=True)], fill)
    include_pad = bool(int(n.attr("count_include_pad", 0)))
    counted = np.pad(np.ones(spatial, np.float32), [(b, e) for b, e in zip(begin, end, strict=True)],
                     constant_values=1.0 if include_pad else 0.0)
    counted = np.pad(counted, [(0, e) for e in extra])
    result, divisor = None, np.zeros(outputs, np.float32)
    for offset in np.ndindex(*kernel):
        first = [o * d for o, d in zip(offset, dilations, strict=True)]
        last = [f + (c - 1) * s + 1 for f, c, s in zip(first, outputs, strides, strict=True)]
        window = n.b.slice(padded_x, start=[0, 0, *first], limit=[*x.shape[:2], *last], strides=[1, 1, *strides])
        if result is None:
            result = window
        else:
            result = n.b.maximum(result, window) if kind == "max" else n.b.add(result, window)
        divisor += counted[tuple(slice(f, lim, s) for f, lim, s in zip(first, last, strides, strict=True))]
    assert result is not None
    if kind == "max":
        return result
    return n.b.div(result, n.b.const(divisor.astype(NUMPY_DTYPES[x.dtype])))


def _needs_windows(n: _Node, x: Tensor) -> bool:
    """Whether a pooling node needs the general form: 3-D and beyond, or dilations."""
    dilations = n.ints("dilations")
    return len(x.shape) > 4 or (dilations is not None and any(d != 1 for d in dilations))


@_converter("MaxPool", lowering="`max_pool2d` (1-D data as 2-D of height 1, ceil_mode as extra end padding); "
                                "3-D data or dilations: the `maximum` of one strided `slice` per kernel offset. "
                                "The Indices output is not supported")
def _max_pool(n: _Node) -> list[Tensor]:
    source = n.input(0)
    if len([name for name in n.node.output if name]) > 1:
        raise _NodeError("the Indices output is not supported")
    if _needs_windows(n, source):
        if source.dtype not in ("f32", "f16", "bf16", "i8", "i32", "i64"):
            raise _NodeError(f"input element type {source.dtype} is not supported")
        return [_pool_by_windows(n, source, "max")]
    x, one_d = _as_2d(n, source, "input")
    kernel, strides, pads = _pool_geometry(n, source, one_d)
    y = n.b.max_pool2d(x, kernel=kernel, strides=strides, pads=pads)
    return [_narrow(n, y, one_d)]


@_converter("AveragePool", lowering="`avg_pool2d` with `count_include_pad` (1-D as for MaxPool); 3-D data, "
                                    "dilations, or ceil_mode with count_include_pad: the sum of one strided `slice` "
                                    "per kernel offset divided by a constant count")
def _average_pool(n: _Node) -> list[Tensor]:
    source = n.input(0)
    include_pad = bool(n.attr("count_include_pad", 0))
    if _needs_windows(n, source) or (include_pad and int(n.attr("ceil_mode", 0))):
        n.require_float(source)
        return [_pool_by_windows(n, source, "avg")]
    x, one_d = _as_2d(n, source, "input")
    kernel, strides, pads = _pool_geometry(n, source, one_d)
    y = n.b.avg_pool2d(x, kernel=kernel, strides=strides, pads=pads, count_include_pad=include_pad)
    return [_narrow(n, y, one_d)]


@_converter("GlobalAveragePool", "GlobalMaxPool", lowering={
    "GlobalAveragePool": "`reduce_mean` over the spatial axes, keeping them",
    "GlobalMaxPool": "`reduce_max` over the spatial axes, keeping them"})
def _global_pool(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axes = list(range(2, len(x.shape)))
    op = "reduce_mean" if n.node.op_type == "GlobalAveragePool" else "reduce_max"
    return [n.b.op(op, x, axes=axes, keep_dims=True)]


@_converter("BatchNormalization",
            lowering="`batch_norm`; training_mode=1 normalizes with the batch statistics (`reduce_mean`) and also "
                     "returns the updated running mean and variance")
def _batch_norm(n: _Node) -> list[Tensor]:
    x, scale, bias, mean, var = (n.input(k) for k in range(5))
    epsilon = float(n.attr("epsilon", 1e-5))
    if not int(n.attr("training_mode", 0)):
        return [n.b.batch_norm(x, scale, bias, mean, var, epsilon=epsilon)]
    # Statistics over every axis but the channels (axis 1); the variance is the population variance.
    axes = [k for k in range(len(x.shape)) if k != 1]
    batch_mean = n.b.reduce_mean(x, axes=axes)
    centered = n.b.sub(x, n.b.reshape(batch_mean, tuple(x.shape[1] if k == 1 else 1 for k in range(len(x.shape)))))
    batch_var = n.b.reduce_mean(n.b.mul(centered, centered), axes=axes)
    y = n.b.batch_norm(x, scale, bias, batch_mean, batch_var, epsilon=epsilon)
    momentum = n.const_like(float(n.attr("momentum", 0.9)), mean)
    keep = n.b.sub(n.const_like(1.0, mean), momentum)
    running_mean = n.b.add(n.b.mul(mean, momentum), n.b.mul(batch_mean, keep))
    running_var = n.b.add(n.b.mul(var, momentum), n.b.mul(batch_var, keep))
    return [y, running_mean, running_var]


@_converter("LayerNormalization",
            lowering="`layer_norm` over [axis, rank); the Mean and InvStdDev outputs from `reduce_mean` and `rsqrt`")
def _layer_norm(n: _Node) -> list[Tensor | None]:
    x = n.input(0)
    rank = len(x.shape)
    axis = _axis(int(n.attr("axis", -1)), rank)
    epsilon = float(n.attr("epsilon", 1e-5))
    normalized = x.shape[axis:]
    scale = n.input(1)
    if scale.shape != normalized:
        scale = n.b.broadcast_to(scale, normalized)
    bias = n.input(2) if n.has_input(2) else n.b.const(np.zeros(normalized, NUMPY_DTYPES[x.dtype]))
    if bias.shape != normalized:
        bias = n.b.broadcast_to(bias, normalized)
    outputs: list[Tensor | None] = [n.b.layer_norm(x, scale, bias, begin_norm_axis=axis, epsilon=epsilon)]
    wants_stats = any(name for name in n.node.output[1:])
    if wants_stats:
        stash = int(n.attr("stash_type", 1))
        stats_type = "f32" if stash == 1 else x.dtype
        xs = x if x.dtype == stats_type else n.b.cast(x, stats_type)
        axes = list(range(axis, rank))
        mean = n.b.reduce_mean(xs, axes=axes, keep_dims=True)
        centered = n.b.sub(xs, mean)
        variance = n.b.reduce_mean(n.b.mul(centered, centered), axes=axes, keep_dims=True)
        inv_std = n.b.rsqrt(n.b.add(variance, n.const_like(epsilon, variance)))
        outputs += [mean, inv_std]
    return outputs


def _coerced_2d(n: _Node, op: str, x: Tensor, axis: int) -> Tensor:
    """Softmax before opset 13: over the flattened trailing axes [axis, rank)."""
    rows = math.prod(x.shape[:axis])
    flat = n.b.reshape(x, (rows, math.prod(x.shape[axis:])))
    return n.b.reshape(n.b.op(op, flat, axis=-1), x.shape)


@_converter("Softmax", "LogSoftmax", lowering={
    op: f"`{name}` along `axis` (before opset 13: over the input flattened to 2-D at `axis`)"
    for op, name in (("Softmax", "softmax"), ("LogSoftmax", "log_softmax"))})
def _softmax(n: _Node) -> list[Tensor]:
    x = n.input(0)
    op = "softmax" if n.node.op_type == "Softmax" else "log_softmax"
    if n.opset < 13:
        return [_coerced_2d(n, op, x, _axis(int(n.attr("axis", 1)), len(x.shape)))]
    return [n.b.op(op, x, axis=_axis(int(n.attr("axis", -1)), len(x.shape)))]


# --------------------------------------------------------------------------
# Reductions


# The opset from which each reduction takes its axes as an input rather than an attribute.
_AXES_INPUT_SINCE = {"ReduceSum": 13}
_REDUCTIONS = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare",
               "ReduceLogSum", "ReduceLogSumExp")


_REDUCTION_LOWERING = {
    "ReduceSum": "`reduce_sum`", "ReduceMean": "`reduce_mean`",
    "ReduceMax": "`reduce_max` (bool: on i8; over an empty axis: a constant -inf / false)",
    "ReduceMin": "`reduce_min` (bool: on i8; over an empty axis: a constant +inf / true)",
    "ReduceL1": "`reduce_sum` of `abs`", "ReduceL2": "`sqrt` of `reduce_sum` of `mul(x, x)`",
    "ReduceSumSquare": "`reduce_sum` of `mul(x, x)`", "ReduceLogSum": "`log` of `reduce_sum`",
    "ReduceLogSumExp": "`log` of `reduce_sum` of `exp`",
}


@_converter(*_REDUCTIONS, constant_operands=(1,),
            lowering={k: v + "; axes from the attribute or the constant input, by opset"
                      for k, v in _REDUCTION_LOWERING.items()})
def _reduce(n: _Node) -> list[Tensor]:
    x = n.input(0)
    rank = len(x.shape)
    op_type = n.node.op_type
    if n.opset >= _AXES_INPUT_SINCE.get(op_type, 18):
        value = n.constant(1, "axes")
        axes = None if value is None else [int(a) for a in np.asarray(value).reshape(-1)]
    else:
        axes = n.ints("axes")
    keep_dims = bool(n.attr("keepdims", 1))
    if not axes:
        if int(n.attr("noop_with_empty_axes", 0)):
            return [n.b.broadcast_to(x, x.shape)]  # reduces nothing: a copy
        axes = list(range(rank))
    axes = sorted({_axis(a, rank, "axis") for a in axes})
    if op_type in ("ReduceMax", "ReduceMin") and any(x.shape[a] == 0 for a in axes):
        # Over an empty axis ONNX gives the reduction's identity; the graph ops reject reducing nothing.
        shape = [1 if k in axes else d for k, d in enumerate(x.shape) if keep_dims or k not in axes]
        dtype = NUMPY_DTYPES[x.dtype]
        if x.dtype == "i1":
            fill = op_type == "ReduceMin"
        elif x.dtype in ("f32", "f16", "bf16"):
            fill = -np.inf if op_type == "ReduceMax" else np.inf
        else:
            fill = np.iinfo(dtype).min if op_type == "ReduceMax" else np.iinfo(dtype).max
        return [n.b.const(np.full(shape, fill, dtype))]
    if op_type in ("ReduceMax", "ReduceMin") and x.dtype == "i1":
        # Max of booleans is "any", min is "all": reduced as i8 (the reductions are numeric).
        reduced = n.b.op("reduce_max" if op_type == "ReduceMax" else "reduce_min", n.b.cast(x, "i8"), axes=axes,
                         keep_dims=keep_dims)
        return [n.b.cast(reduced, "i1")]
    base = {"ReduceSum": "reduce_sum", "ReduceMean": "reduce_mean", "ReduceMax": "reduce_max",
            "ReduceMin": "reduce_min"}.get(op_type)
    if base is not None:
        return [n.b.op(base, x, axes=axes, keep_dims=keep_dims)]
    if op_type == "ReduceL1":
        return [n.b.reduce_sum(n.b.abs(x), axes=axes, keep_dims=keep_dims)]
    if op_type in ("ReduceL2", "ReduceSumSquare"):
        total = n.b.reduce_sum(n.b.mul(x, x), axes=axes, keep_dims=keep_dims)
        if op_type == "ReduceSumSquare":
            return [total]
        if x.dtype in ("i8", "i32", "i64"):  # sqrt of an integer sum, truncated back as ONNX's reference does
            return [n.b.cast(n.b.sqrt(n.b.cast(total, "f32")), x.dtype)]
        return [n.b.sqrt(total)]
    if op_type == "ReduceLogSum":
        return [n.b.log(n.b.reduce_sum(x, axes=axes, keep_dims=keep_dims))]
    # ReduceLogSumExp
    return [n.b.log(n.b.reduce_sum(n.b.exp(x), axes=axes, keep_dims=keep_dims))]


# --------------------------------------------------------------------------
# Shapes


def _shape_values(value: np.ndarray | None, what: str) -> list[int]:
    if value is None:
        raise _NodeError(f"needs the {what} input")
    return [int(v) for v in np.asarray(value).reshape(-1)]


@_converter("Reshape", constant_operands=(1,), lowering="`reshape` to the constant shape (0 copies a dim unless "
                                                        "allowzero, -1 is inferred)")
def _reshape(n: _Node) -> list[Tensor]:
    x = n.input(0)
    requested = _shape_values(n.constant(1, "shape"), "shape")
    allow_zero = int(n.attr("allowzero", 0))
    shape = []
    for k, d in enumerate(requested):
        if d == 0 and not allow_zero:
            if k >= len(x.shape):
                raise _NodeError(f"shape {requested}: dim {k} copies an input dim that does not exist")
            shape.append(x.shape[k])
        else:
            shape.append(d)
    if shape.count(-1) > 1:
        raise _NodeError(f"shape {requested} has more than one -1")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        total = math.prod(x.shape)
        if known == 0 or total % known:
            raise _NodeError(f"cannot reshape {list(x.shape)} to {requested}")
        shape[shape.index(-1)] = total // known
    return [n.b.reshape(x, tuple(shape))]


@_converter("Flatten", lowering="`reshape` to 2-D at `axis`")
def _flatten(n: _Node) -> list[Tensor]:
    x = n.input(0)
    rank = len(x.shape)
    axis = int(n.attr("axis", 1))
    if not -rank <= axis <= rank:
        raise _NodeError(f"axis {axis} is out of range for rank {rank}")
    if axis < 0:
        axis += rank
    return [n.b.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))]


@_converter("Transpose", lowering="`transpose` (default perm: reversed axes)")
def _transpose(n: _Node) -> list[Tensor]:
    x = n.input(0)
    perm = n.ints("perm", list(reversed(range(len(x.shape)))))
    return [n.b.transpose(x, perm=[_axis(p, len(x.shape)) for p in perm])]


@_converter("Squeeze", "Unsqueeze", constant_operands=(1,),
            lowering="`reshape`; axes from the attribute (opset < 13) or the constant input")
def _squeeze(n: _Node) -> list[Tensor]:
    x = n.input(0)
    if n.opset >= 13:
        value = n.constant(1, "axes")
        axes = None if value is None else _shape_values(value, "axes")
    else:
        axes = n.ints("axes")
    if n.node.op_type == "Squeeze":
        rank = len(x.shape)
        if axes is None:
            drop = {k for k, d in enumerate(x.shape) if d == 1}
        else:
            drop = {_axis(a, rank) for a in axes}
            for a in drop:
                if x.shape[a] != 1:
                    raise _NodeError(f"cannot squeeze axis {a} of size {x.shape[a]}")
        shape = tuple(d for k, d in enumerate(x.shape) if k not in drop)
    else:
        if not axes:
            raise _NodeError("needs axes")
        out_rank = len(x.shape) + len(axes)
        inserted = {_axis(a, out_rank) for a in axes}
        if len(inserted) != len(axes):
            raise _NodeError(f"axes {axes} repeat an axis")
        rest = iter(x.shape)
        shape = tuple(1 if k in inserted else next(rest) for k in range(out_rank))
    return [n.b.reshape(x, shape)]


@_converter("Concat", lowering="`concat` (nested when more than two operands of different shapes)")
def _concat(n: _Node) -> list[Tensor]:
    values = n.inputs()
    if not values:
        raise _NodeError("needs at least one input")
    axis = _axis(int(n.attr("axis")), len(values[0].shape))
    if len(values) == 1:
        return [n.b.broadcast_to(values[0], values[0].shape)]
    # IRDL gives every value of a variadic group one type: fold operands whose shapes differ.
    result = values[0]
    rest = values[1:]
    while len(rest) > 1 and any(v.shape != rest[1].shape for v in rest[1:]):
        result = n.b.concat(result, rest[0], axis=axis)
        rest = rest[1:]
    return [n.b.concat(result, *rest, axis=axis)]


@_converter("Split", constant_operands=(1,),
            lowering="`split` (or one `slice` per piece when pieces after the second differ in size); sizes from "
                     "the attribute / constant input, or num_outputs")
def _split(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axis = _axis(int(n.attr("axis", 0)), len(x.shape))
    if n.opset >= 13:
        value = n.constant(1, "split")
        sizes = None if value is None else _shape_values(value, "split")
    else:
        sizes = n.ints("split")
    count = len(n.node.output)
    if sizes is None:
        parts = int(n.attr("num_outputs", count))
        chunk = -(-x.shape[axis] // parts)
        sizes = [min(chunk, x.shape[axis] - k * chunk) for k in range(parts)]
    if len(sizes) != count or sum(sizes) != x.shape[axis]:
        raise _NodeError(f"split sizes {sizes} do not cut axis {axis} of size {x.shape[axis]} into {count} pieces")
    if count == 1:
        return [n.b.broadcast_to(x, x.shape)]
    if len(set(sizes[2:])) <= 1:
        return list(n.b.split(x, axis=axis, sizes=sizes))
    pieces = []
    start = 0
    for size in sizes:
        begin = [0] * len(x.shape)
        limit = list(x.shape)
        begin[axis], limit[axis] = start, start + size
        pieces.append(n.b.slice(x, start=begin, limit=limit))
        start += size
    return pieces


@_converter("Slice", constant_operands=(1, 2, 3, 4),
            lowering="`slice` with starts/ends clamped as ONNX does; a negative step is a `concat` of size-1 slices "
                     "(a `gather` beyond 1024)")
def _slice(n: _Node) -> list[Tensor]:
    x = n.input(0)
    rank = len(x.shape)
    if n.opset < 10:
        starts, ends = n.ints("starts"), n.ints("ends")
        axes, steps = n.ints("axes"), None
    else:
        starts = _shape_values(n.constant(1, "starts"), "starts")
        ends = _shape_values(n.constant(2, "ends"), "ends")
        axes_value, steps_value = n.constant(3, "axes"), n.constant(4, "steps")
        axes = None if axes_value is None else _shape_values(axes_value, "axes")
        steps = None if steps_value is None else _shape_values(steps_value, "steps")
    if starts is None or ends is None:
        raise _NodeError("needs starts and ends")
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    begin, limit, strides = [0] * rank, list(x.shape), [1] * rank
    reversed_axes: dict[int, list[int]] = {}
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        axis = _axis(axis, rank)
        size = x.shape[axis]
        if step == 0:
            raise _NodeError(f"step 0 on axis {axis}")
        start = start + size if start < 0 else start
        end = end + size if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), size), min(max(end, 0), size)
            begin[axis], limit[axis], strides[axis] = start, max(end, start), step
        else:  # ONNX clamps a backward slice to [-1, size - 1]; the indices are taken one by one below
            start, end = min(max(start, 0), size - 1), min(max(end, -1), size - 1)
            reversed_axes[axis] = list(range(start, end, step))
    result = n.b.slice(x, start=begin, limit=limit, strides=strides)
    for axis, indices in reversed_axes.items():
        result = _take_along(n, result, axis, indices)
    return [result]


#: Constant indices taken as that many size-1 slices (shape computations then stay foldable); more are one
#: ``graph.gather`` of a constant.
_MAX_TAKEN_SLICES = 1024


def _take_along(n: _Node, x: Tensor, axis: int, indices: list[int]) -> Tensor:
    """``x`` indexed along ``axis`` by constant, in-range ``indices``: a concat of size-1 slices, or a gather."""
    if len(indices) > _MAX_TAKEN_SLICES:
        return n.b.gather(x, n.b.const(np.asarray(indices, np.int64)), axis=axis)
    if not indices:
        shape = list(x.shape)
        shape[axis] = 0
        return n.b.slice(x, start=[0] * len(shape), limit=shape)
    pieces = []
    for index in indices:
        begin, limit = [0] * len(x.shape), list(x.shape)
        begin[axis], limit[axis] = index, index + 1
        pieces.append(n.b.slice(x, start=begin, limit=limit))
    return pieces[0] if len(pieces) == 1 else n.b.concat(*pieces, axis=axis)


@_converter("Expand", constant_operands=(1,), lowering="`broadcast_to` the broadcast of the input and the shape")
def _expand(n: _Node) -> list[Tensor]:
    x = n.input(0)
    requested = _shape_values(n.constant(1, "shape"), "shape")
    try:
        shape = np.broadcast_shapes(tuple(x.shape), tuple(requested))
    except ValueError:
        raise _NodeError(f"cannot expand {list(x.shape)} to {requested}") from None
    return [n.b.broadcast_to(x, tuple(int(d) for d in shape))]


@_converter("Pad", constant_operands=(1, 3),
            lowering="per axis: negative pads `slice`; constant mode `concat`s blocks of the value (`broadcast_to`), "
                     "edge broadcasts the border slice, reflect and wrap `concat` slices of the input")
def _pad(n: _Node) -> list[Tensor]:
    x = n.input(0)
    rank = len(x.shape)
    mode = n.attr("mode", "constant")
    if n.opset < 11:
        pads = n.ints("pads") or n.ints("paddings")
        fill = n.const_like(float(n.attr("value", 0.0)), x)
        axes = list(range(rank))
    else:
        pads = _shape_values(n.constant(1, "pads"), "pads")
        fill = n.input(2) if n.has_input(2) else n.const_like(0, x)
        axes_value = n.constant(3, "axes")
        axes = list(range(rank)) if axes_value is None else [_axis(a, rank) for a in _shape_values(axes_value, "axes")]
    if pads is None or len(pads) != 2 * len(axes):
        raise _NodeError(f"pads {pads} should hold two values per padded axis ({len(axes)})")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise _NodeError(f"mode={mode} is not supported")
    if fill.shape not in ((), (1,)):
        raise _NodeError(f"constant_value of shape {list(fill.shape)} should be a scalar")
    for k, axis in enumerate(axes):
        x = _pad_axis(n, x, axis, pads[k], pads[k + len(axes)], mode, fill)
    return [x]


def _pad_axis(n: _Node, x: Tensor, axis: int, before: int, after: int, mode: str, fill: Tensor) -> Tensor:
    """``x`` padded (or, for negative amounts, cropped) along one axis."""
    size = x.shape[axis]
    if before < 0 or after < 0:  # crop first
        begin, limit = [0] * len(x.shape), list(x.shape)
        begin[axis], limit[axis] = max(-before, 0), size - max(-after, 0)
        x = n.b.slice(x, start=begin, limit=limit)
        before, after, size = max(before, 0), max(after, 0), x.shape[axis]
    if before == 0 and after == 0:
        return x
    if mode in ("reflect", "wrap", "edge") and size == 0:
        raise _NodeError(f"cannot pad an empty axis {axis} in {mode} mode")
    if mode == "reflect" and (before >= size or after >= size):
        raise _NodeError(f"reflect padding of {max(before, after)} needs more than {size} elements on axis {axis}")

    def block(count: int, at_end: bool) -> Tensor | None:
        if count == 0:
            return None
        if mode == "constant":
            shape = list(x.shape)
            shape[axis] = count
            return n.b.broadcast_to(n.b.reshape(fill, ()) if fill.shape else fill, tuple(shape))
        if mode == "edge":
            border = _take_along(n, x, axis, [size - 1 if at_end else 0])
            shape = list(x.shape)
            shape[axis] = count
            return n.b.broadcast_to(border, tuple(shape))
        if mode == "reflect":
            indices = [size - 2 - k for k in range(count)] if at_end else [count - k for k in range(count)]
        else:  # wrap
            indices = [k % size for k in range(count)] if at_end else [(size - count + k) % size for k in range(count)]
        return _take_along(n, x, axis, indices)

    pieces = [p for p in (block(before, False), x, block(after, True)) if p is not None]
    return n.b.concat(*pieces, axis=axis)


@_converter("Gather",
            lowering="`gather`; constant indices are range-checked, and up to 1024 of them become a `concat` of "
                     "size-1 slices reshaped to the indices' shape (shape computations stay foldable)")
def _gather(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axis = _axis(int(n.attr("axis", 0)), len(x.shape))
    if not n.has_input(1) or n.node.input[1] not in n.importer.constants:
        indices_value = n.input(1)
        if indices_value.dtype not in ("i32", "i64"):
            raise _NodeError(f"indices of element type {indices_value.dtype} should be i32 or i64")
        return [n.b.gather(x, indices_value, axis=axis)]
    indices = np.asarray(n.constant(1, "indices"))
    if indices.dtype.kind not in "iu":
        raise _NodeError(f"indices of dtype {indices.dtype} should be integers")
    size = x.shape[axis]
    flat = [int(i) for i in indices.reshape(-1)]
    if any(not -size <= i < size for i in flat):
        raise _NodeError(f"indices {flat[:8]} are out of range for axis {axis} of size {size}")
    taken = _take_along(n, x, axis, [i % size for i in flat])
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    return [taken if taken.shape == shape else n.b.reshape(taken, tuple(shape))]


@_converter("CumSum", constant_operands=(1,), lowering="`cumsum` along the constant axis, `exclusive` and "
            "`reverse` as they are")
def _cumsum(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axis = np.asarray(n.constant(1, "axis")).reshape(-1)
    if axis.size != 1:
        raise _NodeError(f"axis must hold one integer, got {axis.tolist()}")
    if not -len(x.shape) <= int(axis[0]) < len(x.shape):
        raise _NodeError(f"axis {int(axis[0])} is out of range for rank {len(x.shape)}")
    return [n.b.cumsum(x, axis=int(axis[0]), exclusive=bool(n.attr("exclusive", 0)),
                       reverse=bool(n.attr("reverse", 0)))]


@_converter("GatherElements", lowering="`gather_elements`; constant indices are range-checked, run-time ones out of "
            "range raise when the graph runs")
def _gather_elements(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axis = _axis(int(n.attr("axis", 0)), len(x.shape))
    if n.has_input(1) and n.node.input[1] in n.importer.constants:
        indices = np.asarray(n.constant(1, "indices"))
        size = x.shape[axis]
        if indices.size and size is not None and not (-size <= int(indices.min()) and int(indices.max()) < size):
            raise _NodeError(f"indices {indices.reshape(-1).tolist()[:8]} are out of range for axis {axis} of "
                             f"size {size}")
    indices_value = n.input(1)
    if indices_value.dtype not in ("i32", "i64"):
        raise _NodeError(f"indices of element type {indices_value.dtype} should be i32 or i64")
    return [n.b.gather_elements(x, indices_value, axis=axis)]


@_converter("GatherND", lowering="`gather` along axis 0 of data with its batch and indexed leading dims flattened, "
            "at `batch offset + sum(index_j * stride_j)` (constant indices range-checked; a run-time one out of range "
            "for its dim makes the position out of range, and the graph raises when it runs)")
def _gather_nd(n: _Node) -> list[Tensor]:
    x, indices = n.input(0), n.input(1)
    batch = int(n.attr("batch_dims", 0))
    if indices.dtype not in ("i32", "i64"):
        raise _NodeError(f"indices of element type {indices.dtype} should be i32 or i64")
    if None in x.shape or None in indices.shape or not indices.shape:
        raise _NodeError("data and indices need static shapes, indices at least one dimension")
    depth = indices.shape[-1]
    if not 0 <= batch < len(indices.shape) or batch + depth > len(x.shape) or x.shape[:batch] != indices.shape[:batch]:
        raise _NodeError(f"batch_dims {batch} and {depth} indexed dims do not fit data {list(x.shape)} and "
                         f"indices {list(indices.shape)}")
    dims = [int(d) for d in x.shape[batch:batch + depth]]
    strides = [math.prod(dims[j + 1:]) for j in range(depth)]
    rows = tuple(int(d) for d in indices.shape[:-1])
    # Batch dims: position (b..., i...) reads block linear(b...) of the flattened data.
    batches = np.arange(math.prod(rows[:batch]), dtype=np.int64).reshape(rows[:batch] + (1,) * (len(rows) - batch))
    offsets = np.broadcast_to(batches * math.prod(dims), rows)
    if n.node.input[1] in n.importer.constants:
        known = np.asarray(n.importer.constants[n.node.input[1]]).astype(np.int64).reshape(*rows, depth)
        flat_known = offsets.copy()
        for j, (size, stride) in enumerate(zip(dims, strides, strict=True)):
            column = known[..., j]
            if column.size and not (-size <= int(column.min()) and int(column.max()) < size):
                raise _NodeError(f"indices {column.reshape(-1).tolist()[:8]} are out of range for axis "
                                 f"{batch + j} of size {size}")
            flat_known += np.where(column < 0, column + size, column) * stride
        flat = n.b.const(flat_known)
    else:
        flat = n.b.const(np.ascontiguousarray(offsets)) if batch else None
        wide = indices if indices.dtype == "i64" else n.b.cast(indices, "i64")
        # An index out of range for its dim reads past all of data: the gather raises, as ONNX Runtime does.
        outside = math.prod(int(d) for d in x.shape[:batch + depth])
        for j, (size, stride) in enumerate(zip(dims, strides, strict=True)):
            column = n.b.reshape(n.b.slice(wide, start=[0] * len(rows) + [j], limit=[*rows, j + 1]), rows)
            column = n.b.select(n.b.less(column, n.const_like(0, column)), n.b.add(column, n.const_like(size, column)),
                                column)
            out_of_range = n.b.logical_or(n.b.less(column, n.const_like(0, column)),
                                          n.b.greater_equal(column, n.const_like(size, column)))
            term = n.b.mul(column, n.const_like(stride, column)) if stride != 1 else column
            term = n.b.select(out_of_range, n.const_like(outside, column), term)
            flat = term if flat is None else n.b.add(flat, term)
        assert flat is not None
    merged = (math.prod(int(d) for d in x.shape[:batch + depth]), *(int(d) for d in x.shape[batch + depth:]))
    flat_x = x if tuple(x.shape) == merged else n.b.reshape(x, merged)
    return [n.b.gather(flat_x, flat, axis=0)]


@_converter("InstanceNormalization",
            lowering="`(x - mean) / sqrt(var + epsilon) * scale + B` per (batch, channel), statistics by "
                     "`reduce_mean` over the spatial axes")
def _instance_norm(n: _Node) -> list[Tensor]:
    x, scale, bias = n.input(0), n.input(1), n.input(2)
    n.require_float(x)
    axes = list(range(2, len(x.shape)))
    per_channel = (x.shape[1],) + (1,) * len(axes)
    mean = n.b.reduce_mean(x, axes=axes, keep_dims=True)
    centered = n.b.sub(x, mean)
    variance = n.b.reduce_mean(n.b.mul(centered, centered), axes=axes, keep_dims=True)
    inv_std = n.b.rsqrt(n.b.add(variance, n.const_like(float(n.attr("epsilon", 1e-5)), x)))
    scaled = n.b.mul(n.b.mul(centered, inv_std), n.b.reshape(scale, per_channel))
    return [n.b.add(scaled, n.b.reshape(bias, per_channel))]


@_converter("Tile", constant_operands=(1,), lowering="`tile` with the constant repeats")
def _tile(n: _Node) -> list[Tensor]:
    x = n.input(0)
    return [n.b.tile(x, multiples=_shape_values(n.constant(1, "repeats"), "repeats"))]


@_converter("Constant", lowering="`arith.constant` (value, value_float(s), value_int(s))")
def _constant(n: _Node) -> list[Tensor]:
    for key in ("sparse_value", "value_string", "value_strings"):
        if key in n.attrs:
            raise _NodeError(f"attribute {key} is not supported")
    if "value" in n.attrs:
        array = _proto_array(n.attrs["value"], "attribute value")
    elif "value_float" in n.attrs:
        array = np.asarray(n.attrs["value_float"], np.float32)
    elif "value_floats" in n.attrs:
        array = np.asarray(n.attrs["value_floats"], np.float32)
    elif "value_int" in n.attrs:
        array = np.asarray(n.attrs["value_int"], np.int64)
    elif "value_ints" in n.attrs:
        array = np.asarray(n.attrs["value_ints"], np.int64)
    else:
        raise _NodeError("has no value attribute")
    return [_known_value(n, array)]


@_converter("ConstantOfShape", constant_operands=(0,), lowering="`arith.constant` filled with `value` (default f32 0)")
def _constant_of_shape(n: _Node) -> list[Tensor]:
    shape = _shape_values(n.constant(0, "shape"), "shape")
    fill = n.attrs.get("value")
    value = np.zeros((), np.float32) if fill is None else _proto_array(fill, "attribute value").reshape(())
    return [_known_value(n, np.full(shape, value, dtype=value.dtype))]


@_converter("Shape", lowering="an i64 constant: shapes are static (start/end honoured)")
def _shape(n: _Node) -> list[Tensor]:
    shape = list(n.input(0).shape)
    rank = len(shape)
    start, end = int(n.attr("start", 0)), n.attr("end")
    start = min(max(start + rank if start < 0 else start, 0), rank)
    stop = rank if end is None else int(end)
    stop = min(max(stop + rank if stop < 0 else stop, 0), rank)
    return [_known_value(n, np.asarray(shape[start:stop], np.int64))]


@_converter("Size", lowering="an i64 scalar constant: shapes are static")
def _size(n: _Node) -> list[Tensor]:
    return [_known_value(n, np.asarray(math.prod(n.input(0).shape), np.int64))]


# --------------------------------------------------------------------------
# Documentation


def support_table_markdown() -> str:
    """The claimed-op table of docs/frontend-onnx.md, generated from :data:`CONVERTERS`."""
    rows = ["| ONNX op | graph dialect | constant inputs |", "|---|---|---|"]
    for op_type in sorted(CONVERTERS):
        spec = CONVERTERS[op_type]
        constants = ", ".join(f"#{k}" for k in sorted(spec.constant_operands)) or "-"
        rows.append(f"| {op_type} | {spec.lowering} | {constants} |")
    return "\n".join(rows) + "\n"
