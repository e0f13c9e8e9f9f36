"""graphfuse.register_replacement: user fusion patterns fire, keep numerics, switch off and count like built-ins."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse import GraphBuilder, GraphfuseError, ModuleBuilder, parse_module, register_replacement, run_function
from graphfuse.dialect.matching import graph_op_names
from graphfuse.pipelines import log
from graphfuse.pipelines.fusion.graph_fusion import fusion_passes
from graphfuse.pipelines.fusion.switches import FusionSwitches, parse_graph_kernel_flags, parse_switch_file
from graphfuse.pipelines.fusion.user_patterns import registered_replacements
from graphfuse.pipelines.registry import lookup_pass
from graphfuse.pipelines.runner import run_pipeline

RNG = np.random.default_rng(7)
X48 = RNG.standard_normal((4, 8)).astype(np.float32)
G8 = RNG.standard_normal(8).astype(np.float32)


def silu_search(b, x):
    return x * b.sigmoid(x)


def silu_replace(b, x):
    return b.silu(x)


def rms_search(b, x, g):
    return x * b.rsqrt(b.reduce_mean(x * x, axes=[-1], keep_dims=True) + 1e-6) * g


def rms_replace(b, x, g):
    return b.rms_norm(x, g, epsilon=1e-6)


@pytest.fixture
def register() -> Iterator[Callable]:
    """register_replacement, with every pattern it registered removed again (the pass registry is process-wide)."""
    names: list[str] = []

    def add(search_fn, replace_fn, inputs, name, *args, **kwargs):
        cls = register_replacement(search_fn, replace_fn, inputs, name, *args, **kwargs)
        names.append(name)
        return cls

    yield add
    for name in names:
        if name in registered_replacements():
            graphfuse.unregister_replacement(name)


def _silu_module(shape=(2, 3, 16), swapped: bool = False, dtype: str = "f32", into: ModuleBuilder | None = None):
    b = (into or ModuleBuilder()).function("silu_" + "x".join(map(str, shape)) + ("_swapped" if swapped else ""))
    x = b.arg(shape, dtype)
    s = b.sigmoid(x)
    b.ret(b.mul(s, x) if swapped else b.mul(x, s))
    return b.module


def _rms_module(shape=(2, 16), into: ModuleBuilder | None = None):
    b = (into or ModuleBuilder()).function("rms")
    x, g = b.arg(shape), b.arg(shape[-1:])
    mean = b.reduce_mean(b.mul(x, x), axes=[-1], keep_dims=True)
    b.ret(b.mul(g, b.mul(b.rsqrt(b.add(b.const(np.full((1,), 1e-6, np.float32)), mean)), x)))
    return b.module


def _effects(result: dict) -> dict[str, int]:
    return {name: int(c["effect_times"]) for part in result.values() for name, c in part.items()}


def test_user_pattern_fires_counts_and_keeps_numerics(register) -> None:
    register(silu_search, silu_replace, [X48], "user_silu_fusion")
    module = _silu_module()
    inputs = [RNG.standard_normal((2, 3, 16)).astype(np.float32)]
    (before,) = run_function(module, inputs)
    result = run_pipeline(module, "builtin.module(graph-fusion)").fusion_result()
    assert result["graph_fusion"]["user_silu_fusion"] == {"match_times": "1", "effect_times": "1"}
    assert graph_op_names(module) == ["graph.silu"]
    (after,) = run_function(module, inputs)
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-7)


def test_user_pass_is_listed_runs_by_name_and_last_in_graph_fusion(register) -> None:
    cls = register(silu_search, silu_replace, [X48], "user_silu_fusion")
    assert lookup_pass("user-silu-fusion") is cls and cls in graphfuse.all_passes()
    assert fusion_passes()[-1] is cls
    assert (cls.origin, cls.group, cls.summary) == ("user", "GraphFusion", "user pattern: sigmoid, mul => silu")
    module = parse_module(cls.example)  # the traced search graph fuses when run by name
    assert _effects(run_pipeline(module, "builtin.module(user_silu_fusion)").fusion_result()) == {"user_silu_fusion": 1}


#: The built-in pass that fuses the same RMSNorm (built-ins run before user patterns), off where the user's must fire.
BUILTIN_RMS_NORM = "rms_norm_fusion"


def test_compile_fuses_with_the_user_pattern(register) -> None:
    module = _rms_module()
    flags = f"--disable_pass={BUILTIN_RMS_NORM}"
    assert "graph.rms_norm" not in graphfuse.compile(module, graph_kernel_flags=flags).fused_graph
    assert "graph.rms_norm" in graphfuse.compile(module).fused_graph  # the built-in alone
    register(rms_search, rms_replace, [X48, G8], "user_rms_norm_fusion")  # not the executable cached before
    inputs = [RNG.standard_normal((2, 16)).astype(np.float32), RNG.standard_normal(16).astype(np.float32)]
    exe = graphfuse.compile(module, graph_kernel_flags=flags)
    assert "graph.rms_norm" in exe.fused_graph and "graph.rsqrt" not in exe.fused_graph
    np.testing.assert_allclose(exe(*inputs)[0], exe.reference(*inputs)[0], rtol=1e-4, atol=1e-5)
    off = graphfuse.compile(module, graph_kernel_flags=f"{flags},user_rms_norm_fusion")
    assert "graph.rms_norm" not in off.fused_graph


def _silu_and_rms_fused(register, front_end: str, tmp_path: Path, *, options: str, flags: str,
                        switch: dict[str, str]) -> tuple[dict[str, int], ir.Module]:
    """Both user patterns registered and graph-fusion run on a module holding both chains, switched by one front
    end: graph-fusion's ``options``, the graph-kernel ``flags``, or a switch file's GraphFusion ``switch``; each
    also turns the built-in RMSNorm fusion off."""
    options = options.replace("disable-pass=", f"disable-pass={BUILTIN_RMS_NORM},")
    flags = flags.replace("--disable_pass=", f"--disable_pass={BUILTIN_RMS_NORM},")
    switch = {**switch, BUILTIN_RMS_NORM: "off"}
    register(silu_search, silu_replace, [X48], "user_silu_fusion")
    register(rms_search, rms_replace, [X48, G8], "user_rms_norm_fusion")
    both = ModuleBuilder()
    _silu_module(into=both)
    module = _rms_module(into=both)
    pipeline, switches = "builtin.module(graph-fusion)", None
    if front_end == "pipeline":
        pipeline = f"builtin.module(graph-fusion{{{options}}})"
    elif front_end == "flags":
        switches = FusionSwitches(parse_graph_kernel_flags(flags, strict=True))
    else:
        path = tmp_path / "fusion_switch.cfg"
        path.write_text(json.dumps({"Switch": {"GraphFusion": switch}}))
        switches = FusionSwitches(switch_file=parse_switch_file(path))
    return _effects(run_pipeline(module, pipeline, switches=switches).fusion_result()), module


@pytest.mark.parametrize("front_end", ["pipeline", "flags", "switch-file"])
def test_each_front_end_switches_it_off_by_name(register, front_end: str, tmp_path: Path) -> None:
    effects, module = _silu_and_rms_fused(register, front_end, tmp_path, options="disable-pass=user_silu_fusion",
                                          flags="--disable_pass=user_silu_fusion", switch={"user_silu_fusion": "off"})
    assert effects == {"user_rms_norm_fusion": 1}
    assert "graph.sigmoid" in graph_op_names(module) and "graph.rms_norm" in graph_op_names(module)


@pytest.mark.parametrize("front_end", ["pipeline", "flags", "switch-file"])
def test_pattern_fusion_pass_off_switches_user_patterns_off_too(register, front_end: str, tmp_path: Path) -> None:
    """TorchAir's pattern_fusion_pass switch governs the patterns users register; one switched on by its own
    name still runs."""
    effects, module = _silu_and_rms_fused(
        register, front_end, tmp_path, options="disable-pass=pattern_fusion_pass enable-pass=user_rms_norm_fusion",
        flags="--disable_pass=pattern_fusion_pass --enable_pass=user_rms_norm_fusion",
        switch={"pattern_fusion_pass": "off", "user_rms_norm_fusion": "on"})
    assert effects == {"user_rms_norm_fusion": 1}
    assert "graph.sigmoid" in graph_op_names(module)


def test_switch_file_ub_fusion_group(register, tmp_path: Path) -> None:
    register(silu_search, silu_replace, [X48], "user_silu_ub", group="UBFusion")
    path = tmp_path / "fusion_switch.cfg"
    path.write_text(json.dumps({"Switch": {"UBFusion": {"ALL": "off"}}}))
    module = _silu_module()
    run_pipeline(module, "builtin.module(graph-fusion)", switches=FusionSwitches(switch_file=parse_switch_file(path)))
    assert "graph.silu" not in graph_op_names(module)
    result = run_pipeline(module, "builtin.module(graph-fusion)").fusion_result()
    assert result["ub_fusion"] == {"user_silu_ub": {"match_times": "1", "effect_times": "1"}}


def test_commutative_match(register) -> None:
    register(silu_search, silu_replace, [X48], "user_silu_fusion")
    module = _silu_module(swapped=True)
    run_pipeline(module, "builtin.module(user_silu_fusion)")
    assert graph_op_names(module) == ["graph.silu"]


def test_constants_match_by_value_with_splat_semantics(register) -> None:
    register(rms_search, rms_replace, [X48, G8], "user_rms_norm_fusion")
    module = _rms_module((3, 5, 16))  # traced at 4x8 with a scalar epsilon; here rank 3, epsilon dense<1e-6> : 1xf32
    run_pipeline(module, "builtin.module(user_rms_norm_fusion)")
    assert graph_op_names(module) == ["graph.rms_norm"]
    other_epsilon = str(_rms_module()).replace("9.99999997E-7", "1.000000e-05")
    module = parse_module(other_epsilon)
    result = run_pipeline(module, "builtin.module(user_rms_norm_fusion)").fusion_result()
    assert _effects(result) == {} and "graph.rms_norm" not in graph_op_names(module)


def test_dtypes_must_equal_the_examples_unless_dtype_agnostic(register) -> None:
    register(silu_search, silu_replace, [X48], "user_silu_fusion")
    module = _silu_module(dtype="f16")
    run_pipeline(module, "builtin.module(user_silu_fusion)")
    assert "graph.silu" not in graph_op_names(module)
    register(silu_search, silu_replace, [X48], "user_silu_any_dtype", dtype_agnostic=True)
    run_pipeline(module, "builtin.module(user_silu_any_dtype)")
    assert graph_op_names(module) == ["graph.silu"]


def _debug_log(module, pipeline: str, capsys) -> tuple[dict, str]:
    capsys.readouterr()
    log.configure("debug")
    try:
        result = run_pipeline(module, pipeline).fusion_result()
    finally:
        log.configure()
    return result, capsys.readouterr().err


def test_intermediate_used_outside_is_not_fused_and_says_why(register, capsys) -> None:
    register(silu_search, silu_replace, [X48], "user_silu_fusion")
    b = GraphBuilder("shared_sigmoid")
    x = b.arg((4, 8))
    s = b.sigmoid(x)
    b.ret(b.mul(x, s), b.neg(s))
    result, err = _debug_log(b.module, "builtin.module(user_silu_fusion)", capsys)
    assert result["graph_fusion"]["user_silu_fusion"] == {"match_times": "1", "effect_times": "0"}
    assert "pattern user_silu_fusion not fused at" in err
    assert "intermediate result #0 of graph.sigmoid (op #0 of the pattern) is used outside it" in err
    assert "graph.silu" not in graph_op_names(b.module)


def test_replacement_that_does_not_fit_the_types_is_rejected_with_the_reason(register, capsys) -> None:
    def doubled(b, x):
        return x + x

    def fixed_shape(b, x):  # right at 4x8 only: at other shapes the constant broadcasts the result
        return x * b.const(np.full((4, 8), 2.0, np.float32))

    register(doubled, fixed_shape, [X48], "user_double")
    b = GraphBuilder("other_shape")
    x = b.arg((1, 8))
    b.ret(b.add(x, x))
    result, err = _debug_log(b.module, "builtin.module(user_double)", capsys)
    assert _effects(result) == {"user_double": 0}
    assert "the replacement's result #0 would be tensor<4x8xf32>, the matched value is tensor<1x8xf32>" in err


def test_multiple_results_and_external_users(register) -> None:
    def search(b, x, y):
        total = x + y
        return total, b.relu(total)

    def replace(b, x, y):
        total = b.add(x, y)
        return total, b.maximum(total, b.const(np.zeros((), np.float32)))

    register(search, replace, [X48, X48 - 0.5], "user_add_relu")
    b = GraphBuilder("add_relu")
    x, y = b.arg((4, 8)), b.arg((4, 8))
    total = b.add(y, x)
    negated = b.neg(total)  # a user of a result before the pattern's last op: the replacement goes before it
    b.ret(negated, b.relu(total))
    inputs = [RNG.standard_normal((4, 8)).astype(np.float32) for _ in range(2)]
    before = run_function(b.module, inputs)
    run_pipeline(b.module, "builtin.module(user_add_relu)")
    assert graph_op_names(b.module) == ["graph.add", "graph.maximum", "graph.neg"]
    for want, got in zip(before, run_function(b.module, inputs), strict=True):
        np.testing.assert_array_equal(got, want)


def test_extra_check_sees_the_match(register) -> None:
    seen = []

    def wide_rows_only(match: graphfuse.Match) -> bool:
        seen.append((match.name, [s.shape for s in match.input_sigs], [op.name for op in match.ops]))
        return match.input_sigs[0].shape[-1] >= 16

    register(silu_search, silu_replace, [X48], "user_silu_fusion", extra_check=wide_rows_only)
    narrow, wide = _silu_module((4, 8)), _silu_module((4, 16))
    run_pipeline(narrow, "builtin.module(user_silu_fusion)")
    run_pipeline(wide, "builtin.module(user_silu_fusion)")
    assert "graph.silu" not in graph_op_names(narrow) and graph_op_names(wide) == ["graph.silu"]
    assert seen[0] == ("user_silu_fusion", [(4, 8)], ["graph.sigmoid", "graph.mul"])


def test_extra_check_reads_constant_inputs(register) -> None:
    constants = []
    register(silu_search, silu_replace, [X48], "user_silu_fusion",
             extra_check=lambda match: constants.append(match.constant(0)) or True)
    b = GraphBuilder("constant_input")
    c = b.const(X48)
    b.ret(b.mul(c, b.sigmoid(c)), b.mul(b.arg((4, 8)), b.sigmoid(c)))
    run_pipeline(b.module, "builtin.module(user_silu_fusion)")
    assert len(constants) == 1
    np.testing.assert_array_equal(constants[0], X48)


def test_extra_check_that_raises_fails_the_pipeline(register) -> None:
    register(silu_search, silu_replace, [X48], "user_silu_fusion", extra_check=lambda match: match.nope)
    with pytest.raises(GraphfuseError, match="extra_check of user pattern 'user_silu_fusion' raised AttributeError"):
        run_pipeline(_silu_module(), "builtin.module(user_silu_fusion)")


def test_same_name_twice_needs_replace(register) -> None:
    register(silu_search, silu_replace, [X48], "user_silu_fusion")
    with pytest.raises(GraphfuseError, match="a user pattern named 'user-silu-fusion' is already registered"):
        register(silu_search, silu_replace, [X48], "user-silu-fusion")

    def via_exp(b, x):
        return x / (b.exp(-x) + 1.0)

    cls = register(silu_search, via_exp, [X48], "user_silu_fusion", replace=True)
    assert lookup_pass("user_silu_fusion") is cls and registered_replacements().count("user_silu_fusion") == 1
    module = _silu_module()
    run_pipeline(module, "builtin.module(user_silu_fusion)")
    assert graph_op_names(module) == ["graph.neg", "graph.exp", "graph.add", "graph.div"]


@pytest.mark.parametrize(
    ("name", "replace", "message"),
    [
        ("add_layer_norm_fusion", True, "is taken by the graphfuse pass 'add_layer_norm_fusion'"),
        ("graph-cse", False, "is taken by the graphfuse pass 'graph-cse'"),
        ("cse", False, "'cse' is an upstream MLIR pass"),
        ("a,b", False, "invalid user pattern name 'a,b'"),
        ("stage.name", False, "invalid user pattern name 'stage.name'"),
        ("", False, "invalid user pattern name ''"),
    ],
)
def test_names_are_validated(register, name: str, replace: bool, message: str) -> None:
    with pytest.raises(GraphfuseError, match=message.replace(".", r"\.")):
        register(silu_search, silu_replace, [X48], name, replace=replace)


def test_wrong_replacement_is_rejected_at_registration(register) -> None:
    def relu(b, x):
        return b.relu(x)

    with pytest.raises(GraphfuseError) as error:
        register(silu_search, relu, [X48], "user_wrong")
    (diag,) = error.value.diagnostics
    assert diag.location is not None and diag.location.file == __file__
    assert "user pattern 'user_wrong': the replacement's result #0 differs from the search function's" in diag.message
    assert "max abs error" in diag.message
    assert "user_wrong" not in registered_replacements() and lookup_pass("user_wrong") is None


def test_integer_results_must_be_equal(register) -> None:
    ints = np.arange(8, dtype=np.int32).reshape(2, 4)
    with pytest.raises(GraphfuseError, match="in 7 of 8 elements"):
        register(lambda b, x: x * 2, lambda b, x: x + 2, [ints], "user_int")
    register(lambda b, x: x * 2, lambda b, x: x + x, [ints], "user_int")


@pytest.mark.parametrize(
    ("search", "replace", "message"),
    [
        (lambda b, x, y: x, lambda b, x, y: x, "builds no op"),
        (lambda b, x, y: (b.neg(x), y), lambda b, x, y: (b.neg(x), y), "returns an input as result #1"),
        (lambda b, x, y: b.neg(x), lambda b, x, y: b.neg(x), "do not depend on input #1"),
        (lambda b, x, y: b.add(x, y), lambda b, x, y: (b.add(x, y), x), "the replacement returns 2 values"),
        (lambda b, x, y: b.nope(x), lambda b, x, y: x, "the search function does not build"),
        (lambda b, x, y: b.add(x, y), lambda b, x, y: b.add(y, x), "contains the search pattern again"),
        (lambda b, x, y: b.matmul(x, y), lambda b, x, y: x, "'graph.matmul'"),
    ],
)
def test_unusable_functions_are_registration_errors(register, search, replace, message: str) -> None:
    with pytest.raises(GraphfuseError, match=message):
        register(search, replace, [X48, X48], "user_bad")


def test_unregister(register) -> None:
    register(silu_search, silu_replace, [X48], "user_silu_fusion")
    graphfuse.unregister_replacement("user_silu_fusion")
    assert lookup_pass("user_silu_fusion") is None and "user_silu_fusion" not in registered_replacements()
    with pytest.raises(GraphfuseError, match="no user pattern named 'user_silu_fusion'"):
        graphfuse.unregister_replacement("user_silu_fusion")
    with pytest.raises(GraphfuseError, match="no user pattern named 'graph-cse'"):
        graphfuse.unregister_replacement("graph-cse")
