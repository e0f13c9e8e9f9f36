"""graph-decompose: every decomposition gives only simpler graph ops and the op's reference results, bit for bit.

Each case builds one op, runs the reference interpreter on it, decomposes it
and runs the interpreter again on the decomposed graph: every result must be
identical (NaN positions and signs of zeros included).  The end-to-end tests
lower the same graphs with graph-to-linalg{strict} and run them compiled; they
are skipped while a piece of the decomposition (reduction, matmul, shape op)
has no lowering registered yet.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.catalog import lookup_op
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.ops.derived import DERIVED_OPS
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig
from graphfuse.lowering import common
from graphfuse.lowering.decompose import _NESTED_REFUSALS, DECOMPOSED_OPS
from graphfuse.lowering.graph_to_linalg import LOWERED_OPS
from graphfuse.pipelines.runner import Pipeline

FLOATS = ("f32", "f16", "bf16")

#: What a decomposed graph may contain besides constants.
ALLOWED = {
    f"graph.{name}"
    for name in (
        "abs add broadcast_to cast div equal exp gelu log matmul maximum mul reduce_max reduce_sum relu reshape "
        "round select silu split sqrt sub"
    ).split()
}

# --------------------------------------------------------------------------
# Cases: (op, operands, attrs, element types).  An operand is (shape, kind): kind "x" has the case's element
# type; "f32" is an f32 operand of normal values; "scale" a positive f32 quantization scale (large enough to
# saturate int8 now and then); "offset" an f32 quantization offset.

Operand = tuple[tuple[int | None, ...], str]

CASES: list[tuple[str, list[Operand], dict[str, Any], tuple[str, ...]]] = [
    ("add_n", [((4, 8), "x")] * 3, {}, (*FLOATS, "i32")),
    ("add_n", [((5,), "x")] * 2, {}, ("f32", "i8")),
    ("squared_difference", [((4, 8), "x"), ((8,), "x")], {}, (*FLOATS, "i32")),
    ("tile", [((2, 3), "x")], {"multiples": [2, 3]}, (*FLOATS, "i32")),
    ("tile", [((2, 1, 3), "x")], {"multiples": [2, 5, 1]}, ("f32",)),
    ("bias_add", [((2, 3, 4, 4), "x"), ((3,), "x")], {"axis": 1}, FLOATS),
    ("bias_add", [((4, 8), "x"), ((8,), "x")], {}, FLOATS),
    ("softmax", [((4, 16), "x")], {"axis": -1}, FLOATS),
    ("softmax", [((3, 5, 7), "x")], {"axis": 1}, FLOATS),
    ("safe_softmax", [((4, 16), "x")], {"axis": -1}, FLOATS),
    ("safe_softmax", [((3, 5, 7), "x")], {"axis": 1}, FLOATS),
    ("log_softmax", [((4, 16), "x")], {"axis": -1}, FLOATS),
    ("log_softmax", [((3, 5, 7), "x")], {"axis": 0}, FLOATS),
    ("layer_norm", [((2, 4, 8), "x"), ((4, 8), "x"), ((4, 8), "x")], {"begin_norm_axis": 1}, FLOATS),
    ("layer_norm", [((3, 16), "x"), ((16,), "x"), ((16,), "x")], {"epsilon": 0.0}, FLOATS),
    ("rms_norm", [((3, 16), "x"), ((16,), "x")], {}, FLOATS),
    ("rms_norm", [((2, 3, 32), "x"), ((32,), "x")], {"epsilon": 1e-3}, FLOATS),
    ("batch_norm", [((2, 3, 4, 4), "x")] + [((3,), "x")] * 4, {"epsilon": 1e-3}, FLOATS),
    ("batch_norm", [((4, 3), "x")] + [((3,), "x")] * 4, {}, FLOATS),
    ("group_norm", [((2, 6, 5), "x"), ((6,), "x"), ((6,), "x")], {"num_groups": 3}, FLOATS),
    ("group_norm", [((2, 8, 3, 2), "x"), ((8,), "x"), ((8,), "x")], {"num_groups": 8, "epsilon": 0.0}, FLOATS),
    ("matmul_bias_add", [((4, 8), "x"), ((8, 16), "x"), ((16,), "x")], {}, FLOATS),
    ("matmul_bias_add", [((2, 8, 4), "x"), ((16, 4), "x"), ((16,), "x")], {"transpose_b": True}, FLOATS),
    ("matmul_bias_add", [((8, 4), "x"), ((8, 16), "x"), ((16,), "x")], {"transpose_a": True}, FLOATS),
    ("matmul_bias_add", [((8,), "x"), ((8, 5), "x"), ((5,), "x")], {}, ("f32",)),
    ("matmul_add", [((4, 8), "x"), ((8, 16), "x"), ((4, 16), "x")], {}, (*FLOATS, "i32")),
    ("matmul_add", [((2, 4, 8), "x"), ((2, 16, 8), "x"), ((1, 16), "x")], {"transpose_b": True}, FLOATS),
    ("matmul_relu", [((4, 8), "x"), ((16, 8), "x")], {"transpose_b": True}, (*FLOATS, "i32")),
    ("matmul_relu", [((2, 3, 4, 8), "x"), ((8, 5), "x")], {}, FLOATS),
    ("matmul_gelu", [((4, 8), "x"), ((8, 16), "x")], {}, FLOATS),
    ("matmul_gelu", [((2, 4, 8), "x"), ((8, 16), "x")], {"approximate": "tanh"}, FLOATS),
    ("swiglu", [((4, 16), "x")], {}, FLOATS),
    ("swiglu", [((6, 4, 3), "x")], {"axis": 0}, FLOATS),
    ("matmul_split", [((4, 8), "x"), ((8, 24), "x")], {"sizes": [8, 8, 8]}, (*FLOATS, "i32")),
    ("matmul_split", [((2, 4, 8), "x"), ((10, 8), "x")], {"sizes": [3, 7], "transpose_b": True}, FLOATS),
    ("matmul_split", [((4, 8), "x"), ((8, 12), "x")], {"sizes": [2, 4, 3, 3]}, ("f32",)),
    (
        "flash_attention",
        [((2, 4, 8, 16), "x"), ((2, 4, 8, 16), "x"), ((2, 4, 8, 16), "x"), ((1, 1, 8, 8), "x")],
        {"scale": 0.25},
        FLOATS,
    ),
    ("flash_attention", [((2, 6, 16), "x"), ((2, 10, 16), "x"), ((2, 10, 8), "x")], {"scale": 0.3}, FLOATS),
    (
        "flash_attention",
        [((2, 4, 8, 16), "x"), ((2, 4, 8, 16), "x"), ((2, 4, 8, 16), "x"), ((2, 1, 8, 8), "x")],
        {"scale": 0.25, "safe_softmax": True},
        FLOATS,
    ),
    (
        "flash_attention",
        [((2, 1, 5, 8), "x"), ((3, 7, 8), "x"), ((7, 4), "x"), ((5, 7), "x")],
        {"scale": 8**-0.5},
        FLOATS,
    ),
    ("quantize", [((4, 16), "x"), ((16,), "scale"), ((1,), "offset")], {}, FLOATS),
    ("quantize", [((2, 3, 8), "x"), ((1,), "scale"), ((8,), "offset")], {}, FLOATS),
    ("dynamic_quant", [((4, 16), "x")], {}, FLOATS),
    ("dynamic_quant", [((2, 3, 8), "x"), ((8,), "x")], {}, FLOATS),
    ("dynamic_quant", [((8,), "x")], {}, ("f32",)),
    ("rms_norm_quant", [((4, 16), "x"), ((16,), "x"), ((1,), "scale"), ((1,), "offset")], {}, FLOATS),
    ("rms_norm_quant", [((2, 3, 16), "x"), ((16,), "x"), ((16,), "scale"), ((16,), "offset")], {}, FLOATS),
    ("add_layer_norm", [((2, 4, 8), "x"), ((2, 4, 8), "x"), ((8,), "x"), ((8,), "x")], {}, FLOATS),
    (
        "add_layer_norm",
        [((2, 4, 8), "x"), ((4, 8), "x"), ((4, 8), "x"), ((4, 8), "x")],
        {"begin_norm_axis": 1, "epsilon": 1e-3},
        FLOATS,
    ),
    ("add_rms_norm", [((2, 4, 16), "x"), ((2, 4, 16), "x"), ((16,), "x")], {}, FLOATS),
    ("add_rms_norm", [((2, 4, 16), "x"), ((1, 16), "x"), ((16,), "f32")], {"epsilon": 1e-5}, ("f16", "bf16")),
    ("add_rms_norm_cast", [((2, 4, 16), "x"), ((2, 4, 16), "x"), ((16,), "x")], {}, FLOATS),
    ("add_rms_norm_cast", [((3, 16), "x"), ((3, 16), "x"), ((16,), "f32")], {}, ("f16", "bf16")),
    (
        "add_rms_norm_quant",
        [((2, 4, 16), "x"), ((2, 4, 16), "x"), ((16,), "x"), ((16,), "scale"), ((1,), "offset")],
        {},
        FLOATS,
    ),
    ("add_rms_norm_dynamic_quant", [((2, 4, 16), "x"), ((2, 4, 16), "x"), ((16,), "x")], {}, FLOATS),
    (
        "add_rms_norm_dynamic_quant",
        [((3, 16), "x"), ((16,), "x"), ((16,), "x"), ((16,), "x")],
        {"epsilon": 1e-5},
        FLOATS,
    ),
    ("quant_batch_matmul", [((4, 16), "x"), ((16, 8), "x"), ((8,), "scale")], {"dtype": "f16"}, ("i8",)),
    (
        "quant_batch_matmul",
        [((2, 4, 16), "x"), ((8, 16), "x"), ((1,), "scale"), ((8,), "f32")],
        {"transpose_x2": True, "dtype": "bf16"},
        ("i8",),
    ),
    # collectives over one rank: their operand (the product, plus the bias or x3, for the fused ones)
    ("all_reduce", [((4, 8), "x")], {"group_size": 1}, (*FLOATS, "i32")),
    ("all_gather", [((4, 8), "x")], {"group_size": 1, "axis": 1}, FLOATS),
    ("reduce_scatter", [((4, 8), "x")], {"group_size": 1, "reduction": "max"}, FLOATS),
    ("matmul_all_reduce", [((4, 8), "x"), ((8, 16), "x"), ((16,), "x")], {"group_size": 1}, FLOATS),
    ("quant_batch_matmul_all_reduce", [((4, 16), "x"), ((16, 8), "x"), ((8,), "scale"), ((4, 8), "f32")],
     {"group_size": 1, "dtype": "f32"}, ("i8",)),
    # ops defined by their expansion (dialect/ops/derived.py)
    *((name, [(v.shape, "x") for v in lookup_op(f"graph.{name}").example[0]], {}, FLOATS) for name in DERIVED_OPS
      if len(lookup_op(f"graph.{name}").results) == 1),  # the multi-result ones: test_derived_ops.py
]

#: Ops whose quantized results depend on a reduction (a sum) computed before the rounding.
QUANT_AFTER_SUM = {"rms_norm_quant", "add_rms_norm_quant", "add_rms_norm_dynamic_quant"}
#: Ops checked with special values (NaN, +-inf, +-0, huge): the quantizations, exact in any order.
WITH_SPECIALS = {"quantize", "dynamic_quant", "add_n", "squared_difference", "tile", "bias_add"}


def _params() -> list[Any]:
    out = []
    for name, operands, attrs, dtypes in CASES:
        shapes = "_".join("x".join(map(str, shape)) for shape, _ in operands)
        for dtype in dtypes:
            out.append(pytest.param(name, operands, attrs, dtype, id=f"{name}-{shapes}-{attrs or ''}-{dtype}"))
    return out


# --------------------------------------------------------------------------
# Helpers.


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, kind: str, specials: bool) -> np.ndarray:
    if kind == "scale":
        return rng.uniform(0.5, 40.0, shape).astype(np.float32)
    if kind == "offset" or kind == "f32":
        return rng.normal(0.0, 3.0, shape).astype(np.float32)
    target = NUMPY_DTYPES[dtype]
    if dtype not in FLOATS:
        return rng.integers(-100, 100, shape, endpoint=True).astype(target)
    values = rng.normal(0.0, 3.0, shape).astype(np.float32)
    if specials:
        flat = values.reshape(-1)
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e4, -1e4, 2.5, -0.5], dtype=np.float32)
        picks = rng.random(flat.shape) < 0.08
        flat[picks] = rng.choice(special, int(picks.sum()))
    return values.astype(target)


def operand_dtype(kind: str, dtype: str) -> str:
    return dtype if kind == "x" else "f32"


def build(name: str, operands: list[Operand], attrs: dict[str, Any], dtype: str) -> ir.Module:
    b = GraphBuilder("f")
    args = [b.arg(shape, operand_dtype(kind, dtype)) for shape, kind in operands]
    results = b.op(name, *args, **attrs)
    b.ret(*(results if isinstance(results, tuple) else (results,)))
    return b.module


def samples(operands: list[Operand], dtype: str, specials: bool, count: int = 2) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(0)
    return [
        [random_array(rng, tuple(d or 5 for d in shape), dtype, kind, specials) for shape, kind in operands]
        for _ in range(count)
    ]


def run(module: ir.Module, pipeline: str) -> dict[str, int]:
    runner = Pipeline(f"builtin.module({pipeline})", module.context)
    runner.run(module)
    return runner.records[0].statistics


def function_ops(module: ir.Module) -> list[ir.Operation]:
    func = module.body.operations[0]
    return [op.operation for op in func.regions[0].blocks[0].operations if op.operation.name != "func.return"]


def _is_float(array: np.ndarray) -> bool:
    return array.dtype.kind == "f" or array.dtype == ml_dtypes.bfloat16


def assert_identical(want: np.ndarray, got: np.ndarray) -> None:
    """Bit for bit, except that any NaN equals any NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape, (want.dtype, got.dtype, want.shape, got.shape)
    if not _is_float(want):
        np.testing.assert_array_equal(got, want)
        return
    w, g = want.astype(np.float32), got.astype(np.float32)
    assert np.array_equal(np.isnan(w), np.isnan(g)), "NaN positions differ"
    ints = {2: np.uint16, 4: np.uint32}[want.dtype.itemsize]
    keep = ~np.isnan(w)
    np.testing.assert_array_equal(got.view(ints)[keep], want.view(ints)[keep])


def decompose_and_check(
    name: str, operands: list[Operand], attrs: dict[str, Any], dtype: str, specials: bool | None = None
) -> ir.Module:
    module = build(name, operands, attrs, dtype)
    (fused,) = function_ops(module)
    location = str(fused.location)
    inputs = samples(operands, dtype, name in WITH_SPECIALS if specials is None else specials)
    before = [run_function(module, sample) for sample in inputs]
    stats = run(module, "graph-decompose")
    assert module.operation.verify()
    assert stats["num-decomposed"] >= 1
    ops = function_ops(module)
    left = {op.name for op in ops if op.name != "arith.constant"}
    # an op defined by its expansion may leave any op graph-to-linalg lowers directly (greater, tanh, expm1,
    # reduce_mean, random_uniform...)
    allowed = ALLOWED if name not in DERIVED_OPS else LOWERED_OPS | ALLOWED | set(common.LOWERINGS)
    assert left <= allowed, (left - allowed, str(module))
    assert all(str(op.location) == location for op in ops), "every new op keeps the decomposed op's location"
    for sample, want in zip(inputs, before, strict=True):
        got = run_function(module, sample)
        assert len(got) == len(want)
        for w, g in zip(want, got, strict=True):
            assert_identical(w, g)
    return module


# --------------------------------------------------------------------------
# Decomposition against the reference.


@pytest.mark.parametrize(("name", "operands", "attrs", "dtype"), _params())
def test_decomposition_matches_reference(name: str, operands: list[Operand], attrs: dict[str, Any], dtype: str) -> None:
    decompose_and_check(name, operands, attrs, dtype)


def test_every_decomposed_op_is_tested_and_registered() -> None:
    assert {name for name, *_ in CASES} | set(DERIVED_OPS) == DECOMPOSED_OPS
    assert {f"graph.{name}" for name in DECOMPOSED_OPS} <= common.DECOMPOSITIONS.keys()
    # Elementwise ops lower directly; reduce_mean too.
    for name in ("gelu", "tanh", "erf", "sigmoid", "silu", "relu", "square", "reduce_mean"):
        assert f"graph.{name}" not in common.DECOMPOSITIONS


@pytest.mark.parametrize("dtype", FLOATS)
def test_quantize_rounds_half_to_even_and_saturates(dtype: str) -> None:
    x = np.array([[0.5, 1.5, 2.5, -0.5, -2.5, 127.4, 127.5, 300.0, -128.5, -1e4, np.inf, -np.inf, np.nan, -0.0]])
    x = x.astype(NUMPY_DTYPES[dtype])
    scale, offset = np.array([1.0], np.float32), np.array([0.0], np.float32)
    operands = [((1, x.shape[1]), "x"), ((1,), "f32"), ((1,), "f32")]
    module = build("quantize", operands, {}, dtype)
    (want,) = run_function(module, [x, scale, offset])
    run(module, "graph-decompose")
    (got,) = run_function(module, [x, scale, offset])
    assert_identical(want, got)
    if dtype == "f32":
        assert want.tolist() == [[0, 2, 2, 0, -2, 127, 127, 127, -128, -128, 127, -128, 0, 0]]


@pytest.mark.parametrize("dtype", FLOATS)
def test_dynamic_quant_special_rows(dtype: str) -> None:
    """A zero row (scale 0, q 0), a row whose scale underflows, rows with NaN and inf, and an ordinary row."""
    tiny = 1e-44 if dtype == "f32" else 0.0
    x = np.array(
        [
            [0.0, -0.0, 0.0, 0.0],
            [tiny, -tiny, 0.0, tiny],
            [1.0, np.nan, -2.0, 3.0],
            [1.0, np.inf, -2.0, 3.0],
            [0.3, -1.7, 2.5, 127.0],
        ],
        dtype=np.float32,
    ).astype(NUMPY_DTYPES[dtype])
    module = build("dynamic_quant", [((5, 4), "x")], {}, dtype)
    want = run_function(module, [x])
    run(module, "graph-decompose")
    got = run_function(module, [x])
    for w, g in zip(want, got, strict=True):
        assert_identical(w, g)
    assert want[0][0].tolist() == [0, 0, 0, 0] and want[1][0] == 0


def _masked_rows(dtype: str) -> np.ndarray:
    """Rows as attention's masks make them: every key hidden, some hidden, NaN or +inf among hidden keys."""
    inf = np.inf
    rows = [[-inf] * 6, [1.0, -inf, 2.0, -inf, -inf, 0.5], [np.nan, -inf, -inf, -inf, -inf, -inf],
            [inf, -inf, -inf, 1.0, 2.0, 3.0], [0.0, -0.0, 1e4, -1e4, 2.5, -0.5]]
    return np.array(rows, dtype=np.float32).astype(NUMPY_DTYPES[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_safe_softmax_rows_of_all_minus_inf_decompose_and_compile_to_zero(dtype: str) -> None:
    """Decomposed and compiled, safe_softmax keeps the reference's 0 for a row of all -inf and its NaN for rows
    with NaN or +inf."""
    from graphfuse.lowering.runtime import compile_linalg

    x = _masked_rows(dtype)
    module = build("safe_softmax", [(x.shape, "x")], {}, dtype)
    (want,) = run_function(module, [x])
    assert (want[0] == 0).all() and np.isnan(want[2:4].astype(np.float32)).all()
    run(module, "graph-decompose")
    assert_identical(want, run_function(module, [x])[0])
    run(module, "graph-to-linalg{strict}")
    (got,) = compile_linalg(module, "f")(x)
    _assert_close(want, got, dtype, False)


def test_safe_flash_attention_gives_zero_for_a_fully_masked_query_row() -> None:
    """flash_attention{safe_softmax}: the masked row is 0 through P @ V, the other rows are softmax's."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(1, 2, 4, 8)).astype(np.float32) for _ in range(3))
    mask = np.zeros((1, 1, 4, 4), np.float32)
    mask[0, 0, 1, :] = -np.inf  # query 1 sees no key
    operands = [(q.shape, "x"), (k.shape, "x"), (v.shape, "x"), (mask.shape, "x")]
    safe = build("flash_attention", operands, {"scale": 0.5, "safe_softmax": True}, "f32")
    plain = build("flash_attention", operands, {"scale": 0.5}, "f32")
    (want,) = run_function(safe, [q, k, v, mask])
    (unsafe,) = run_function(plain, [q, k, v, mask])
    assert (want[:, :, 1] == 0).all() and np.isnan(unsafe[:, :, 1]).all()
    np.testing.assert_array_equal(np.delete(want, 1, axis=2), np.delete(unsafe, 1, axis=2))
    run(safe, "graph-decompose")
    assert_identical(want, run_function(safe, [q, k, v, mask])[0])


def test_flash_attention_scale_in_f32() -> None:
    """A scale f16 cannot hold is applied in f32 and rounded once; one it holds needs no casts."""
    operands = [((2, 4, 8), "x")] * 3
    casts = []
    for scale in (0.3, 0.25):
        module = decompose_and_check("flash_attention", operands, {"scale": scale}, "f16")
        casts.append(graph_op_names(module).count("graph.cast"))
    assert casts[1] < casts[0]


# --------------------------------------------------------------------------
# Dynamic shapes: decomposed where every piece handles them, left whole otherwise.

DYNAMIC = [
    ("matmul_bias_add", [((None, 8), "x"), ((8, 16), "x"), ((16,), "x")], {}),
    ("matmul_split", [((None, 8), "x"), ((8, None), "x")], {"sizes": [2, 3]}),
    ("add_rms_norm", [((None, 16), "x"), ((None, 16), "x"), ((16,), "x")], {}),
    ("swiglu", [((None, 8), "x")], {}),
    ("dynamic_quant", [((None, 3, None), "x")], {}),
    ("dynamic_quant", [((None, None, 8), "x")], {}),  # the scale reshaped keeping its two dynamic dims
    ("quantize", [((None, None), "x"), ((1,), "scale"), ((1,), "offset")], {}),
]


@pytest.mark.parametrize(("name", "operands", "attrs"), DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_dynamic_shapes_decompose(name: str, operands: list[Operand], attrs: dict[str, Any]) -> None:
    """Decomposed and checked with the interpreter; then lowered (the CPU runtime runs static shapes only)."""
    module = decompose_and_check(name, operands, attrs, "f32")
    missing = _missing_lowerings(module)
    if missing:
        pytest.skip(f"no lowering registered yet for {', '.join(missing)}")
    run(module, "graph-to-linalg{strict}")
    assert graph_op_names(module) == [] and module.operation.verify()


LEFT_WHOLE = [
    # (op, operands, attrs, why)
    ("add_rms_norm", [((4, None), "x"), ((4, None), "x"), ((None,), "x")], {}, "rms_norm over a dynamic last dim"),
    ("add_layer_norm", [((4, None), "x")] * 2 + [((None,), "x")] * 2, {}, "layer_norm over a dynamic dim"),
    ("rms_norm_quant", [((4, None), "x"), ((None,), "x"), ((1,), "f32"), ((1,), "f32")], {}, "dynamic last dim"),
    ("add_rms_norm_dynamic_quant", [((4, None), "x")] * 2 + [((None,), "x")], {}, "dynamic last dim"),
    ("swiglu", [((4, None), "x")], {}, "the halves of a dynamic axis"),
    ("dynamic_quant", [((4, 0), "x")], {}, "reduce_max of an empty row"),
    ("flash_attention", [((2, 4, 8), "x"), ((2, 0, 8), "x"), ((2, 0, 8), "x")], {"scale": 1.0}, "softmax of nothing"),
    ("flash_attention", [((2, None, 16), "x"), ((2, None, 16), "x"), ((2, None, 8), "x")], {"scale": 0.25},
     "lowered tiled over a dynamic length"),
    ("layer_norm", [((4, None), "x"), ((None,), "x"), ((None,), "x")], {}, "expander refuses"),
    ("tile", [((None, 3), "x")], {"multiples": [2, 1]}, "expander refuses"),
    ("softmax", [((4, 0), "x")], {}, "expander refuses"),
]


@pytest.mark.parametrize(("name", "operands", "attrs", "why"), LEFT_WHOLE, ids=[c[3] for c in LEFT_WHOLE])
def test_left_whole(name: str, operands: list[Operand], attrs: dict[str, Any], why: str) -> None:
    module = build(name, operands, attrs, "f32")
    before = str(module)
    stats = run(module, "graph-decompose")
    assert stats == {"num-decomposed": 0}
    assert str(module) == before


def test_dynamic_f32_attention_is_lowered_tiled() -> None:
    """Left whole by the decomposition, then graph-to-linalg's tiled form (test_tiled_attention.py runs it)."""
    module = build("flash_attention", [((2, None, 16), "x"), ((2, None, 16), "x"), ((2, None, 8), "x")],
                   {"scale": 0.25}, "f32")
    run(module, "graph-to-linalg{strict}")
    assert graph_op_names(module) == [] and module.operation.verify()
    assert "scf.forall" in str(module) and "linalg.batch_matmul" not in str(module)


NESTED = [
    ("layer_norm", [((4, None), "x"), ((None,), "x"), ((None,), "x")], {}),
    ("layer_norm", [((None, 8), "x"), ((8,), "x"), ((8,), "x")], {}),
    ("layer_norm", [((2, None, 8), "x"), ((None, 8), "x"), ((None, 8), "x")], {"begin_norm_axis": 1}),
    ("layer_norm", [((None, 3, 8), "x"), ((3, 8), "x"), ((3, 8), "x")], {"begin_norm_axis": 1}),
    ("rms_norm", [((4, None), "x"), ((None,), "x")], {}),
    ("rms_norm", [((None, 8), "x"), ((8,), "x")], {}),
    ("softmax", [((4, 0), "x")], {}),
    ("softmax", [((0, 4), "x")], {"axis": 0}),
    ("softmax", [((0, 4), "x")], {}),
    ("softmax", [((None, None), "x")], {}),
]


@pytest.mark.parametrize(("name", "operands", "attrs"), NESTED)
def test_nested_refusals_mirror_the_expanders(name: str, operands: list[Operand], attrs: dict[str, Any]) -> None:
    """A fused op is left whole exactly when the composite it would emit does not decompose."""
    module = build(name, operands, attrs, "f32")
    decomposed = run(module, "graph-decompose")["num-decomposed"] > 0
    sigs = [TensorSig(shape, "f32") for shape, _ in operands]
    assert (_NESTED_REFUSALS[name](sigs, attrs) is None) == decomposed


def test_pass_counts_nested_decompositions() -> None:
    """add_layer_norm gives a layer_norm, decomposed in turn: two decompositions; a second run finds nothing."""
    module = build("add_layer_norm", [((2, 8), "x")] * 2 + [((8,), "x")] * 2, {}, "f32")
    assert run(module, "graph-decompose") == {"num-decomposed": 2}
    text = str(module)
    assert run(module, "graph-decompose") == {"num-decomposed": 0}
    assert str(module) == text


# --------------------------------------------------------------------------
# End to end: graph-to-linalg{strict}, compiled, against the interpreter on the original op.


def _missing_lowerings(module: ir.Module) -> list[str]:
    return sorted({n for n in graph_op_names(module) if n not in common.LOWERINGS and n not in LOWERED_OPS})


def _assert_close(want: np.ndarray, got: np.ndarray, dtype: str, quant_after_sum: bool) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (want.dtype, got.dtype, want.shape, got.shape)
    if not _is_float(want):
        if quant_after_sum:  # a reordered sum may move a value across a rounding boundary: one step at most
            assert np.abs(got.astype(np.int64) - want.astype(np.int64)).max(initial=0) <= 1
        else:
            np.testing.assert_array_equal(got, want)
        return
    # Sums and matmuls may be reordered and exp/erf/tanh are LLVM's: a few f32 ulp; f16/bf16 results are
    # rounded once from f32, so at most one ulp of the narrow type.
    tol = {"float32": 1e-5, "float16": 1e-3, "bfloat16": 8e-3}[str(want.dtype)]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize(("name", "operands", "attrs", "dtype"), _params())
def test_end_to_end(name: str, operands: list[Operand], attrs: dict[str, Any], dtype: str) -> None:
    from graphfuse.lowering.runtime import compile_linalg

    module = build(name, operands, attrs, dtype)
    inputs = samples(operands, dtype, name in {"quantize", "dynamic_quant"})
    before = [run_function(module, sample) for sample in inputs]
    run(module, "graph-decompose")
    missing = _missing_lowerings(module)
    if missing:
        pytest.skip(f"no lowering registered yet for {', '.join(missing)}")
    stats = run(module, "graph-to-linalg{strict}")
    assert stats["num-unlowered"] == 0
    assert graph_op_names(module) == [] and module.operation.verify()
    compiled = compile_linalg(module, "f")
    for sample, want in zip(inputs, before, strict=True):
        got = compiled(*sample)
        assert len(got) == len(want)
        for w, g in zip(want, got, strict=True):
            _assert_close(w, g, dtype, name in QUANT_AFTER_SUM)
