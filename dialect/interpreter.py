"""The reference interpreter: runs a graph-dialect function on numpy arrays.

It is the oracle every fusion pass and every lowering is checked against, so
it stays simple: ops run one at a time through the catalog's numpy reference
semantics (:func:`graphfuse.dialect.evaluate.evaluate_op`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from graphfuse.dialect.catalog import VerifyError, lookup_op, read_attributes
from graphfuse.dialect.collectives import run_ranks
from graphfuse.dialect.constants import attr_to_array
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.run_checks import RunCheckError, check_failed
from graphfuse.dialect.shape_utils import sized_at_call
from graphfuse.dialect.types import TensorSig, shape_matches, sig_from_type, sig_of_array


def _error(message: str, location: ir.Location | None = None) -> GraphfuseError:
    return GraphfuseError([Diagnostic("error", message, source_loc(location) if location else None)])


def functions(module: ir.Module) -> dict[str, ir.Operation]:
    """The module's func.func ops by symbol name, in order."""
    out = {}
    for op in module.body.operations:
        if op.operation.name == "func.func":
            out[ir.StringAttr(op.attributes["sym_name"]).value] = op.operation
    return out


def entry_function(module: ir.Module, entry: str | None = None) -> ir.Operation:
    """The function named ``entry``, or the first public function with a body."""
    funcs = functions(module)
    if entry is not None:
        if entry not in funcs:
            known = ", ".join(funcs) or "none"
            raise _error(f"no function named '{entry}' in the module (functions: {known})")
        return funcs[entry]
    for func in funcs.values():
        visibility = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes else None
        private = visibility is not None and ir.StringAttr(visibility).value != "public"
        if not private and len(func.regions[0].blocks) > 0:
            return func
    raise _error("the module has no public function to run")


def _check_input(index: int, array: np.ndarray, arg_type: ir.Type) -> None:
    want = sig_from_type(arg_type)
    got = sig_of_array(array)
    if want is None:
        raise _error(f"argument #{index} has type {arg_type}, which the interpreter does not support")
    if got is None:
        raise _error(f"input #{index} has numpy dtype {array.dtype}, expected {want.dtype} for {want}")
    if got.dtype != want.dtype or not shape_matches(want.shape, got.shape):
        raise _error(f"input #{index} is {got} ({array.dtype} array of shape {array.shape}), expected {want}")


class Interpreter:
    """Evaluates the functions of one module; ``run`` is the entry point."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.funcs = functions(module)
        self._running: set[str] = set()  # functions being called: a second call is recursion (graph-verify's error)

    def run(self, inputs: Sequence[np.ndarray], entry: str | None = None) -> list[np.ndarray]:
        return self.call(entry_function(self.module, entry), [np.asarray(a) for a in inputs])

    def call(self, func: ir.Operation, inputs: list[np.ndarray]) -> list[np.ndarray]:
        name = ir.StringAttr(func.attributes["sym_name"]).value
        self._running.add(name)
        try:
            return self._call(name, func, inputs)
        finally:
            self._running.discard(name)

    def _call(self, name: str, func: ir.Operation, inputs: list[np.ndarray]) -> list[np.ndarray]:
        if len(func.regions[0].blocks) == 0:
            raise _error(f"function '{name}' has no body", func.location)
        block = func.regions[0].blocks[0]
        if len(inputs) != len(block.arguments):
            raise _error(f"function '{name}' takes {len(block.arguments)} inputs, got {len(inputs)}")
        values: dict[ir.Value, np.ndarray] = {}
        for i, (arg, array) in enumerate(zip(block.arguments, inputs, strict=True)):
            _check_input(i, array, arg.type)
            values[arg] = array
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                return [values[v] for v in op.operands]
            outputs = self._execute(op, [values[v] for v in op.operands])
            for result, array in zip(op.results, outputs, strict=True):
                values[result] = array
        raise _error(f"function '{name}' has no func.return", func.location)

    def _execute(self, op: ir.Operation, args: list[np.ndarray]) -> list[np.ndarray]:
        name = op.name
        if name == "arith.constant":
            return [attr_to_array(op.attributes["value"])]
        if name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee not in self.funcs:
                raise _error(f"call to unknown function '{callee}'", op.location)
            if callee in self._running:  # a module that skipped verification: fail here, not at the recursion limit
                raise _error(f"recursive call: @{callee} is called while it runs; graphfuse does not support "
                             "recursion", op.location)
            return self.call(self.funcs[callee], args)
        spec = lookup_op(name)
        if spec is None:
            raise _error(f"the reference interpreter cannot run '{name}'", op.location)
        try:
            attrs = read_attributes(spec, op)
            declared = [sig_from_type(r.type) for r in op.results]
            if name in ("graph.reshape", "graph.broadcast_to"):
                operands = [sig_from_type(v.type).shape for v in op.operands]
                declared = [sized_at_call(name, operands, [a.shape for a in args], declared[0])]
            outputs = evaluate_op(spec.name, args, attrs, declared)
        except VerifyError as error:
            raise _error(f"'{name}' {error.message}", op.location) from None
        except RunCheckError as error:  # as eager raises: the same error, now naming the op and where it is
            raise check_failed(type(error), name, source_loc(op.location), error.detail) from None
        for i, (out, want) in enumerate(zip(outputs, declared, strict=True)):
            got = TensorSig(tuple(out.shape), want.dtype)
            if not shape_matches(want.shape, got.shape):
                raise _error(f"'{name}' result #{i} has shape {out.shape} at run time, declared {want}", op.location)
        return outputs


def run_function(module: ir.Module, inputs: Sequence[np.ndarray], entry: str | None = None) -> list[np.ndarray]:
    """Run function ``entry`` (default: the first public one) of ``module`` on ``inputs``."""
    return Interpreter(module).run(inputs, entry)


def run_function_ranks(
    modules: ir.Module | Sequence[ir.Module],
    inputs: Sequence[Sequence[np.ndarray]],
    entry: str | None = None,
) -> list[list[np.ndarray]]:
    """Run a graph on every rank of a group at once: rank k runs ``modules[k]`` (or the one module) on
    ``inputs[k]``, as a thread; the collectives combine the ranks' values (:mod:`graphfuse.dialect.collectives`).

    Returns each rank's results, in rank order.  The reference of what ``torch.distributed`` computes for the
    same graphs (graphfuse.distributed).
    """
    size = len(inputs)
    per_rank = [modules] * size if isinstance(modules, ir.Module) else list(modules)
    if len(per_rank) != size:
        raise _error(f"{len(per_rank)} modules for {size} ranks' inputs: give one module, or one per rank")
    return run_ranks(size, lambda rank: Interpreter(per_rank[rank]).run(inputs[rank], entry))
