"""graphfuse-run --check's and graphfuse-bisect's comparison: error against each output's magnitude."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import graphfuse
from graphfuse.tools import graphfuse_run
from graphfuse.tools.accuracy import compare_output
from graphfuse.tools.graphfuse_bisect import compare

INPUTS = Path(__file__).resolve().parent.parent / "Tools" / "Inputs"
RTOL, ATOL = 1e-4, 1e-5  # the tools' defaults


def _cancelling(n: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """a * b - c * d with a * b ~ c * d ~ 1e4, in float32 and exactly (float64): what a residual sum does."""
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(90, 110, n).astype(np.float32) for _ in range(2))
    c = (a * rng.uniform(0.999, 1.001, n)).astype(np.float32)
    d = b
    exact = a.astype(np.float64) * b - c.astype(np.float64) * d
    return (a * b - c * d).astype(np.float32), exact


def test_cancellation_noise_is_not_a_mismatch() -> None:
    got, exact = _cancelling()
    # The float32 result is as accurate as float32 allows: about eps of the operands' magnitude ...
    assert np.abs(got - exact).max() < 2e-7 * 1e4
    # ... but near-zero elements are far off relative to themselves: an elementwise check fails.
    assert not np.allclose(got, exact, rtol=RTOL, atol=ATOL)
    check = compare_output(exact, got, RTOL, ATOL)
    assert check.ok and check.failed == 0
    assert check.scale == pytest.approx(np.abs(exact).max())
    assert check.tolerance == pytest.approx(ATOL + RTOL * check.scale)


def test_a_wrong_element_is_caught_with_its_index_and_values() -> None:
    want = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 100  # up to 2300
    got = want.copy()
    got[1, 2, 3] += 1.0  # 4e-4 of the magnitude: beyond rtol 1e-4
    got[0, 1, 1] += 0.1  # within
    check = compare_output(want, got, RTOL, ATOL)
    assert not check.ok and check.failed == 1 and check.size == 24
    assert check.worst == (1, 2, 3) and check.got == 2301.0 and check.want == 2300.0
    assert check.mismatch() == "1 of 24 element(s) beyond tolerance; worst at index [1, 2, 3]: got 2301, reference 2300"
    assert check.summary() == ("max abs error 1 = 0.000435 x max|reference| 2.3e+03; tolerance 0.23 "
                               "(atol 1e-05 + rtol 0.0001 x max|reference|)")


def test_small_outputs_keep_the_absolute_floor() -> None:
    want = np.full(8, 1e-3, np.float32)
    assert compare_output(want, want + np.float32(5e-6), RTOL, ATOL).ok
    assert not compare_output(want, want + np.float32(5e-5), RTOL, ATOL).ok  # 5 x atol: a mismatch as before
    assert compare_output(np.zeros(4), np.zeros(4), 0.0, 0.0).ok


def test_nan_and_inf_must_agree() -> None:
    want = np.array([1.0, np.nan, np.inf, -np.inf, 2.0], np.float32)
    assert compare_output(want, want.copy(), RTOL, ATOL).ok  # NaN and Inf at the same places
    for k, bad in ((0, np.nan), (2, -np.inf), (1, 1.0), (4, np.inf)):
        got = want.copy()
        got[k] = bad
        check = compare_output(want, got, RTOL, ATOL)
        assert not check.ok and check.worst == (k,), (k, bad)
    assert compare_output(want, want.copy(), RTOL, ATOL).scale == 2.0  # NaN/Inf are not the scale


def test_integers_and_bools_must_be_equal() -> None:
    want = np.array([10**6, 3, -2], np.int64)
    got = want.copy()
    got[0] += 1  # within 1e-4 of 1e6, yet wrong
    check = compare_output(want, got, RTOL, ATOL)
    assert not check.ok and check.exact and check.worst == (0,)
    assert check.summary() == "max abs error 1 (int64: must be equal)"
    assert compare_output(np.array([True, False]), np.array([True, False]), RTOL, ATOL).ok
    assert not compare_output(np.array([True, False]), np.array([True, True]), RTOL, ATOL).ok


def test_shapes_must_match() -> None:
    check = compare_output(np.zeros((2, 3)), np.zeros((3, 2)), RTOL, ATOL)
    assert not check.ok and check.summary() == "shape [3, 2], reference [2, 3]"


def test_tolerances_must_be_numbers_not_below_zero() -> None:
    for rtol, atol in ((float("nan"), ATOL), (RTOL, -1.0)):
        with pytest.raises(ValueError, match="non-negative"):
            compare_output(np.ones(2), np.ones(2), rtol, atol)


def test_bisect_uses_the_same_rule() -> None:
    got, exact = _cancelling()
    small = np.ones(3, np.float32)
    assert compare([small, exact], [small, got], RTOL, ATOL).ok
    wrong = got.copy()
    wrong[7] += 10.0
    deviation = compare([small, exact], [small, wrong], RTOL, ATOL)
    assert not deviation.ok and deviation.output == 1 and deviation.check.worst == (7,)


def test_the_llama_block_checks_ok_at_scale() -> None:
    """The block's output reaches ~1e3 with N(0, 1) weights; compiled code is within 1e-4 of that."""
    executable = graphfuse.compile(INPUTS / "llama-block.mlir")
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape, dtype in executable.inputs]
    (got,), (want,) = executable(*inputs), executable.reference(*inputs)
    assert np.abs(want).max() > 100
    check = compare_output(want, got, RTOL, ATOL)
    assert check.ok and check.relative < 1e-5, check.summary()


def _main(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        graphfuse_run.main(argv)
    return info.value.code


def test_graphfuse_run_check_reports_a_real_mismatch(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A deliberately wrong result (one element off by 1 of an output of magnitude ~10) fails --check."""
    real_compile = graphfuse_run.compile

    class Wrong:
        """The compiled executable, with element [3, 5] of result 0 off by one."""

        def __init__(self, real: graphfuse.Executable):
            self.real = real

        def __getattr__(self, name: str) -> object:
            return getattr(self.real, name)

        def __call__(self, *arrays: np.ndarray, **options: object) -> list[np.ndarray]:
            results = self.real(*arrays, **options)
            results[0][3, 5] += 1.0
            return results

    monkeypatch.setattr(graphfuse_run, "compile", lambda *args, **kwargs: Wrong(real_compile(*args, **kwargs)))
    assert _main([str(INPUTS / "residual-gelu.mlir"), "--check"]) == 1
    out, err = capsys.readouterr()
    assert "check result 0: max abs error 1 = " in out and "): MISMATCH\n" in out
    assert "    1 of 512 element(s) beyond tolerance; worst at index [3, 5]: got " in out
    assert "check result 1: max abs error 0 (bool: must be equal): ok" in out
    assert "results differ from the reference interpreter beyond tolerance" in err
