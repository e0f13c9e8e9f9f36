"""The op catalog: one :class:`OpSpec` per graph-dialect op.

An entry says everything graphfuse knows about an op: its operands, results and
attributes (with kinds and defaults), how result types follow from operand
types (``infer``), and what it computes (``reference``, in numpy).  The IRDL
definition ``graph.irdl.mlir``, the verifier, the builder, the reference
interpreter and the generated docs are all derived from these entries.

Conventions for the two callables:

- ``infer(inputs, attrs, declared)`` gets the operand signatures (flattened, in
  operand order), the attributes with defaults filled in, and the result
  signatures written in the IR (``None`` when the builder asks for them).  It
  returns the result signatures, or raises :class:`VerifyError` with a message
  that reads after the op name: ``"operands tensor<4xf32> and tensor<3xf32> are
  not broadcast-compatible"``.  Ops whose result is not a function of the
  operands (reshape, broadcast_to, cast) take it from ``declared`` and check it.
- ``reference(inputs, attrs, results)`` gets numpy arrays (f16/bf16 already
  widened to f32) and the concrete result signatures; it returns one array per
  result.  The interpreter casts each to its result dtype.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mlir import ir

from graphfuse.dialect.types import TensorSig


class VerifyError(Exception):
    """An op's operands, attributes or result types are inconsistent."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class AttrKind(enum.Enum):
    """The attribute kinds the dialect uses, with their IRDL base constraint."""

    I64 = "i64"  # 2 : i64
    I64_ARRAY = "i64_array"  # array<i64: 0, 1>
    BOOL = "bool"  # true / false
    F32 = "f32"  # 1.0e-05 : f32 (any float type accepted)
    STRING = "string"  # "tanh"


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: Default value of an attribute that must be written.
REQUIRED: Any = _Required()


@dataclass(frozen=True)
class AttrSpec:
    name: str
    kind: AttrKind
    default: Any = REQUIRED
    choices: tuple[str, ...] = ()
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class ValueSpec:
    """An operand or result; ``arity`` is ``single``, ``optional`` or ``variadic``."""

    name: str
    arity: str = "single"


InferFn = Callable[[list[TensorSig], dict[str, Any], "list[TensorSig] | None"], list[TensorSig]]
ReferenceFn = Callable[[list[np.ndarray], dict[str, Any], list[TensorSig]], list[np.ndarray]]


@dataclass(frozen=True)
class OpSpec:
    name: str  # short name: "add" for graph.add
    group: str  # section of the op table in the docs
    summary: str  # one line for the docs
    operands: tuple[ValueSpec, ...]
    results: tuple[ValueSpec, ...]
    infer: InferFn
    reference: ReferenceFn
    attrs: tuple[AttrSpec, ...] = ()
    #: "shape" or "dtype" when the builder needs the result shape/dtype given
    #: (reshape, broadcast_to, cast); None when inference alone decides.
    result_param: str | None = None
    #: Extra text for the docs (semantics beyond numpy's, edge cases).
    doc: str = ""
    #: Example operand signatures for the generated round-trip test; ``(inputs, attrs)``.
    example: tuple[tuple[TensorSig, ...], dict[str, Any]] = field(default=((), {}))
    #: The result type of the example, for ops with a ``result_param``.
    example_result: TensorSig | None = None
    #: False when ``reference`` needs the operands in their own dtypes (it then
    #: widens f16/bf16 itself), e.g. to round an intermediate to an operand's type.
    widen_inputs: bool = True

    @property
    def full_name(self) -> str:
        return f"graph.{self.name}"

    def attr(self, name: str) -> AttrSpec | None:
        return next((a for a in self.attrs if a.name == name), None)

    def with_defaults(self, given: dict[str, Any]) -> dict[str, Any]:
        """``given`` with every absent optional attribute set to its default."""
        out = dict(given)
        for spec in self.attrs:
            if spec.name not in out and not spec.required:
                out[spec.name] = spec.default
        return out


OPS: dict[str, OpSpec] = {}


def register_op(spec: OpSpec) -> OpSpec:
    if spec.name in OPS:
        raise ValueError(f"graph op '{spec.name}' is registered twice")
    variadic = [v for v in spec.operands if v.arity != "single"]
    if len(variadic) > 1:
        # IRDL would need operandSegmentSizes; keep every op to at most one.
        raise ValueError(f"graph op '{spec.name}' has more than one optional/variadic operand")
    OPS[spec.name] = spec
    return spec


def lookup_op(full_name: str) -> OpSpec | None:
    """The spec of ``graph.X``, or None for ops of other dialects and unknown names."""
    if not full_name.startswith("graph."):
        return None
    _load_op_modules()
    return OPS.get(full_name[len("graph.") :])


def all_ops() -> list[OpSpec]:
    _load_op_modules()
    return list(OPS.values())


_loaded = False


def _load_op_modules() -> None:
    """Import the modules that register ops (lazy, to avoid import cycles)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from graphfuse.dialect import ops  # noqa: F401  (registers every op)


# --------------------------------------------------------------------------
# Attribute values <-> MLIR attributes.


def attr_to_python(spec: AttrSpec, attr: ir.Attribute) -> Any:
    """Convert an MLIR attribute to the Python value of ``spec``'s kind."""
    kind = spec.kind
    if kind is AttrKind.BOOL:
        if isinstance(attr, ir.BoolAttr):
            return bool(attr.value)
        raise VerifyError(f"attribute '{spec.name}' must be a bool (true or false), got {attr}")
    if kind is AttrKind.I64:
        if isinstance(attr, ir.IntegerAttr):
            return int(attr.value)
        raise VerifyError(f"attribute '{spec.name}' must be an integer (e.g. 1 : i64), got {attr}")
    if kind is AttrKind.I64_ARRAY:
        if isinstance(attr, ir.DenseI64ArrayAttr):
            return [int(v) for v in attr]
        raise VerifyError(f"attribute '{spec.name}' must be an array<i64: ...>, got {attr}")
    if kind is AttrKind.F32:
        if isinstance(attr, ir.FloatAttr):
            return float(attr.value)
        raise VerifyError(f"attribute '{spec.name}' must be a float (e.g. 1.0e-05 : f32), got {attr}")
    if kind is AttrKind.STRING:
        if isinstance(attr, ir.StringAttr):
            value = attr.value
            if spec.choices and value not in spec.choices:
                allowed = ", ".join(f'"{c}"' for c in spec.choices)
                raise VerifyError(f'attribute \'{spec.name}\' must be one of {allowed}, got "{value}"')
            return value
        raise VerifyError(f"attribute '{spec.name}' must be a string, got {attr}")
    raise AssertionError(kind)


def python_to_attr(spec: AttrSpec, value: Any) -> ir.Attribute:
    """Build the MLIR attribute for a Python value (current context)."""
    kind = spec.kind
    try:
        if kind is AttrKind.BOOL:
            if not isinstance(value, bool | np.bool_):
                raise TypeError
            return ir.BoolAttr.get(bool(value))
        if kind is AttrKind.I64:
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TypeError
            return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
        if kind is AttrKind.I64_ARRAY:
            values = [int(v) for v in value]
            if any(isinstance(v, bool) for v in value):
                raise TypeError
            return ir.DenseI64ArrayAttr.get(values)
        if kind is AttrKind.F32:
            return ir.FloatAttr.get(ir.F32Type.get(), float(value))
        if kind is AttrKind.STRING:
            if not isinstance(value, str):
                raise TypeError
            if spec.choices and value not in spec.choices:
                raise ValueError(f"attribute '{spec.name}' must be one of {', '.join(spec.choices)}, got '{value}'")
            return ir.StringAttr.get(value)
    except TypeError:
        raise ValueError(f"attribute '{spec.name}' expects a {kind.value} value, got {value!r}") from None
    raise AssertionError(kind)


def read_attributes(spec: OpSpec, op: ir.Operation) -> dict[str, Any]:
    """The op's attributes as Python values, defaults filled in.

    Unknown attributes are an error unless their name contains a dot or
    starts with an underscore (discardable attributes such as ``graph.kernel``
    or the seed's ``_no_task``).
    """
    values: dict[str, Any] = {}
    for name, attr in op.attributes.items():
        attr_spec = spec.attr(name)
        if attr_spec is None:
            if "." in name or name.startswith("_"):
                continue
            known = ", ".join(a.name for a in spec.attrs) or "none"
            raise VerifyError(f"has unknown attribute '{name}' (known attributes: {known})")
        values[name] = attr_to_python(attr_spec, attr)
    for attr_spec in spec.attrs:
        if attr_spec.required and attr_spec.name not in values:
            raise VerifyError(f"requires attribute '{attr_spec.name}'")
    return spec.with_defaults(values)


def check_operand_count(spec: OpSpec, count: int) -> None:
    fixed = sum(1 for v in spec.operands if v.arity == "single")
    optional = sum(1 for v in spec.operands if v.arity == "optional")
    variadic = any(v.arity == "variadic" for v in spec.operands)
    if count < fixed or (not variadic and count > fixed + optional):
        expected = f"{fixed}" if not optional and not variadic else f"at least {fixed}"
        if optional and not variadic:
            expected = f"{fixed} or {fixed + optional}"
        raise VerifyError(f"expects {expected} operands, got {count}")


def infer_results(
    spec: OpSpec,
    inputs: Sequence[TensorSig],
    attrs: dict[str, Any],
    declared: Sequence[TensorSig] | None,
) -> list[TensorSig]:
    """Run ``spec.infer`` after the generic operand-count and required-attribute checks."""
    check_operand_count(spec, len(inputs))
    for attr_spec in spec.attrs:
        if attr_spec.required and attrs.get(attr_spec.name) is None:
            raise VerifyError(f"requires attribute '{attr_spec.name}'")
    return list(spec.infer(list(inputs), attrs, None if declared is None else list(declared)))
