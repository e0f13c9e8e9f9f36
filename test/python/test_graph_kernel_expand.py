"""graph-kernel-expand: every expander against its composite's reference, the expand-set rules, the composite ops.

Each expander test builds a function around one composite op, runs the
reference interpreter on random inputs (fixed seed, NaN/inf/-0.0 mixed in for
elementwise ops) before and after expanding it, and checks the result within
the tolerance the expander documents: bit-exact for most, a few ulp for the
approximations (tanh, erf, gelu).  It also checks that only basic ops are left
and that every new op carries the composite's location.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from graphfuse import GraphBuilder, parse_module, run_function
from graphfuse.dialect.catalog import VerifyError, all_ops, lookup_op
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.expansions import EXPANDERS
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.ops.derived import DERIVED_OPS
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig
from graphfuse.pipelines.graph_kernel.expand import DEFAULT_EXPAND_OPS, expand_set
from graphfuse.pipelines.graph_kernel.op_names import MINDSPORE_OPS
from graphfuse.pipelines.runner import Pipeline, PipelineError

FLOATS = ["f32", "f16", "bf16"]
#: What an expansion may contain besides constants.
BASIC_OPS = {
    f"graph.{name}"
    for name in (
        "abs", "add", "broadcast_to", "cast", "div", "equal", "exp", "greater_equal", "less", "log", "maximum", "mul",
        "neg", "reduce_max", "reduce_sum", "reshape", "select", "sqrt", "sub",
    )
}
ALL_OPS = {spec.full_name for spec in all_ops()}
_ORDERED_INT = {"f32": np.int32, "f16": np.int16, "bf16": np.int16}

# --------------------------------------------------------------------------
# Helpers.


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, specials: bool) -> np.ndarray:
    """Normal values (scale 3) of ``dtype``; with ``specials``, 5% NaN, +-inf, +-0.0 and huge values."""
    if dtype == "i1":
        return rng.random(shape) < 0.5
    target = NUMPY_DTYPES[dtype]
    if dtype in ("i8", "i32"):
        info = np.iinfo(target)
        return rng.integers(info.min, info.max, shape, dtype=target, endpoint=True)
    values = rng.normal(0.0, 3.0, shape).astype(np.float32)
    if specials:
        flat = values.reshape(-1)
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e4, -1e4, 30.0, -30.0], dtype=np.float32)
        picks = rng.random(flat.shape) < 0.05
        flat[picks] = rng.choice(special, int(picks.sum()))
    return values.astype(target)


def ulp_distance(a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """Number of representable values between a and b (0 when equal; both NaN count as equal)."""
    ints = _ORDERED_INT[dtype]
    bits = np.array([np.ascontiguousarray(v, dtype=NUMPY_DTYPES[dtype]).view(ints).astype(np.int64) for v in (a, b)])
    # Sign-magnitude -> a monotonic integer line (-0.0 and +0.0 meet at 0).
    magnitude = bits & np.int64(np.iinfo(ints).max)
    ordered = np.where(bits < 0, -magnitude, magnitude)
    distance = np.abs(ordered[0] - ordered[1])
    both_nan = np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32))
    return np.where(both_nan, 0, distance)


def assert_within(want: np.ndarray, got: np.ndarray, dtype: str, tolerance: str) -> None:
    """The documented tolerance of an expander: exact, N ulp, or gelu's relative + absolute bound."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if tolerance == "exact" or dtype not in FLOATS:
        if dtype in FLOATS:  # numpy's NaN == NaN rule needs a numpy float type (not ml_dtypes' bfloat16)
            want, got = want.astype(np.float32), got.astype(np.float32)
            assert np.array_equal(np.signbit(got[got == 0]), np.signbit(want[want == 0])), "signs of zeros differ"
        np.testing.assert_array_equal(got, want)
        return
    w, g = want.astype(np.float64), got.astype(np.float64)
    assert np.array_equal(np.isnan(w), np.isnan(g)), "NaN positions differ"
    assert np.array_equal(w[np.isinf(w)], g[np.isinf(w)]), "infinities differ"
    distance = ulp_distance(want, got, dtype)
    if tolerance == "ulp":
        allowed = 3 if dtype == "f32" else 1
        assert distance.max() <= allowed, (distance.max(), want[distance.argmax()], got[distance.argmax()])
    elif tolerance == "gelu":
        finite = np.isfinite(w)
        error = np.abs(g[finite] - w[finite])
        if dtype == "f32":
            bound = 3e-6 * np.abs(w[finite]) + 1e-11
            assert np.all(error <= bound), (error / np.maximum(bound, 1e-300)).max()
        else:
            assert np.all((distance[finite] <= 1) | (error <= 1e-11))
    else:
        raise AssertionError(tolerance)


def build(name: str, operands: list[tuple[tuple[int | None, ...], str]], attrs: dict[str, Any]) -> ir.Module:
    b = GraphBuilder("f")
    args = [b.arg(shape, dtype) for shape, dtype in operands]
    b.ret(b.op(name, *args, **attrs))
    return b.module


def expand(module: ir.Module, options: str = "") -> dict[str, int]:
    runner = Pipeline(f"builtin.module(graph-kernel-expand{{{options}}})" if options else
                      "builtin.module(graph-kernel-expand)", module.context)
    runner.run(module)
    return runner.records[0].statistics


def function_ops(module: ir.Module) -> list[ir.Operation]:
    func = module.body.operations[0]
    return [op.operation for op in func.regions[0].blocks[0].operations if op.operation.name != "func.return"]


def check_expander(
    name: str,
    operands: list[tuple[tuple[int, ...], str]],
    attrs: dict[str, Any],
    tolerance: str,
    specials: bool,
    seeds: int = 2,
) -> ir.Module:
    module = build(name, operands, attrs)
    (composite,) = function_ops(module)
    location = str(composite.location)
    rng = np.random.default_rng(0)
    samples = [[random_array(rng, shape, dtype, specials) for shape, dtype in operands] for _ in range(seeds)]
    before = [run_function(module, sample) for sample in samples]
    stats = expand(module, f"only-ops={name}")
    assert module.operation.verify()
    ops = function_ops(module)
    assert stats == {"num-expanded": 1}
    # ops defined by their expansion may use other composites (sigmoid, tanh, reduce_mean, log_softmax...)
    allowed = BASIC_OPS if name not in DERIVED_OPS else ALL_OPS - {f"graph.{name}"}
    assert {op.name for op in ops if op.name != "arith.constant"} <= allowed, graph_op_names(module)
    assert all(str(op.location) == location for op in ops), "every new op keeps the composite's location"
    for sample, want in zip(samples, before, strict=True):
        (got,) = run_function(module, sample)
        assert_within(want[0], got, operands[0][1], tolerance)
    return module


# (op, operand shapes, attrs, tolerance, element types, mix special values in)
ELEMENTWISE = [
    ("square", [(4, 8)], {}, "exact", [*FLOATS, "i32", "i8"]),
    ("relu", [(4, 8)], {}, "exact", [*FLOATS, "i32", "i8"]),
    ("add_n", [(4, 8), (4, 8)], {}, "exact", [*FLOATS, "i32"]),
    ("add_n", [(3, 5)] * 4, {}, "exact", [*FLOATS, "i8"]),
    ("squared_difference", [(4, 8), (8,)], {}, "exact", [*FLOATS, "i32"]),
    ("squared_difference", [(2, 1, 8), (3, 1)], {}, "exact", FLOATS),
    ("sigmoid", [(4096,)], {}, "exact", FLOATS),
    ("silu", [(4096,)], {}, "exact", FLOATS),
    ("fast_gelu", [(4096,)], {}, "exact", FLOATS),
    ("gelu", [(4096,)], {"approximate": "tanh"}, "gelu", FLOATS),
    ("gelu", [(4096,)], {"approximate": "none"}, "gelu", FLOATS),
    ("tanh", [(4096,)], {}, "ulp", FLOATS),
    ("erf", [(4096,)], {}, "ulp", FLOATS),
    ("bias_add", [(2, 3, 4, 4), (3,)], {"axis": 1}, "exact", FLOATS),
    ("bias_add", [(4, 8), (8,)], {}, "exact", FLOATS),
    ("bias_add", [(5,), (5,)], {"axis": 0}, "exact", FLOATS),
    ("tile", [(2, 3)], {"multiples": [2, 3]}, "exact", ["f32", "i1", "f16"]),
    ("tile", [(2, 1, 3)], {"multiples": [2, 5, 1]}, "exact", ["f32", "i32"]),
    ("tile", [(1, 4)], {"multiples": [3, 1]}, "exact", ["f32"]),
    ("tile", [(2, 3)], {"multiples": [0, 2]}, "exact", ["f32"]),
    ("tile", [(3,)], {"multiples": [1]}, "exact", ["f32"]),
    # ops defined by their expansion (dialect/ops/derived.py): exact by construction, specials included
    # (the multi-result ones: test_derived_ops.py)
    *((name, [v.shape for v in lookup_op(f"graph.{name}").example[0]], {}, "exact", FLOATS) for name in DERIVED_OPS
      if len(lookup_op(f"graph.{name}").results) == 1),
]
REDUCING = [
    ("reduce_mean", [(4, 8, 16)], {"axes": [-1], "keep_dims": True}, "exact"),
    ("reduce_mean", [(4, 8, 16)], {"axes": [0, 2], "keep_dims": False}, "exact"),
    ("reduce_mean", [(4, 8)], {"axes": [], "keep_dims": False}, "exact"),
    ("softmax", [(4, 16)], {"axis": -1}, "exact"),
    ("softmax", [(3, 5, 7)], {"axis": 1}, "exact"),
    ("safe_softmax", [(4, 16)], {"axis": -1}, "exact"),
    ("safe_softmax", [(3, 5, 7)], {"axis": 0}, "exact"),
    ("log_softmax", [(4, 16)], {"axis": -1}, "exact"),
    ("log_softmax", [(3, 5, 7)], {"axis": 0}, "exact"),
    ("layer_norm", [(2, 4, 8), (4, 8), (4, 8)], {"begin_norm_axis": 1, "epsilon": 1e-5}, "exact"),
    ("layer_norm", [(3, 16), (16,), (16,)], {"begin_norm_axis": -1, "epsilon": 0.0}, "exact"),
    ("rms_norm", [(3, 16), (16,)], {"epsilon": 1e-6}, "exact"),
    ("rms_norm", [(2, 3, 32), (32,)], {"epsilon": 0.0}, "exact"),
    ("batch_norm", [(2, 3, 4, 4)] + [(3,)] * 4, {"epsilon": 1e-3}, "exact"),
    ("batch_norm", [(4, 3)] + [(3,)] * 4, {"epsilon": 1e-5}, "exact"),
    ("group_norm", [(2, 6, 5), (6,), (6,)], {"num_groups": 3, "epsilon": 1e-5}, "exact"),
    ("group_norm", [(3, 4, 2, 3), (4,), (4,)], {"num_groups": 4, "epsilon": 0.0}, "exact"),
]


def _cases() -> list[Any]:
    out = []
    for name, shapes, attrs, tolerance, dtypes in ELEMENTWISE:
        for dtype in dtypes:
            label = f"{name}-{'x'.join(map(str, shapes[0]))}-{attrs.get('approximate', '')}-{dtype}"
            out.append(pytest.param(name, [(s, dtype) for s in shapes], attrs, tolerance, True, id=label))
    for name, shapes, attrs, tolerance in REDUCING:
        for dtype in FLOATS:
            label = f"{name}-{'x'.join(map(str, shapes[0]))}-{attrs}-{dtype}"
            out.append(pytest.param(name, [(s, dtype) for s in shapes], attrs, tolerance, False, id=label))
    return out


# --------------------------------------------------------------------------
# Every expander.


@pytest.mark.parametrize(("name", "operands", "attrs", "tolerance", "specials"), _cases())
def test_expander_matches_composite(
    name: str, operands: list[tuple[tuple[int, ...], str]], attrs: dict[str, Any], tolerance: str, specials: bool
) -> None:
    check_expander(name, operands, attrs, tolerance, specials)


def test_every_expander_is_tested() -> None:
    tested = {case[0] for case in ELEMENTWISE} | {case[0] for case in REDUCING} | set(DERIVED_OPS)
    assert tested == set(EXPANDERS)
    for expander in EXPANDERS.values():
        assert expander.__doc__, f"{expander.__name__} documents its formula and tolerance"


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # layer_norm's reference on inf rows
@pytest.mark.parametrize("name", ["softmax", "safe_softmax", "log_softmax", "layer_norm", "rms_norm"])
def test_norms_with_special_rows(name: str) -> None:
    """A row with NaN, one with +-inf, one of equal values, one of all -inf (safe_softmax's 0): the expansions
    propagate them as the references do."""
    shapes = {"softmax": [(4, 8)], "safe_softmax": [(4, 8)], "log_softmax": [(4, 8)],
              "layer_norm": [(4, 8), (8,), (8,)],
              "rms_norm": [(4, 8), (8,)]}[name]
    attrs = {"layer_norm": {"epsilon": 0.0}, "rms_norm": {"epsilon": 0.0}}.get(name, {})
    module = build(name, [(s, "f32") for s in shapes], attrs)
    rng = np.random.default_rng(1)
    inputs = [random_array(rng, s, "f32", False) for s in shapes]
    inputs[0][0, 3] = np.nan
    inputs[0][1, 2], inputs[0][1, 5] = np.inf, -np.inf
    inputs[0][2] = 0.0
    inputs[0][3] = -np.inf
    want = run_function(module, inputs)
    expand(module, f"only-ops={name}")
    assert_within(want[0], run_function(module, inputs)[0], "f32", "exact")


def test_low_precision_expansions_compute_in_f32() -> None:
    """f16 composites computed in f32 by their references expand between casts; exact ones stay in f16."""
    module = build("softmax", [((4, 8), "f16")], {})
    expand(module, "only-ops=Softmax")
    names = graph_op_names(module)
    assert names[0] == "graph.cast" and names[-1] == "graph.cast"
    module = build("square", [((4, 8), "f16")], {})
    expand(module)
    assert graph_op_names(module) == ["graph.mul"]


def test_f16_mean_does_not_overflow() -> None:
    """The f16 sum of 2000 values of 100 overflows; the expansion sums in f32 as the reference does."""
    module = build("reduce_mean", [((2, 2000), "f16")], {"axes": [1]})
    x = np.full((2, 2000), 100.0, np.float16)
    expand(module, "backend=npu")
    (got,) = run_function(module, [x])
    np.testing.assert_array_equal(got, np.array([100.0, 100.0], np.float16))


def test_gelu_tails_are_accurate() -> None:
    """Far in the negative tail the sigmoid/erfc forms keep the relative accuracy the 1 + tanh / 1 + erf forms lose."""
    x = np.array([-6.0, -8.0, -10.0], np.float32)
    for approximate in ("tanh", "none"):
        module = build("gelu", [((3,), "f32")], {"approximate": approximate})
        expand(module)
        (got,) = run_function(module, [x])
        x64 = x.astype(np.float64)
        if approximate == "tanh":
            true = x64 / (1.0 + np.exp(-2.0 * np.sqrt(2.0 / np.pi) * (x64 + 0.044715 * x64**3)))
        else:
            import math

            true = 0.5 * x64 * np.array([math.erfc(-v / math.sqrt(2.0)) for v in x64])
        np.testing.assert_allclose(got, true, rtol=2e-5)


# --------------------------------------------------------------------------
# What is expanded and what is not.


#: Seed Appendix 1: operator name, expanded by default on Ascend, on CPU (the GPU column is not a backend here).
APPENDIX_1 = """Adam YY AdamApplyOneWithDecayAssign YN Addcmul YN AddN YY BiasAdd YY BiasAddGrad YY FillV2 YN GeLU YY
Gelu YY FastGelu YN FastGeluGrad YN FastGeLU YN FastGeLUGrad YN SiLU YN SiLUGrad YN GeLUGrad YY RsqrtGrad YN
SqrtGrad YY Square YY Tile YY ClipByNormNoDivSum YN FusedMulAdd YN Sigmoid YN SigmoidGrad YN
SigmoidCrossEntropyWithLogits YN SigmoidCrossEntropyWithLogitsGrad YN SquaredDifference YN TanhGrad YY OnesLike YY
ZerosLike YN ReduceMean YN LogSoftmaxGrad NN ReLU YY ReluGrad YN AssignAdd YY LambApplyOptimizerAssign YN
LambApplyWeightAssign YN AdamApplyOneWithDecay YN ExpandDims NY Squeeze NN SoftmaxGradExt NN ApplyMomentum NN
LeakyReLUExt YN EluExt YN SoftplusExt YN SoftplusGradExt YN RepeatInterleaveInt YN HShrink YN HSigmoid YN HSwish YN
BinaryCrossEntropy YN Erf YN Tanh YN Cosh YN Sinh YN ClampScalar YN DivMod YN BCEWithLogitsLoss YN AcoshExt YN
AsinhExt YN MeanExt YN Erfc NN AdamWeightDecay NN BatchMatMul NN Dropout NN DropoutGrad NN MaximumGrad NY
MinimumGrad NY LayerNorm NN LayerNormGrad NN LogSoftmax NN MatMul NN ArgMaxWithValue NN ArgMinWithValue NN Slice NN
Softmax NN SoftmaxCrossEntropyWithLogits NN EqualCount NN SquareSumAll NN IdentityMath NN StandardNormal NN
Softplus NY SoftplusGrad NY""".split()


def test_default_sets_follow_appendix_1() -> None:
    """Each backend's defaults are its column's Y rows that name a graph op with an expander."""
    rows = list(zip(APPENDIX_1[::2], APPENDIX_1[1::2], strict=True))
    assert len(rows) == 83
    for backend, column in (("npu", 0), ("cpu", 1)):
        marked = {MINDSPORE_OPS[name] for name, flags in rows if flags[column] == "Y" and name in MINDSPORE_OPS}
        assert DEFAULT_EXPAND_OPS[backend] == marked & EXPANDERS.keys(), backend
    for ops in DEFAULT_EXPAND_OPS.values():
        assert ops <= EXPANDERS.keys()
        assert not ops & {"softmax", "log_softmax", "layer_norm", "rms_norm", "batch_norm"}


def test_expand_set_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert expand_set("cpu") == DEFAULT_EXPAND_OPS["cpu"]
    assert expand_set("npu") == DEFAULT_EXPAND_OPS["npu"]
    assert expand_set("cpu", enable=("Softmax", "layer_norm")) == DEFAULT_EXPAND_OPS["cpu"] | {"softmax", "layer_norm"}
    assert expand_set("cpu", disable=("GeLU", "Square")) == DEFAULT_EXPAND_OPS["cpu"] - {"gelu", "square"}
    assert expand_set("npu", disable=("Gelu",)) == DEFAULT_EXPAND_OPS["npu"] - {"gelu"}
    # disable wins over enable; MindSpore names are case-insensitive
    assert expand_set("cpu", enable=("softmax",), disable=("SOFTMAX",)) == DEFAULT_EXPAND_OPS["cpu"]
    # only replaces the list and the other two are ignored
    assert expand_set("npu", enable=("Softmax",), disable=("Square",), only=("Square", "rms_norm")) == {
        "square", "rms_norm"}
    assert capsys.readouterr().err == ""


def test_unknown_and_unexpandable_names_warn(capsys: pytest.CaptureFixture[str]) -> None:
    assert expand_set("cpu", enable=("Sofmax",)) == DEFAULT_EXPAND_OPS["cpu"]
    err = capsys.readouterr().err
    assert "[WARNING] enable_expand_ops: unknown operator 'Sofmax' is ignored" in err
    assert expand_set("cpu", only=("MatMul", "ReLU")) == {"relu"}
    err = capsys.readouterr().err
    assert "[WARNING] enable_expand_ops_only: matmul cannot be expanded (no expander) and is ignored" in err
    assert expand_set("cpu", disable=("Nope",)) == DEFAULT_EXPAND_OPS["cpu"]
    assert "disable_expand_ops: unknown operator 'Nope'" in capsys.readouterr().err


def test_unknown_backend() -> None:
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        expand_set("gpu")
    with pytest.raises(PipelineError, match="expects one of cpu, npu, got 'gpu'"):
        expand(build("square", [((4,), "f32")], {}), "backend=gpu")


def test_pass_options_select_ops() -> None:
    def expanded(options: str) -> set[str]:
        b = GraphBuilder("f")
        x = b.arg((4, 8))
        b.ret(b.square(x), b.sigmoid(x), b.softmax(x), b.gelu(x))
        module = b.module
        expand(module, options)
        return {"square", "sigmoid", "softmax", "gelu"} - {n.removeprefix("graph.") for n in graph_op_names(module)}

    assert expanded("") == {"square", "gelu"}
    assert expanded("backend=npu") == {"square", "gelu", "sigmoid"}
    assert expanded("enable-ops=Softmax disable-ops=GeLU") == {"square", "softmax"}
    assert expanded("only-ops=Sigmoid enable-ops=Softmax disable-ops=Sigmoid") == {"sigmoid"}


def test_nothing_to_expand_leaves_ir_untouched() -> None:
    text = """
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "graph.softmax"(%x) {axis = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
      %c = arith.constant dense<1.0> : tensor<4xf32>
      %1 = "graph.add"(%0, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %1 : tensor<4xf32>
    }
    """
    module = parse_module(text)
    before = str(module)
    assert expand(module) == {"num-expanded": 0}
    assert str(module) == before


def test_expansion_is_counted_and_idempotent() -> None:
    b = GraphBuilder("f")
    x = b.arg((4, 8))
    b.ret(b.relu(b.square(x)), b.add_n(x, x, x))
    module = b.module
    assert expand(module) == {"num-expanded": 3}
    text = str(module)
    assert expand(module) == {"num-expanded": 0}
    assert str(module) == text


# --------------------------------------------------------------------------
# Shapes an expansion cannot express are left alone.


def _left_alone(module: ir.Module, options: str, op: str) -> None:
    assert expand(module, options) == {"num-expanded": 0}
    assert f"graph.{op}" in graph_op_names(module)


def test_dynamic_tile_is_left_alone() -> None:
    _left_alone(build("tile", [((None, 3), "f32")], {"multiples": [2, 1]}), "", "tile")
    # all multiples 1: the operand itself, whatever its shape
    module = build("tile", [((None, 3), "f32")], {"multiples": [1, 1]})
    assert expand(module) == {"num-expanded": 1}
    assert graph_op_names(module) == []


def test_dynamic_reduced_dims_are_left_alone() -> None:
    _left_alone(build("reduce_mean", [((4, None), "f32")], {"axes": [1]}), "backend=npu", "reduce_mean")
    _left_alone(build("layer_norm", [((2, None), "f32"), ((None,), "f32"), ((None,), "f32")], {}),
                "enable-ops=LayerNorm", "layer_norm")
    _left_alone(build("rms_norm", [((2, None), "f32"), ((None,), "f32")], {}), "enable-ops=RmsNorm", "rms_norm")


def test_dynamic_dims_elsewhere_expand() -> None:
    """Dynamic dims outside the reduced axes are fine; the expansion runs on any size."""
    for name, operands, attrs, options in [
        ("reduce_mean", [((None, 8), "f32")], {"axes": [1], "keep_dims": True}, "backend=npu"),
        ("softmax", [((None, 8), "f32")], {"axis": 0}, "enable-ops=Softmax"),
        ("bias_add", [((2, None, 4), "f32"), ((None,), "f32")], {"axis": 1}, ""),
        ("batch_norm", [((None, 3, 5), "f32")] + [((3,), "f32")] * 4, {}, "enable-ops=BatchNorm"),
    ]:
        module = build(name, operands, attrs)
        rng = np.random.default_rng(2)
        inputs = [random_array(rng, tuple(3 if d is None else d for d in s), dtype, False) for s, dtype in operands]
        want = run_function(module, inputs)
        assert expand(module, options) == {"num-expanded": 1}, name
        assert_within(want[0], run_function(module, inputs)[0], "f32", "exact")


def test_result_type_mismatch_is_left_alone() -> None:
    """bias_add(x: 2x?, bias: 5) has result 2x?; x + bias would be typed 2x5, so it stays."""
    _left_alone(build("bias_add", [((2, None), "f32"), ((5,), "f32")], {}), "", "bias_add")


def test_softmax_over_empty_axis_is_left_alone() -> None:
    _left_alone(build("softmax", [((4, 0), "f32")], {"axis": 1}), "enable-ops=Softmax", "softmax")


def test_debug_log_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    from graphfuse.pipelines import log

    module = build("tile", [((None, 3), "f32")], {"multiples": [2, 1]})
    log.configure("debug")
    try:
        expand(module)
    finally:
        log.configure()
    assert "graph-kernel-expand: graph.tile at" in capsys.readouterr().err


# --------------------------------------------------------------------------
# The composite ops' own semantics, against independent numpy.


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i8", "i32"])
def test_add_n_reference(dtype: str) -> None:
    rng = np.random.default_rng(3)
    xs = [random_array(rng, (3, 4), dtype, False) for _ in range(4)]
    want = xs[0]
    with np.errstate(over="ignore"):
        for x in xs[1:]:
            want = want + x  # numpy arithmetic in the element type: one rounding (or wrap) per add
    (got,) = evaluate_op("add_n", xs)
    assert got.dtype == NUMPY_DTYPES[dtype]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32"])
def test_squared_difference_reference(dtype: str) -> None:
    rng = np.random.default_rng(4)
    a = random_array(rng, (2, 1, 5), dtype, dtype in FLOATS)
    b = random_array(rng, (3, 1), dtype, dtype in FLOATS)
    with np.errstate(all="ignore"):
        d = np.subtract(a, b)
        want = d * d
    (got,) = evaluate_op("squared_difference", [a, b])
    assert got.shape == (2, 3, 5)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("shape", "multiples"), [((2, 3), [2, 3]), ((4,), [3]), ((2, 1, 3), [1, 4, 2]), ((2,), [0])])
def test_tile_reference(shape: tuple[int, ...], multiples: list[int]) -> None:
    x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    (got,) = evaluate_op("tile", [x], {"multiples": multiples})
    np.testing.assert_array_equal(got, np.tile(x, multiples))
    (got_bf16,) = evaluate_op("tile", [x.astype(ml_dtypes.bfloat16)], {"multiples": multiples})
    assert got_bf16.dtype == ml_dtypes.bfloat16


def test_composite_ops_verify() -> None:
    f32 = np.zeros((2, 3), np.float32)
    with pytest.raises(VerifyError, match=r"operand #2 tensor<3x2xf32> must have the type of operand #0"):
        evaluate_op("add_n", [f32, f32, f32.reshape(3, 2)])
    with pytest.raises(VerifyError, match="must have a numeric element type"):
        evaluate_op("add_n", [f32 > 0, f32 > 0])
    with pytest.raises(VerifyError, match=r"attribute 'multiples' \[2\] must have one value per dimension"):
        evaluate_op("tile", [f32], {"multiples": [2]})
    with pytest.raises(VerifyError, match="non-negative"):
        evaluate_op("tile", [f32], {"multiples": [1, -1]})
    with pytest.raises(VerifyError, match="requires attribute 'multiples'"):
        evaluate_op("tile", [f32], {})
    with pytest.raises(VerifyError, match="must have the same element type"):
        evaluate_op("squared_difference", [f32, f32.astype(np.float16)])
    with pytest.raises(VerifyError, match="not broadcast-compatible"):
        evaluate_op("squared_difference", [f32, np.zeros((4,), np.float32)])


def test_tile_infers_dynamic_dims() -> None:
    spec = lookup_op("graph.tile")
    assert spec is not None
    (result,) = spec.infer([TensorSig((None, 3), "f32")], {"multiples": [2, 0]}, None)
    assert result == TensorSig((None, 0), "f32")


def test_every_appendix_1_name_is_known(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's 83 expander names, given to enable_expand_ops: none is an unknown operator (MatMul and
    BatchMatMul name graph.matmul, which has no expander: that warning is a different one)."""
    names = tuple(APPENDIX_1[::2])
    assert len(names) == 83
    expand_set("cpu", enable=names)
    assert "unknown operator" not in capsys.readouterr().err
