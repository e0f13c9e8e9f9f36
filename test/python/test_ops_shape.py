"""Reference semantics and verification of reshape, broadcast_to, transpose, concat, split, slice, pad."""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest

from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.run_checks import IndexOutOfRangeError
from graphfuse.dialect.types import TensorSig


def _infer(name: str, sigs: list[TensorSig], attrs: dict | None = None, declared=None) -> list[TensorSig]:
    spec = lookup_op(f"graph.{name}")
    return infer_results(spec, sigs, spec.with_defaults(attrs or {}), declared)


def _grid(*shape: int, dtype=np.float32) -> np.ndarray:
    return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)


# --------------------------------------------------------------------------
# reshape


def test_reshape_keeps_row_major_order() -> None:
    (out,) = evaluate_op("reshape", [_grid(2, 6)], declared=[TensorSig((3, 4), "f32")])
    assert out.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def test_reshape_with_dynamic_declared_dim() -> None:
    x = _grid(2, 3, 4, dtype=np.int32)
    (out,) = evaluate_op("reshape", [x], declared=[TensorSig((None, 6), "i32")])
    assert out.shape == (4, 6) and out.ravel().tolist() == list(range(24))


def test_reshape_bf16() -> None:
    x = _grid(4, dtype=ml_dtypes.bfloat16)
    (out,) = evaluate_op("reshape", [x], declared=[TensorSig((2, 2), "bf16")])
    assert out.dtype == ml_dtypes.bfloat16 and out.shape == (2, 2)


def test_reshape_rejects_element_count_mismatch() -> None:
    with pytest.raises(VerifyError, match="has 12 elements but result type tensor<5x2xf32> has 10"):
        _infer("reshape", [TensorSig((3, 4), "f32")], declared=[TensorSig((5, 2), "f32")])


def test_reshape_rejects_indivisible_dynamic_dim() -> None:
    with pytest.raises(VerifyError, match="cannot be reshaped"):
        _infer("reshape", [TensorSig((3, 4), "f32")], declared=[TensorSig((None, 5), "f32")])


def test_reshape_rejects_two_dynamic_dims_without_operand_dims_to_pair() -> None:
    # the second ? has no dynamic operand dim to take its size from
    with pytest.raises(VerifyError, match="at most one dynamic dimension"):
        _infer("reshape", [TensorSig((3, 4), "f32")], declared=[TensorSig((None, None), "f32")])
    with pytest.raises(VerifyError, match="at most one dynamic dimension"):
        _infer("reshape", [TensorSig((None, 4), "f32")], declared=[TensorSig((None, None, 2), "f32")])
    # the static dims between the two pairs differ in count
    with pytest.raises(VerifyError, match="at most one dynamic dimension"):
        _infer("reshape", [TensorSig((None, 3, None), "f32")], declared=[TensorSig((None, 2, None), "f32")])


@pytest.mark.parametrize(("operand", "result", "sizes"), [
    ((None, None, 256), (None, None, 8, 32), (3, 5, 256)),  # heads split off the hidden dim
    ((None, None, 8, 32), (None, None, 256), (3, 5, 8, 32)),  # merged back
    ((None, 4, None, 32), (None, 4, 1, None, 32), (2, 4, 7, 32)),  # repeat_kv's unsqueeze
    ((None, 1, None, 8), (None, 1, 1, None, 8), (2, 1, 1, 8)),  # unit dims, static and (at run time) dynamic
    ((None, 4, 2, None, 32), (None, 8, None, 32), (2, 4, 2, 7, 32)),  # and its merge of the heads
    ((None, None), (1, None, None, 1), (3, 1)),
])
def test_reshape_pairs_several_dynamic_dims_with_the_operands(operand: tuple, result: tuple, sizes: tuple) -> None:
    declared = [TensorSig(result, "f32")]
    assert _infer("reshape", [TensorSig(operand, "f32")], declared=declared) == declared
    b = GraphBuilder("f")
    b.ret(b.reshape(b.arg(operand), result))
    x = np.arange(math.prod(sizes), dtype=np.float32).reshape(sizes)
    (got,) = run_function(b.module, [x])  # the interpreter sizes the result from the operand's declared type
    dynamic = iter(d for d, o in zip(sizes, operand, strict=True) if o is None)
    want = tuple(next(dynamic) if d is None else d for d in result)
    np.testing.assert_array_equal(got, x.reshape(want))


def test_reshape_dynamic_operand_is_unchecked() -> None:
    declared = [TensorSig((7, 3), "f32")]
    assert _infer("reshape", [TensorSig((None, 4), "f32")], declared=declared) == declared


def test_reshape_rejects_dtype_change() -> None:
    with pytest.raises(VerifyError, match="element type"):
        _infer("reshape", [TensorSig((4,), "f32")], declared=[TensorSig((2, 2), "i32")])


def test_reshape_requires_declared_result() -> None:
    with pytest.raises(VerifyError, match="result type"):
        _infer("reshape", [TensorSig((4,), "f32")])


# --------------------------------------------------------------------------
# broadcast_to


def test_broadcast_to_extends_rank_and_size_one_dims() -> None:
    x = np.array([[1], [2]], np.int64)  # (2, 1)
    (out,) = evaluate_op("broadcast_to", [x], declared=[TensorSig((3, 2, 4), "i64")])
    assert out.shape == (3, 2, 4)
    assert all(out[i, j, k] == x[j, 0] for i, j, k in np.ndindex(3, 2, 4))


def test_broadcast_to_dynamic_dim_from_operand() -> None:
    x = _grid(3, dtype=np.float16)
    (out,) = evaluate_op("broadcast_to", [x], declared=[TensorSig((2, None), "f16")])
    assert out.dtype == np.float16 and out.tolist() == [[0, 1, 2], [0, 1, 2]]


def test_broadcast_to_rejects_incompatible_shape() -> None:
    with pytest.raises(VerifyError, match=r"operand tensor<3xf32> cannot be broadcast to tensor<2x4xf32>"):
        _infer("broadcast_to", [TensorSig((3,), "f32")], declared=[TensorSig((2, 4), "f32")])


def test_broadcast_to_rejects_lower_rank_target() -> None:
    with pytest.raises(VerifyError, match="cannot be broadcast"):
        _infer("broadcast_to", [TensorSig((2, 3), "f32")], declared=[TensorSig((3,), "f32")])


def test_broadcast_to_rejects_dynamic_broadcast_dim() -> None:
    with pytest.raises(VerifyError, match="dynamic dimensions are not supported"):
        _infer("broadcast_to", [TensorSig((1, 3), "f32")], declared=[TensorSig((None, 3), "f32")])


def test_broadcast_to_rejects_dtype_change() -> None:
    with pytest.raises(VerifyError, match="element type"):
        _infer("broadcast_to", [TensorSig((3,), "f32")], declared=[TensorSig((2, 3), "f16")])


# --------------------------------------------------------------------------
# transpose


def test_transpose_moves_elements() -> None:
    x = _grid(2, 3, 4)
    (out,) = evaluate_op("transpose", [x], {"perm": [2, 0, 1]})
    assert out.shape == (4, 2, 3)
    assert all(out[k, i, j] == x[i, j, k] for i, j, k in np.ndindex(2, 3, 4))


def test_transpose_infers_dynamic_dims() -> None:
    out = _infer("transpose", [TensorSig((None, 5), "i1")], {"perm": [1, 0]})
    assert out == [TensorSig((5, None), "i1")]


@pytest.mark.parametrize("perm", [[0, 0], [1, -1], [0], [0, 1, 2]])
def test_transpose_rejects_non_permutation(perm: list[int]) -> None:
    with pytest.raises(VerifyError, match=r"is not a permutation of \[0, 1\]"):
        _infer("transpose", [TensorSig((2, 3), "f32")], {"perm": perm})


# --------------------------------------------------------------------------
# concat


def test_concat_along_negative_axis() -> None:
    a, b = _grid(2, 1, dtype=np.int8), _grid(2, 2, dtype=np.int8) + 10
    (out,) = evaluate_op("concat", [a, b], {"axis": -1})
    assert out.dtype == np.int8 and out.tolist() == [[0, 10, 11], [1, 12, 13]]


def test_concat_rejects_single_operand() -> None:
    with pytest.raises(VerifyError, match="expects at least 2 operands, got 1"):
        _infer("concat", [TensorSig((2, 2), "f32")], {"axis": 0})


def test_concat_operands_after_the_second_share_one_type() -> None:
    same = [TensorSig((2, 1), "f32"), TensorSig((2, 2), "f32"), TensorSig((2, 3), "f32"), TensorSig((2, 3), "f32")]
    assert _infer("concat", same, {"axis": 1}) == [TensorSig((2, 9), "f32")]
    mixed = [*same[:3], TensorSig((2, 4), "f32")]
    with pytest.raises(VerifyError, match="operands after the second must all have one type"):
        _infer("concat", mixed, {"axis": 1})


def test_concat_infers_dynamic_dims() -> None:
    sigs = [TensorSig((None, 3), "f32"), TensorSig((4, 2), "f32")]
    assert _infer("concat", sigs, {"axis": 1}) == [TensorSig((4, 5), "f32")]
    assert _infer("concat", [sigs[0], TensorSig((2, 3), "f32")], {"axis": 0}) == [TensorSig((None, 3), "f32")]


def test_concat_rejects_mismatched_non_axis_dim() -> None:
    with pytest.raises(VerifyError, match="differ in dimension 0; only the concat axis 1 may differ"):
        _infer("concat", [TensorSig((2, 3), "f32"), TensorSig((4, 3), "f32")], {"axis": 1})


def test_concat_rejects_mixed_dtypes() -> None:
    with pytest.raises(VerifyError, match="same element type"):
        _infer("concat", [TensorSig((2,), "f32"), TensorSig((2,), "bf16")], {"axis": 0})


def test_concat_rejects_mixed_ranks() -> None:
    with pytest.raises(VerifyError, match="same rank"):
        _infer("concat", [TensorSig((2,), "f32"), TensorSig((2, 1), "f32")], {"axis": 0})


def test_concat_rejects_axis_out_of_range() -> None:
    with pytest.raises(VerifyError, match="axis 2 is out of range for rank 2"):
        _infer("concat", [TensorSig((2, 3), "f32")] * 2, {"axis": 2})


def test_concat_rejects_no_operands() -> None:
    with pytest.raises(VerifyError, match="expects at least 2 operands"):
        _infer("concat", [], {"axis": 0})


# --------------------------------------------------------------------------
# split


def test_split_sizes_and_concat_round_trip() -> None:
    x = _grid(3, 7)
    pieces = evaluate_op("split", [x], {"axis": -1, "sizes": [2, 0, 5]})
    assert [p.shape for p in pieces] == [(3, 2), (3, 0), (3, 5)]
    assert pieces[0].tolist() == [[0, 1], [7, 8], [14, 15]]
    (joined,) = evaluate_op("concat", pieces, {"axis": 1})
    assert np.array_equal(joined, x)


def test_split_infers_with_dynamic_axis() -> None:
    out = _infer("split", [TensorSig((None, 4), "f32")], {"axis": 0, "sizes": [1, 3]})
    assert out == [TensorSig((1, 4), "f32"), TensorSig((3, 4), "f32")]


def test_split_rejects_sizes_not_summing_to_dim() -> None:
    with pytest.raises(VerifyError, match=r"sizes \[2, 3\] sum to 5, not to the size 6"):
        _infer("split", [TensorSig((6,), "f32")], {"axis": 0, "sizes": [2, 3]})


def test_split_rejects_negative_size() -> None:
    with pytest.raises(VerifyError, match="non-negative"):
        _infer("split", [TensorSig((2,), "f32")], {"axis": 0, "sizes": [3, -1]})


@pytest.mark.parametrize("sizes", [[], [4]])
def test_split_rejects_fewer_than_two_pieces(sizes: list[int]) -> None:
    with pytest.raises(VerifyError, match="must describe at least 2 pieces"):
        _infer("split", [TensorSig((sum(sizes),), "f32")], {"axis": 0, "sizes": sizes})


def test_split_pieces_after_the_second_share_one_size() -> None:
    assert len(_infer("split", [TensorSig((9,), "f32")], {"axis": 0, "sizes": [4, 1, 2, 2]})) == 4
    with pytest.raises(VerifyError, match="pieces after the second must all have one size"):
        _infer("split", [TensorSig((9,), "f32")], {"axis": 0, "sizes": [4, 1, 1, 3]})


def test_split_rejects_wrong_declared_result_count() -> None:
    declared = [TensorSig((2,), "f32")] * 3
    with pytest.raises(VerifyError, match=r"has 3 results but sizes \[2, 2\] describe 2 pieces"):
        _infer("split", [TensorSig((4,), "f32")], {"axis": 0, "sizes": [2, 2]}, declared)


def test_split_rejects_axis_out_of_range() -> None:
    with pytest.raises(VerifyError, match="out of range"):
        _infer("split", [TensorSig((4,), "f32")], {"axis": -2, "sizes": [4]})


# --------------------------------------------------------------------------
# slice


def test_slice_with_strides() -> None:
    x = _grid(4, 7)
    (out,) = evaluate_op("slice", [x], {"start": [1, 1], "limit": [4, 7], "strides": [2, 3]})
    # rows 1, 3; columns 1, 4: ceil(3 / 2) = 2 and ceil(6 / 3) = 2.
    assert out.tolist() == [[8, 11], [22, 25]]


def test_slice_default_strides_are_ones() -> None:
    (out,) = evaluate_op("slice", [_grid(5, dtype=np.int32)], {"start": [1], "limit": [4]})
    assert out.tolist() == [1, 2, 3]


def test_slice_result_size_rounds_up() -> None:
    out = _infer("slice", [TensorSig((None, 10), "f32")], {"start": [0, 1], "limit": [5, 9], "strides": [2, 3]})
    assert out == [TensorSig((3, 3), "f32")]


@pytest.mark.parametrize(
    ("start", "limit"),
    [([0, 0], [2, 5]), ([-1, 0], [1, 3]), ([2, 0], [1, 3])],
)
def test_slice_rejects_out_of_bounds(start: list[int], limit: list[int]) -> None:
    with pytest.raises(VerifyError, match="out of bounds"):
        _infer("slice", [TensorSig((2, 4), "f32")], {"start": start, "limit": limit})


def test_slice_rejects_zero_stride() -> None:
    with pytest.raises(VerifyError, match="must be positive"):
        _infer("slice", [TensorSig((4,), "f32")], {"start": [0], "limit": [4], "strides": [0]})


def test_slice_rejects_wrong_entry_count() -> None:
    with pytest.raises(VerifyError, match="one entry per dimension"):
        _infer("slice", [TensorSig((4, 4), "f32")], {"start": [0], "limit": [4]})


# --------------------------------------------------------------------------
# gather


def test_gather_shape_is_data_around_the_indices() -> None:
    data, ids = TensorSig((10, None, 3), "bf16"), TensorSig((2, 5), "i32")
    assert _infer("gather", [data, ids], {"axis": 1}) == [TensorSig((10, 2, 5, 3), "bf16")]
    assert _infer("gather", [data, TensorSig((), "i64")], {"axis": -1}) == [TensorSig((10, None), "bf16")]
    assert _infer("gather", [data, TensorSig((None,), "i64")]) == [TensorSig((None, None, 3), "bf16")]


@pytest.mark.parametrize(("data", "indices", "attrs", "message"), [
    (TensorSig((10, 4), "f32"), TensorSig((3,), "i8"), {}, "must have element type i32 or i64"),
    (TensorSig((10, 4), "f32"), TensorSig((3,), "i64"), {"axis": -3}, "out of range"),
    (TensorSig((), "f32"), TensorSig((3,), "i64"), {}, "at least one dimension"),
    (TensorSig((4, 0), "f32"), TensorSig((3,), "i64"), {"axis": 1}, "nothing to gather"),
])
def test_gather_rejects(data: TensorSig, indices: TensorSig, attrs: dict, message: str) -> None:
    with pytest.raises(VerifyError, match=message):
        _infer("gather", [data, indices], attrs)


def test_gather_counts_negative_indices_from_the_end() -> None:
    data = _grid(4, 3)
    indices = np.array([[0, -1], [3, -4]], np.int64)
    (out,) = evaluate_op("gather", [data, indices], {"axis": 0})
    np.testing.assert_array_equal(out, data[[[0, 3], [3, 0]]])
    (column,) = evaluate_op("gather", [data, np.array(-1, np.int32)], {"axis": 1})
    np.testing.assert_array_equal(column, data[:, 2])
    (empty,) = evaluate_op("gather", [data, np.zeros((0,), np.int64)], {"axis": 1})
    assert empty.shape == (4, 0)


def _indexing_operands(name: str, indices: np.ndarray) -> list[np.ndarray]:
    """Operands of ``name`` indexing axis 0 of a 4x3 grid at ``indices`` (1-D)."""
    data = _grid(4, 3)
    if name == "gather_elements":
        return [data, np.tile(indices.reshape(-1, 1), (1, 3))]
    if name == "scatter_update":
        return [data, indices, np.zeros((indices.size, 3), np.float32)]
    return [data, indices]


@pytest.mark.parametrize("name", ["gather", "gather_elements", "scatter_update"])
@pytest.mark.parametrize(("index", "negative_indices"), [(4, True), (-5, True), (2**40, True), (-1, False)])
def test_indices_out_of_range_raise(name: str, index: int, negative_indices: bool) -> None:
    """As eager PyTorch: an IndexError (torch.gather's RuntimeError too) naming the index and the axis."""
    operands = _indexing_operands(name, np.array([0, index], np.int64))
    with pytest.raises(IndexOutOfRangeError, match=rf"index {index} is not in \[-?\d+, 4\) \(axis 0\)") as raised:
        evaluate_op(name, operands, {"axis": 0, "negative_indices": negative_indices})
    assert isinstance(raised.value, IndexError) and isinstance(raised.value, RuntimeError)


@pytest.mark.parametrize("name", ["gather", "gather_elements", "scatter_update"])
def test_negative_indices_count_from_the_end_unless_the_op_says_not(name: str) -> None:
    operands = _indexing_operands(name, np.array([-4, -1], np.int32))
    (wrapped,) = evaluate_op(name, operands, {"axis": 0})
    (plain,) = evaluate_op(name, _indexing_operands(name, np.array([0, 3], np.int32)), {"axis": 0})
    np.testing.assert_array_equal(wrapped, plain)
    with pytest.raises(IndexOutOfRangeError, match=r"index -4 is not in \[0, 4\)"):
        evaluate_op(name, operands, {"axis": 0, "negative_indices": False})


def test_gather_compiled_matches_the_reference_at_every_axis() -> None:
    import graphfuse

    rng = np.random.default_rng(0)
    for shape, axis, index_shape in (((6, 5, 4), 0, (3, 2)), ((6, 5, 4), 1, (7,)), ((6, 5, 4), -1, ())):
        b = graphfuse.GraphBuilder("gather")
        b.ret(b.gather(b.arg(shape), b.arg(index_shape, "i64"), axis=axis))
        executable = graphfuse.compile(b.module)
        size = shape[axis]
        x = rng.standard_normal(shape).astype(np.float32)
        ids = rng.integers(-size, size, index_shape)
        np.testing.assert_array_equal(executable(x, ids)[0], executable.reference(x, ids)[0])


# --------------------------------------------------------------------------
# scatter_update


def test_scatter_update_keeps_data_shape_and_checks_updates() -> None:
    data, ids = TensorSig((4, None, 3), "f16"), TensorSig((2, 5), "i64")
    updates = TensorSig((4, 2, 5, 3), "f16")
    assert _infer("scatter_update", [data, ids, updates], {"axis": 1}) == [data]
    assert _infer("scatter_update", [data, TensorSig((), "i32"), TensorSig((4, 3), "f16")], {"axis": -2}) == [data]


@pytest.mark.parametrize(("inputs", "attrs", "message"), [
    ((TensorSig((8, 4), "f32"), TensorSig((3,), "f32"), TensorSig((3, 4), "f32")), {}, "i32 or i64"),
    ((TensorSig((8, 4), "f32"), TensorSig((3,), "i64"), TensorSig((3, 4), "f16")), {}, "element type of operand data"),
    ((TensorSig((8, 4), "f32"), TensorSig((3,), "i64"), TensorSig((4, 3), "f32")), {}, r"shape .*\(3x4\)"),
    ((TensorSig((8, 4), "f32"), TensorSig((3,), "i64"), TensorSig((8, 3), "f32")), {"axis": 2}, "out of range"),
    ((TensorSig((), "f32"), TensorSig((3,), "i64"), TensorSig((3,), "f32")), {}, "at least one dimension"),
])
def test_scatter_update_rejects(inputs: tuple, attrs: dict, message: str) -> None:
    with pytest.raises(VerifyError, match=message):
        _infer("scatter_update", list(inputs), attrs)


def test_scatter_update_writes_in_order() -> None:
    data = _grid(5, 2)
    updates = -np.arange(8, dtype=np.float32).reshape(4, 2) - 1
    indices = np.array([1, -1, 2, 1], np.int64)  # 1, then 4, then 2, the second 1 wins
    (out,) = evaluate_op("scatter_update", [data, indices, updates], {"axis": 0})
    want = data.copy()
    want[4], want[2], want[1] = updates[1], updates[2], updates[3]
    np.testing.assert_array_equal(out, want)
    (column,) = evaluate_op("scatter_update", [data, np.array(-2, np.int32), np.ones(5, np.float32)], {"axis": 1})
    np.testing.assert_array_equal(column[:, 0], np.ones(5))
    np.testing.assert_array_equal(column[:, 1], data[:, 1])


@pytest.mark.parametrize(("shape", "axis", "index_shape"), [
    ((6, 5, 4), 0, (3, 2)), ((6, 5, 4), 1, (7,)), ((6, 5, 4), -1, ()), ((1, 2, 9, 4), 2, (3,)),
])
def test_scatter_update_compiled_matches_the_reference(shape: tuple, axis: int, index_shape: tuple) -> None:
    import graphfuse

    rng = np.random.default_rng(1)
    updates_shape = shape[:axis % len(shape)] + index_shape + shape[axis % len(shape) + 1:]
    b = graphfuse.GraphBuilder("scatter")
    b.ret(b.scatter_update(b.arg(shape), b.arg(index_shape, "i64"), b.arg(updates_shape), axis=axis))
    executable = graphfuse.compile(b.module)
    size = shape[axis]
    x = rng.standard_normal(shape).astype(np.float32)
    ids = rng.integers(-size, size, index_shape)
    new = rng.standard_normal(updates_shape).astype(np.float32)
    before = x.copy()
    np.testing.assert_array_equal(executable(x, ids, new)[0], executable.reference(x, ids, new)[0])
    np.testing.assert_array_equal(x, before)  # data is an input: the result is a copy


# --------------------------------------------------------------------------
# gather_elements


def test_gather_elements_has_the_indices_shape() -> None:
    assert _infer("gather_elements", [TensorSig((4, None), "bf16"), TensorSig((2, 7), "i32")], {"axis": 1}) == [
        TensorSig((2, 7), "bf16")]


@pytest.mark.parametrize(("data", "indices", "attrs", "message"), [
    (TensorSig((4, 5), "f32"), TensorSig((4, 5), "f32"), {}, "i32 or i64"),
    (TensorSig((4, 5), "f32"), TensorSig((4,), "i64"), {}, "must have the rank"),
    (TensorSig((4, 5), "f32"), TensorSig((5, 5), "i64"), {"axis": 1}, "dimension 0 of operand indices"),
    (TensorSig((0, 5), "f32"), TensorSig((2, 5), "i64"), {}, "nothing to gather"),
    (TensorSig((4, 5), "f32"), TensorSig((4, 5), "i64"), {"axis": 2}, "out of range"),
])
def test_gather_elements_rejects(data: TensorSig, indices: TensorSig, attrs: dict, message: str) -> None:
    with pytest.raises(VerifyError, match=message):
        _infer("gather_elements", [data, indices], attrs)


def test_gather_elements_reads_along_the_axis_from_the_leading_corner() -> None:
    data = _grid(4, 5)
    indices = np.array([[4, -1, 0], [-1, -5, 2]], np.int64)  # rows 0 and 1; negative ones from the end
    (out,) = evaluate_op("gather_elements", [data, indices], {"axis": 1})
    np.testing.assert_array_equal(out, [[data[0, 4], data[0, 4], data[0, 0]], [data[1, 4], data[1, 0], data[1, 2]]])


@pytest.mark.parametrize(("shape", "axis", "index_shape"), [((6, 5, 4), 0, (9, 5, 4)), ((6, 5, 4), 1, (6, 2, 3)),
                                                             ((6, 5, 4), -1, (1, 5, 7))])
def test_gather_elements_compiled_matches_the_reference(shape: tuple, axis: int, index_shape: tuple) -> None:
    import graphfuse

    rng = np.random.default_rng(2)
    b = graphfuse.GraphBuilder("gather_elements")
    b.ret(b.gather_elements(b.arg(shape), b.arg(index_shape, "i32"), axis=axis))
    executable = graphfuse.compile(b.module)
    x = rng.standard_normal(shape).astype(np.float32)
    ids = rng.integers(-shape[axis], shape[axis], index_shape).astype(np.int32)
    np.testing.assert_array_equal(executable(x, ids)[0], executable.reference(x, ids)[0])


# --------------------------------------------------------------------------
# iota


def test_iota_is_the_positions_along_one_dim() -> None:
    assert _infer("iota", [TensorSig((2, None), "bf16")], {"axis": -1}) == [TensorSig((None,), "i64")]
    with pytest.raises(VerifyError, match="at least one dimension"):
        _infer("iota", [TensorSig((), "f32")], {"axis": 0})
    (positions,) = evaluate_op("iota", [np.zeros((3, 5), np.int8)], {"axis": 1})
    np.testing.assert_array_equal(positions, np.arange(5))


def test_iota_compiled_at_a_dynamic_length() -> None:
    import graphfuse

    b = graphfuse.GraphBuilder("iota")
    b.ret(b.iota(b.arg((2, None)), axis=1))  # the result buffer is sized by shape inference at each call
    executable = graphfuse.compile(b.module)
    for length in (1, 9):
        np.testing.assert_array_equal(executable(np.ones((2, length), np.float32))[0], np.arange(length))


# --------------------------------------------------------------------------
# pad

#: graph.pad's modes and numpy.pad's names for them (which take only non-negative pads)
NUMPY_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", sorted(NUMPY_PAD_MODES))
def test_pad_with_positive_pads_is_numpy_pad(mode: str) -> None:
    x = _grid(3, 4, 5)
    low, high = [0, 2, 1], [1, 3, 4]
    (out,) = evaluate_op("pad", [x], {"low": low, "high": high, "mode": mode})
    np.testing.assert_array_equal(out, np.pad(x, list(zip(low, high, strict=True)), mode=NUMPY_PAD_MODES[mode]))


def test_pad_constant_value_of_any_element_type() -> None:
    ids = np.arange(12, dtype=np.int64).reshape(3, 4)
    (out,) = evaluate_op("pad", [ids, np.array(-7, np.int64)], {"low": [0, 1], "high": [1, 0]})
    np.testing.assert_array_equal(out, np.pad(ids, [(0, 1), (1, 0)], constant_values=-7))
    mask = np.array([[True, False]])
    (out,) = evaluate_op("pad", [mask], {"low": [1, 0], "high": [0, 2]})
    assert out.dtype == np.bool_ and out.tolist() == [[False] * 4, [True, False, False, False]]
    (out,) = evaluate_op("pad", [np.full((1, 2), np.nan, np.float32), np.array(np.inf, np.float32)],
                         {"low": [0, 1], "high": [0, 0]})
    assert np.isinf(out[0, 0]) and np.isnan(out[0, 1:]).all()


def test_pad_crops_with_negative_pads_in_every_mode() -> None:
    row = np.arange(5, dtype=np.float32)
    expected = {
        # constant: a plain crop, then the value
        "constant": [1, 2, 3, 4, 0, 0],
        # reflect and replicate read relative to the operand's own edges (PyTorch's kernels): 4 3 after the end
        "reflect": [1, 2, 3, 4, 3, 2],
        "replicate": [1, 2, 3, 4, 4, 4],
        # circular wraps around what the crop leaves, [1, 2, 3, 4]
        "circular": [1, 2, 3, 4, 1, 2],
    }
    for mode, want in expected.items():
        (out,) = evaluate_op("pad", [row], {"low": [-1], "high": [2], "mode": mode})
        assert out.tolist() == want, mode
    (out,) = evaluate_op("pad", [row], {"low": [2], "high": [-3], "mode": "circular"})
    assert out.tolist() == [0, 1, 0, 1]  # [0, 1] left, wrapped before itself


def test_pad_of_an_empty_dim_is_all_padding() -> None:
    (out,) = evaluate_op("pad", [np.zeros((0, 3), np.float32), np.array(2.5, np.float32)],
                         {"low": [1, 0], "high": [2, 0]})
    np.testing.assert_array_equal(out, np.full((3, 3), 2.5, np.float32))
    assert _infer("pad", [TensorSig((None, 3), "f32")], {"low": [4, -1], "high": [0, 0]}) == [
        TensorSig((None, 2), "f32")]


@pytest.mark.parametrize(("shape", "attrs", "message"), [
    ((4, 8), {"low": [0], "high": [0, 0]}, r"low \[0\] must have one entry per dimension"),
    ((4, 8), {"low": [0, -5], "high": [0, -4]}, "dimension 1 of tensor<4x8xf32> padded by -5 and -4 would have size"),
    ((4, 8), {"low": [4, 0], "high": [0, 0], "mode": "reflect"}, "reflect pads must be smaller than the dimension"),
    ((1, 8), {"low": [0, 0], "high": [1, 0], "mode": "reflect"}, "reflect pads must be smaller than the dimension"),
    ((0, 8), {"low": [1, 0], "high": [0, 0], "mode": "replicate"}, "replicate has no element to repeat"),
    ((4, 8), {"low": [0, 9], "high": [0, 0], "mode": "circular"}, "at most the 8 elements left"),
    ((4, 8), {"low": [0, 3], "high": [0, -6], "mode": "circular"}, "at most the 2 elements left"),
    ((4, 8), {"low": [0, 1], "high": [0, 0], "mode": "mirror"}, "attribute 'mode' must be one of"),
])
def test_pad_rejects(shape: tuple[int, ...], attrs: dict, message: str) -> None:
    with pytest.raises(VerifyError, match=message):
        _infer("pad", [TensorSig(shape, "f32")], attrs)


def test_pad_value_must_be_a_scalar_of_the_operand_type_in_constant_mode() -> None:
    x = TensorSig((4, 8), "i64")
    with pytest.raises(VerifyError, match="rank-0 tensor of the element type"):
        _infer("pad", [x, TensorSig((), "i32")], {"low": [0, 1], "high": [0, 0]})
    with pytest.raises(VerifyError, match="rank-0 tensor of the element type"):
        _infer("pad", [x, TensorSig((1,), "i64")], {"low": [0, 1], "high": [0, 0]})
    with pytest.raises(VerifyError, match='only read by mode "constant", not "replicate"'):
        _infer("pad", [x, TensorSig((), "i64")], {"low": [0, 1], "high": [0, 0], "mode": "replicate"})


def test_pad_matches_torch_in_every_mode_and_on_crops() -> None:
    """F.pad over the pads its kernels accept (and which stay inside the tensor): the same elements."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    x = _grid(2, 3, 5)
    checked = 0
    for mode, size in itertools.product(sorted(NUMPY_PAD_MODES), (1, 2, 5)):
        for low, high in itertools.product(range(-5, 6), repeat=2):
            row = x[:, :, :size]
            try:
                _infer("pad", [TensorSig(row.shape, "f32")], {"low": [0, 0, low], "high": [0, 0, high], "mode": mode})
            except VerifyError:
                continue
            try:
                want = F.pad(torch.from_numpy(row), (low, high), mode=mode).numpy()
            except RuntimeError:  # PyTorch's own limits (a rank, an output of size 0)
                continue
            (got,) = evaluate_op("pad", [row], {"low": [0, 0, low], "high": [0, 0, high], "mode": mode})
            np.testing.assert_array_equal(got, want, err_msg=f"{mode} {size} {low} {high}")
            checked += 1
    assert checked > 300
