"""Seed items no other test checks one by one (the table "Every seed item" in docs/fusion-switches.md).

Each Appendix 1 expander name, Appendix 2 cluster operator and Appendix 3 pattern fusion pass is checked by
its own MindSpore spelling, against the seed's columns for the two backends graphfuse has (Ascend: npu, CPU:
cpu; the GPU column has no backend here).  Where graphfuse departs from a column, the departure is listed
with its reason and asserted as it is, so a change in either direction fails here and in the table.  The
other tests are the seeds' examples run as they are written and the names graphfuse refuses or lacks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mlir import ir
from test_graph_kernel_expand import APPENDIX_1
from test_graph_kernel_fusion import _NEW_CLUSTER_OPS, APPENDIX_2

import graphfuse
from graphfuse import GraphBuilder, GraphfuseError, PipelineError, context, parse_module, run_function
from graphfuse.dialect.catalog import lookup_op
from graphfuse.dialect.expansions import EXPANDERS
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.pipelines import log
from graphfuse.pipelines.fusion.cann import UNSUPPORTED_PASSES
from graphfuse.pipelines.fusion.graph_fusion import GraphFusion
from graphfuse.pipelines.fusion.switches import FusionSwitches, parse_graph_kernel_flags, parse_switch_file
from graphfuse.pipelines.graph_kernel.cluster import cluster_set
from graphfuse.pipelines.graph_kernel.expand import expand_set
from graphfuse.pipelines.graph_kernel.op_names import MINDSPORE_OPS
from graphfuse.pipelines.registry import lookup_pass
from graphfuse.pipelines.runner import run_pipeline

BACKEND_COLUMNS = (("npu", 0), ("cpu", 1))  # position of the Ascend and CPU marks in a row's flags


def _flags(text: str | None) -> FusionSwitches:
    """Switches from a flags string alone: the caller's environment must not leak into these tests."""
    return FusionSwitches.from_sources(text, None, strict=True, environ={})


def _kernels(module: ir.Module) -> list[ir.Operation]:
    return [op.operation for op in module.body.operations if "graph.kernel" in op.operation.attributes]


def _kernel_ops(module: ir.Module) -> list[list[str]]:
    return [[str(a).strip('"') for a in k.attributes["graph.kernel_ops"]] for k in _kernels(module)]


def _fusion_kinds(module: ir.Module) -> list[str]:
    return [str(k.attributes["graph.fusion_kind"]).strip('"') for k in _kernels(module)]


@pytest.fixture
def fresh_context() -> Iterator[None]:
    context.reset_context()
    yield
    context.reset_context()


# --------------------------------------------------------------------------
# Appendix 1: default expander operators.

A1_ROWS = dict(zip(APPENDIX_1[::2], APPENDIX_1[1::2], strict=True))
#: (name, backend) whose default differs from the seed's column, and why.
A1_DEPARTURES = {
    ("SoftplusExt", "cpu"): "graph.softplus is Softplus too, which the CPU column expands",
    ("SoftplusGradExt", "cpu"): "graph.softplus_grad is SoftplusGrad too, which the CPU column expands",
    ("Softplus", "npu"): "graph.softplus is SoftplusExt too, which the Ascend column expands",
    ("SoftplusGrad", "npu"): "graph.softplus_grad is SoftplusGradExt too, which the Ascend column expands",
    ("AcoshExt", "npu"): "graph.acosh is a basic op, lowered directly: there is nothing to expand",
    ("AsinhExt", "npu"): "graph.asinh is a basic op, lowered directly: there is nothing to expand",
}


def _example_module(op: str) -> tuple[ir.Module, list[np.ndarray]]:
    """A function applying ``graph.<op>`` to its catalog example's operands, and inputs for it (in (0.1, 0.9):
    valid probabilities, variances and norms for the losses and optimizers)."""
    sigs, attrs = lookup_op(f"graph.{op}").example
    b = GraphBuilder("f")
    results = b.op(op, *[b.arg(s.shape, s.dtype) for s in sigs], **attrs)
    b.ret(*(results if isinstance(results, tuple) else (results,)))
    rng = np.random.default_rng(11)
    inputs = [rng.uniform(0.1, 0.9, s.shape).astype(NUMPY_DTYPES[s.dtype]) if s.dtype in ("f32", "f16", "bf16")
              else rng.integers(0, 3, s.shape).astype(NUMPY_DTYPES[s.dtype]) for s in sigs]
    return b.module, inputs


@pytest.mark.parametrize("name", list(A1_ROWS))
def test_appendix_1_name_expands(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The name means one graph op, expanded by default where the seed's column says (or as A1_DEPARTURES says),
    and ``enable_expand_ops_only=<name>`` expands it into basic ops computing the same values."""
    op = MINDSPORE_OPS[name]
    for backend, column in BACKEND_COLUMNS:
        expected = (A1_ROWS[name][column] == "Y") != ((name, backend) in A1_DEPARTURES)
        assert (op in expand_set(backend)) is expected, backend
    if op not in EXPANDERS:  # acosh, asinh, slice, matmul: the name is known, and warns that it cannot expand
        assert expand_set("cpu", only=(name,)) == frozenset()
        assert f"{op} cannot be expanded (no expander)" in capsys.readouterr().err
        return
    module, inputs = _example_module(op)
    want = run_function(module, inputs)
    run_pipeline(module, f"builtin.module(graph-kernel-expand{{only-ops={name}}})")
    assert f"graph.{op}" not in graph_op_names(module)
    for w, g in zip(want, run_function(module, inputs), strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        # tanh, erf and gelu expand to within a few ulp; the others exactly
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-5, atol=1e-6)
    assert "unknown operator" not in capsys.readouterr().err


# --------------------------------------------------------------------------
# Appendix 2: default cluster operators.

#: Appendix 2: operator name, a default cluster op on Ascend, on CPU.
_A2_TABLE = """Abs YY Add YY BroadcastTo YN Cast YY Exp YY Log YY Maximum YY Minimum YY Mul YY Neg YY Pow YY Div YN
RealDiv YY Reciprocal YY Rsqrt YY Sqrt YY Sub YY Equal YY NotEqual YN Greater YN GreaterEqual YN Less YY LessEqual YY
LogicalAnd YN LogicalOr YN LogicalNot YY Select YY Assign YN ReduceSum YY IsFinite YN Reshape NY Transpose YY Floor YN
Ceil YN Trunc YN Round NY Tanh NY ACos NN Acosh NN ArgMax NN Argmin NN Asin NN Asinh NN Atan NN Atan2 NN Cos NN Erf NN
Expm1 NN FloorDiv NN FloorMod NN IsInf NN IsNan NN Mod NY ReduceMax NY ReduceMin NN Sign NN Sin NN StridedSlice NN
CumSum NN OneHot NN""".split()
A2_ROWS = dict(zip(_A2_TABLE[::2], _A2_TABLE[1::2], strict=True))
#: (name, backend) whose default differs from the seed's column, and why.
A2_DEPARTURES = {
    ("Div", "cpu"): "graph.div is RealDiv too, which the CPU column clusters",
}

Build = Callable[[GraphBuilder, Any, Any], Any]
#: name -> x, y -> a use of its op on x (an exp's result, inside the kernel under test) and y (an argument).
_CLUSTER_USES: dict[str, Build] = {
    "Abs": lambda b, x, y: b.abs(x), "Add": lambda b, x, y: b.add(x, y),
    "BroadcastTo": lambda b, x, y: b.broadcast_to(x, (2, 4, 6)), "Cast": lambda b, x, y: b.cast(x, "f16"),
    "Exp": lambda b, x, y: b.exp(y), "Log": lambda b, x, y: b.log(x), "Maximum": lambda b, x, y: b.maximum(x, y),
    "Minimum": lambda b, x, y: b.minimum(x, y), "Mul": lambda b, x, y: b.mul(x, y), "Neg": lambda b, x, y: b.neg(x),
    "Pow": lambda b, x, y: b.pow(x, y), "Div": lambda b, x, y: b.div(x, y), "RealDiv": lambda b, x, y: b.div(y, x),
    "Reciprocal": lambda b, x, y: b.reciprocal(x), "Rsqrt": lambda b, x, y: b.rsqrt(x),
    "Sqrt": lambda b, x, y: b.sqrt(x), "Sub": lambda b, x, y: b.sub(x, y), "Equal": lambda b, x, y: b.equal(x, y),
    "NotEqual": lambda b, x, y: b.not_equal(x, y), "Greater": lambda b, x, y: b.greater(x, y),
    "GreaterEqual": lambda b, x, y: b.greater_equal(x, y), "Less": lambda b, x, y: b.less(x, y),
    "LessEqual": lambda b, x, y: b.less_equal(x, y),
    "LogicalAnd": lambda b, x, y: b.logical_and(b.isnan(x), b.isinf(y)),
    "LogicalOr": lambda b, x, y: b.logical_or(b.isnan(x), b.isinf(y)),
    "LogicalNot": lambda b, x, y: b.logical_not(b.isnan(x)), "Select": lambda b, x, y: b.select(b.isnan(y), x, y),
    "ReduceSum": lambda b, x, y: b.reduce_sum(x, axes=[1], keep_dims=True),
    "IsFinite": lambda b, x, y: b.isfinite(x), "Reshape": lambda b, x, y: b.reshape(x, (6, 4)),
    "Transpose": lambda b, x, y: b.transpose(x, perm=[1, 0]), "Floor": lambda b, x, y: b.floor(x),
    "Ceil": lambda b, x, y: b.ceil(x), "Round": lambda b, x, y: b.round(x), "Tanh": lambda b, x, y: b.tanh(x),
    "Cos": lambda b, x, y: b.cos(x), "Sin": lambda b, x, y: b.sin(x), "Sign": lambda b, x, y: b.sign(x),
    "Erf": lambda b, x, y: b.erf(x), "ReduceMax": lambda b, x, y: b.reduce_max(x, axes=[1], keep_dims=True),
    "ReduceMin": lambda b, x, y: b.reduce_min(x, axes=[1], keep_dims=True),
    "StridedSlice": lambda b, x, y: b.slice(x, start=[1, 0], limit=[3, 6], strides=[1, 2]),
    "OneHot": lambda b, x, y: b.one_hot(b.argmax(x, axis=1), b.const(np.float32(1.0)), b.const(np.float32(0.0)),
                                        depth=6),
    # the ops the dialect gained for Appendix 2, as test_graph_kernel_fusion.py builds them
    **{name: (lambda b, x, y, use=use: use(b, x)) for name, use in _NEW_CLUSTER_OPS.items()},
}


def test_the_appendix_2_tables_agree() -> None:
    assert list(A2_ROWS) == APPENDIX_2
    assert set(_CLUSTER_USES) == set(APPENDIX_2)


@pytest.mark.parametrize("name", APPENDIX_2)
def test_appendix_2_name_clusters(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The name means one graph op, a default cluster op where the seed's column says (or as A2_DEPARTURES says);
    with ``enable_cluster_ops_only=Exp,Neg,Cast,<name>`` exp -> op -> neg is one kernel, computing what the
    unfused graph does."""
    op = MINDSPORE_OPS[name]
    for backend, column in BACKEND_COLUMNS:
        expected = (A2_ROWS[name][column] == "Y") != ((name, backend) in A2_DEPARTURES)
        assert (op in cluster_set(backend)) is expected, backend
    b = GraphBuilder("f")
    x, y = b.arg((4, 6)), b.arg((4, 6))
    result = _CLUSTER_USES[name](b, b.exp(x), y)
    b.ret(b.neg(result if result.sig.dtype == "f32" else b.cast(result, "f32")))
    module = b.module
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(2)]
    (want,) = run_function(module, inputs)
    run_pipeline(module, "builtin.module(graph-kernel-fusion{opt-level=1})",
                 switches=_flags(f"--enable_cluster_ops_only=Exp,Neg,Cast,{name}"))
    assert "unknown operator" not in capsys.readouterr().err
    joined = any(f"graph.{op}" in ops for ops in _kernel_ops(module))
    assert joined, _kernel_ops(module)
    (got,) = run_function(module, inputs)
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------
# Appendix 3 and the other pass names of the seeds.

APPENDIX_3 = (
    "FlashAttentionFusionV1 FlashAttentionFusionV2 add_layer_norm_fusion add_layer_norm_v3_fusion "
    "add_layer_norm_ext_fusion inference_swiglu_fusion inference_matmul_split_fusion shape_reshape shape_reshape_2 "
    "add_rms_norm_quant_fusion rms_norm_quant_fusion add_rms_norm_fusion add_cast_rms_norm_cast_fusion "
    "MatMulAllReduce split_concat_fusion matmul_elem_biasadd_fusion matmul_elem_add_fusion matmul_elem_relu_fusion "
    "matmul_elem_gelu_fusion inference_qbmm_add_fusion inference_qbmm_allreduce_add_fusion"
).split()


@pytest.mark.parametrize("name", [n for n in APPENDIX_3 if n not in UNSUPPORTED_PASSES])
def test_appendix_3_pass_is_on_by_default(name: str) -> None:
    """Registered under the seed's name, on by default for the npu backend (Ascend) and the cpu one, and a plain
    ``graph-fusion{backend=npu}`` fuses the pass's example with it."""
    cls = lookup_pass(name)
    assert cls is not None and cls.name == name
    for backend in ("npu", "cpu"):
        assert GraphFusion(backend=backend).enabled(cls, FusionSwitches()), backend
    result = run_pipeline(parse_module(cls.example), "builtin.module(graph-fusion{backend=npu})").fusion_result()
    assert int(result["graph_fusion"][name]["effect_times"]) >= 1


def test_every_appendix_3_name_is_a_pass_or_documented_unsupported() -> None:
    assert all((lookup_pass(name) is None) is (name in UNSUPPORTED_PASSES) for name in APPENDIX_3)


_EMPTY_MODULE = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"


@pytest.mark.parametrize("name", sorted(UNSUPPORTED_PASSES))
def test_unsupported_pass_name_warns_and_a_pipeline_refuses_it(name: str, tmp_path: Path) -> None:
    """docs/unsupported-passes.md: a switch file or the flags naming the pass warn with its reason and go on;
    a pipeline naming it fails, as for any pass that is not registered."""
    reason = UNSUPPORTED_PASSES[name]
    path = tmp_path / "fusion_switch.cfg"
    path.write_text(json.dumps({"Switch": {"GraphFusion": {name: "off"}}}))
    assert [w.message for w in parse_switch_file(path).warnings] == [
        f"pass '{name}' is not implemented, its switch is ignored: {reason} (docs/unsupported-passes.md)"]
    flags = parse_graph_kernel_flags(f"--disable_pass={name}")
    assert [w.severity for w in flags.warnings] == ["warning"]
    assert f"names pass '{name}', which is not implemented: {reason}" in flags.warnings[0].message
    with pytest.raises(PipelineError, match=f"'{name}' does not refer to a registered pass"):
        run_pipeline(parse_module(_EMPTY_MODULE), f"builtin.module({name})")


def test_transpose_matmul_fusion_is_off_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 000's log example: transpose_matmul_fusion "is disabled and can be enabled using enable_pass"."""
    b = GraphBuilder("f")
    a, w = b.arg((4, 8)), b.arg((6, 8))
    b.ret(b.matmul(a, b.transpose(w, perm=[1, 0])))
    module = b.module
    log.configure("info")
    try:
        run_pipeline(module, "builtin.module(graph-fusion)")
        assert "graph kernel pass transpose_matmul_fusion is disabled" in capsys.readouterr().err
        assert "graph.transpose" in str(module)
        run_pipeline(module, "builtin.module(graph-fusion)",
                     switches=_flags("--enable_pass=transpose_matmul_fusion"))
        assert "Run graph kernel pass transpose_matmul_fusion in" in capsys.readouterr().err
    finally:
        log.configure()
    assert "graph.transpose" not in str(module) and "transpose_b = true" in str(module)


# --------------------------------------------------------------------------
# MS_DEV_GRAPH_KERNEL_FLAGS keys, end to end.


def _matmul_square() -> ir.Module:
    b = GraphBuilder("f")
    a, w, c = b.arg((4, 8)), b.arg((8, 6)), b.arg((4, 6))
    b.ret(b.square(b.add(b.matmul(a, w), c)))
    return b.module


def test_the_seeds_flags_example() -> None:
    """``–enable_expand_ops=Square –enable_cluster_ops=MatMul,Add`` (en dashes as the seed writes them): the
    matmul heads a kernel with the add and the expanded square; without the flags it stays outside."""
    plain = _matmul_square()
    run_pipeline(plain, "builtin.module(graph-kernel-fusion)", switches=_flags(None))
    assert _kernel_ops(plain) == [["graph.add", "graph.mul"]]
    module = _matmul_square()
    inputs = [np.random.default_rng(1).standard_normal(s).astype(np.float32) for s in ((4, 8), (8, 6), (4, 6))]
    (want,) = run_function(module, inputs)
    run_pipeline(module, "builtin.module(graph-kernel-fusion)",
                 switches=_flags("–enable_expand_ops=Square –enable_cluster_ops=MatMul,Add"))
    assert _kernel_ops(module) == [["graph.matmul", "graph.add", "graph.mul"]]
    assert _fusion_kinds(module) == ["matmul_epilogue"]
    np.testing.assert_array_equal(run_function(module, inputs)[0], want)


def _softmax_square() -> ir.Module:
    b = GraphBuilder("f")
    x = b.arg((4, 8))
    b.ret(b.neg(b.softmax(b.exp(x))), b.square(x))
    return b.module


def test_enable_expand_ops_expands_an_op_off_by_default() -> None:
    plain = _softmax_square()
    run_pipeline(plain, "builtin.module(graph-kernel-fusion{opt-level=1})", switches=_flags(None))
    assert "graph.softmax" in graph_op_names(plain) and "graph.square" not in graph_op_names(plain)
    module = _softmax_square()
    run_pipeline(module, "builtin.module(graph-kernel-fusion{opt-level=1})",
                 switches=_flags("--enable_expand_ops=Softmax"))
    names = graph_op_names(module)
    assert "graph.softmax" not in names and "graph.reduce_max" in names and "graph.square" not in names


def test_enable_expand_ops_only_ignores_the_other_two() -> None:
    """Only softmax expands: Square, a default, stays, and the enable/disable lists given with it are ignored."""
    module = _softmax_square()
    run_pipeline(module, "builtin.module(graph-kernel-fusion{opt-level=1})",
                 switches=_flags("--enable_expand_ops_only=Softmax --enable_expand_ops=LayerNorm "
                                 "--disable_expand_ops=Softmax"))
    names = graph_op_names(module)
    assert "graph.softmax" not in names and "graph.square" in names


def test_dump_as_text_writes_graph_kernel_dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Off by default; ``--dump_as_text`` writes the kernels and decisions under graph_kernel_dump/."""
    monkeypatch.chdir(tmp_path)
    run_pipeline(_matmul_square(), "builtin.module(graph-kernel-fusion)", switches=_flags(None))
    assert not (tmp_path / "graph_kernel_dump").exists()
    run_pipeline(_matmul_square(), "builtin.module(graph-kernel-fusion)", switches=_flags("--dump_as_text"))
    text = (tmp_path / "graph_kernel_dump" / "graph_kernel_clusters.txt").read_text()
    assert "kernel f_kernel_0" in text and "graph.matmul" in text  # the kernel, then why the matmul stayed out


def test_opt_level_3_adds_stitching_and_parallel_fusion() -> None:
    """``--opt_level=3``: a reduction broadcast back stays in its kernel (stitching), and independent kernels
    merge into one (parallel fusion); ``--opt_level=2`` does neither."""

    def stitched() -> ir.Module:
        b = GraphBuilder("f")
        x = b.arg((4, 8))
        e = b.exp(x)
        b.ret(b.neg(b.sub(e, b.reduce_max(e, axes=[1], keep_dims=True))))
        return b.module

    def independent() -> ir.Module:
        b = GraphBuilder("g")
        x, y = b.arg((4, 8)), b.arg((4, 8))
        b.ret(b.neg(b.exp(x)), b.neg(b.log(y)))
        return b.module

    kinds = {}
    for level in (2, 3):
        for build in (stitched, independent):
            module = build()
            run_pipeline(module, "builtin.module(graph-kernel-fusion)", switches=_flags(f"--opt_level={level}"))
            kinds[level, build.__name__] = _fusion_kinds(module)
    assert len(kinds[2, "stitched"]) == 2 and "stitch" not in kinds[2, "stitched"]
    assert kinds[3, "stitched"] == ["stitch"]
    assert kinds[2, "independent"] == ["elementwise", "elementwise"]
    assert kinds[3, "independent"] == ["parallel"]


# --------------------------------------------------------------------------
# Switch files: the route of training and online inference.

_ADD_RMS_NORM = """\
func.func @f(%x: tensor<4x16xf32>, %r: tensor<4x16xf32>, %g: tensor<16xf32>) -> tensor<4x16xf32> {
  %s = "graph.add"(%x, %r) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = "graph.rms_norm"(%s, %g) {epsilon = 1.0e-06 : f32} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}
"""


def test_compile_takes_fusion_switch_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``graphfuse.compile(fusion_switch_file=...)``, as CANN's fusion_switch_file session option."""
    monkeypatch.delenv("FUSION_SWITCH_FILE", raising=False)
    monkeypatch.delenv("MS_DEV_GRAPH_KERNEL_FLAGS", raising=False)
    off = tmp_path / "fusion_switch.cfg"
    off.write_text('{"Switch": {"GraphFusion": {"ALL": "on", "add_rms_norm_fusion": "off"}}}')
    assert "graph.add_rms_norm" in graphfuse.compile(_ADD_RMS_NORM).fused_graph
    exe = graphfuse.compile(_ADD_RMS_NORM, fusion_switch_file=off)
    assert "graph.add_rms_norm" not in exe.fused_graph and "graph.rms_norm" in exe.fused_graph


@pytest.mark.parametrize("given", ["argument", "environment"])
def test_the_compile_cache_keys_on_the_switch_files_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           given: str) -> None:
    """Editing the switch file changes what compiles: the cache must not return the executable of its old text
    (an equal file elsewhere may share it)."""
    monkeypatch.delenv("FUSION_SWITCH_FILE", raising=False)
    monkeypatch.delenv("MS_DEV_GRAPH_KERNEL_FLAGS", raising=False)
    switches = tmp_path / "fusion_switch.cfg"

    def build() -> graphfuse.Executable:
        if given == "environment":
            monkeypatch.setenv("FUSION_SWITCH_FILE", str(switches))
            return graphfuse.compile(_ADD_RMS_NORM)
        return graphfuse.compile(_ADD_RMS_NORM, fusion_switch_file=switches)

    switches.write_text('{"Switch": {"GraphFusion": {"ALL": "on", "add_rms_norm_fusion": "on"}}}')
    on = build()
    assert "graph.add_rms_norm" in on.fused_graph
    switches.write_text('{"Switch": {"GraphFusion": {"ALL": "on", "add_rms_norm_fusion": "off"}}}')
    off = build()
    assert off is not on and "graph.add_rms_norm" not in off.fused_graph
    copy = tmp_path / "copy.cfg"
    copy.write_text(switches.read_text())
    switches = copy
    assert build() is off


# --------------------------------------------------------------------------
# MindSpore's context and seed 002's example nets.


@pytest.mark.parametrize(("key", "value"), [("mode", 0), ("device_target", "GPU")], ids=["mode", "device_target"])
def test_context_keys_graphfuse_lacks_are_errors(key: str, value: object, fresh_context: None) -> None:
    with pytest.raises(GraphfuseError, match=f"unknown key '{key}'"):
        context.set_context(**{key: value})


def test_graph_kernel_fusion_is_on_by_default(fresh_context: None) -> None:
    """MindSpore's enable_graph_kernel defaults to False; graphfuse fuses unless told not to."""
    b = GraphBuilder("net")
    x = b.arg((4, 4))
    b.ret(b.exp(x) * 2.0)
    assert context.get_context("enable_graph_kernel") is None
    assert graphfuse.compile(b.module).kernels == 1


def test_seed_002_mul_add_net(fresh_context: None) -> None:
    """MyNet: ``x * 2.0 + 1.0`` on 0.5s, one kernel with enable_graph_kernel=True, every element 2.0; none
    without."""
    b = GraphBuilder("net")
    x = b.arg((4, 4))
    b.ret(x * 2.0 + 1.0)
    x = np.full((4, 4), 0.5, np.float32)
    context.set_context(enable_graph_kernel=True)
    exe = graphfuse.compile(b.module)
    assert exe.kernels == 1 and _kernel_ops(parse_module(exe.fused_graph)) == [["graph.mul", "graph.add"]]
    np.testing.assert_array_equal(exe(x)[0], np.full((4, 4), 2.0, np.float32))
    context.set_context(enable_graph_kernel=False)
    unfused = graphfuse.compile(b.module)
    assert unfused.kernels == 0
    np.testing.assert_array_equal(unfused(x)[0], exe(x)[0])


def test_seed_002_custom_composite_op(fresh_context: None) -> None:
    """MyNet with MyOp: ``a = pow(x * 2.0, 3.0)``, ``(a - y) * a``, fused whole: -0.015104 everywhere, as the
    seed prints it."""
    b = GraphBuilder("net")
    x, y = b.arg((4, 4)), b.arg((4, 4))
    a = b.pow(x * 2.0, b.const(np.float32(3.0)))
    b.ret((a - y) * a)
    context.set_context(enable_graph_kernel=True)
    exe = graphfuse.compile(b.module)
    assert _kernel_ops(parse_module(exe.fused_graph)) == [["graph.mul", "graph.pow", "graph.sub", "graph.mul"]]
    (got,) = exe(np.full((4, 4), 0.2, np.float32), np.full((4, 4), 0.3, np.float32))
    np.testing.assert_allclose(got, np.full((4, 4), -0.015104, np.float32), rtol=1e-6)


# --------------------------------------------------------------------------
# TorchAir's switch.


def test_pattern_fusion_pass_is_on_by_default() -> None:
    gtb = pytest.importorskip("graphfuse.frontends.torch_backend")
    config = gtb.CompilerConfig()
    assert config.experimental_config.pattern_fusion_pass is True and config.flags_text() is None
    assert GraphFusion().enabled(lookup_pass("pattern_fusion_pass"), FusionSwitches())
