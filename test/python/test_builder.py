"""GraphBuilder / ModuleBuilder / FunctionBuilder: inferred types, attributes, constants, errors."""

from __future__ import annotations

import inspect

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.builder import BuildError, GraphBuilder, ModuleBuilder, Tensor
from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import source_loc
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.types import TensorSig
from graphfuse.dialect.verifier import verify_operation


def _sig(t: Tensor) -> str:
    return str(t.sig)


def _graph_ops(b) -> list[ir.Operation]:
    return [op.operation for op in b.block.operations if op.operation.name.startswith("graph.")]


def _all_ops(b) -> list[str]:
    return [op.operation.name for op in b.block.operations]


# --------------------------------------------------------------------------
# Inferred result types.


def test_inferred_elementwise_types() -> None:
    b = GraphBuilder()
    x = b.arg((4, 8))
    row = b.arg((8,))
    d = b.arg((None, 8), "f16")
    assert _sig(b.add(x, row)) == "tensor<4x8xf32>"
    assert _sig(b.mul(d, b.arg((1, 8), "f16"))) == "tensor<?x8xf16>"
    assert _sig(b.equal(x, row)) == "tensor<4x8xi1>"
    assert _sig(b.isfinite(d)) == "tensor<?x8xi1>"
    cond = b.arg((4, 1), "i1")
    assert _sig(b.select(cond, x, row)) == "tensor<4x8xf32>"
    assert _sig(b.gelu(x, approximate="tanh")) == "tensor<4x8xf32>"
    assert _sig(b.logical_not(cond)) == "tensor<4x1xi1>"


def test_inferred_reduction_and_shape_types() -> None:
    b = GraphBuilder()
    x = b.arg((2, 4, 8), "i32")
    assert _sig(b.reduce_sum(x, axes=[-1])) == "tensor<2x4xi32>"
    assert _sig(b.reduce_max(x, axes=[0, 2], keep_dims=True)) == "tensor<1x4x1xi32>"
    assert _sig(b.transpose(x, perm=[2, 0, 1])) == "tensor<8x2x4xi32>"
    assert _sig(b.slice(x, start=[0, 1, 0], limit=[2, 4, 8], strides=[1, 2, 3])) == "tensor<2x2x3xi32>"
    y = b.arg((2, 4, 3), "i32")
    assert _sig(b.concat(x, y, axis=2)) == "tensor<2x4x11xi32>"
    assert _sig(b.concat(x, y, y, y, axis=-1)) == "tensor<2x4x17xi32>"


def test_inferred_nn_types() -> None:
    b = GraphBuilder()
    a = b.arg((2, 8, 4), "bf16")
    w = b.arg((16, 4), "bf16")
    assert _sig(b.matmul(a, w, transpose_b=True)) == "tensor<2x8x16xbf16>"
    assert _sig(b.matmul(b.arg((4,), "i8"), b.arg((4, 3), "i8"))) == "tensor<3xi8>"
    img = b.arg((None, 4, 8, 8))
    kernel = b.arg((6, 2, 3, 3))
    conv = b.conv2d(img, kernel, strides=[2, 1], pads=[1, 1, 1, 1], dilations=[1, 2], groups=2)
    assert _sig(conv) == "tensor<?x6x4x6xf32>"
    assert _sig(b.max_pool2d(img, kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])) == "tensor<?x4x4x4xf32>"
    x = b.arg((3, 16), "f16")
    assert _sig(b.layer_norm(x, b.arg((16,), "f16"), b.arg((16,), "f16"), epsilon=1e-3)) == "tensor<3x16xf16>"
    q, scale = b.dynamic_quant(x)
    assert (_sig(q), _sig(scale)) == ("tensor<3x16xi8>", "tensor<3xf32>")


# --------------------------------------------------------------------------
# Attributes.


def test_defaults_are_not_written_and_given_values_are() -> None:
    b = GraphBuilder()
    x = b.arg((4, 8))
    b.softmax(x)
    b.softmax(x, axis=0)
    b.gelu(x)
    b.reduce_sum(x, axes=[1])
    b.matmul(x, x, transpose_b=True)
    b.slice(x, start=[0, 0], limit=[2, 8])
    b.layer_norm(x, b.arg((8,)), b.arg((8,)), epsilon=0.5)
    ops = _graph_ops(b)
    attrs = [{name: str(attr) for name, attr in op.attributes.items()} for op in ops]
    assert attrs[0] == {}
    assert attrs[1] == {"axis": "0 : i64"}
    assert attrs[2] == {}
    assert attrs[3] == {"axes": "array<i64: 1>"}
    assert attrs[4] == {"transpose_b": "true"}
    assert attrs[5] == {"start": "array<i64: 0, 0>", "limit": "array<i64: 2, 8>"}
    assert attrs[6] == {"epsilon": "5.000000e-01 : f32"}


def test_defaults_drive_inference() -> None:
    b = GraphBuilder()
    x = b.arg((4, 8))
    # keep_dims defaults to false, axis of bias_add to -1.
    assert _sig(b.reduce_mean(x, axes=[0])) == "tensor<8xf32>"
    assert _sig(b.bias_add(x, b.arg((8,)))) == "tensor<4x8xf32>"
    with pytest.raises(BuildError, match=r"'graph.bias_add' operand bias tensor<4xf32> must be 1-D of length 8"):
        b.bias_add(x, b.arg((4,)))
    assert _sig(b.bias_add(x, b.arg((4,)), axis=0)) == "tensor<4x8xf32>"


def test_bad_attribute_values() -> None:
    b = GraphBuilder()
    x = b.arg((4, 8))
    with pytest.raises(BuildError, match=r"'graph.softmax' has no attribute 'dim' \(known attributes: axis\)"):
        b.softmax(x, dim=1)
    with pytest.raises(BuildError, match=r"'graph.gelu' attribute 'approximate' must be \"none\" or \"tanh\""):
        b.gelu(x, approximate="erf")
    with pytest.raises(BuildError, match=r"'graph.matmul' attribute 'transpose_b' expects a bool value, got 1"):
        b.matmul(x, x, transpose_b=1)
    with pytest.raises(BuildError, match=r"'graph.transpose' requires attribute 'perm'"):
        b.transpose(x)
    assert _graph_ops(b) == []


# --------------------------------------------------------------------------
# Operators.


def test_operator_overloads() -> None:
    b = GraphBuilder()
    x = b.arg((2, 3))
    y = b.arg((3,))
    m = b.arg((3, 4))
    results = [x + y, x - y, x * y, x / y, -x, x @ m]
    assert [op.name for op in _graph_ops(b)] == [
        "graph.add", "graph.sub", "graph.mul", "graph.div", "graph.neg", "graph.matmul",
    ]
    assert [_sig(r) for r in results] == ["tensor<2x3xf32>"] * 5 + ["tensor<2x4xf32>"]
    b.ret(*results)
    xs = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    ys = np.array([2, 4, 8], np.float32)
    ms = np.arange(12, dtype=np.float32).reshape(3, 4)
    outs = run_function(b.module, [xs, ys, ms])
    for got, want in zip(outs, [xs + ys, xs - ys, xs * ys, xs / ys, -xs, xs @ ms], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_operators_with_python_scalars_take_the_tensor_dtype() -> None:
    b = GraphBuilder()
    x = b.arg((2,), "i32")
    h = b.arg((2,), "f16")
    results = [x + 1, 10 - x, 3 * x, x / 2, h * 0.5, 1.0 / h]
    assert [r.dtype for r in results] == ["i32"] * 4 + ["f16"] * 2
    assert [op.name for op in _graph_ops(b)] == [
        "graph.add", "graph.sub", "graph.mul", "graph.div", "graph.mul", "graph.div",
    ]
    b.ret(*results)
    assert verify_operation(b.module.operation) == []
    xs = np.array([7, -7], np.int32)
    hs = np.array([2.0, 4.0], np.float16)
    outs = run_function(b.module, [xs, hs])
    expected = [xs + 1, 10 - xs, 3 * xs, np.array([3, -3], np.int32), hs * 0.5, 1.0 / hs]
    for got, want in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def test_operators_on_rank0_tensors_keep_rank0() -> None:
    b = GraphBuilder()
    x = b.arg(())
    y = 2.0 * x + 1.0
    assert _sig(y) == "tensor<f32>"
    b.ret(y)
    (out,) = run_function(b.module, [np.array(3.0, np.float32)])
    assert out.shape == () and float(out) == 7.0


# --------------------------------------------------------------------------
# Constants.


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([[1.0, 2.0], [3.0, 4.0]], "tensor<2x2xf32>"),  # Python floats are float64: built as f32
        (np.array([1.5, -2.0], np.float64), "tensor<2xf32>"),
        (np.array([1.5, -2.0], np.float32), "tensor<2xf32>"),
        (np.array([1.5, -2.0], np.float16), "tensor<2xf16>"),
        (np.array([1.5, -2.0, 0.25], ml_dtypes.bfloat16), "tensor<3xbf16>"),
        (np.array([[1, -2, 3]], np.int8), "tensor<1x3xi8>"),
        (np.array([1, -2], np.int32), "tensor<2xi32>"),
        (np.array([1, -2], np.int64), "tensor<2xi64>"),
        ([1, 2, 3], "tensor<3xi64>"),
        ([True, False, True], "tensor<3xi1>"),
        (np.array([True, True]), "tensor<2xi1>"),
        (np.zeros((0, 3), np.float32), "tensor<0x3xf32>"),
        # Scalars are rank-0 tensors.
        (3.0, "tensor<f32>"),
        (np.float16(2.5), "tensor<f16>"),
        (np.array(-1.5, ml_dtypes.bfloat16), "tensor<bf16>"),
        (np.array(7, np.int32), "tensor<i32>"),
        (np.int8(-3), "tensor<i8>"),
        (5, "tensor<i64>"),
        (True, "tensor<i1>"),
    ],
)
def test_constant_types(value, expected: str) -> None:
    b = GraphBuilder()
    c = b.const(value)
    assert _sig(c) == expected
    b.ret(c)
    assert verify_operation(b.module.operation) == []
    (out,) = run_function(b.module, [])
    want = np.asarray(value)
    if want.dtype == np.float64:
        want = want.astype(np.float32)
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


def test_constant_with_explicit_dtype() -> None:
    b = GraphBuilder()
    c = b.const([[1, 2], [3, 4]], dtype="bf16")
    i = b.const([1.0, 0.0], dtype="i1")
    assert (_sig(c), _sig(i)) == ("tensor<2x2xbf16>", "tensor<2xi1>")
    b.ret(c, i)
    out_c, out_i = run_function(b.module, [])
    np.testing.assert_array_equal(out_c.astype(np.float32), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out_i, [True, False])


def test_constant_of_unsupported_dtype() -> None:
    b = GraphBuilder()
    with pytest.raises(BuildError, match=r"constant of numpy dtype uint8 has no graph-dialect element type"):
        b.const(np.array([1, 2], np.uint8))
    with pytest.raises(BuildError, match=r"complex128"):
        b.const(np.array([1j]))


# --------------------------------------------------------------------------
# Multi-result ops and ops that take their result type.


def test_multi_result_ops_return_tuples() -> None:
    b = GraphBuilder()
    x = b.arg((4, 10), "i64")
    pieces = b.split(x, axis=1, sizes=[1, 3, 2, 2, 2])
    assert isinstance(pieces, tuple) and len(pieces) == 5
    assert [_sig(p) for p in pieces] == [
        "tensor<4x1xi64>", "tensor<4x3xi64>", "tensor<4x2xi64>", "tensor<4x2xi64>", "tensor<4x2xi64>",
    ]
    # A list of tensors is accepted where an op takes a variadic group.
    joined = b.concat(list(pieces), axis=1)
    assert isinstance(joined, Tensor) and _sig(joined) == "tensor<4x10xi64>"
    f = b.arg((3, 16))
    quant = b.dynamic_quant(f, b.arg((16,)))
    assert isinstance(quant, tuple) and len(quant) == 2
    b.ret(joined, *quant)
    xs = np.arange(40, dtype=np.int64).reshape(4, 10)
    out, q, s = run_function(b.module, [xs, np.ones((3, 16), np.float32), np.ones(16, np.float32)])
    np.testing.assert_array_equal(out, xs)
    assert q.dtype == np.int8 and s.shape == (3,)


def test_result_param_ops() -> None:
    b = GraphBuilder()
    x = b.arg((4, 8))
    r = b.reshape(x, (2, 16))
    rd = b.reshape(x, (None, 4))
    c = b.cast(x, "f16")
    ci = b.cast(b.arg((None, 3), "i32"), "i1")
    bt = b.broadcast_to(b.arg((1, 8)), (3, 4, 8))
    assert [_sig(t) for t in (r, rd, c, ci, bt)] == [
        "tensor<2x16xf32>", "tensor<?x4xf32>", "tensor<4x8xf16>", "tensor<?x3xi1>", "tensor<3x4x8xf32>",
    ]


def test_result_param_errors() -> None:
    b = GraphBuilder()
    x = b.arg((4, 8))
    with pytest.raises(BuildError, match=r"'graph.reshape' needs its result shape as the last argument"):
        b.reshape(x)
    with pytest.raises(BuildError, match=r"'graph.cast' needs its result dtype as the last argument"):
        b.cast(x)
    with pytest.raises(BuildError, match=r"'graph.reshape' operand tensor<4x8xf32> has 32 elements but result type "
                                         r"tensor<5x6xf32> has 30"):
        b.reshape(x, (5, 6))
    with pytest.raises(BuildError, match=r"'graph.broadcast_to' operand tensor<4x8xf32> cannot be broadcast to "
                                         r"tensor<3x8xf32>"):
        b.broadcast_to(x, (3, 8))
    assert _graph_ops(b) == []


# --------------------------------------------------------------------------
# Errors leave the module valid.


def test_invalid_op_raises_build_error_naming_the_op_at_the_callers_line() -> None:
    b = GraphBuilder()
    x = b.arg((4, 8))
    y = b.arg((3,))
    ok = b.exp(x)
    before = _all_ops(b)
    with pytest.raises(BuildError) as info:
        b.add(x, y)  # the line the diagnostic points at
    (diag,) = info.value.diagnostics
    assert diag.message == "'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible"
    assert diag.location is not None and diag.location.file == __file__
    assert str(info.value).startswith(f"{__file__}:{diag.location.line}:")
    # Nothing was half built: the module is as before and still verifies and runs.
    assert _all_ops(b) == before
    b.ret(ok)
    assert verify_operation(b.module.operation) == []
    context_module = ir.Module.parse(str(b.module), context=b.context)
    assert verify_operation(context_module.operation) == []


def test_each_kind_of_bad_op_leaves_no_op_behind() -> None:
    b = GraphBuilder()
    x = b.arg((4, 8))
    bad_calls = [
        (lambda: b.exp(b.arg((4,), "i32")), "graph.exp"),
        (lambda: b.matmul(x, x), "graph.matmul"),
        (lambda: b.split(x, axis=1, sizes=[3, 3]), "graph.split"),
        (lambda: b.concat(x, b.arg((4, 8), "f16"), axis=0), "graph.concat"),
        (lambda: b.softmax(x, axis=2), "graph.softmax"),
        (lambda: b.exp(x, x), "graph.exp"),
        (lambda: b.conv2d(b.arg((1, 4, 8, 8)), b.arg((6, 3, 3, 3))), "graph.conv2d"),
    ]
    for call, name in bad_calls:
        with pytest.raises(BuildError, match=f"'{name}'"):
            call()
    assert _graph_ops(b) == []
    b.ret(x)
    assert verify_operation(b.module.operation) == []


def test_unknown_op() -> None:
    b = GraphBuilder()
    with pytest.raises(AttributeError):
        b.not_an_op  # noqa: B018
    with pytest.raises(BuildError, match=r"unknown graph op 'not_an_op'"):
        b.op("not_an_op")


def test_non_tensor_operand() -> None:
    b = GraphBuilder()
    x = b.arg((4,))
    with pytest.raises(BuildError, match=r"'graph.maximum' operand #1 is ndarray, expected a Tensor"):
        b.maximum(x, np.zeros(4, np.float32))


def test_finished_builder_raises() -> None:
    b = GraphBuilder("done")
    x = b.arg((4,))
    b.ret(b.exp(x))
    message = r"function 'done' is already finished \(ret was called\)"
    for call in (lambda: b.exp(x), lambda: b.arg((4,)), lambda: b.const([1.0]), lambda: b.ret(x), lambda: x + x):
        with pytest.raises(BuildError, match=message):
            call()
    assert verify_operation(b.module.operation) == []


def test_mixing_values_of_two_functions_raises() -> None:
    mb = ModuleBuilder()
    f = mb.function("f")
    g = mb.function("g")
    x = f.arg((4,))
    y = g.arg((4,))
    with pytest.raises(BuildError, match=r"'graph.add' operand #1 belongs to another function"):
        f.add(x, y)
    with pytest.raises(BuildError, match=r"'graph.add' operand #1 belongs to another function"):
        x + y  # the left operand's builder builds the op
    other = GraphBuilder("h")
    z = other.arg((4,))
    with pytest.raises(BuildError, match=r"belongs to another function"):
        other.mul(z, x)


# --------------------------------------------------------------------------
# The built module.


def _build_module() -> ModuleBuilder:
    mb = ModuleBuilder()
    helper = mb.function("norm", private=True)
    h = helper.arg((None, 8), "f16")
    helper.ret(helper.rms_norm(h, helper.const(np.ones(8, np.float16)), epsilon=1e-3))
    main = mb.function("main")
    x = main.arg((None, 8), "f16")
    w = main.const(np.arange(16, dtype=np.float32).reshape(8, 2) / 16)
    y = main.cast(x, "f32") @ w
    parts = main.split(y, axis=1, sizes=[1, 1])
    main.ret(main.softmax(y, axis=0), *parts, main.greater(parts[0], parts[1]))
    return mb


def test_built_module_prints_reparses_and_verifies() -> None:
    mb = _build_module()
    assert verify_operation(mb.module.operation) == []
    assert mb.module.operation.verify()
    text = str(mb)
    assert text == str(mb.module)
    assert "func.func private @norm(%arg0: tensor<?x8xf16>) -> tensor<?x8xf16>" in text
    assert '"graph.rms_norm"' in text and '"graph.split"' in text
    context = make_context()
    with context:
        reparsed = ir.Module.parse(text)
    assert verify_operation(reparsed.operation) == []
    assert str(reparsed) == text
    x = np.linspace(-1, 1, 24, dtype=np.float16).reshape(3, 8)
    first = run_function(mb.module, [x])
    second = run_function(reparsed, [x])
    for a, c in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, c)


def test_locations_point_at_the_building_line() -> None:
    b = GraphBuilder()
    x = b.arg((4,))
    expected_line = inspect.currentframe().f_lineno + 1
    y = b.exp(x)
    op = y.value.owner
    loc = source_loc(op.location)
    assert loc is not None and loc.file == __file__ and loc.line == expected_line


def test_function_type_follows_ret() -> None:
    b = GraphBuilder("f")
    x = b.arg((2, None), "bf16")
    m = b.arg((2, None), "i1")
    out = b.select(m, x, b.neg(x))
    b.ret(out, m)
    ftype = ir.FunctionType(ir.TypeAttr(b.func.attributes["function_type"]).value)
    assert [str(t) for t in ftype.inputs] == ["tensor<2x?xbf16>", "tensor<2x?xi1>"]
    assert [str(t) for t in ftype.results] == ["tensor<2x?xbf16>", "tensor<2x?xi1>"]
    assert out.sig == TensorSig((2, None), "bf16")
