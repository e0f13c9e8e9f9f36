"""Build graph-dialect functions from Python, with result types inferred.

    b = GraphBuilder("forward")
    x = b.arg((4, 8), "f32")
    y = b.gelu(b.add(x, b.const(w)), approximate="tanh")
    b.ret(y)
    print(b.module)

Every op of the catalog is a method (``b.add``, ``b.softmax(x, axis=-1)``,
``b.split(x, axis=1, sizes=[4, 4])``); ops whose result is not implied by the
operands take it as a second argument (``b.reshape(x, (2, 16))``,
``b.cast(x, "f16")``, ``b.broadcast_to(x, (4, 8))``).  Locations point at the
Python line that built each op, so verifier messages lead back to user code.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, func

from graphfuse.dialect.catalog import OpSpec, VerifyError, infer_results, lookup_op, python_to_attr
from graphfuse.dialect.constants import array_to_attr
from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc
from graphfuse.dialect.types import ALL_DTYPES, NUMPY_DTYPES, TensorSig, sig_from_type, sig_of_array, tensor_type

_THIS_FILE = str(Path(__file__).resolve())


class Tensor:
    """A value under construction; arithmetic operators build graph ops."""

    def __init__(self, builder: FunctionBuilder, value: ir.Value):
        self.builder = builder
        self.value = value
        sig = sig_from_type(value.type)
        assert sig is not None, value.type
        self.sig: TensorSig = sig

    @property
    def shape(self) -> tuple:
        return self.sig.shape

    @property
    def dtype(self) -> str:
        return self.sig.dtype

    def __repr__(self) -> str:
        return f"Tensor({self.sig})"

    def _other(self, other: Any) -> Tensor:
        if isinstance(other, Tensor):
            return other
        return self.builder.const(np.asarray(other, dtype=NUMPY_DTYPES[self.dtype]))

    def __add__(self, other: Any) -> Tensor:
        return self.builder.add(self, self._other(other))

    def __radd__(self, other: Any) -> Tensor:
        return self.builder.add(self._other(other), self)

    def __sub__(self, other: Any) -> Tensor:
        return self.builder.sub(self, self._other(other))

    def __rsub__(self, other: Any) -> Tensor:
        return self.builder.sub(self._other(other), self)

    def __mul__(self, other: Any) -> Tensor:
        return self.builder.mul(self, self._other(other))

    def __rmul__(self, other: Any) -> Tensor:
        return self.builder.mul(self._other(other), self)

    def __truediv__(self, other: Any) -> Tensor:
        return self.builder.div(self, self._other(other))

    def __rtruediv__(self, other: Any) -> Tensor:
        return self.builder.div(self._other(other), self)

    def __neg__(self) -> Tensor:
        return self.builder.neg(self)

    def __matmul__(self, other: Tensor) -> Tensor:
        return self.builder.matmul(self, other)


def _caller_location(context: ir.Context) -> ir.Location:
    """The first stack frame outside this module: the user's line."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == _THIS_FILE:
        frame = frame.f_back
    if frame is None:
        return ir.Location.unknown(context=context)
    return ir.Location.file(frame.f_code.co_filename, frame.f_lineno, 1, context=context)


class BuildError(GraphfuseError):
    """An op could not be built: bad operands, attributes or result type."""


def _build_error(message: str, loc: ir.Location) -> BuildError:
    return BuildError([Diagnostic("error", message, source_loc(loc))])


def _checked_sig(shape: Any, dtype: Any, what: str = "") -> TensorSig:
    """A TensorSig from user input, or VerifyError saying what is wrong with it."""
    prefix = f"{what} " if what else ""
    if isinstance(shape, int | str) or not isinstance(shape, Sequence):
        raise VerifyError(f"{prefix}shape must be a sequence of sizes, got {shape!r}")
    for d in shape:
        if d is not None and (isinstance(d, bool) or not isinstance(d, int | np.integer) or d < 0):
            raise VerifyError(f"{prefix}shape {tuple(shape)!r} must hold non-negative ints or None (dynamic)")
        if d is not None and d > 2**63 - 1:  # MLIR's sizes are int64: the bindings would raise a TypeError
            raise VerifyError(f"{prefix}shape {tuple(shape)!r} has a size larger than 2^63 - 1")
    if dtype not in ALL_DTYPES:
        raise VerifyError(f"{prefix}element type {dtype!r} is not one of {', '.join(sorted(ALL_DTYPES))}")
    return TensorSig(tuple(None if d is None else int(d) for d in shape), dtype)


class ModuleBuilder:
    """A module holding one or more graph functions."""

    def __init__(self, context: ir.Context | None = None):
        self.context = context or make_context()
        with self.context, ir.Location.unknown():
            self.module = ir.Module.create()

    def function(self, name: str = "main", private: bool = False) -> FunctionBuilder:
        return FunctionBuilder(name, module_builder=self, private=private)

    def __str__(self) -> str:
        return str(self.module)


class FunctionBuilder:
    """Builds one ``func.func``; call :meth:`ret` to finish it."""

    def __init__(self, name: str = "main", module_builder: ModuleBuilder | None = None, private: bool = False):
        self.module_builder = module_builder or ModuleBuilder()
        self.context = self.module_builder.context
        self.name = name
        self.finished = False
        with self.context, _caller_location(self.context):
            with ir.InsertionPoint(self.module_builder.module.body):
                self.func = func.FuncOp(name, ir.FunctionType.get([], []))
            if private:
                self.func.attributes["sym_visibility"] = ir.StringAttr.get("private")
            self.block = self.func.add_entry_block()

    @property
    def module(self) -> ir.Module:
        return self.module_builder.module

    # -- values ---------------------------------------------------------------

    def arg(self, shape: Sequence[int | None], dtype: str = "f32") -> Tensor:
        """Append a function argument of the given shape (None for a dynamic dim) and dtype."""
        self._check_open()
        loc = _caller_location(self.context)
        try:
            sig = _checked_sig(shape, dtype)
        except VerifyError as error:
            raise _build_error(f"argument {error.message}", loc) from None
        with self.context, loc:
            value = self.block.add_argument(tensor_type(sig), loc)
        return Tensor(self, value)

    def const(self, value: Any, dtype: str | None = None) -> Tensor:
        """An ``arith.constant dense<...>`` holding ``value`` (numpy array or nested lists)."""
        self._check_open()
        array = np.asarray(value) if dtype is None else np.asarray(value, dtype=NUMPY_DTYPES[dtype])
        if array.dtype == np.float64:
            array = array.astype(np.float32)  # the dialect has no f64; f32 is its working type
        if sig_of_array(array) is None:
            raise BuildError(f"constant of numpy dtype {array.dtype} has no graph-dialect element type")
        with self.context, _caller_location(self.context), ir.InsertionPoint(self.block):
            attr = array_to_attr(array)
            op = arith.ConstantOp(attr.type, attr)
        return Tensor(self, op.result)

    # -- ops ------------------------------------------------------------------

    def op(self, name: str, *operands: Any, **attrs: Any) -> Tensor | tuple[Tensor, ...]:
        """Build ``graph.<name>``; see the module docstring for the calling convention."""
        self._check_open()
        spec = lookup_op(f"graph.{name}")
        if spec is None:
            raise BuildError(f"unknown graph op '{name}'")
        loc = _caller_location(self.context)
        with self.context, loc:
            full_attrs = spec.with_defaults(attrs)
            try:
                result_arg, values = self._split_operands(spec, operands)
                declared = self._declared_results(spec, values, result_arg)
                for key in attrs:
                    if spec.attr(key) is None:
                        known = ", ".join(a.name for a in spec.attrs) or "none"
                        raise VerifyError(f"has no attribute '{key}' (known attributes: {known})")
                sigs = infer_results(spec, [v.sig for v in values], full_attrs, declared)
                ir_attrs = {k: python_to_attr(spec.attr(k), v) for k, v in attrs.items() if v is not None}
            except (VerifyError, ValueError) as error:
                message = error.message if isinstance(error, VerifyError) else str(error)
                raise _build_error(f"'graph.{name}' {message}", loc) from None
            with ir.InsertionPoint(self.block):
                op = ir.Operation.create(
                    spec.full_name,
                    results=[tensor_type(s) for s in sigs],
                    operands=[v.value for v in values],
                    attributes=ir_attrs,
                )
        results = tuple(Tensor(self, r) for r in op.results)
        if len(spec.results) == 1 and spec.results[0].arity == "single":
            return results[0]
        return results

    def _split_operands(self, spec: OpSpec, operands: tuple) -> tuple[Any, list[Tensor]]:
        items = list(operands)
        result_arg = None
        if spec.result_param is not None:
            if not items or isinstance(items[-1], Tensor):
                raise VerifyError(f"needs its result {spec.result_param} as the last argument")
            result_arg = items.pop()
        values: list[Tensor] = []
        for item in items:
            if isinstance(item, list | tuple):
                values.extend(item)
            else:
                values.append(item)
        for i, v in enumerate(values):
            if not isinstance(v, Tensor):
                raise VerifyError(f"operand #{i} is {type(v).__name__}, expected a Tensor")
            if v.builder is not self:
                raise VerifyError(f"operand #{i} belongs to another function")
        return result_arg, values

    def _declared_results(self, spec: OpSpec, values: list[Tensor], result_arg: Any) -> list[TensorSig] | None:
        if spec.result_param is None or not values:
            return None
        if spec.result_param == "shape":
            return [_checked_sig(result_arg, values[0].dtype, "result")]
        return [_checked_sig(values[0].shape, result_arg, "result")]

    def __getattr__(self, name: str):
        if name.startswith("_") or lookup_op(f"graph.{name}") is None:
            raise AttributeError(name)
        return lambda *operands, **attrs: self.op(name, *operands, **attrs)

    # -- finishing ------------------------------------------------------------

    def ret(self, *values: Tensor) -> ir.Operation:
        """Return ``values`` and fix the function type; the builder is then closed."""
        self._check_open()
        with self.context, _caller_location(self.context), ir.InsertionPoint(self.block):
            func.ReturnOp([v.value for v in values])
            arg_types = [a.type for a in self.block.arguments]
            self.func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(arg_types, [v.value.type for v in values])
            )
        self.finished = True
        return self.func.operation

    def _check_open(self) -> None:
        if self.finished:
            raise BuildError(f"function '{self.name}' is already finished (ret was called)")


def GraphBuilder(name: str = "main", context: ir.Context | None = None) -> FunctionBuilder:
    """A builder for a single-function module (the common case)."""
    return FunctionBuilder(name, ModuleBuilder(context))
