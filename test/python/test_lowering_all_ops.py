"""Every op of the catalog, on its documented example, lowers (strict), compiles and matches the interpreter."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.run_checks import RunCheckError

ALL_OPS = Path(__file__).resolve().parents[1] / "Dialect" / "all-ops.mlir"
_MODULE = graphfuse.parse_module(ALL_OPS.read_text(), str(ALL_OPS))
#: op example name -> a module holding that function alone (so each test compiles one function)
EXAMPLES = {name: f"module {{\n{func.get_asm()}\n}}" for name, func in functions(_MODULE).items()}


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, low: int = -8) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(low, 8 if low < 0 else 3, shape).astype(dtype)
    values = rng.uniform(0.1, 2.0, shape) * np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return values.astype(np.float32).astype(dtype)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_op_example_compiles_and_matches(name: str) -> None:
    executable = graphfuse.compile(EXAMPLES[name], entry=name, opt_level=0)
    rng = np.random.default_rng(0)
    inputs = [_random(rng, shape, dtype) for shape, dtype in executable.inputs]
    try:
        want = executable.reference(*inputs)
    except RunCheckError as error:  # an index out of range, a division by zero: the compiled code raises it too
        with pytest.raises(type(error)):
            executable(*inputs)
        inputs = [_random(rng, shape, dtype, low=1) for shape, dtype in executable.inputs]  # integers 1 and 2
        want = executable.reference(*inputs)
    got = executable(*inputs)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype.kind in "f" or w.dtype == ml_dtypes.bfloat16:
            tolerance = 2e-2 if w.dtype != np.float32 else 1e-5
            np.testing.assert_allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=tolerance, atol=tolerance, equal_nan=True
            )
        else:
            # quantized outputs may differ by one step where f32 rounding order differs
            assert np.abs(g.astype(np.int64) - w.astype(np.int64)).max(initial=0) <= 1
