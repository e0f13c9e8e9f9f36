"""The ONNX front end: conformance with the ONNX backend node cases, the import API, its errors and the docs.

The backend node cases (model, inputs, expected outputs) are generated in
memory by the case modules the onnx wheel ships (onnx.backend.test.case.node),
one module per op; only the modules of the claimed ops are imported.  Every
case of every claimed op is imported and run with the reference interpreter
and must match the expected outputs with the case's tolerances (ONNX's
runner defaults: rtol 1e-3, atol 1e-7), unless it is listed in
:data:`EXCLUDED` with its reason, in which case it must fail with exactly that
reason.  The ``_expanded`` variants made only of claimed ops (multi-node
function bodies) and the PyTorch-exported models the wheel ships as files
(data/pytorch-converted, data/pytorch-operator) run the same way.  The
compiled CPU path runs one case per claimed op here, and every case with
``GRAPHFUSE_ONNX_COMPILE_ALL=1`` (several minutes).

Inputs that a claimed op needs at import time (Reshape's shape, Slice's
starts, reduction axes, ...) are graph inputs in these cases: they are bound
to the case's values with ``constant_inputs=``, as a model would hold them as
initializers.

``GRAPHFUSE_UPDATE_DOCS=1`` rewrites the generated part of
docs/frontend-onnx.md instead of comparing it.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the ONNX front end is an optional extra: pip install -e '.[onnx]'")

import graphfuse  # noqa: E402
from graphfuse import GraphfuseError  # noqa: E402
from graphfuse.frontends import onnx as onnx_frontend  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "frontend-onnx.md"
COMPILE_ALL = os.environ.get("GRAPHFUSE_ONNX_COMPILE_ALL") == "1"


# --------------------------------------------------------------------------
# Known gaps: each excluded case must fail with its reason's error, no other case may fail


@dataclass(frozen=True)
class Gap:
    reason: str
    #: a fragment of the GraphfuseError message the case fails with
    error: str


def _element_type_gap(onnx_type: str) -> Gap:
    return Gap(f"element type {onnx_type} is not in the graph dialect", f"has element type {onnx_type},")


_DROPOUT_TRAINING = Gap("training mode with a nonzero ratio drops random elements (inference, or ratio 0, only)",
                        "training_mode=true with a nonzero ratio")
_MAXPOOL_INDICES = Gap("the Indices output of MaxPool", "the Indices output is not supported")
_NOT_A_TENSOR = Gap("sequence and optional values are not tensors", "not a tensor")

_CONV_3D = Gap("3-D convolution: conv2d is 2-D (1-D runs as 2-D)", "input of rank 5 is not supported")

EXCLUDED: dict[str, Gap] = {
    **dict.fromkeys([
        "test_add_int16", "test_div_int16", "test_equal_int16", "test_greater_equal_int16",
        "test_greater_equal_int16_expanded", "test_greater_int16", "test_less_equal_int16",
        "test_less_equal_int16_expanded", "test_less_int16", "test_max_int16", "test_min_int16", "test_mul_int16",
        "test_sub_int16",
    ], _element_type_gap("int16")),
    **dict.fromkeys([
        "test_add_uint16", "test_div_uint16", "test_equal_uint16", "test_greater_equal_uint16",
        "test_greater_equal_uint16_expanded", "test_greater_uint16", "test_less_equal_uint16",
        "test_less_equal_uint16_expanded", "test_less_uint16", "test_max_uint16", "test_min_uint16",
        "test_mul_uint16", "test_sub_uint16",
    ], _element_type_gap("uint16")),
    **dict.fromkeys([
        "test_add_uint32", "test_div_uint32", "test_equal_uint32", "test_greater_equal_uint32",
        "test_greater_equal_uint32_expanded", "test_greater_uint32", "test_less_equal_uint32",
        "test_less_equal_uint32_expanded", "test_less_uint32", "test_max_uint32", "test_min_uint32",
        "test_mul_uint32", "test_pow_types_float32_uint32", "test_sub_uint32",
    ], _element_type_gap("uint32")),
    **dict.fromkeys([
        "test_add_uint64", "test_div_uint64", "test_equal_uint64", "test_greater_equal_uint64",
        "test_greater_equal_uint64_expanded", "test_greater_uint64", "test_less_equal_uint64",
        "test_less_equal_uint64_expanded", "test_less_uint64", "test_max_uint64", "test_min_uint64",
        "test_mul_uint64", "test_pow_types_float32_uint64", "test_sub_uint64",
    ], _element_type_gap("uint64")),
    **dict.fromkeys([
        "test_add_uint8", "test_div_uint8", "test_equal_uint8", "test_greater_equal_uint8",
        "test_greater_equal_uint8_expanded", "test_greater_uint8", "test_less_equal_uint8",
        "test_less_equal_uint8_expanded", "test_less_uint8", "test_max_uint8", "test_maxpool_2d_uint8",
        "test_min_uint8", "test_mul_uint8", "test_sub_uint8",
    ], _element_type_gap("uint8")),
    **dict.fromkeys([
        "test_cast_DOUBLE_to_FLOAT", "test_cast_DOUBLE_to_FLOAT16", "test_cast_FLOAT16_to_DOUBLE",
        "test_cast_FLOAT_to_DOUBLE", "test_castlike_DOUBLE_to_FLOAT", "test_castlike_DOUBLE_to_FLOAT16",
        "test_castlike_DOUBLE_to_FLOAT16_expanded", "test_castlike_DOUBLE_to_FLOAT_expanded",
        "test_castlike_FLOAT16_to_DOUBLE", "test_castlike_FLOAT16_to_DOUBLE_expanded",
        "test_castlike_FLOAT_to_DOUBLE", "test_castlike_FLOAT_to_DOUBLE_expanded", "test_max_float64",
        "test_min_float64", "test_cumsum_1d", "test_cumsum_1d_exclusive", "test_cumsum_1d_reverse",
        "test_cumsum_1d_reverse_exclusive", "test_cumsum_2d_axis_0", "test_cumsum_2d_axis_1",
        "test_cumsum_2d_negative_axis", "test_reduce_log_sum_exp_default_axes_keepdims_example",
        "test_reduce_log_sum_exp_default_axes_keepdims_example_expanded",
        "test_reduce_log_sum_exp_default_axes_keepdims_random",
        "test_reduce_log_sum_exp_default_axes_keepdims_random_expanded",
        "test_reduce_log_sum_exp_do_not_keepdims_example", "test_reduce_log_sum_exp_do_not_keepdims_example_expanded",
        "test_reduce_log_sum_exp_do_not_keepdims_random", "test_reduce_log_sum_exp_do_not_keepdims_random_expanded",
        "test_reduce_log_sum_exp_empty_set_expanded", "test_reduce_log_sum_exp_keepdims_example",
        "test_reduce_log_sum_exp_keepdims_example_expanded", "test_reduce_log_sum_exp_keepdims_random",
        "test_reduce_log_sum_exp_keepdims_random_expanded", "test_reduce_log_sum_exp_negative_axes_keepdims_example",
        "test_reduce_log_sum_exp_negative_axes_keepdims_example_expanded",
        "test_reduce_log_sum_exp_negative_axes_keepdims_random",
        "test_reduce_log_sum_exp_negative_axes_keepdims_random_expanded",
        "pytorch-operator/test_operator_add_broadcast", "pytorch-operator/test_operator_add_size1_broadcast",
        "pytorch-operator/test_operator_add_size1_right_broadcast",
        "pytorch-operator/test_operator_add_size1_singleton_broadcast", "pytorch-operator/test_operator_addconstant",
    ], _element_type_gap("double")),
    **dict.fromkeys([
        "pytorch-converted/test_Conv3d", "pytorch-converted/test_Conv3d_dilated",
        "pytorch-converted/test_Conv3d_dilated_strided", "pytorch-converted/test_Conv3d_groups",
        "pytorch-converted/test_Conv3d_no_bias", "pytorch-converted/test_Conv3d_stride",
        "pytorch-converted/test_Conv3d_stride_padding",
    ], _CONV_3D),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_FLOAT4E2M1", "test_cast_FLOAT4E2M1_to_FLOAT", "test_cast_FLOAT4E2M1_to_FLOAT16",
        "test_cast_FLOAT_to_FLOAT4E2M1", "test_castlike_FLOAT16_to_FLOAT4E2M1",
        "test_castlike_FLOAT16_to_FLOAT4E2M1_expanded", "test_castlike_FLOAT4E2M1_to_FLOAT",
        "test_castlike_FLOAT4E2M1_to_FLOAT16", "test_castlike_FLOAT4E2M1_to_FLOAT16_expanded",
        "test_castlike_FLOAT4E2M1_to_FLOAT_expanded", "test_castlike_FLOAT_to_FLOAT4E2M1",
        "test_castlike_FLOAT_to_FLOAT4E2M1_expanded",
    ], _element_type_gap("float4e2m1")),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_FLOAT8E4M3FN", "test_cast_FLOAT8E4M3FN_to_FLOAT", "test_cast_FLOAT8E4M3FN_to_FLOAT16",
        "test_cast_FLOAT_to_FLOAT8E4M3FN", "test_cast_no_saturate_FLOAT16_to_FLOAT8E4M3FN",
        "test_cast_no_saturate_FLOAT_to_FLOAT8E4M3FN", "test_castlike_FLOAT16_to_FLOAT8E4M3FN",
        "test_castlike_FLOAT16_to_FLOAT8E4M3FN_expanded", "test_castlike_FLOAT8E4M3FN_to_FLOAT",
        "test_castlike_FLOAT8E4M3FN_to_FLOAT16", "test_castlike_FLOAT8E4M3FN_to_FLOAT16_expanded",
        "test_castlike_FLOAT8E4M3FN_to_FLOAT_expanded", "test_castlike_FLOAT_to_FLOAT8E4M3FN",
        "test_castlike_FLOAT_to_FLOAT8E4M3FN_expanded", "test_castlike_no_saturate_FLOAT16_to_FLOAT8E4M3FN",
        "test_castlike_no_saturate_FLOAT16_to_FLOAT8E4M3FN_expanded",
        "test_castlike_no_saturate_FLOAT_to_FLOAT8E4M3FN", "test_castlike_no_saturate_FLOAT_to_FLOAT8E4M3FN_expanded",
    ], _element_type_gap("float8e4m3fn")),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_FLOAT8E4M3FNUZ", "test_cast_FLOAT8E4M3FNUZ_to_FLOAT",
        "test_cast_FLOAT8E4M3FNUZ_to_FLOAT16", "test_cast_FLOAT_to_FLOAT8E4M3FNUZ",
        "test_cast_no_saturate_FLOAT16_to_FLOAT8E4M3FNUZ", "test_cast_no_saturate_FLOAT_to_FLOAT8E4M3FNUZ",
        "test_castlike_FLOAT16_to_FLOAT8E4M3FNUZ", "test_castlike_FLOAT16_to_FLOAT8E4M3FNUZ_expanded",
        "test_castlike_FLOAT8E4M3FNUZ_to_FLOAT", "test_castlike_FLOAT8E4M3FNUZ_to_FLOAT16",
        "test_castlike_FLOAT8E4M3FNUZ_to_FLOAT16_expanded", "test_castlike_FLOAT8E4M3FNUZ_to_FLOAT_expanded",
        "test_castlike_FLOAT_to_FLOAT8E4M3FNUZ", "test_castlike_FLOAT_to_FLOAT8E4M3FNUZ_expanded",
        "test_castlike_no_saturate_FLOAT16_to_FLOAT8E4M3FNUZ",
        "test_castlike_no_saturate_FLOAT16_to_FLOAT8E4M3FNUZ_expanded",
        "test_castlike_no_saturate_FLOAT_to_FLOAT8E4M3FNUZ",
        "test_castlike_no_saturate_FLOAT_to_FLOAT8E4M3FNUZ_expanded",
    ], _element_type_gap("float8e4m3fnuz")),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_FLOAT8E5M2", "test_cast_FLOAT8E5M2_to_FLOAT", "test_cast_FLOAT8E5M2_to_FLOAT16",
        "test_cast_FLOAT_to_FLOAT8E5M2", "test_cast_no_saturate_FLOAT16_to_FLOAT8E5M2",
        "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2", "test_castlike_FLOAT16_to_FLOAT8E5M2",
        "test_castlike_FLOAT16_to_FLOAT8E5M2_expanded", "test_castlike_FLOAT8E5M2_to_FLOAT",
        "test_castlike_FLOAT8E5M2_to_FLOAT16", "test_castlike_FLOAT8E5M2_to_FLOAT16_expanded",
        "test_castlike_FLOAT8E5M2_to_FLOAT_expanded", "test_castlike_FLOAT_to_FLOAT8E5M2",
        "test_castlike_FLOAT_to_FLOAT8E5M2_expanded", "test_castlike_no_saturate_FLOAT16_to_FLOAT8E5M2",
        "test_castlike_no_saturate_FLOAT16_to_FLOAT8E5M2_expanded", "test_castlike_no_saturate_FLOAT_to_FLOAT8E5M2",
        "test_castlike_no_saturate_FLOAT_to_FLOAT8E5M2_expanded",
    ], _element_type_gap("float8e5m2")),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_FLOAT8E5M2FNUZ", "test_cast_FLOAT8E5M2FNUZ_to_FLOAT",
        "test_cast_FLOAT8E5M2FNUZ_to_FLOAT16", "test_cast_FLOAT_to_FLOAT8E5M2FNUZ",
        "test_cast_no_saturate_FLOAT16_to_FLOAT8E5M2FNUZ", "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2FNUZ",
        "test_castlike_FLOAT16_to_FLOAT8E5M2FNUZ", "test_castlike_FLOAT16_to_FLOAT8E5M2FNUZ_expanded",
        "test_castlike_FLOAT8E5M2FNUZ_to_FLOAT", "test_castlike_FLOAT8E5M2FNUZ_to_FLOAT16",
        "test_castlike_FLOAT8E5M2FNUZ_to_FLOAT16_expanded", "test_castlike_FLOAT8E5M2FNUZ_to_FLOAT_expanded",
        "test_castlike_FLOAT_to_FLOAT8E5M2FNUZ", "test_castlike_FLOAT_to_FLOAT8E5M2FNUZ_expanded",
        "test_castlike_no_saturate_FLOAT16_to_FLOAT8E5M2FNUZ",
        "test_castlike_no_saturate_FLOAT16_to_FLOAT8E5M2FNUZ_expanded",
        "test_castlike_no_saturate_FLOAT_to_FLOAT8E5M2FNUZ",
        "test_castlike_no_saturate_FLOAT_to_FLOAT8E5M2FNUZ_expanded",
    ], _element_type_gap("float8e5m2fnuz")),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_INT2", "test_cast_FLOAT_to_INT2", "test_cast_INT2_to_FLOAT",
        "test_cast_INT2_to_FLOAT16", "test_cast_INT2_to_INT8", "test_castlike_FLOAT16_to_INT2",
        "test_castlike_FLOAT16_to_INT2_expanded", "test_castlike_FLOAT_to_INT2",
        "test_castlike_FLOAT_to_INT2_expanded", "test_castlike_INT2_to_FLOAT", "test_castlike_INT2_to_FLOAT16",
        "test_castlike_INT2_to_FLOAT16_expanded", "test_castlike_INT2_to_FLOAT_expanded",
        "test_castlike_INT2_to_INT8", "test_castlike_INT2_to_INT8_expanded",
    ], _element_type_gap("int2")),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_INT4", "test_cast_FLOAT_to_INT4", "test_cast_INT4_to_FLOAT",
        "test_cast_INT4_to_FLOAT16", "test_cast_INT4_to_INT8", "test_castlike_FLOAT16_to_INT4",
        "test_castlike_FLOAT16_to_INT4_expanded", "test_castlike_FLOAT_to_INT4",
        "test_castlike_FLOAT_to_INT4_expanded", "test_castlike_INT4_to_FLOAT", "test_castlike_INT4_to_FLOAT16",
        "test_castlike_INT4_to_FLOAT16_expanded", "test_castlike_INT4_to_FLOAT_expanded",
        "test_castlike_INT4_to_INT8", "test_castlike_INT4_to_INT8_expanded",
    ], _element_type_gap("int4")),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_UINT2", "test_cast_FLOAT_to_UINT2", "test_cast_UINT2_to_FLOAT",
        "test_cast_UINT2_to_FLOAT16", "test_cast_UINT2_to_UINT8", "test_castlike_FLOAT16_to_UINT2",
        "test_castlike_FLOAT16_to_UINT2_expanded", "test_castlike_FLOAT_to_UINT2",
        "test_castlike_FLOAT_to_UINT2_expanded", "test_castlike_UINT2_to_FLOAT", "test_castlike_UINT2_to_FLOAT16",
        "test_castlike_UINT2_to_FLOAT16_expanded", "test_castlike_UINT2_to_FLOAT_expanded",
        "test_castlike_UINT2_to_UINT8", "test_castlike_UINT2_to_UINT8_expanded",
    ], _element_type_gap("uint2")),
    **dict.fromkeys([
        "test_cast_FLOAT16_to_UINT4", "test_cast_FLOAT_to_UINT4", "test_cast_UINT4_to_FLOAT",
        "test_cast_UINT4_to_FLOAT16", "test_cast_UINT4_to_UINT8", "test_castlike_FLOAT16_to_UINT4",
        "test_castlike_FLOAT16_to_UINT4_expanded", "test_castlike_FLOAT_to_UINT4",
        "test_castlike_FLOAT_to_UINT4_expanded", "test_castlike_UINT4_to_FLOAT", "test_castlike_UINT4_to_FLOAT16",
        "test_castlike_UINT4_to_FLOAT16_expanded", "test_castlike_UINT4_to_FLOAT_expanded",
        "test_castlike_UINT4_to_UINT8", "test_castlike_UINT4_to_UINT8_expanded",
    ], _element_type_gap("uint4")),
    **dict.fromkeys([
        "test_cast_e8m0_FLOAT16_to_FLOAT8E8M0", "test_cast_e8m0_FLOAT8E8M0_to_FLOAT",
        "test_cast_e8m0_FLOAT8E8M0_to_FLOAT16", "test_cast_e8m0_FLOAT_to_FLOAT8E8M0",
    ], _element_type_gap("float8e8m0")),
    **dict.fromkeys([
        "test_equal_string", "test_equal_string_broadcast",
    ], _element_type_gap("string")),
    **dict.fromkeys([
        "test_identity_opt", "test_identity_sequence",
    ], _NOT_A_TENSOR),
    **dict.fromkeys([
        "test_maxpool_with_argmax_2d_precomputed_pads", "test_maxpool_with_argmax_2d_precomputed_strides",
    ], _MAXPOOL_INDICES),
    **dict.fromkeys([
        "test_training_dropout", "test_training_dropout_default", "test_training_dropout_default_mask",
        "test_training_dropout_mask",
    ], _DROPOUT_TRAINING),
}

#: Cases the reference interpreter passes but the compiled CPU path cannot run, with the runtime's error.
COMPILED_EXCLUDED: dict[str, Gap] = {}

#: Cases of empty tensors (zero-size inputs, results and reductions over nothing; graph-fold-empty-tensors takes
#: them out of the graph), compiled in every run besides the one case per op of the compiled subset.
EMPTY_TENSOR_CASES = [
    "test_castlike_BFLOAT16_to_FLOAT", "test_castlike_FLOAT16_to_FLOAT", "test_castlike_FLOAT_to_BFLOAT16",
    "test_castlike_FLOAT_to_FLOAT16", "test_reduce_l1_empty_set", "test_reduce_l2_empty_set",
    "test_reduce_log_sum_empty_set", "test_reduce_log_sum_exp_empty_set", "test_reduce_sum_empty_set",
    "test_reduce_sum_empty_set_non_reduced_axis_zero", "test_reduce_sum_square_empty_set",
    "test_reshape_allowzero_reordered", "test_shape_start_greater_than_end", "test_slice_start_out_of_bounds",
    "test_split_zero_size_splits_opset13", "test_split_zero_size_splits_opset18", "test_reduce_max_empty_set",
    "test_reduce_max_empty_set_bool", "test_reduce_min_empty_set", "test_constantofshape_int_shape_zero",
    "test_castlike_BFLOAT16_to_FLOAT_expanded", "test_castlike_FLOAT16_to_FLOAT_expanded",
    "test_castlike_FLOAT_to_BFLOAT16_expanded", "test_castlike_FLOAT_to_FLOAT16_expanded",
    "test_reduce_l1_empty_set_expanded", "test_reduce_l2_empty_set_expanded",
    "test_reduce_log_sum_empty_set_expanded", "test_reduce_sum_square_empty_set_expanded",
]


# --------------------------------------------------------------------------
# The backend node cases of the claimed ops


def _case_modules(op_type: str, available: set[str]) -> list[str]:
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", op_type).lower()
    names = {op_type.lower(), snake, op_type.lower() + "_", snake + "_"}
    return sorted(names & available)


def _load_backend_cases() -> tuple[dict[str, object], dict[str, object]]:
    """The single-node cases of the claimed ops, and their `_expanded` variants made only of claimed ops."""
    import onnx.backend.test.case.node as node_cases

    available = {module.name for module in pkgutil.iter_modules(node_cases.__path__)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators overflow on purpose (casts, log(0))
        for op_type in onnx_frontend.CONVERTERS:
            for module in _case_modules(op_type, available):
                importlib.import_module(f"{node_cases.__name__}.{module}")
    cases, expanded = {}, {}
    for case in node_cases._NodeTestCases:  # filled by the imported generators
        nodes = case.model.graph.node
        if not all(node.op_type in onnx_frontend.CONVERTERS and node.domain in ("", "ai.onnx") for node in nodes):
            continue
        if "_expanded" in case.name:
            expanded[case.name] = case
        elif len(nodes) == 1:
            cases[case.name] = case
    return dict(sorted(cases.items())), dict(sorted(expanded.items()))


def _load_model_cases() -> dict[str, object]:
    """The models exported from PyTorch modules and operators that the wheel ships with their data (.pb files),
    those made only of claimed ops."""
    from onnx.backend.test.case.test_case import TestCase

    root = Path(onnx.__file__).parent / "backend" / "test" / "data"
    cases = {}
    for folder in sorted([*root.glob("pytorch-converted/*"), *root.glob("pytorch-operator/*")]):
        model = onnx.load(str(folder / "model.onnx"))
        if not all(node.op_type in onnx_frontend.CONVERTERS for node in model.graph.node):
            continue
        data = folder / "test_data_set_0"
        inputs = [onnx.load_tensor(str(p)) for p in sorted(data.glob("input_*.pb"))]
        outputs = [onnx.load_tensor(str(p)) for p in sorted(data.glob("output_*.pb"))]
        name = f"{folder.parent.name}/{folder.name}"
        cases[name] = TestCase(name=name, model_name=name, url=None, model_dir=str(folder), model=model,
                               data_sets=[(inputs, outputs)], kind="real", rtol=1e-3, atol=1e-7)
    return cases


#: single-node cases (one per test of an op) and expanded cases (a composite op's function body, several nodes)
CASES, EXPANDED_CASES = _load_backend_cases()
MODEL_CASES = _load_model_cases()
ALL_CASES = {**CASES, **EXPANDED_CASES, **MODEL_CASES}


def _op_type(name: str) -> str:
    return CASES[name].model.graph.node[0].op_type


def _compiled_subset_ci() -> list[str]:
    first: dict[str, str] = {}
    for name in CASES:
        if name not in EXCLUDED and name not in COMPILED_EXCLUDED:
            first.setdefault(_op_type(name), name)
    return sorted(first.values())


def _compiled_subset() -> list[str]:
    """One case per claimed op (the first by name that the compiled path is expected to pass), or all of them."""
    if COMPILE_ALL:
        return [n for n in ALL_CASES if n not in EXCLUDED]
    return _compiled_subset_ci()


def _array(value) -> np.ndarray:
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    return np.asarray(value)


def _run_case(name: str, compiled: bool) -> None:
    """Import, run and compare one case; raises GraphfuseError or AssertionError when it does not pass."""
    case = ALL_CASES[name]
    ((inputs, expected),) = case.data_sets
    initializers = {t.name for t in case.model.graph.initializer}
    names = [i.name for i in case.model.graph.input if i.name not in initializers]
    feeds = dict(zip(names, [_array(x) for x in inputs], strict=True))
    bound = {k: feeds[k] for k in onnx_frontend.constant_input_names(case.model)}
    imported = onnx_frontend.convert_model(case.model, constant_inputs=bound)
    arguments = [feeds[k] for k in imported.inputs]
    if compiled:
        results = graphfuse.compile(imported.module, opt_level=2)(*arguments)
    else:
        results = graphfuse.run_function(imported.module, arguments)
    assert len(results) == len(expected), f"{len(results)} results, expected {len(expected)}"
    for k, (want, got) in enumerate(zip((_array(e) for e in expected), results, strict=True)):
        assert got.dtype == want.dtype, f"result {k}: dtype {got.dtype}, expected {want.dtype}"
        assert got.shape == want.shape, f"result {k}: shape {got.shape}, expected {want.shape}"
        if want.dtype.kind == "f" or want.dtype.name == "bfloat16":
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=case.rtol,
                                       atol=case.atol, err_msg=f"result {k}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"result {k}")


def _expect_gap(name: str, gap: Gap, compiled: bool) -> None:
    with pytest.raises(GraphfuseError) as failure:
        _run_case(name, compiled)
    assert gap.error in str(failure.value), f"{name} fails for another reason than '{gap.reason}': {failure.value}"


def _reference_case(name: str) -> None:
    gap = EXCLUDED.get(name)
    if gap is None:
        _run_case(name, compiled=False)
    else:
        _expect_gap(name, gap, compiled=False)


@pytest.mark.parametrize("name", list(CASES))
def test_backend_case_reference(name: str) -> None:
    _reference_case(name)


@pytest.mark.parametrize("name", list(EXPANDED_CASES))
def test_backend_expanded_case_reference(name: str) -> None:
    """Multi-node graphs: the function bodies of composite ops, including shape arithmetic folded at import."""
    _reference_case(name)


@pytest.mark.parametrize("name", list(MODEL_CASES))
def test_backend_model_case_reference(name: str) -> None:
    """Models exported from PyTorch (old opsets, initializers listed as inputs)."""
    _reference_case(name)


@pytest.mark.parametrize("name", _compiled_subset())
def test_backend_case_compiled(name: str) -> None:
    gap = COMPILED_EXCLUDED.get(name)
    if gap is not None:
        _expect_gap(name, gap, compiled=True)
    else:
        _run_case(name, compiled=True)


@pytest.mark.parametrize("name", [n for n in EMPTY_TENSOR_CASES if n not in _compiled_subset()])
def test_backend_case_with_empty_tensors_compiled(name: str) -> None:
    _run_case(name, compiled=True)


def test_exclusions_name_existing_cases_and_every_claimed_op_has_cases() -> None:
    assert sorted(set(EXCLUDED) - set(ALL_CASES)) == []
    assert sorted(set(COMPILED_EXCLUDED) - set(ALL_CASES)) == []
    assert sorted(set(EMPTY_TENSOR_CASES) - set(ALL_CASES)) == []
    assert not set(EXCLUDED) & set(COMPILED_EXCLUDED)
    covered = {_op_type(n) for n in CASES}
    assert sorted(set(onnx_frontend.CONVERTERS) - covered) == []
    # an op is claimed only when most of its cases pass
    for op_type in onnx_frontend.CONVERTERS:
        names = [n for n in CASES if _op_type(n) == op_type]
        passing = [n for n in names if n not in EXCLUDED]
        assert passing, f"{op_type}: every backend case is excluded; do not claim it"


# --------------------------------------------------------------------------
# The import API on hand-built models


def _model(nodes, inputs, outputs, initializers=(), opset: int = 17) -> onnx.ModelProto:
    graph = onnx.helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_operatorsetid("", opset)])


def _value(name: str, shape, elem_type: int = onnx.TensorProto.FLOAT):
    return onnx.helper.make_tensor_value_info(name, elem_type, shape)


def _small_cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weights = {
        "w": rng.normal(size=(4, 3, 3, 3)).astype(np.float32) * 0.3,
        "cb": rng.normal(size=4).astype(np.float32),
        "fc": rng.normal(size=(16, 5)).astype(np.float32) * 0.2,
        "fb": rng.normal(size=5).astype(np.float32),
    }
    nodes = [
        onnx.helper.make_node("Conv", ["x", "w", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        onnx.helper.make_node("Relu", ["c"], ["r"], name="relu"),
        onnx.helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        onnx.helper.make_node("Shape", ["p"], ["p_shape"], name="shape"),
        onnx.helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        onnx.helper.make_node("Gemm", ["f", "fc", "fb"], ["logits"], name="fc"),
        onnx.helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in weights.items()]
    return _model(nodes, [_value("x", [2, 3, 4, 4])], [_value("probs", [2, 5]), _value("logits", [2, 5])], inits)


def test_small_cnn_matches_onnx_reference_evaluator_interpreted_and_compiled() -> None:
    from onnx.reference import ReferenceEvaluator

    model = _small_cnn()
    x = np.random.default_rng(1).normal(size=(2, 3, 4, 4)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    imported = onnx_frontend.convert_model(model)
    assert (imported.inputs, imported.outputs) == (["x"], ["probs", "logits"])
    text = str(imported.module)
    assert text.count("arith.constant dense<") >= 4  # the four initializers
    assert "func.func @main(%arg0: tensor<2x3x4x4xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>)" in text
    for got in (graphfuse.run_function(imported.module, [x]), graphfuse.compile(imported.module)(x)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", ["div_one", "reciprocal", "div_x"])
def test_exported_rms_norm_becomes_one_rms_norm(form: str) -> None:
    """An RMSNorm as ONNX exports it (Pow, ReduceMean, Add, Sqrt, then 1 / the root, Reciprocal, or x divided by
    it; ONNX has no Rsqrt) is one graph.rms_norm after graph fusion, and computes what ONNX's evaluator does."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(0)
    inits = {"two": np.array(2.0, np.float32), "eps": np.array(1e-6, np.float32), "one": np.array(1.0, np.float32),
             "axes": np.array([-1], np.int64), "w": rng.uniform(0.5, 1.5, 8).astype(np.float32)}
    make = onnx.helper.make_node
    inverse = {"div_one": [make("Div", ["one", "r"], ["inv"]), make("Mul", ["x", "inv"], ["n"])],
               "reciprocal": [make("Reciprocal", ["r"], ["inv"]), make("Mul", ["inv", "x"], ["n"])],
               "div_x": [make("Div", ["x", "r"], ["n"])]}[form]
    nodes = [make("Pow", ["x", "two"], ["sq"]), make("ReduceMean", ["sq", "axes"], ["ms"], keepdims=1),
             make("Add", ["ms", "eps"], ["s"]), make("Sqrt", ["s"], ["r"]), *inverse, make("Mul", ["n", "w"], ["y"])]
    model = _model(nodes, [_value("x", [2, 4, 8])], [_value("y", [2, 4, 8])],
                   [onnx.numpy_helper.from_array(v, k) for k, v in inits.items()], opset=18)
    x = rng.normal(size=(2, 4, 8)).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    exe = graphfuse.compile(onnx_frontend.convert_model(model).module)
    assert "graph.rms_norm" in exe.fused_graph and "graph.sqrt" not in exe.fused_graph
    np.testing.assert_allclose(exe(x)[0], want, rtol=1e-5, atol=1e-6)


def test_locations_name_the_nodes_and_inputs() -> None:
    text = onnx_frontend.import_model(_small_cnn(), entry="net").operation.get_asm(enable_debug_info=True)
    assert "func.func @net(" in text
    assert re.search(r'loc\("conv"\("g.onnx":1:1\)\)', text) or '"conv"(#loc' in text
    assert '"g.onnx":6:1' in text and '"fc"' in text  # Gemm is node 6
    assert '"x"(#loc' in text or 'loc("x"(' in text
    assert "frontends" not in text and ".py" not in text  # no Python source positions leak into the IR


def test_graph_inputs_bound_to_constants_and_shapes_folded() -> None:
    nodes = [
        onnx.helper.make_node("Reshape", ["x", "shape"], ["y"]),
        onnx.helper.make_node("Shape", ["x"], ["s"]),
        onnx.helper.make_node("Reshape", ["y", "s"], ["z"]),  # a shape computed from a static shape: folded
    ]
    model = _model(nodes, [_value("x", [2, 6]), _value("shape", [2], onnx.TensorProto.INT64)],
                   [_value("y", [3, 4]), _value("z", [2, 6])])
    assert onnx_frontend.constant_input_names(model) == ["shape"]
    with pytest.raises(GraphfuseError, match=r"g.onnx:1:1: error: node 'Reshape_0' \(Reshape\): input 'shape' "
                                             r"\(shape\) must be a constant"):
        onnx_frontend.import_model(model)
    imported = onnx_frontend.convert_model(model, constant_inputs={"shape": np.array([3, 4])})
    assert imported.inputs == ["x"] and imported.bound_inputs == ["shape"]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    y, z = graphfuse.run_function(imported.module, [x])
    np.testing.assert_array_equal(y, x.reshape(3, 4))
    np.testing.assert_array_equal(z, x)


def test_dynamic_dims_are_an_error_unless_given() -> None:
    model = _model([onnx.helper.make_node("Relu", ["x"], ["y"])], [_value("x", ["batch", 4])], [_value("y", None)])
    with pytest.raises(GraphfuseError, match=r"graph input 'x' has a dynamic dimension 0 \('batch'\)"):
        onnx_frontend.import_model(model)
    module = onnx_frontend.import_model(model, input_shapes={"x": [3, 4]})
    assert "tensor<3x4xf32>" in str(module)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        (onnx.helper.make_node("NonZero", ["x"], ["y"], name="nz"),
         r"g.onnx:1:1: error: node 'nz' \(NonZero\): op NonZero is not supported by the ONNX importer"),
        (onnx.helper.make_node("Relu", ["x"], ["y"], domain="com.example"),
         r"node 'Relu_0' \(Relu\): op Relu of domain 'com.example' is not supported"),
        (onnx.helper.make_node("MaxPool", ["x"], ["y", "indices"], kernel_shape=[2, 2]),
         r"node 'MaxPool_0' \(MaxPool\): the Indices output is not supported"),
        (onnx.helper.make_node("Conv", ["x", "x"], ["y"], auto_pad="BOGUS"),
         r"node 'Conv_0' \(Conv\): auto_pad=BOGUS is not supported"),
        (onnx.helper.make_node("Cast", ["x"], ["y"], to=onnx.TensorProto.DOUBLE),
         r"node 'Cast_0' \(Cast\): the target type 'to' has element type double"),
        (onnx.helper.make_node("Add", ["x", "missing"], ["y"]),
         r"node 'Add_0' \(Add\): input 'missing' is not produced by any earlier node"),
        (onnx.helper.make_node("Cast", ["x"], ["y"]),
         r"node 'Cast_0' \(Cast\): malformed node \(TypeError: "),
        (onnx.helper.make_node("MatMul", ["x", "x"], ["y"]),
         r"node 'MatMul_0' \(MatMul\): 'graph.matmul' "),
    ],
)
def test_unsupported_nodes_are_located_errors(node, message: str) -> None:
    model = _model([node], [_value("x", [1, 3, 4, 5])], [_value("y", None)])
    with pytest.raises(GraphfuseError, match=message) as failure:
        onnx_frontend.import_model(model)
    assert len(failure.value.diagnostics) == 1


def test_bad_sources() -> None:
    with pytest.raises(GraphfuseError, match=r"could not open 'nowhere\.onnx': no such file"):
        onnx_frontend.import_model("nowhere.onnx")
    with pytest.raises(GraphfuseError, match="'<bytes>' is not an ONNX model"):
        onnx_frontend.import_model(b"\x00\x01garbage\xff")
    model = _model([onnx.helper.make_node("Relu", ["x"], ["y"])], [_value("x", [2], onnx.TensorProto.UINT8)],
                   [_value("y", None)])
    with pytest.raises(GraphfuseError, match="graph input 'x' has element type uint8, which the graph dialect"):
        onnx_frontend.import_model(model)


# --------------------------------------------------------------------------
# docs/frontend-onnx.md


def _backend_section() -> str:
    passing = [n for n in CASES if n not in EXCLUDED]
    expanded_passing = [n for n in EXPANDED_CASES if n not in EXCLUDED]
    model_passing = [n for n in MODEL_CASES if n not in EXCLUDED]
    runnable = passing + expanded_passing + model_passing
    compiled_passing = [n for n in runnable if n not in COMPILED_EXCLUDED]
    lines = [
        f"With onnx {onnx.__version__}, the {len(onnx_frontend.CONVERTERS)} claimed ops have **{len(CASES)}** "
        f"backend node cases. **{len(passing)}** pass with the reference interpreter; the other "
        f"**{len(CASES) - len(passing)}** are excluded below, and the test checks that each of them fails with its "
        "reason's error (so an excluded case that starts passing, or a case that fails for another reason, fails "
        "the test).",
        "",
        f"The `_expanded` variants made only of claimed ops ({len(EXPANDED_CASES)} multi-node graphs: the function "
        "bodies of Softmax, LayerNormalization, Elu, ... with their shape arithmetic) run the same way: "
        f"**{len(expanded_passing)}** pass, {len(EXPANDED_CASES) - len(expanded_passing)} are excluded below.",
        "",
        f"The models exported from PyTorch that the wheel ships with their data (`data/pytorch-converted`, "
        f"`data/pytorch-operator`; {len(MODEL_CASES)} of them are made only of claimed ops): "
        f"**{len(model_passing)}** pass, {len(MODEL_CASES) - len(model_passing)} are excluded below.",
        "",
        f"Through the compiled CPU path (`graphfuse.compile`, opt level 2), **{len(compiled_passing)}** of those "
        f"{len(runnable)} cases (single-node, expanded and models) pass"
        + (f", {len(COMPILED_EXCLUDED)} are known runtime gaps (below), each checked to fail with its error"
           if COMPILED_EXCLUDED else "")
        + f". CI compiles one single-node case per op ({len(_compiled_subset_ci())} cases) and the "
        f"{len(EMPTY_TENSOR_CASES)} cases of empty tensors; `GRAPHFUSE_ONNX_COMPILE_ALL=1` compiles them all.",
        "",
        "| reason | cases | excluded cases |",
        "|---|---|---|",
    ]
    by_reason: dict[str, list[str]] = {}
    for name, gap in EXCLUDED.items():
        by_reason.setdefault(gap.reason, []).append(name)
    for reason, names in by_reason.items():
        lines.append(f"| {reason} | {len(names)} | {', '.join(f'`{n}`' for n in sorted(names))} |")
    if COMPILED_EXCLUDED:
        lines += ["", "Compiled path only:", "", "| reason | cases | excluded cases |", "|---|---|---|"]
        by_reason = {}
        for name, gap in COMPILED_EXCLUDED.items():
            by_reason.setdefault(gap.reason, []).append(name)
        for reason, names in by_reason.items():
            lines.append(f"| {reason} | {len(names)} | {', '.join(f'`{n}`' for n in sorted(names))} |")
    return "\n".join(lines) + "\n"


_SECTIONS = {
    "claimed ops": onnx_frontend.support_table_markdown,
    "backend cases": _backend_section,
}


def test_doc_matches_the_registry_and_the_case_counts() -> None:
    text = DOC.read_text()
    for title, render in _SECTIONS.items():
        begin, end = f"<!-- BEGIN GENERATED: {title} -->\n", f"<!-- END GENERATED: {title} -->"
        assert begin in text and end in text, f"{DOC.name} lacks the generated section '{title}'"
        head, rest = text.split(begin, 1)
        current, tail = rest.split(end, 1)
        if os.environ.get("GRAPHFUSE_UPDATE_DOCS") == "1":
            text = head + begin + render() + end + tail
            DOC.write_text(text)
            continue
        assert current == render(), (f"{DOC.name} section '{title}' is stale: rerun this test with "
                                     "GRAPHFUSE_UPDATE_DOCS=1")


def test_gather_with_indices_computed_at_run_time() -> None:
    """An embedding (Gather of an initializer at token ids that are a graph input), then a reversed Slice."""
    table = np.random.default_rng(0).standard_normal((3000, 8)).astype(np.float32)
    model = _model(
        [onnx.helper.make_node("Gather", ["table", "ids"], ["rows"], axis=0),
         onnx.helper.make_node("Slice", ["rows", "starts", "ends", "axes", "steps"], ["reversed"])],
        [_value("ids", [2, 5], onnx.TensorProto.INT64)], [_value("reversed", [2, 5, 8])],
        [onnx.numpy_helper.from_array(table, "table"),
         *(onnx.numpy_helper.from_array(np.array([v], np.int64), name)
           for name, v in (("starts", -1), ("ends", -100), ("axes", 2), ("steps", -1)))])
    module = onnx_frontend.import_model(model)
    assert '"graph.gather"' in str(module)
    ids = np.array([[0, 5, 2999, -1, 7], [1, 2, 3, 4, 100]])
    (got,) = graphfuse.compile(module)(ids)
    np.testing.assert_array_equal(got, table[ids % 3000][:, :, ::-1])


def test_more_constant_indices_than_slices_take_are_one_gather() -> None:
    indices = np.arange(2000)[::-1].copy()
    model = _model([onnx.helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
                   [_value("x", [3, 2000])], [_value("y", [3, 2000])],
                   [onnx.numpy_helper.from_array(indices, "i")])
    module = onnx_frontend.import_model(model)
    assert str(module).count('"graph.gather"') == 1 and '"graph.concat"' not in str(module)
    x = np.random.default_rng(1).standard_normal((3, 2000)).astype(np.float32)
    np.testing.assert_array_equal(graphfuse.compile(module)(x)[0], x[:, ::-1])


def _matmul_with_external_weight(folder: Path) -> tuple[Path, np.ndarray]:
    """A MatMul whose weight is saved in ``model.onnx.data`` next to ``model.onnx`` (as the dynamo exporter saves)."""
    weight = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    model = _model([onnx.helper.make_node("MatMul", ["x", "w"], ["y"])], [_value("x", [2, 64])],
                   [_value("y", [2, 32])], [onnx.numpy_helper.from_array(weight, "w")])
    folder.mkdir()
    path = folder / "model.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location="model.onnx.data", size_threshold=0)
    return path, weight


def test_external_data_is_read_next_to_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, weight = _matmul_with_external_weight(tmp_path / "model")
    monkeypatch.chdir(tmp_path)  # not the model's folder
    x = np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32)
    (got,) = graphfuse.compile(onnx_frontend.import_model(str(path)))(x)
    np.testing.assert_allclose(got, x @ weight, rtol=1e-5, atol=1e-5)
    with pytest.raises(GraphfuseError, match="keeps its data in an external file; load the model from its path"):
        onnx_frontend.import_model(path.read_bytes())
    unread = onnx.load(str(path), load_external_data=False)
    with pytest.raises(GraphfuseError, match=r"external file 'model\.onnx\.data', which was not read"):
        onnx_frontend.import_model(unread)


def test_external_data_outside_the_model_folder_is_refused(tmp_path: Path) -> None:
    path, _ = _matmul_with_external_weight(tmp_path / "model")
    (tmp_path / "elsewhere.data").write_bytes((path.parent / "model.onnx.data").read_bytes())
    model = onnx.load(str(path), load_external_data=False)
    for entry in model.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = "../elsewhere.data"
    onnx.save_model(model, str(path))
    with pytest.raises(GraphfuseError, match=r"model\.onnx: tensor 'w' keeps its data at '\.\./elsewhere\.data', "
                                             "outside the model's folder: refused"):
        onnx_frontend.import_model(str(path))
    (path.parent / "model.onnx.data").unlink()
    model.graph.initializer[0].external_data[0].value = "model.onnx.data"
    onnx.save_model(model, str(path))
    with pytest.raises(GraphfuseError, match="which is not a file in the model's folder"):
        onnx_frontend.import_model(str(path))


def test_an_unclaimed_op_on_stored_constants_is_folded() -> None:
    """An op the importer does not claim (Compress) on initializers is computed when importing."""
    rng = np.random.default_rng(0)
    data, keep = rng.standard_normal((4, 6)).astype(np.float32), np.array([1, 0, 1, 1, 0, 1], bool)
    compress = onnx.helper.make_node("Compress", ["data", "keep"], ["kept"], axis=1)
    initializers = [onnx.numpy_helper.from_array(data, "data"), onnx.numpy_helper.from_array(keep, "keep")]
    model = _model([compress, onnx.helper.make_node("Add", ["x", "kept"], ["y"])], [_value("x", [4, 4])],
                   [_value("y", [4, 4])], initializers)
    x = np.ones((4, 4), np.float32)
    (got,) = graphfuse.compile(onnx_frontend.import_model(model))(x)
    np.testing.assert_array_equal(got, x + data[:, keep])
    at_run_time = _model([onnx.helper.make_node("Compress", ["data", "k"], ["kept"], axis=1)],
                         [_value("k", [6], onnx.TensorProto.BOOL)], [_value("kept", [4, 4])], initializers[:1])
    with pytest.raises(GraphfuseError, match=r"\(Compress\): op Compress is not supported"):
        onnx_frontend.import_model(at_run_time)


def test_gather_elements_with_indices_known_and_at_run_time() -> None:
    """GatherElements (BERT's dynamo export holds one of two initializers) with stored or run-time indices."""
    rng = np.random.default_rng(0)
    data, indices = rng.standard_normal((4, 6)).astype(np.float32), rng.integers(0, 6, (4, 3))
    gather = onnx.helper.make_node("GatherElements", ["data", "indices"], ["taken"], axis=1)
    initializers = [onnx.numpy_helper.from_array(data, "data"), onnx.numpy_helper.from_array(indices, "indices")]
    model = _model([gather, onnx.helper.make_node("Add", ["x", "taken"], ["y"])], [_value("x", [4, 3])],
                   [_value("y", [4, 3])], initializers)
    x = np.ones((4, 3), np.float32)
    (got,) = graphfuse.compile(onnx_frontend.import_model(model))(x)
    np.testing.assert_array_equal(got, x + np.take_along_axis(data, indices, axis=1))
    at_run_time = _model([onnx.helper.make_node("GatherElements", ["data", "j"], ["taken"], axis=1)],
                         [_value("j", [4, 3], onnx.TensorProto.INT64)], [_value("taken", [4, 3])], initializers[:1])
    (taken,) = graphfuse.compile(onnx_frontend.import_model(at_run_time))(indices - 6)  # negative: from the end
    np.testing.assert_array_equal(taken, np.take_along_axis(data, indices, axis=1))
    indices[0, 0] = 6
    out_of_range = _model([gather], [], [_value("taken", [4, 3])],
                          [initializers[0], onnx.numpy_helper.from_array(indices, "indices")])
    with pytest.raises(GraphfuseError, match=r"indices \[6, .*\] are out of range for axis 1 of size 6"):
        onnx_frontend.import_model(out_of_range)


def test_an_opset_outside_the_tested_range_warns(capsys: pytest.CaptureFixture[str]) -> None:
    future = onnx_frontend.SUPPORTED_OPSETS.stop
    model = _model([onnx.helper.make_node("Relu", ["x"], ["y"])], [_value("x", [2, 3])], [_value("y", [2, 3])],
                   opset=future)
    onnx_frontend.import_model(model)
    assert (f"the model imports opset {future}, outside the opsets the importer is tested on "
            f"(6-{future - 1})") in capsys.readouterr().err
    onnx_frontend.import_model(_model([onnx.helper.make_node("Relu", ["x"], ["y"])], [_value("x", [2, 3])],
                                      [_value("y", [2, 3])]))
    assert "outside the opsets" not in capsys.readouterr().err


@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum_in_f32_compiled(exclusive: int, reverse: int) -> None:
    """ONNX's own CumSum cases are in double, which the dialect does not have: the same four forms in f32."""
    node = onnx.helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)
    axis = onnx.numpy_helper.from_array(np.array(-1, np.int32), "axis")
    model = _model([node], [_value("x", [2, 5])], [_value("y", [2, 5])], [axis])
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    want = onnx.reference.ReferenceEvaluator(model).run(None, {"x": x})[0]
    (got,) = graphfuse.compile(onnx_frontend.import_model(model))(x)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["llama", "bert"])
def test_hf_models_round_trip_through_the_dynamo_exporter(kind: str) -> None:
    """transformers' own models exported by torch.onnx.export(dynamo=True), with token ids and a padded mask,
    imported, compiled and compared with PyTorch."""
    torch = pytest.importorskip("torch", reason="needs the torch extra (pip install -e '.[torch]')")
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    pytest.importorskip("onnxscript", reason="needs the models extra (pip install -e '.[models]')")
    import contextlib
    import io
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_frontend_torch import _hf_network

    torch.manual_seed(0)
    network = _hf_network(hf, kind).eval()
    extra = {} if kind == "bert" else {"use_cache": False}

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, ids: Any, mask: Any) -> Any:
            return self.network(input_ids=ids, attention_mask=mask, **extra).last_hidden_state

    ids = torch.randint(0, 128, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.int64)
    mask[1, 7:] = 0
    model = Hidden().eval()
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        # The exporter prints its progress, and torch.export's use of a deprecated pytree API warns.
        warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
        want = model(ids, mask).numpy()
        program = torch.onnx.export(model, (ids, mask), dynamo=True)
    imported = onnx_frontend.import_model(program.model_proto)
    assert '"graph.gather"' in str(imported)  # the embedding, and the mask's advanced indexing (GatherND)
    (got,) = graphfuse.compile(imported)(ids.numpy(), mask.numpy())
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
