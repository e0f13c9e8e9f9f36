"""UB fusion: the passes keep numerics exactly (interpreter), compile to the same results, and save GM traffic.

Every UBFusion pass's example, random DAGs of elementwise, reduction, layout,
matmul and opaque ops (where a wrong merge would form a cycle), and the
bundled models are run through the passes and compared with the reference
interpreter on the unfused graph: outlining moves ops into kernels without
changing them, so the interpreter's results are bit-identical.  Compiled
through ``graphfuse.compile`` with a pipeline that includes ``ub-fusion``,
they match within float tolerance.  On the emulated NPU, each UB pass
lowers the GM bytes a block moves.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import graphfuse
from graphfuse import GraphBuilder, PipelineError, parse_module, run_function
from graphfuse.dialect.npu_target import load_target
from graphfuse.dialect.types import NUMPY_DTYPES, sig_from_type
from graphfuse.lowering.npu.compiler import compile_npu
from graphfuse.pipelines.fusion.base import GRAPH_FUSION, UB_FUSION
from graphfuse.pipelines.fusion.graph_fusion import GraphFusion, UbFusion, fusion_passes
from graphfuse.pipelines.fusion.switches import FusionSwitches
from graphfuse.pipelines.fusion.ub import AutomaticUbFusion
from graphfuse.pipelines.runner import run_pipeline
from graphfuse.tools.models import MODELS, model_inputs

UB_PASSES = [cls for cls in fusion_passes() if cls.group == UB_FUSION and cls.__module__.startswith("graphfuse.")]
#: The CPU pipeline with UB fusion in it: clean-up, graph fusion, UB fusion, fused ops outlined.
COMPILE_PIPELINE = (
    "builtin.module(graph-canonicalize,graph-cse,graph-dce,graph-fusion,ub-fusion,graph-dce,outline-fused-ops)"
)
_KERNEL_KIND = re.compile(r'graph\.fusion_kind = "(ub_\w+)"')
#: A block with work for every UB pass (the lit tests' input).
BLOCK = Path(__file__).resolve().parents[1] / "Fusion" / "ub-fusion" / "Inputs" / "block.mlir"


def _inputs(module, seed: int = 0) -> list[np.ndarray]:
    """Inputs in [0.5, 1.5) for the first function's arguments (safe for sqrt, log, rsqrt)."""
    rng = np.random.default_rng(seed)
    func = module.body.operations[0]
    arrays = []
    for arg in func.regions[0].blocks[0].arguments:
        sig = sig_from_type(arg.type)
        arrays.append(rng.uniform(0.5, 1.5, sig.shape).astype(NUMPY_DTYPES[sig.dtype]))
    return arrays


def _assert_identical(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def _assert_close(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-4, atol=1e-5)


def test_the_ub_passes_run_in_their_fixed_order() -> None:
    assert [cls.name for cls in UB_PASSES] == [
        "ATbeMatMulElemwiseFusionPass", "TbeReduceElemwiseFusionPass", "TbeEltwiseFusionPass",
        "AutomaticUbFusion", "FusionVirtualOpSetSwitch",
    ]
    assert all(cls.default_backends == frozenset({"npu"}) and cls.origin == "cann" for cls in UB_PASSES)


@pytest.mark.parametrize("cls", UB_PASSES, ids=[cls.name for cls in UB_PASSES])
def test_example_is_rewritten_and_bit_identical(cls) -> None:
    module = parse_module(cls.example)
    inputs = _inputs(module)
    before = run_function(module, inputs)
    run_pipeline(module, f"builtin.module({cls.name})")
    text = str(module)
    assert _KERNEL_KIND.search(text) or "_no_task = true" in text
    _assert_identical(run_function(module, inputs), before)


@pytest.mark.parametrize("cls", UB_PASSES, ids=[cls.name for cls in UB_PASSES])
def test_example_compiles_to_the_reference(cls) -> None:
    module = parse_module(cls.example)
    inputs = _inputs(module)
    executable = graphfuse.compile(cls.example, pipeline=f"builtin.module({cls.name})")
    assert _KERNEL_KIND.search(executable.fused_graph) or "_no_task = true" in executable.fused_graph
    _assert_close(executable(*inputs), run_function(module, inputs))


# -- random graphs ---------------------------------------------------------------------------


def _random_graph(seed: int) -> str:
    """A random DAG on [4, 8] values: operands are drawn from every earlier value, so paths skip around."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"random_{seed}")
    pool = [b.arg((4, 8)), b.arg((4, 8))]
    weight = b.const(rng.uniform(-0.5, 0.5, (8, 8)).astype(np.float32))
    for _ in range(14):
        x, y = (pool[int(i)] for i in rng.integers(0, len(pool), 2))
        kind = rng.choice(["unary", "binary", "binary", "reduce", "matmul", "softmax", "transpose"])
        if kind == "unary":
            value = getattr(b, str(rng.choice(["tanh", "neg", "sigmoid", "abs"])))(x)
        elif kind == "binary":
            value = getattr(b, str(rng.choice(["add", "mul", "sub", "maximum"])))(x, y)
        elif kind == "reduce":  # a reduced row broadcast back
            value = b.add(x, b.reduce_max(y, axes=[1], keep_dims=True))
        elif kind == "matmul":
            value = b.matmul(x, weight)
        elif kind == "softmax":  # opaque: never joins a UB kernel, so merges around it must not form cycles
            value = b.softmax(x, axis=-1)
        else:
            value = b.transpose(b.transpose(x, perm=[1, 0]), perm=[1, 0])
        pool.append(value)
    b.ret(pool[-1], pool[len(pool) // 2])
    return str(b.module)


@pytest.mark.parametrize("pipeline", ["ub-fusion", "AutomaticUbFusion", "TbeEltwiseFusionPass",
                                      "ATbeMatMulElemwiseFusionPass,TbeReduceElemwiseFusionPass"])
def test_random_graphs_stay_acyclic_and_bit_identical(pipeline: str) -> None:
    fused_kernels = 0
    for seed in range(10):
        text = _random_graph(seed)
        module = parse_module(text)
        inputs = _inputs(module, seed)
        before = run_function(module, inputs)
        run_pipeline(module, f"builtin.module({pipeline})")  # verified after every pass: dominance included
        fused_kernels += len(_KERNEL_KIND.findall(str(module)))
        _assert_identical(run_function(module, inputs), before)
    assert fused_kernels > 0


# -- bundled models ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_model_through_ub_fusion_is_bit_identical(name: str) -> None:
    text = str(MODELS[name]().module)
    inputs = model_inputs(name)
    reference = run_function(parse_module(text), inputs)
    module = parse_module(text)
    result = run_pipeline(module, "builtin.module(ub-fusion)").fusion_result()
    assert _KERNEL_KIND.search(str(module)), "no UB kernel in the model"
    assert result["ub_fusion"], "nothing recorded in fusion_result.json's ub_fusion part"
    _assert_identical(run_function(module, inputs), reference)


@pytest.mark.parametrize("name", ["mlp", "resnet_block", "transformer_block"])
def test_model_compiled_with_ub_fusion_matches_the_reference(name: str) -> None:
    text = str(MODELS[name]().module)
    inputs = model_inputs(name)
    executable = graphfuse.compile(text, pipeline=COMPILE_PIPELINE)
    assert _KERNEL_KIND.search(executable.fused_graph)
    _assert_close(executable(*inputs), run_function(parse_module(text), inputs))


def test_ub_fusion_saves_gm_traffic_on_the_npu_emulator() -> None:
    """Fewer kernels and fewer GM bytes with each UB pass, the same results; a _no_task split runs no kernel."""
    text = BLOCK.read_text()
    module = parse_module(text)
    inputs = _inputs(module)
    reference = run_function(module, inputs)
    measured = {}
    for pipeline in ("graph-canonicalize", "ub-fusion{disable-pass=FusionVirtualOpSetSwitch}", "ub-fusion"):
        executable = compile_npu(text, pipeline=f"builtin.module({pipeline})")
        _assert_close(executable(*inputs), reference)
        report = executable.report()
        measured[pipeline] = (len(report.rows), report.gm_bytes, {row.kind for row in report.rows})
    unfused, grouped, marked = measured.values()
    assert unfused[0] > grouped[0] > marked[0]
    assert unfused[1] > grouped[1] > marked[1]
    assert "split" in grouped[2] and "split" not in marked[2]
    assert {"ub_matmul_elemwise", "ub_reduce_elemwise", "ub_eltwise", "ub_auto"} <= marked[2]


# -- switches and options -------------------------------------------------------------------


def test_both_drivers_decide_with_one_rule() -> None:
    switches = FusionSwitches()
    graph_npu, graph_cpu, ub = GraphFusion(backend="npu"), GraphFusion(), UbFusion()
    for cls in UB_PASSES:
        assert graph_npu.enabled(cls, switches) and ub.enabled(cls, switches)
        assert not graph_cpu.enabled(cls, switches)
        assert not UbFusion(disable_pass=(cls.name,)).enabled(cls, switches)
    graph_passes = [cls for cls in fusion_passes() if cls.group == GRAPH_FUSION]
    assert graph_passes and not any(ub.enabled(cls, switches) for cls in graph_passes)


def test_automatic_budget_is_the_target_unified_buffer() -> None:
    ub = load_target("910b").ub
    assert AutomaticUbFusion().ub_budget() == (ub.bytes, ub.alignment)
    assert AutomaticUbFusion(ub_size=4096).ub_budget()[0] == 4096


@pytest.mark.parametrize("bad", ["TbeEltwiseFusionPass{max-ops=1}", "TbeReduceElemwiseFusionPass{max-ops=0}",
                                 "ATbeMatMulElemwiseFusionPass{max-epilogue=0}", "AutomaticUbFusion{ub-size=-5}",
                                 "ub-fusion{enable-pass=add_layer_norm_fusion}"])
def test_bad_options_are_pipeline_errors(bad: str) -> None:
    module = parse_module(UB_PASSES[0].example)
    with pytest.raises(PipelineError):
        run_pipeline(module, f"builtin.module({bad})")
