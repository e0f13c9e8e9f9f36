"""graph-kernel-fusion end to end: every opt level keeps every bundled model's results; flags drive it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from graphfuse import GraphBuilder, run_function
from graphfuse.dialect.matching import graph_op_names
from graphfuse.pipelines.fusion.switches import FusionSwitches, parse_graph_kernel_flags
from graphfuse.pipelines.graph_kernel.cluster import cluster_set, op_kind
from graphfuse.pipelines.graph_kernel.fusion import GraphKernelFusion
from graphfuse.pipelines.runner import PipelineError, run_pipeline
from graphfuse.tools.models import MODELS, model_inputs


def kernels(module: ir.Module) -> list[ir.Operation]:
    return [op.operation for op in module.body.operations if "graph.kernel" in op.operation.attributes]


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_opt_level_keeps_the_models_results(model: str, opt_level: int) -> None:
    module = MODELS[model]().module
    inputs = model_inputs(model)
    before = run_function(module, inputs)
    run_pipeline(module, f"builtin.module(graph-kernel-fusion{{opt-level={opt_level}}})")
    after = run_function(module, inputs)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    if opt_level == 0:
        assert kernels(module) == []
    else:
        assert kernels(module), f"no kernel formed in {model} at opt-level {opt_level}"


def test_higher_levels_make_no_more_kernels_than_needed() -> None:
    counts = []
    for level in (1, 3):
        module = MODELS["transformer_block"]().module
        run_pipeline(module, f"builtin.module(graph-kernel-fusion{{opt-level={level}}})")
        counts.append(len(kernels(module)))
    assert counts[1] <= counts[0]


def test_flags_string_sets_the_options() -> None:
    flags = parse_graph_kernel_flags("--opt_level=1 --enable_expand_ops=Softmax --disable_cluster_ops=Exp")
    settings = GraphKernelFusion().resolved(flags)
    assert settings["opt_level"] == 1
    assert settings["expand"][0] == ("Softmax",)
    assert settings["cluster"][1] == ("Exp",)
    # A value written in the pipeline wins over the flags.
    assert GraphKernelFusion(opt_level=3).resolved(flags)["opt_level"] == 3


def test_enable_expand_ops_only_expands_only_those() -> None:
    module = MODELS["bert_layer"]().module
    run_pipeline(module, "builtin.module(graph-kernel-fusion{enable-expand-ops-only=Softmax})")
    names = [name for k in kernels(module) for name in _kernel_ops(k)] + graph_op_names(module)
    assert "graph.softmax" not in names
    assert "graph.layer_norm" in names


def _kernel_ops(kernel: ir.Operation) -> list[str]:
    return [str(a).strip('"') for a in kernel.attributes["graph.kernel_ops"]]


def test_disable_pass_accepts_the_stage_form() -> None:
    module = MODELS["mlp"]().module
    flags = parse_graph_kernel_flags("--disable_pass=graph_kernel.graph-kernel-cluster")
    run_pipeline(module, "builtin.module(graph-kernel-fusion)", switches=FusionSwitches(flags))
    assert kernels(module) == []


def test_unknown_step_is_a_pipeline_error() -> None:
    with pytest.raises(PipelineError, match="has no step 'graph-kernel-nope'"):
        run_pipeline(MODELS["mlp"]().module, "builtin.module(graph-kernel-fusion{disable-pass=graph-kernel-nope})")


def test_dump_as_text_writes_the_kernels_and_decisions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    module = MODELS["transformer_block"]().module
    run_pipeline(module, "builtin.module(graph-kernel-fusion{dump-as-text})")
    text = (tmp_path / "graph_kernel_dump" / "graph_kernel_clusters.txt").read_text()
    assert "kernel transformer_block_kernel_0" in text
    assert " at " in text  # every source op with its location


def test_cluster_lists_follow_the_flags_semantics() -> None:
    assert "matmul" not in cluster_set("cpu")
    assert "matmul" in cluster_set("cpu", enable=("MatMul",))
    assert "exp" not in cluster_set("cpu", disable=("Exp",))
    assert cluster_set("cpu", enable=("MatMul",), only=("Add", "Mul")) == {"add", "mul"}
    assert op_kind("graph.reduce_sum") == "reduction" and op_kind("graph.softmax") == "opaque"


#: Seed Appendix 2 (default cluster operators), every name.
APPENDIX_2 = (
    "Abs Add BroadcastTo Cast Exp Log Maximum Minimum Mul Neg Pow Div RealDiv Reciprocal Rsqrt Sqrt Sub Equal "
    "NotEqual Greater GreaterEqual Less LessEqual LogicalAnd LogicalOr LogicalNot Select Assign ReduceSum IsFinite "
    "Reshape Transpose Floor Ceil Trunc Round Tanh ACos Acosh ArgMax Argmin Asin Asinh Atan Atan2 Cos Erf Expm1 "
    "FloorDiv FloorMod IsInf IsNan Mod ReduceMax ReduceMin Sign Sin StridedSlice CumSum OneHot"
).split()


@pytest.mark.parametrize("name", APPENDIX_2)
def test_appendix_2_names_are_cluster_ops(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--enable_cluster_ops_only=<name>` clusters the op the seed's name means, with no unknown-operator
    warning."""
    ops = cluster_set("cpu", only=(name,))
    assert "unknown operator" not in capsys.readouterr().err
    assert len(ops) == 1


#: Appendix 2's ops that the dialect gained with their MindSpore names: (name, graph op, build of x -> op(x)).
_NEW_CLUSTER_OPS = {
    "Trunc": lambda b, x: b.trunc(x), "ACos": lambda b, x: b.acos(b.tanh(x)), "Acosh": lambda b, x: b.acosh(b.exp(x)),
    "Asin": lambda b, x: b.asin(b.tanh(x)), "Asinh": lambda b, x: b.asinh(x), "Atan": lambda b, x: b.atan(x),
    "Atan2": lambda b, x: b.atan2(x, b.exp(x)), "Expm1": lambda b, x: b.expm1(x),
    "FloorDiv": lambda b, x: b.floor_div(x, b.exp(x)), "FloorMod": lambda b, x: b.floor_mod(x, b.exp(x)),
    "Mod": lambda b, x: b.mod(x, b.exp(x)), "IsInf": lambda b, x: b.cast(b.isinf(x), "f32"),
    "IsNan": lambda b, x: b.cast(b.isnan(x), "f32"), "ArgMax": lambda b, x: b.cast(b.argmax(x, axis=1), "f32"),
    "Argmin": lambda b, x: b.cast(b.argmin(x, axis=1), "f32"), "CumSum": lambda b, x: b.cumsum(x, axis=1),
    "Assign": lambda b, x: b.assign(x, b.exp(x)),
    "StridedSlice": lambda b, x: b.slice(x, start=[1, 0], limit=[4, 6], strides=[2, 2]),
}


#: Ops with a boolean result: the emulated NPU has no i1 buffers (docs/npu.md), so they run on the CPU only.
_BOOLEAN_RESULTS = frozenset({"IsInf", "IsNan"})


@pytest.mark.parametrize("name", sorted(_NEW_CLUSTER_OPS))
def test_new_cluster_ops_join_kernels(name: str) -> None:
    """exp -> <op> -> neg with the op enabled as a cluster op: it joins the exp's kernel, and the fused graph
    computes what the unfused one does (reference interpreter), compiled for the CPU and the emulated NPU."""
    import graphfuse
    from graphfuse.lowering.npu.compiler import compile_npu

    b = GraphBuilder("f")
    x = b.arg((4, 6))
    b.ret(b.neg(_NEW_CLUSTER_OPS[name](b, b.exp(x))))
    module = b.module
    sample = [np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)]
    (want,) = run_function(module, sample)
    switches = FusionSwitches.from_sources(f"--enable_cluster_ops_only=Exp,Neg,Tanh,Cast,{name}", None)
    run_pipeline(module, "builtin.module(graph-kernel-fusion{opt-level=1},outline-fused-ops)", switches=switches)
    kernels = [op for op in module.body.operations if "graph.kernel" in op.attributes]
    assert kernels, str(module)
    from graphfuse.pipelines.graph_kernel.op_names import MINDSPORE_OPS

    assert any(f"graph.{MINDSPORE_OPS[name]}" in str(k) for k in kernels), str(module)
    (got,) = run_function(module, sample)
    np.testing.assert_array_equal(got, want)
    (compiled,) = graphfuse.compile(module)(*sample)
    np.testing.assert_allclose(compiled, want, rtol=1e-4, atol=2e-5)  # acos and asin near 1 amplify tanh's ulp
    if name not in _BOOLEAN_RESULTS:
        (emulated,) = compile_npu(module)(*sample)
        np.testing.assert_allclose(emulated, want, rtol=1e-4, atol=2e-5)


def test_cluster_flags_add_to_the_default_pipeline() -> None:
    """The CPU pipeline writes its extra cluster ops as an option; the flags' enable/disable lists still count
    (they add up with the option instead of being overridden by it)."""
    import graphfuse

    b = GraphBuilder("f")
    x = b.arg((4, 6))
    b.ret(b.exp(b.sin(b.atan(b.exp(x)))))

    def outside_kernels(flags: str) -> str:
        return graphfuse.compile(b.module, graph_kernel_flags=flags).fused_graph.split("func.func private")[0]

    plain = outside_kernels("")
    assert '"graph.atan"' in plain and '"graph.sin"' not in plain  # atan: no cluster op; sin: a CPU extra
    assert '"graph.atan"' not in outside_kernels("--enable_cluster_ops=Atan")
    assert '"graph.sin"' in outside_kernels("--disable_cluster_ops=Sin")
