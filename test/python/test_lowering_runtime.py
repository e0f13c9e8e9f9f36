"""The CPU runtime: JIT-compiled tensor-level linalg modules called with numpy arrays."""

from __future__ import annotations

import ctypes
import math

import ml_dtypes
import numpy as np
import pytest
from mlir import ir
from mlir.runtime import get_ranked_memref_descriptor

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.options import DEFAULT_LLVM_OPT_LEVEL
from graphfuse.lowering.runtime import CompiledFunction, _descriptor_class, compile_linalg

RNG = np.random.default_rng(0)


def parse(src: str) -> ir.Module:
    with ir.Context(), ir.Location.unknown():
        return ir.Module.parse(src)


def compile_src(src: str, entry: str = "f", **kw) -> CompiledFunction:
    return compile_linalg(parse(src), entry, **kw)


def ew(t: str, elt: str, body: str, n_in: int = 2, out_t: str | None = None, out_elt: str | None = None) -> str:
    """An elementwise function over 1-D tensors; ``body`` computes %r from %a (and %b)."""
    out_t = out_t or t
    out_elt = out_elt or elt
    args = ", ".join(f"%x{i}: {t}" for i in range(n_in))
    maps = ", ".join(["#id"] * (n_in + 1))
    bb = ", ".join(f"%{'ab'[i]}: {elt}" for i in range(n_in))
    return f"""#id = affine_map<(d0) -> (d0)>
func.func @f({args}) -> {out_t} {{
  %e = tensor.empty() : {out_t}
  %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}}
       ins({", ".join(f"%x{i}" for i in range(n_in))} : {", ".join([t] * n_in)}) outs(%e : {out_t}) {{
  ^bb0({bb}, %o: {out_elt}):
{body}
    linalg.yield %r : {out_elt}
  }} -> {out_t}
  return %r : {out_t}
}}"""


BIAS = """func.func @f(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(j)>, affine_map<(i,j)->(i,j)>],
       iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>)
       outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}"""

ROWSUM = """func.func @f(%x: tensor<5x7xf32>) -> tensor<5xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5xf32>
  %init = linalg.fill ins(%z : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(i)>],
       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<5x7xf32>) outs(%init : tensor<5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<5xf32>
  return %r : tensor<5xf32>
}"""

MULTI = """#id = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %e0 = tensor.empty() : tensor<16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
       ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%e0, %e1 : tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o0: f32, %o1: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.mulf %a, %b : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<16xf32>, tensor<16xf32>)
  return %r#0, %r#1, %x : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}"""

ADD16 = ew("tensor<16xf32>", "f32", "    %r = arith.addf %a, %b : f32")


def test_broadcast_add():
    fn = compile_src(BIAS)
    x = RNG.random((4, 8), dtype=np.float32)
    b = RNG.random(8, dtype=np.float32)
    (y,) = fn(x, b)
    np.testing.assert_array_equal(y, x + b)
    assert y.dtype == np.float32 and y.shape == (4, 8)


def test_row_reduction():
    x = RNG.random((5, 7), dtype=np.float32)
    (r,) = compile_src(ROWSUM)(x)
    np.testing.assert_allclose(r, x.sum(axis=1), rtol=1e-6)


@pytest.mark.parametrize(
    "op, ref",
    [
        ("math.exp", np.exp),
        ("math.log", np.log),
        ("math.tanh", np.tanh),
        ("math.erf", np.vectorize(math.erf)),
    ],
)
def test_math_unary(op, ref):
    fn = compile_src(ew("tensor<16xf32>", "f32", f"    %r = {op} %a : f32", n_in=1))
    x = RNG.random(16, dtype=np.float32) + 0.1
    (y,) = fn(x)
    np.testing.assert_allclose(y, ref(x).astype(np.float32), rtol=2e-6, atol=1e-7)


def test_powf():
    fn = compile_src(ew("tensor<16xf32>", "f32", "    %r = math.powf %a, %b : f32"))
    x = RNG.random(16, dtype=np.float32) + 0.5
    p = RNG.random(16, dtype=np.float32) * 3
    np.testing.assert_allclose(fn(x, p)[0], x**p, rtol=1e-5)


def test_multi_result_and_returned_input():
    fn = compile_src(MULTI)
    x = RNG.random(16, dtype=np.float32)
    y = RNG.random(16, dtype=np.float32)
    s, m, xc = fn(x, y)
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(m, x * y)
    np.testing.assert_array_equal(xc, x)
    assert not np.shares_memory(xc, x)


def test_i1_result_from_cmpf_is_one_byte_per_element():
    src = ew("tensor<16xf32>", "f32", "    %r = arith.cmpf olt, %a, %b : f32", out_t="tensor<16xi1>", out_elt="i1")
    fn = compile_src(src)
    x = RNG.random(16, dtype=np.float32)
    y = RNG.random(16, dtype=np.float32)
    out = np.full(24, 7, dtype=np.uint8)  # guard bytes after the 16 elements
    (r,) = fn(x, y, out=out[:16].view(np.bool_))
    assert r.dtype == np.bool_
    np.testing.assert_array_equal(r, x < y)
    assert set(out[:16].tolist()) <= {0, 1}
    assert out[16:].tolist() == [7] * 8  # exactly 16 bytes written


def test_i1_input():
    src = ew("tensor<16xi1>", "i1", "    %r = arith.xori %a, %b : i1")
    a = RNG.random(16) < 0.5
    b = RNG.random(16) < 0.5
    np.testing.assert_array_equal(compile_src(src)(a, b)[0], a ^ b)


def test_f16_elementwise():
    src = ew("tensor<16xf16>", "f16", "    %m = arith.mulf %a, %b : f16\n    %r = math.exp %m : f16")
    a = RNG.random(16).astype(np.float16)
    b = RNG.random(16).astype(np.float16)
    (y,) = compile_src(src)(a, b)
    assert y.dtype == np.float16
    ref = np.exp(a.astype(np.float32) * b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(y.astype(np.float32), ref.astype(np.float32), rtol=2e-3)


def test_bf16_elementwise():
    bf16 = np.dtype(ml_dtypes.bfloat16)
    src = ew("tensor<16xbf16>", "bf16", "    %s = arith.addf %a, %b : bf16\n    %r = arith.mulf %s, %a : bf16")
    a = (RNG.random(16) * 4 - 2).astype(bf16)
    b = (RNG.random(16) * 4 - 2).astype(bf16)
    (y,) = compile_src(src)(a, b)
    assert y.dtype == bf16
    af, bf = a.astype(np.float32), b.astype(np.float32)
    ref = ((af + bf).astype(bf16).astype(np.float32) * af).astype(bf16)
    np.testing.assert_allclose(y.astype(np.float32), ref.astype(np.float32), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("elt, dtype", [("i8", np.int8), ("i32", np.int32), ("i64", np.int64)])
def test_integer_elementwise(elt, dtype):
    src = ew(f"tensor<16x{elt}>", elt, f"    %m = arith.muli %a, %b : {elt}\n    %r = arith.addi %m, %a : {elt}")
    info = np.iinfo(dtype)
    a = RNG.integers(max(info.min, -100), min(info.max, 100), 16).astype(dtype)
    b = RNG.integers(-3, 4, 16).astype(dtype)
    (y,) = compile_src(src)(a, b)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, (a * b + a).astype(dtype))


def test_non_contiguous_input_and_input_not_modified():
    fn = compile_src(BIAS)
    big = RNG.random((4, 16), dtype=np.float32)
    x = big[:, ::2]
    b = RNG.random(8, dtype=np.float32)
    before = big.copy()
    np.testing.assert_array_equal(fn(x, b)[0], x + b)
    np.testing.assert_array_equal(big, before)


def test_input_validation():
    fn = compile_src(BIAS)
    x = np.zeros((4, 8), np.float32)
    b = np.zeros(8, np.float32)
    with pytest.raises(GraphfuseError, match="expected 2 argument"):
        fn(x)
    with pytest.raises(GraphfuseError, match=r"argument 1: expected dtype float32 .*got float64"):
        fn(x, b.astype(np.float64))
    with pytest.raises(GraphfuseError, match=r"argument 0: expected shape \(4, 8\).*got \(8, 4\)"):
        fn(x.T.copy(), b)
    with pytest.raises(GraphfuseError, match=r"argument 1: expected shape \(8,\)"):
        fn(x, np.zeros((1, 8), np.float32))
    with pytest.raises(GraphfuseError, match="expected a numpy array"):
        fn(x, [0.0] * 8)
    with pytest.raises(GraphfuseError, match="expected 1 out= buffer"):
        fn(x, b, out=[])
    with pytest.raises(GraphfuseError, match=r"out\[0\]: expected dtype float32"):
        fn(x, b, out=np.zeros((4, 8), np.float64))
    with pytest.raises(GraphfuseError, match=r"out\[0\]: output buffers must be writeable and C-contiguous"):
        fn(x, b, out=np.zeros((8, 4), np.float32).T)
    with pytest.raises(GraphfuseError, match=r"out\[0\] overlaps argument 0"):
        fn(x, b, out=x)


def test_compile_errors():
    with pytest.raises(GraphfuseError, match="no function @g"):
        compile_src(BIAS, "g")
    with pytest.raises(GraphfuseError, match="unsupported element type"):
        compile_src(ew("tensor<4xf8E4M3FN>", "f8E4M3FN", "    %r = arith.addf %a, %b : f8E4M3FN"))
    with pytest.raises(GraphfuseError, match="ranked tensor"):
        compile_src("func.func @f(%x: f32) -> f32 { return %x : f32 }")


def test_cache_hit_returns_same_object():
    a = compile_src(ADD16)
    assert compile_src(ADD16) is a
    other_level = 3 if DEFAULT_LLVM_OPT_LEVEL != 3 else 2
    assert compile_linalg(parse(ADD16), "f", opt_level=other_level) is not a


def test_out_buffers_reused():
    fn = compile_src(MULTI)
    x = RNG.random(16, dtype=np.float32)
    y = RNG.random(16, dtype=np.float32)
    outs = [np.empty(16, np.float32) for _ in range(3)]
    res = fn(x, y, out=outs)
    assert all(r is o and np.shares_memory(r, o) for r, o in zip(res, outs, strict=True))
    np.testing.assert_array_equal(outs[0], x + y)
    single = np.empty((4, 8), np.float32)
    (r,) = compile_src(BIAS)(np.ones((4, 8), np.float32), np.ones(8, np.float32), out=single)
    assert np.shares_memory(r, single) and (single == 2).all()


def test_run_addresses_beside_array_calls():
    """Calls by address (the torch backend's) and calls with arrays on one function: each sees its own buffers,
    whichever ran before (a descriptor rebound by address is refilled by the next array call)."""
    fn = compile_src(BIAS)
    assert fn.static
    x, b = RNG.random((4, 8), dtype=np.float32), RNG.random(8, dtype=np.float32)
    (first,) = fn(x, b)
    for scale in (2.0, 3.0):
        x2, b2 = x * scale, b * scale
        out = np.empty((4, 8), np.float32)
        fn.run_addresses([x2.ctypes.data, b2.ctypes.data, out.ctypes.data])
        np.testing.assert_array_equal(out, x2 + b2)
        (again,) = fn(x, b)  # the same arrays as the first call: the descriptors must point at them again
        np.testing.assert_array_equal(again, first)
    dynamic = compile_src(BIAS.replace("tensor<4x8xf32>", "tensor<?x8xf32>").replace(
        "%e = tensor.empty() : tensor<?x8xf32>",
        "%c0 = arith.constant 0 : index\n  %n = tensor.dim %x, %c0 : tensor<?x8xf32>\n"
        "  %e = tensor.empty(%n) : tensor<?x8xf32>"))
    assert not dynamic.static


def test_no_result_allocation_in_jit_code():
    for src in (BIAS, ROWSUM, MULTI):
        llvm = compile_src(src).llvm_dialect_ir
        assert "malloc" not in llvm and "aligned_alloc" not in llvm


def test_dynamic_input_dims():
    src = BIAS.replace("tensor<4x8xf32>", "tensor<?x8xf32>").replace(
        "%e = tensor.empty() : tensor<?x8xf32>",
        "%c0 = arith.constant 0 : index\n  %d = tensor.dim %x, %c0 : tensor<?x8xf32>\n"
        "  %e = tensor.empty(%d) : tensor<?x8xf32>",
    )
    fn = compile_src(src)
    b = RNG.random(8, dtype=np.float32)
    for m in (1, 3, 10):
        x = RNG.random((m, 8), dtype=np.float32)
        out = np.empty((m, 8), np.float32)
        fn(x, b, out=out)
        np.testing.assert_array_equal(out, x + b)
    with pytest.raises(GraphfuseError, match="dynamic shape"):
        fn(x, b)


def test_descriptor_layout_matches_mlir_runtime():
    for rank in (1, 2, 3):
        a = np.zeros((2,) * rank, np.float32)
        ref = get_ranked_memref_descriptor(a)
        cls = _descriptor_class(rank)
        assert ctypes.sizeof(cls) == ctypes.sizeof(ref)
        for name, *_ in cls._fields_:
            assert getattr(cls, name).offset == getattr(type(ref), name).offset


def test_boolean_intermediates_are_stored_as_bytes() -> None:
    """Unfused boolean tensors (a comparison used twice, a logical op, a boolean constant) run.

    LLVM 22's lowering aborts on memref<...xi1> stores, so the runtime keeps boolean tensors in bytes.
    """
    import graphfuse

    b = graphfuse.GraphBuilder("f")
    x, y = b.arg((4, 8)), b.arg((4, 8))
    condition = b.greater(x, y)
    mask = b.const(np.arange(8) % 3 == 0)
    both = b.logical_and(condition, mask)
    b.ret(b.select(both, b.exp(x), y), condition, b.logical_not(both))
    rng = np.random.default_rng(0)
    inputs = [rng.normal(size=(4, 8)).astype(np.float32) for _ in range(2)]
    want = graphfuse.run_function(b.module, inputs)
    graphfuse.run_pipeline(b.module, "builtin.module(graph-to-linalg)")
    got = compile_linalg(b.module, "f")(*inputs)
    for w, g in zip(want, got, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


ROW_LOOPS_AFTER_RETURNED_ARGUMENT = """func.func @f(%x: tensor<3xf32>, %y: tensor<4x8xf32>, %z: tensor<2x2x4xf32>)
    -> (tensor<3xf32>, tensor<4x8xf32>, tensor<2x2x4xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %pad = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %e) -> (tensor<4x8xf32>) {
    %row = tensor.extract_slice %y[%i, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
    %v = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true, true]} : tensor<1x8xf32>, vector<1x8xf32>
    %d = arith.addf %v, %v : vector<1x8xf32>
    %slot = tensor.extract_slice %acc[%i, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
    %w = vector.transfer_write %d, %slot[%c0, %c0] {in_bounds = [true, true]} : vector<1x8xf32>, tensor<1x8xf32>
    %next = tensor.insert_slice %w into %acc[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
    scf.yield %next : tensor<4x8xf32>
  }
  %e3 = tensor.empty() : tensor<2x2x4xf32>
  %n = scf.for %i = %c0 to %c2 step %c1 iter_args(%outer = %e3) -> (tensor<2x2x4xf32>) {
    %inner_result = scf.for %j = %c0 to %c2 step %c1 iter_args(%acc = %outer) -> (tensor<2x2x4xf32>) {
      %row = tensor.extract_slice %z[%i, %j, 0] [1, 1, 4] [1, 1, 1] : tensor<2x2x4xf32> to tensor<1x1x4xf32>
      %v = vector.transfer_read %row[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]}
           : tensor<1x1x4xf32>, vector<1x1x4xf32>
      %sq = arith.mulf %v, %v : vector<1x1x4xf32>
      %slot = tensor.extract_slice %acc[%i, %j, 0] [1, 1, 4] [1, 1, 1] : tensor<2x2x4xf32> to tensor<1x1x4xf32>
      %w = vector.transfer_write %sq, %slot[%c0, %c0, %c0] {in_bounds = [true, true, true]}
           : vector<1x1x4xf32>, tensor<1x1x4xf32>
      %next = tensor.insert_slice %w into %acc[%i, %j, 0] [1, 1, 4] [1, 1, 1]
              : tensor<1x1x4xf32> into tensor<2x2x4xf32>
      scf.yield %next : tensor<2x2x4xf32>
    }
    scf.yield %inner_result : tensor<2x2x4xf32>
  }
  return %x, %r, %n, %r : tensor<3xf32>, tensor<4x8xf32>, tensor<2x2x4xf32>, tensor<4x8xf32>
}"""


def test_returned_argument_next_to_row_loop_results() -> None:
    """An argument copied into its output buffer, then tiled loops' results (one returned twice, one a loop nest).

    Bufferization drops the argument's result first, so the loops' results are no longer at their outputs' positions.
    """
    fn = compile_src(ROW_LOOPS_AFTER_RETURNED_ARGUMENT)
    x, y = RNG.random(3, dtype=np.float32), RNG.random((4, 8), dtype=np.float32)
    z = RNG.random((2, 2, 4), dtype=np.float32)
    same, doubled, squared, again = fn(x, y, z)
    np.testing.assert_array_equal(same, x)
    np.testing.assert_array_equal(doubled, y + y)
    np.testing.assert_array_equal(squared, z * z)
    np.testing.assert_array_equal(again, y + y)
    assert not np.shares_memory(same, x) and not np.shares_memory(doubled, again)


BOOLEAN_ROW_LOOP = """func.func @f(%x: tensor<3x8xf32>, %m: tensor<3x8xi1>, %flag: tensor<i1>) -> tensor<3x8xi1> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : vector<1x8xf32>
  %pad = arith.constant 0.0 : f32
  %false = arith.constant false
  %f = tensor.extract %flag[] : tensor<i1>
  %fv = vector.broadcast %f : i1 to vector<1x8xi1>
  %e = tensor.empty() : tensor<3x8xi1>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %e) -> (tensor<3x8xi1>) {
    %xs = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<1x8xf32>
    %ms = tensor.extract_slice %m[%i, 0] [1, 8] [1, 1] : tensor<3x8xi1> to tensor<1x8xi1>
    %xv = vector.transfer_read %xs[%c0, %c0], %pad {in_bounds = [true, true]} : tensor<1x8xf32>, vector<1x8xf32>
    %mv = vector.transfer_read %ms[%c0, %c0], %false {in_bounds = [true, true]} : tensor<1x8xi1>, vector<1x8xi1>
    %positive = arith.cmpf ogt, %xv, %zero : vector<1x8xf32>
    %either = arith.xori %positive, %mv : vector<1x8xi1>
    %v = arith.xori %either, %fv : vector<1x8xi1>
    %slot = tensor.extract_slice %acc[%i, 0] [1, 8] [1, 1] : tensor<3x8xi1> to tensor<1x8xi1>
    %w = vector.transfer_write %v, %slot[%c0, %c0] {in_bounds = [true, true]} : vector<1x8xi1>, tensor<1x8xi1>
    %next = tensor.insert_slice %w into %acc[%i, 0] [1, 8] [1, 1] : tensor<1x8xi1> into tensor<3x8xi1>
    scf.yield %next : tensor<3x8xi1>
  }
  return %r : tensor<3x8xi1>
}"""


@pytest.mark.parametrize("flag", [False, True])
def test_booleans_through_a_row_loop_are_bytes(flag: bool) -> None:
    """A row loop carrying a boolean tensor, reading and writing boolean vectors (row tiling + vectorization)."""
    fn = compile_src(BOOLEAN_ROW_LOOP)
    x, m = RNG.normal(size=(3, 8)).astype(np.float32), RNG.random((3, 8)) < 0.5
    out = np.full(32, 7, dtype=np.uint8)  # guard bytes after the 24 elements
    (r,) = fn(x, m, np.array(flag), out=out[:24].view(np.bool_).reshape(3, 8))
    np.testing.assert_array_equal(r, (x > 0) ^ m ^ flag)
    assert set(out[:24].tolist()) <= {0, 1} and out[24:].tolist() == [7] * 8


BOOLEAN_SCALARS_INTO_A_TENSOR = """func.func @f(%a: tensor<2xf32>) -> tensor<3xi1> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %first = tensor.extract %a[%c0] : tensor<2xf32>
  %second = tensor.extract %a[%c1] : tensor<2xf32>
  %less = arith.cmpf olt, %first, %second : f32
  %not_less = arith.cmpf oge, %first, %second : f32
  %t = tensor.from_elements %less, %not_less, %less : tensor<3xi1>
  %r = tensor.insert %not_less into %t[%c2] : tensor<3xi1>
  return %r : tensor<3xi1>
}"""


def test_boolean_scalars_into_a_tensor_are_bytes() -> None:
    fn = compile_src(BOOLEAN_SCALARS_INTO_A_TENSOR)
    for a in ([1.0, 2.0], [2.0, 1.0]):
        (r,) = fn(np.array(a, np.float32))
        less = a[0] < a[1]
        np.testing.assert_array_equal(r, [less, not less, not less])
        assert set(r.view(np.uint8).tolist()) <= {0, 1}


def test_boolean_tensors_through_other_region_ops_are_refused() -> None:
    src = """func.func @f(%x: tensor<2xi1>) -> tensor<4xi1> {
  %false = arith.constant false
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %false : i1
  } : tensor<2xi1> to tensor<4xi1>
  return %p : tensor<4xi1>
}"""
    with pytest.raises(GraphfuseError, match=r"boolean tensors through 'tensor\.pad' are not supported"):
        compile_src(src)


def test_strided_copies_are_loops_not_runtime_calls() -> None:
    """A slice of the last dim and a concat along it copy strided views: loops, not ``memrefCopy`` calls
    (one element at a time); a contiguous copy stays one ``memcpy``."""
    src = """
func.func @f(%x: tensor<2x8x6xf32>) -> (tensor<2x8x6xf32>, tensor<2x4x6xf32>) {
  %lo = tensor.extract_slice %x[0, 0, 0] [2, 8, 3] [1, 1, 1] : tensor<2x8x6xf32> to tensor<2x8x3xf32>
  %hi = tensor.extract_slice %x[0, 0, 3] [2, 8, 3] [1, 1, 1] : tensor<2x8x6xf32> to tensor<2x8x3xf32>
  %e = tensor.empty() : tensor<2x8x6xf32>
  %a = tensor.insert_slice %hi into %e[0, 0, 0] [2, 8, 3] [1, 1, 1] : tensor<2x8x3xf32> into tensor<2x8x6xf32>
  %r = tensor.insert_slice %lo into %a[0, 0, 3] [2, 8, 3] [1, 1, 1] : tensor<2x8x3xf32> into tensor<2x8x6xf32>
  %rows = tensor.extract_slice %x[0, 2, 0] [2, 4, 6] [1, 1, 1] : tensor<2x8x6xf32> to tensor<2x4x6xf32>
  return %r, %rows : tensor<2x8x6xf32>, tensor<2x4x6xf32>
}"""
    fn = compile_src(src)
    assert "memrefCopy" not in fn.llvm_dialect_ir
    x = RNG.standard_normal((2, 8, 6)).astype(np.float32)
    swapped, rows = fn(x)
    np.testing.assert_array_equal(swapped, np.concatenate([x[..., 3:], x[..., :3]], -1))
    np.testing.assert_array_equal(rows, x[:, 2:6])


def test_strided_copies_of_long_runs_are_memcpy_per_run() -> None:
    """A concat of two [3, 1, 2, 64, 8] blocks along dim 1 writes each into every other run of 4 KB, and a slice
    of rows reads runs of 4 KB from a larger buffer: one memcpy per run, not loops nor ``memrefCopy``; the
    bits are those of the inputs (NaN payloads, infinities, signed zeros)."""
    src = """
func.func @f(%a: tensor<3x1x2x64x8xf32>, %b: tensor<3x1x2x64x8xf32>, %x: tensor<3x5x2x64x8xf32>)
    -> (tensor<3x2x2x64x8xf32>, tensor<3x2x2x64x8xf32>) {
  %e = tensor.empty() : tensor<3x2x2x64x8xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0, 0, 0, 0] [3, 1, 2, 64, 8] [1, 1, 1, 1, 1]
      : tensor<3x1x2x64x8xf32> into tensor<3x2x2x64x8xf32>
  %c = tensor.insert_slice %b into %c0[0, 1, 0, 0, 0] [3, 1, 2, 64, 8] [1, 1, 1, 1, 1]
      : tensor<3x1x2x64x8xf32> into tensor<3x2x2x64x8xf32>
  %s = tensor.extract_slice %x[0, 2, 0, 0, 0] [3, 2, 2, 64, 8] [1, 1, 1, 1, 1]
      : tensor<3x5x2x64x8xf32> to tensor<3x2x2x64x8xf32>
  return %c, %s : tensor<3x2x2x64x8xf32>, tensor<3x2x2x64x8xf32>
}"""
    fn = compile_src(src)
    assert "memrefCopy" not in fn.llvm_dialect_ir
    assert "llvm.intr.memcpy" in fn.llvm_dialect_ir
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0], np.float32)
    a, b = (RNG.standard_normal((3, 1, 2, 64, 8)).astype(np.float32) for _ in range(2))
    x = RNG.standard_normal((3, 5, 2, 64, 8)).astype(np.float32)
    for array in (a, b, x):
        array.reshape(-1)[RNG.choice(array.size, 60, replace=False)] = np.resize(special, 60)
    joined, rows = fn(a, b, x)
    np.testing.assert_array_equal(joined.view(np.uint32), np.concatenate([a, b], 1).view(np.uint32))
    np.testing.assert_array_equal(rows.view(np.uint32), x[:, 2:4].view(np.uint32))


@pytest.mark.parametrize("threads", [1, 2])
def test_loop_buffers_too_large_for_the_stack_are_freed_each_iteration(threads: int, monkeypatch) -> None:
    """A task's block of C (a linear layer's product with its bias and gelu applied per block) beyond the stack
    limit, here lowered to 1 KiB, is malloc'ed and freed in its task, not refused as a leak; the result is
    right."""
    import graphfuse
    from graphfuse.lowering.buffer_pool import buffer_pool_library
    from graphfuse.lowering.codegen.cpu import stack_loop_buffers

    monkeypatch.setattr(stack_loop_buffers, "STACK_BUFFER_MAX_BYTES", 1 << 10)
    b = graphfuse.GraphBuilder("linear")
    b.ret(b.gelu(b.bias_add(b.matmul(b.arg((100, 64)), b.arg((256, 64)), transpose_b=True), b.arg((256,)))))
    rng = np.random.default_rng(5)
    inputs = [rng.normal(size=shape).astype(np.float32) for shape in ((100, 64), (256, 64), (256,))]
    exe = graphfuse.compile(b.module, num_threads=threads)
    lowered = exe.function.llvm_dialect_ir
    pooled = buffer_pool_library() is not None  # the JIT code allocates from the buffer pool where it was built
    alloc, free = ("_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_free") if pooled else ("malloc", "free")
    assert f"llvm.call @{alloc}" in lowered and f"llvm.call @{free}" in lowered and "llvm.alloca" not in lowered
    np.testing.assert_allclose(exe(*inputs)[0], exe.reference(*inputs)[0], rtol=1e-5, atol=1e-5)


def test_descriptors_follow_the_arrays_of_each_call() -> None:
    """An argument's descriptor is kept across calls and refilled when its array moves or changes shape: the
    same array written in place, another array, a dynamic dim of another size, and back, each give its own
    result."""
    fn = compile_src("""#id = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
       ins(%x, %y : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}""")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    np.testing.assert_array_equal(fn(x, y, out=[np.empty(16, np.float32)])[0], x + y)
    x[:] = 2.0  # the same memory, new values
    np.testing.assert_array_equal(fn(x, y, out=[np.empty(16, np.float32)])[0], 2.0 + y)
    short = rng.standard_normal(5).astype(np.float32)
    np.testing.assert_array_equal(fn(short, y[:5].copy(), out=[np.empty(5, np.float32)])[0], short + y[:5])
    np.testing.assert_array_equal(fn(y, x, out=[np.empty(16, np.float32)])[0], y + 2.0)


def test_calls_from_threads_run_one_at_a_time() -> None:
    """A compiled function's workspace and descriptors serve one call at a time: calls from several threads
    each get their own inputs' result."""
    import threading

    fn = compile_src(BIAS)
    rng = np.random.default_rng(1)
    cases = [(rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32))
             for _ in range(8)]
    failures: list[int] = []

    def run(k: int) -> None:
        x, b = cases[k]
        for _ in range(200):
            if not np.array_equal(fn(x, b)[0], x + b):
                failures.append(k)
                return

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def _residual_layers(layers: int) -> ir.Module:
    """``layers`` times h = swish(h + tanh(h @ w1) @ w2), each layer with weights of its own."""
    import graphfuse

    b = graphfuse.GraphBuilder("f")
    h = b.arg((64, 32))
    for _ in range(layers):
        h = b.add(h, b.matmul(b.tanh(b.matmul(h, b.arg((32, 64)))), b.arg((64, 32))))
        h = b.mul(h, b.sigmoid(h))
    b.ret(h)
    return b.module


def test_a_repeated_layer_is_compiled_once_whatever_its_buffers_offsets() -> None:
    """The workspace puts each layer's intermediates at other offsets: those are arguments of the outlined
    functions, so a deeper stack of the same layer adds no function to compile (before, each layer whose
    offsets differed was compiled again)."""
    import re

    import graphfuse

    def functions(layers: int) -> tuple[int, int]:
        exe = graphfuse.compile(_residual_layers(layers), num_threads=1)
        text = exe.function.llvm_dialect_ir
        args = [RNG.standard_normal(shape).astype(np.float32) * 0.3 for shape, _ in exe.inputs]
        np.testing.assert_allclose(exe(*args)[0], exe.reference(*args)[0], rtol=2e-5, atol=2e-5)
        defined = set(re.findall(r"llvm\.func [a-z ]*@(f_part_\d+)\(", text))
        return len(defined), len(re.findall(r"llvm\.call @f_part_", text))

    (three, calls_of_three), (six, calls_of_six) = functions(3), functions(6)
    assert calls_of_six > calls_of_three and six == three
