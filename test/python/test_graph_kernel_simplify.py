"""graph-kernel-simplify: the reference results before and after each rewrite, and its statistic.

Safe rewrites keep the results bit for bit (or equal under == where only the
sign of a zero may change, or within 1 ULP for pow(x, 2), as documented);
unsafe ones stay within their documented tolerance on positive inputs and do
not run with unsafe-math=false.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.pipelines.graph_kernel.simplify import GraphKernelSimplify, uniform_constant
from graphfuse.pipelines.registry import lookup_pass
from graphfuse.pipelines.runner import Pipeline

FLOATS = ("f32", "f16", "bf16")
INTS = ("i8", "i32", "i64")
#: machine epsilon (distance from 1 to the next value) of each float dtype
EPS = {"f32": 2.0**-23, "f16": 2.0**-10, "bf16": 2.0**-7}
SHAPE = (4, 8)

# --------------------------------------------------------------------------
# Helpers.


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random values of ``dtype`` with NaN, +-0, +-inf and integer extremes mixed in."""
    target = NUMPY_DTYPES[dtype]
    if dtype in FLOATS:
        values = rng.normal(0.0, 4.0, shape).astype(np.float32).astype(target)
        special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -1.0], dtype=target)
    else:
        info = np.iinfo(target)
        values = rng.integers(info.min, info.max, shape, dtype=target, endpoint=True)
        special = np.array([info.min, info.max, 0, -1, 1], dtype=target)
    flat = values.reshape(-1)
    picks = rng.random(flat.shape) < 0.3
    flat[picks] = rng.choice(special, int(picks.sum()))
    return values


def positive_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.uniform(0.1, 10.0, shape).astype(np.float32).astype(NUMPY_DTYPES[dtype])


def simplify(module: ir.Module, unsafe_math: bool = True) -> int:
    """Run the pass; the number of simplifications it counted."""
    text = "graph-kernel-simplify" + ("" if unsafe_math else "{unsafe-math=false}")
    runner = Pipeline(f"builtin.module({text})", module.context)
    runner.run(module)
    return runner.records[0].statistics["num-simplified"]


def as64(array: np.ndarray) -> np.ndarray:
    return np.asarray(array).astype(np.float64)


def assert_identical(want: np.ndarray, got: np.ndarray) -> None:
    """Bit for bit, except that a NaN's sign and payload are no value (x * -1 keeps a NaN's sign, neg flips it)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f" or want.dtype == NUMPY_DTYPES["bf16"]:
        nan = np.isnan(as64(want))
        assert np.array_equal(nan, np.isnan(as64(got))), (want, got)
        want, got = np.where(nan, 0, want).astype(want.dtype), np.where(nan, 0, got).astype(got.dtype)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes(), (want, got)


def assert_equal_values(want: np.ndarray, got: np.ndarray) -> None:
    """Equal under == with NaN in the same places: only the sign of a zero may differ."""
    assert got.dtype == want.dtype and got.shape == want.shape
    w, g = as64(want), as64(got)
    np.testing.assert_array_equal(g, w)
    differ = np.signbit(w) != np.signbit(g)
    assert np.all((w[differ] == 0) | np.isnan(w[differ]))


@dataclass(frozen=True)
class Case:
    """A graph with one kind of rewrite: built on SHAPE arguments, then checked before/after."""

    name: str
    build: Callable  # (builder, *args, dtype) -> None (it calls ret)
    args: int
    ops_after: list[str]
    count: int
    #: "identical", "equal" (sign of zero aside), "ulp1" (pow(x, 2)) or "unsafe:<tolerance name>"
    compare: str = "identical"
    dtypes: tuple[str, ...] = FLOATS + INTS
    unsafe: bool = False


def c(b, value, dtype, shape=()):
    return b.const(np.full(shape, value), dtype)


SAFE_CASES = [
    Case("mul_one", lambda b, x, t: b.ret(b.mul(x, c(b, 1, t)), b.mul(c(b, 1, t, (8,)), x)), 1, [], 2),
    Case("div_one", lambda b, x, t: b.ret(b.div(x, c(b, 1, t, (1, 8)))), 1, [], 1),
    Case(
        "add_minus_zero",
        lambda b, x, t: b.ret(b.add(x, c(b, -0.0, t)), b.add(c(b, -0.0, t), x)),
        1,
        [],
        2,
        dtypes=FLOATS,
    ),
    Case(
        "add_zero", lambda b, x, t: b.ret(b.add(x, c(b, 0, t)), b.add(c(b, 0, t, (8,)), x)), 1, [], 2, compare="equal"
    ),
    Case("sub_zero", lambda b, x, t: b.ret(b.sub(x, c(b, 0, t))), 1, [], 1),
    Case("sub_minus_zero", lambda b, x, t: b.ret(b.sub(x, c(b, -0.0, t))), 1, [], 1, compare="equal", dtypes=FLOATS),
    Case(
        "mul_minus_one",
        lambda b, x, t: b.ret(b.mul(x, c(b, -1, t)), b.mul(c(b, -1, t), x)),
        1,
        ["graph.neg", "graph.neg"],
        2,
    ),
    Case("minus_zero_sub", lambda b, x, t: b.ret(b.sub(c(b, -0.0, t, (8,)), x)), 1, ["graph.neg"], 1, dtypes=FLOATS),
    Case("zero_sub", lambda b, x, t: b.ret(b.sub(c(b, 0, t), x)), 1, ["graph.neg"], 1, compare="equal"),
    Case("sub_neg", lambda b, x, y, t: b.ret(b.sub(x, b.neg(y))), 2, ["graph.add"], 1),
    Case(
        "sub_neg_shared",
        lambda b, x, y, t: (lambda n: b.ret(b.sub(x, n), n))(b.neg(y)),
        2,
        ["graph.neg", "graph.add"],
        1,
    ),
    Case("pow_one", lambda b, x, t: b.ret(b.pow(x, c(b, 1, t))), 1, [], 1),
    Case("pow_two", lambda b, x, t: b.ret(b.pow(x, c(b, 2, t, (8,)))), 1, ["graph.mul"], 1, compare="ulp1"),
    Case(
        "div_power_of_two",
        lambda b, x, t: b.ret(b.div(x, b.const(np.array([2.0, 0.5, -4.0, 1.0, 8.0, 0.25, -1.0, 16.0]), t))),
        1,
        ["graph.mul"],
        1,
        dtypes=FLOATS,
    ),
    Case("div_minus_one", lambda b, x, t: b.ret(b.div(x, c(b, -1.0, t))), 1, ["graph.neg"], 2, dtypes=FLOATS),
    Case(
        "div_large_power_of_two",
        lambda b, x, t: b.ret(b.div(x, c(b, 2.0**-14 if t == "f16" else 2.0**100, t))),
        1,
        ["graph.mul"],
        1,
        dtypes=FLOATS,
    ),
    # an int8 weight cast to a bf16 model's dtype, then widened: one conversion of the int8 values
    Case("cast_int8_bf16_f32", lambda b, x, t: b.ret(b.cast(b.cast(x, "bf16"), "f32")), 1, ["graph.cast"], 1,
         dtypes=("i8",)),
    # out to f32 and back: x itself
    Case("cast_round_trip", lambda b, x, t: b.ret(b.cast(b.cast(x, "f32"), t)), 1, [], 1, dtypes=("f16", "bf16", "i8")),
]


def _ids(cases: list[Case]) -> list[tuple[Case, str]]:
    return [pytest.param(case, dtype, id=f"{case.name}-{dtype}") for case in cases for dtype in case.dtypes]


def build_case(case: Case, dtype: str) -> ir.Module:
    b = GraphBuilder("f")
    args = [b.arg(SHAPE, dtype) for _ in range(case.args)]
    case.build(b, *args, dtype)
    return b.module


def check_pow_two(want: np.ndarray, got: np.ndarray, x: np.ndarray, dtype: str) -> None:
    """x * x exactly; the reference's powf within 1 ULP of it (exact for integers)."""
    if dtype in INTS:
        assert_identical(want, got)
        return
    square = (as64(x) * as64(x)).astype(NUMPY_DTYPES[dtype])  # exact in float64, rounded once
    assert_identical(square, got)
    np.testing.assert_allclose(as64(want), as64(got), rtol=EPS[dtype], atol=0)


@pytest.mark.parametrize(("case", "dtype"), _ids(SAFE_CASES))
@pytest.mark.parametrize("unsafe_math", [True, False])
def test_safe_rewrites(case: Case, dtype: str, unsafe_math: bool) -> None:
    module = build_case(case, dtype)
    rng = np.random.default_rng(0)
    samples = [[random_array(rng, SHAPE, dtype) for _ in range(case.args)] for _ in range(3)]
    before = [graphfuse.run_function(module, sample) for sample in samples]
    assert simplify(module, unsafe_math) == case.count
    module.operation.verify()
    assert graph_op_names(module) == case.ops_after
    for sample, want in zip(samples, before, strict=True):
        got = graphfuse.run_function(module, sample)
        for w, g in zip(want, got, strict=True):
            if case.compare == "identical":
                assert_identical(w, g)
            elif case.compare == "equal":
                assert_equal_values(w, g)
            else:
                check_pow_two(w, g, sample[0], dtype)


def test_zero_sign_is_the_only_difference() -> None:
    """x + (+0.0) gives +0.0 for x = -0.0; the rewritten graph gives -0.0 (equal under ==)."""
    b = GraphBuilder("f")
    x = b.arg((2,))
    b.ret(b.add(x, b.const(np.float32(0.0))))
    module = b.module
    x_in = np.array([-0.0, 1.5], np.float32)
    (want,) = graphfuse.run_function(module, [x_in])
    assert simplify(module) == 1
    (got,) = graphfuse.run_function(module, [x_in])
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got[0]) and not np.signbit(want[0])


# --------------------------------------------------------------------------
# Unsafe rewrites.


def _tolerance(name: str, x: np.ndarray, want: np.ndarray, dtype: str) -> np.ndarray:
    """The documented bound on |after - before| for each unsafe rewrite (element by element)."""
    eps = EPS[dtype]
    x64, want64 = as64(x), as64(want)
    if name == "exp_log":
        return eps * (1 + np.abs(np.log(x64))) * x64
    if name == "log_exp":
        return eps * (1 + np.abs(x64))
    if name in ("reciprocal_reciprocal", "pow_half"):
        return eps * np.abs(want64)
    if name == "div_to_mul":
        return 2 * eps * np.abs(want64)
    raise AssertionError(name)


UNSAFE_CASES = [
    Case("exp_log", lambda b, x, t: b.ret(b.exp(b.log(x))), 1, [], 1, "unsafe:exp_log", FLOATS, True),
    Case("log_exp", lambda b, x, t: b.ret(b.log(b.exp(x))), 1, [], 1, "unsafe:log_exp", FLOATS, True),
    Case(
        "log_exp_shared",
        lambda b, x, t: (lambda e: b.ret(b.log(e), e))(b.exp(x)),
        1,
        ["graph.exp"],
        1,
        "unsafe:log_exp",
        FLOATS,
        True,
    ),
    Case(
        "reciprocal_reciprocal",
        lambda b, x, t: b.ret(b.reciprocal(b.reciprocal(x))),
        1,
        [],
        1,
        "unsafe:reciprocal_reciprocal",
        FLOATS,
        True,
    ),
    Case(
        "pow_half", lambda b, x, t: b.ret(b.pow(x, c(b, 0.5, t))), 1, ["graph.sqrt"], 1, "unsafe:pow_half", FLOATS, True
    ),
    Case(
        "div_to_mul",
        lambda b, x, t: b.ret(b.div(x, c(b, 3.0, t)), b.div(x, b.const(np.arange(1, 9) * 0.7, t))),
        1,
        ["graph.mul", "graph.mul"],
        2,
        "unsafe:div_to_mul",
        ("f32",),  # bf16 and f16 divisions stay divisions (test_division_reciprocal_bounds)
        True,
    ),
    Case("nested", lambda b, x, t: b.ret(b.exp(b.log(b.exp(b.log(x))))), 1, [], 2, "unsafe:exp_log:2", FLOATS, True),
]


@pytest.mark.parametrize(("case", "dtype"), _ids(UNSAFE_CASES))
def test_unsafe_rewrites_within_tolerance(case: Case, dtype: str) -> None:
    module = build_case(case, dtype)
    rng = np.random.default_rng(1)
    samples = [[positive_array(rng, SHAPE, dtype)] for _ in range(3)]
    before = [graphfuse.run_function(module, sample) for sample in samples]
    assert simplify(module) == case.count
    assert graph_op_names(module) == case.ops_after
    _, name, *rounds = case.compare.split(":")
    scale = int(rounds[0]) if rounds else 1  # a chain of n rewrites: n times the error
    for sample, want in zip(samples, before, strict=True):
        got = graphfuse.run_function(module, sample)
        for w, g in zip(want, got, strict=True):  # a shared inner op's result comes back exactly
            assert g.dtype == w.dtype and g.shape == w.shape
            error = np.abs(as64(g) - as64(w))
            bound = scale * _tolerance(name, sample[0], w, dtype)
            assert np.all(error <= bound), (error.max(), (error / bound).max())


@pytest.mark.parametrize(("case", "dtype"), _ids(UNSAFE_CASES))
def test_unsafe_rewrites_off_without_unsafe_math(case: Case, dtype: str) -> None:
    module = build_case(case, dtype)
    ops = graph_op_names(module)
    rng = np.random.default_rng(3)
    sample = [positive_array(rng, SHAPE, dtype)]
    before = graphfuse.run_function(module, sample)
    assert simplify(module, unsafe_math=False) == 0
    assert graph_op_names(module) == ops
    for w, g in zip(before, graphfuse.run_function(module, sample), strict=True):
        assert_identical(w, g)


def test_unsafe_rewrites_do_change_values() -> None:
    """What unsafe-math trades away: NaN from exp(log x < 0), inf from overflowing exp, pow(-0, 0.5) = +0."""
    b = GraphBuilder("f")
    x = b.arg((3,))
    # A full-size exponent: numpy.power gives the IEEE pow answer (a one-element one takes a sqrt fast path).
    b.ret(b.exp(b.log(x)), b.log(b.exp(x)), b.pow(x, b.const(np.full(3, 0.5, np.float32))))
    module = b.module
    x_in = np.array([-2.0, 100.0, -0.0], np.float32)
    before = graphfuse.run_function(module, [x_in])
    assert simplify(module) == 3
    after = graphfuse.run_function(module, [x_in])
    assert np.isnan(before[0][0]) and after[0][0] == -2.0
    assert np.isinf(before[1][1]) and after[1][1] == 100.0
    assert not np.signbit(before[2][2]) and np.signbit(after[2][2])


def test_division_reciprocal_bounds() -> None:
    """Reciprocals the dtype cannot hold exactly stay divisions without unsafe-math, and past its range always."""
    cases = [  # (dtype, divisor, rewritten with unsafe-math, rewritten without)
        ("f32", 3.0, True, False),
        ("f32", 2.0**127, True, True),  # 2^-127 is an exact f32 subnormal
        ("f32", 2.0**-149, False, False),  # 2^149 overflows
        ("f32", 3.0e38, False, False),  # subnormal, inexact reciprocal
        ("f16", 2.0**-24, False, False),  # 2^24 > 65504
        ("f16", 1.0e-3, False, False),  # a narrow reciprocal rounds to 11 bits: the division stays
        ("bf16", 30.0, False, False),  # as PyTorch: the quotient rounded once (Gemma 2's logit soft-capping)
        ("bf16", 2.0**-100, True, True),
        ("f32", 0.0, False, False),
        ("f32", np.inf, False, False),
    ]
    for dtype, divisor, unsafe, safe in cases:
        for unsafe_math, expected in ((True, unsafe), (False, safe)):
            b = GraphBuilder("f")
            x = b.arg((4,), dtype)
            b.ret(b.div(x, b.const(np.array(divisor), dtype)))
            module = b.module
            rng = np.random.default_rng(2)
            sample = [rng.normal(0, 4, (4,)).astype(NUMPY_DTYPES[dtype])]
            (want,) = graphfuse.run_function(module, sample)
            assert simplify(module, unsafe_math) == int(expected), (dtype, divisor, unsafe_math)
            assert graph_op_names(module) == (["graph.mul"] if expected else ["graph.div"])
            if expected and not unsafe_math:
                assert_identical(want, graphfuse.run_function(module, sample)[0])


# --------------------------------------------------------------------------
# Counting, options, negatives, composition.


def test_every_rewrite_counted_in_one_graph() -> None:
    b = GraphBuilder("f")
    x, y = b.arg((4, 8)), b.arg((8,))
    one, zero, two = b.const(np.float32(1.0)), b.const(np.float32(0.0)), b.const(np.float32(2.0))
    out = b.mul(x, one)  # 1
    out = b.add(zero, out)  # 2
    out = b.sub(out, b.neg(y))  # 3
    out = b.mul(out, b.const(np.float32(-1.0)))  # 4
    out = b.div(out, b.const(np.float32(4.0)))  # 5
    out = b.pow(out, two)  # 6
    out = b.sub(zero, out)  # 7
    out = b.exp(b.log(out))  # 8 (unsafe)
    out = b.div(out, b.const(np.float32(10.0)))  # 9 (unsafe)
    b.ret(out)
    safe = b.module
    unsafe = graphfuse.parse_module(str(safe))
    assert simplify(safe, unsafe_math=False) == 7
    assert simplify(unsafe) == 9
    assert graph_op_names(unsafe) == ["graph.add", "graph.neg", "graph.mul", "graph.mul", "graph.neg", "graph.mul"]
    assert simplify(unsafe) == 0  # nothing left


def test_negative_cases_untouched() -> None:
    b = GraphBuilder("f")
    x, y = b.arg((8,)), b.arg((8,))
    outs = [
        b.mul(x, b.const(np.float32(0.0))),  # x * 0
        b.add(x, b.const(np.zeros((4, 8), np.float32))),  # broadcasts x
        b.mul(x, y),  # no constant
        b.mul(x, b.const(np.array([1.0, 2.0] * 4, np.float32))),  # several values
        b.pow(x, b.const(np.float32(3.0))),
        b.div(b.const(np.float32(1.0)), x),
        b.sub(b.neg(x), y),
        b.mul(b.sqrt(x), b.sqrt(x)),
        b.rsqrt(x),
    ]
    b.ret(*outs)
    module = b.module
    ops = graph_op_names(module)
    assert simplify(module) == 0
    assert graph_op_names(module) == ops  # the driver may still move constants to the top


def test_composes_with_graph_canonicalize() -> None:
    """neg(x) * -1 becomes neg(neg(x)) here; graph-canonicalize removes the double negation."""
    b = GraphBuilder("f")
    x = b.arg((4,))
    b.ret(b.mul(b.neg(x), b.const(np.float32(-1.0))))
    module = b.module
    graphfuse.run_pipeline(module, "builtin.module(graph-kernel-simplify, graph-canonicalize)")
    assert graph_op_names(module) == []


def test_uniform_constant_reading() -> None:
    b = GraphBuilder("f")
    values = [
        (np.float32(-0.0), -0.0),
        (np.array([2.0, 2.0], np.float16), 2.0),
        (np.array([[-1]], np.int8), -1.0),
        (np.array([1.0, 2.0], np.float32), None),
        (np.array([np.nan, np.nan], np.float32), None),
        (np.array([True, True]), None),
    ]
    consts = [b.const(v) for v, _ in values]
    b.ret(*consts)
    for const, (_, expected) in zip(consts, values, strict=True):
        found = uniform_constant(const.value)
        assert found == expected
        if expected == 0:
            assert np.signbit(found)


def test_pass_registration_and_options() -> None:
    assert lookup_pass("graph-kernel-simplify") is GraphKernelSimplify
    assert lookup_pass("graph_kernel_simplify") is GraphKernelSimplify
    assert GraphKernelSimplify().unsafe_math is True
    assert GraphKernelSimplify.from_options([("unsafe-math", "false")]).unsafe_math is False
    assert GraphKernelSimplify(unsafe_math=False).to_text() == "graph-kernel-simplify{unsafe-math=false}"
    assert GraphKernelSimplify().to_text(all_options=True) == "graph-kernel-simplify{unsafe-math=true}"
    assert "num-simplified" in GraphKernelSimplify.statistics
