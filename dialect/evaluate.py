"""Evaluate one op on numpy arrays with its reference semantics.

This is the core of the reference interpreter, usable without building IR:
``evaluate_op("add", [x, y])``.  Low-precision floats (f16, bf16) are widened
to f32 before the reference runs and results are cast to their declared dtype,
so every reference function is written once, for f32 and the integer types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import OPS, OpSpec, VerifyError, infer_results, lookup_op
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig, sig_of_array

_WIDEN = {"f16", "bf16"}


def _spec(name: str) -> OpSpec:
    spec = lookup_op(name if name.startswith("graph.") else f"graph.{name}")
    if spec is None:
        raise KeyError(f"unknown graph op '{name}' (known: {', '.join(sorted(OPS))})")
    return spec


def widen(array: np.ndarray) -> np.ndarray:
    """f16/bf16 arrays as f32 (exact); other arrays unchanged."""
    sig = sig_of_array(array)
    if sig is not None and sig.dtype in _WIDEN:
        return array.astype(np.float32)
    return array


def cast_to(array: np.ndarray, dtype: str) -> np.ndarray:
    """Convert a reference result to the dialect dtype ``dtype``."""
    target = NUMPY_DTYPES[dtype]
    array = np.asarray(array)
    if array.dtype == target:
        return array
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf is the intended f16 result
        return array.astype(target)


def evaluate_op(
    name: str,
    inputs: Sequence[np.ndarray],
    attrs: dict[str, Any] | None = None,
    declared: Sequence[TensorSig] | None = None,
) -> list[np.ndarray]:
    """Run op ``name`` (``"add"`` or ``"graph.add"``) on numpy arrays.

    ``declared`` gives the result types for ops that need them (reshape,
    broadcast_to, cast).  Raises :class:`VerifyError` when the inputs are not
    valid for the op.
    """
    spec = _spec(name)
    arrays = [np.asarray(a) for a in inputs]
    sigs = []
    for i, array in enumerate(arrays):
        sig = sig_of_array(array)
        if sig is None:
            raise VerifyError(f"operand #{i} has numpy dtype {array.dtype}, which the graph dialect does not support")
        sigs.append(sig)
    full_attrs = spec.with_defaults(dict(attrs or {}))
    result_sigs = infer_results(spec, sigs, full_attrs, declared)
    outputs = spec.reference([widen(a) for a in arrays] if spec.widen_inputs else arrays, full_attrs, result_sigs)
    if len(outputs) != len(result_sigs):
        raise AssertionError(
            f"reference of graph.{spec.name} returned {len(outputs)} results, expected {len(result_sigs)}"
        )
    results = []
    for out, sig in zip(outputs, result_sigs, strict=True):
        out = cast_to(out, sig.dtype)
        if tuple(out.shape) != sig.shape and sig.is_static:
            raise AssertionError(f"reference of graph.{spec.name} returned shape {out.shape}, inferred {sig}")
        results.append(out)
    return results
