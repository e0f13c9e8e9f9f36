"""The one comparison of a result with its reference, for ``graphfuse-run --check`` and ``graphfuse-bisect``.

Per output, a float result passes when every element satisfies::

    |got - want| <= atol + rtol * max|want|

where ``max|want|`` is the largest finite magnitude of that output in the
reference.  The error is measured against the output's magnitude, not each
element's: floating-point rounding is relative to the values an element was
computed from, so an element that cancels to near zero (a residual sum, the
difference of two large products) keeps the absolute error of its large
operands.  An elementwise relative test (numpy's ``allclose``) calls that
noise a mismatch as soon as outputs are large: a Llama-style block on N(0, 1)
inputs reaches 1e3-1e4 and the float32 reference itself is only accurate to
about 1e-5 of that.  ``rtol`` is therefore a normwise relative error (LAPACK's
``|x - y|_inf / |x|_inf``); ``atol`` is an absolute floor for outputs that are
all near zero.  The fuzzer (``random_graphs.compare_results``) applies the
same idea with a finer scale, the largest magnitude on each value's path,
which it knows because it builds the graph.

Integer and boolean results must be equal.  NaN and Inf must be at the same
positions (an Inf with the same sign); they are left out of the error and of
``max|want|``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["OutputCheck", "compare_output"]


@dataclass(frozen=True)
class OutputCheck:
    """How one output compares with its reference under (rtol, atol)."""

    ok: bool
    rtol: float
    atol: float
    #: integer or boolean output, compared for equality
    exact: bool = False
    dtype: str = ""
    #: largest |got - want| over the elements finite in both
    max_abs: float = 0.0
    #: max|want| over the finite reference elements
    scale: float = 0.0
    #: the largest error allowed: atol + rtol * scale (0 for exact outputs)
    tolerance: float = 0.0
    size: int = 0
    #: elements beyond the tolerance, NaN/Inf disagreements included
    failed: int = 0
    #: the worst failing element (a NaN/Inf disagreement first, else the largest error) and its two values
    worst: tuple[int, ...] | None = None
    got: object = None
    want: object = None
    #: a shape mismatch: no element comparison
    problem: str | None = None

    @property
    def relative(self) -> float:
        """max abs error / max|want|: the error in units of the output's magnitude."""
        if self.scale > 0:
            return self.max_abs / self.scale
        return 0.0 if self.max_abs == 0 else float("inf")

    def summary(self, with_tolerance: bool = True) -> str:
        """``max abs error E = R x max|reference| S; tolerance T (atol A + rtol R x max|reference|)``."""
        if self.problem is not None:
            return self.problem
        if self.exact:
            return f"max abs error {self.max_abs:.3g} ({self.dtype}: must be equal)"
        text = f"max abs error {self.max_abs:.3g} = {self.relative:.3g} x max|reference| {self.scale:.3g}"
        if with_tolerance:
            text += f"; tolerance {self.tolerance:.3g} (atol {self.atol:g} + rtol {self.rtol:g} x max|reference|)"
        return text

    def mismatch(self) -> str:
        """Where it fails: how many elements, the worst one's index and values."""
        if self.problem is not None or self.worst is None:
            return self.problem or "no element differs"
        what = "differ" if self.exact else "beyond tolerance"
        index = ", ".join(str(i) for i in self.worst)
        return (f"{self.failed} of {self.size} element(s) {what}; worst at index [{index}]: got {_show(self.got)}, "
                f"reference {_show(self.want)}")


def _show(value: object) -> str:
    return f"{value:.7g}" if isinstance(value, float) else str(value)


def compare_output(want: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> OutputCheck:
    """Compare one output ``got`` with its reference ``want`` (see the module docstring for the rule)."""
    if not (rtol >= 0 and atol >= 0):  # a NaN tolerance would pass everything
        raise ValueError(f"tolerances must be non-negative numbers, got rtol={rtol}, atol={atol}")
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape:
        return OutputCheck(False, rtol, atol, problem=f"shape {list(got.shape)}, reference {list(want.shape)}",
                           size=want.size)
    exact = want.dtype.kind in "iub"
    if exact:
        w, g = want.astype(np.int64), got.astype(np.int64)
        error = np.abs(w.astype(np.float64) - g.astype(np.float64))
        bad = w != g
        scale = float(np.abs(w).max(initial=0))
        tolerance = 0.0
        max_abs = float(error.max(initial=0.0))
    else:
        w, g = want.astype(np.float64), got.astype(np.float64)
        finite = np.isfinite(w) & np.isfinite(g)
        same_special = (np.isnan(w) & np.isnan(g)) | (np.isinf(w) & (w == g))
        difference = np.zeros_like(w)
        np.subtract(w, g, out=difference, where=finite)  # inf - inf would warn
        difference = np.abs(difference)
        # A NaN/Inf disagreement is an infinite error, so it is the worst element.
        error = np.where(finite | same_special, difference, np.inf)
        scale = float(np.abs(w[np.isfinite(w)]).max(initial=0.0))
        tolerance = atol + rtol * scale
        bad = error > tolerance
        max_abs = float(difference.max(initial=0.0))
    failed = int(bad.sum())
    check = OutputCheck(failed == 0, rtol, atol, exact, want.dtype.name, max_abs, scale, tolerance, want.size, failed)
    if not failed:
        return check
    flat = int(np.argmax(np.where(bad, error, -1.0)))
    worst = tuple(int(i) for i in np.unravel_index(flat, want.shape))
    return OutputCheck(False, rtol, atol, exact, want.dtype.name, max_abs, scale, tolerance, want.size, failed, worst,
                       _item(got.flat[flat]), _item(want.flat[flat]))


def _item(value: np.generic) -> object:
    """A Python number for printing (bfloat16 and float16 as float)."""
    if isinstance(value, np.bool_ | np.integer):
        return value.item()
    return float(value)
