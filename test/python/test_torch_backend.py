"""torch.compile(model, backend="graphfuse"): the Dynamo backend, its configuration, fallbacks and models."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the torch extra (pip install -e '.[torch]')")
from torch import nn  # noqa: E402

import graphfuse  # noqa: E402
import graphfuse.frontends.torch_backend as gtb  # noqa: E402
from graphfuse import GraphfuseError  # noqa: E402
from graphfuse.pipelines import log  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_frontend_torch import _hf_network  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    """Each test compiles from scratch and reads only its own graphs' reports."""
    torch._dynamo.reset()
    gtb.clear_reports()
    yield
    torch._dynamo.reset()


def _relative_error(got: Any, want: Any) -> float:
    return float((got.float() - want.float()).abs().max() / want.float().abs().max())


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)

    def forward(self, x: Any) -> Any:
        return torch.softmax(self.norm(torch.relu(self.up(x)) + 1.0), dim=-1)


# --------------------------------------------------------------------------
# Registration, results, specialisation.


def test_the_backend_is_registered_by_name() -> None:
    assert gtb.BACKEND_NAME in torch._dynamo.list_backends()
    torch.manual_seed(0)
    model, x = Mlp().eval(), torch.randn(4, 16)
    with torch.no_grad():
        got = torch.compile(model, backend="graphfuse")(x)
        want = model(x)
    assert _relative_error(got, want) <= 1e-5
    (report,) = gtb.last_report()
    assert len(report.compiled) == 1 and report.calls == 1 and report.eager_calls == 0
    assert report.graph_ops.get("graph.softmax") == 1, report.graph_ops


def test_dynamic_graphs_compile_once_for_every_size() -> None:
    """With dynamic=True Dynamo hands over one graph with symbolic sizes; the backend compiles it once, the row
    count a ? dim (the width, which the Linear layer needs, stays 16), and every row count runs that code."""
    torch.manual_seed(0)
    model = Mlp().eval()
    config = gtb.CompilerConfig(fallback="error")
    compiled = torch.compile(model, backend=gtb.get_backend(compiler_config=config), dynamic=True)
    with torch.no_grad():
        for rows in (4, 4, 6, 4, 6, 9, 9, 300):
            x = torch.randn(rows, 16)
            assert _relative_error(compiled(x), model(x)) <= 1e-5
    (report,) = gtb.last_report()
    # The inputs besides the parameters: the symbolic row count, x, and the layer norm's eps (a 0-d tensor)
    assert list(report.compiled) == ["(?, [?, 16]:float32, 1e-05)"], report.summary()
    assert report.calls == 8 and report.eager_calls == 0 and report.per_shape is None


class Tokens(nn.Module):
    """A [batch, tokens, 16] input through a Linear layer and a layer norm: both leading sizes vary."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)

    def forward(self, x: Any) -> Any:
        return torch.softmax(self.norm(self.up(x)), dim=-1) * 2.0


def test_automatic_dynamic_shapes_compile_twice_for_any_number_of_sizes() -> None:
    """Without dynamic=True, as Inductor: the first shape compiles static; when the sizes change Dynamo traces
    again with them symbolic, and that one compile serves every later size."""
    torch.manual_seed(0)
    model = Tokens().eval()
    compiled = torch.compile(model, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error")))
    with torch.no_grad():
        for batch, tokens in ((3, 5), (4, 7), (2, 9), (5, 3), (2, 100), (7, 2), (4, 7)):
            x = torch.randn(batch, tokens, 16)
            assert _relative_error(compiled(x), model(x)) <= 1e-5
    reports = gtb.last_report()
    compiles = [key for report in reports for key in report.compiled]
    assert compiles == ["([3, 5, 16]:float32)", "(?, ?, [?, ?, 16]:float32)"], [r.summary() for r in reports]
    assert sum(r.calls for r in reports) == 7 and not any(r.eager_calls for r in reports)


def test_mark_dynamic_compiles_the_marked_dim_symbolic_from_the_first_call() -> None:
    torch.manual_seed(0)
    model = Tokens().eval()
    compiled = torch.compile(model, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error")))
    with torch.no_grad():
        for batch in (3, 8, 2, 5):
            x = torch.randn(batch, 6, 16)
            torch._dynamo.mark_dynamic(x, 0)
            assert _relative_error(compiled(x), model(x)) <= 1e-5
    (report,) = gtb.last_report()
    assert list(report.compiled) == ["(?, [?, 6, 16]:float32)"], report.summary()  # the size, then x


class ScaledByLength(nn.Module):
    def forward(self, x: Any) -> Any:
        return torch.exp(x) * x.shape[1] + (x.shape[1] - 1) // 2  # symbolic sizes used as numbers in tensor arithmetic


def test_symbolic_sizes_used_as_tensors_compile_once() -> None:
    """A size used in tensor arithmetic (``arange(n) + past_length`` in transformers) is the dim's size at run
    time (graph.dimension_size, with graph arithmetic on sizes): one compile serves every length."""
    model = ScaledByLength()
    compiled = torch.compile(model, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error")),
                             dynamic=True)
    with torch.no_grad():
        for length in (4, 6, 9, 1):
            x = torch.randn(2, length)
            assert _relative_error(compiled(x), model(x)) <= 1e-5
    reports = gtb.last_report()  # Dynamo specialises a size of 1: a graph of its own
    assert [list(report.compiled) for report in reports] == [["(?, ?, [?, ?]:float32)"], ["(?, [?, 1]:float32)"]], \
        [report.summary() for report in reports]
    assert not any(report.per_shape or report.eager_calls for report in reports)


class MaskedHeads(nn.Module):
    """What a transformers decoder does with a batch and a length that both vary: its padding mask indexed by
    [batch, key] positions (masking_utils), the hidden dim split into heads and one head of keys repeated for
    two query heads (views with two symbolic dims), attention over a length known at run time."""

    def __init__(self) -> None:
        super().__init__()
        self.q, self.kv = nn.Linear(16, 16), nn.Linear(16, 8)

    def forward(self, x: Any, padding: Any) -> Any:
        batch, length, _ = x.shape
        positions = torch.arange(batch)[:, None, None, None], torch.arange(length)[None, None, None, :]
        keep = padding.bool()[positions[0], positions[1]]  # [batch, 1, 1, length]
        mask = torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))
        q = self.q(x).view(batch, length, 2, 8).transpose(1, 2)
        kv = self.kv(x).view(batch, length, 1, 8).transpose(1, 2)
        kv = kv[:, :, None, :, :].expand(batch, 1, 2, length, 8).reshape(batch, 2, length, 8)
        out = torch.nn.functional.scaled_dot_product_attention(q, kv, kv, attn_mask=mask)
        return out.transpose(1, 2).reshape(batch, length, 16)


def test_masks_and_head_views_over_a_symbolic_batch_and_length_compile_once() -> None:
    """HF's padding-mask indexing with symbolic sizes (a gather at positions counted from graph.dimension_size),
    views keeping two symbolic dims (the heads split off, repeat_kv's unsqueeze and merge) and attention over a
    length known at run time (the tiled flash attention) take one compile for every batch and length >= 2."""
    torch.manual_seed(0)
    model = MaskedHeads().eval()
    compiled = torch.compile(model, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error")),
                             dynamic=True)
    with torch.no_grad():
        for batch, length in ((2, 5), (3, 9), (2, 300)):
            x = torch.randn(batch, length, 16)
            padding = torch.ones(batch, length, dtype=torch.long)
            padding[0, : length // 2] = 0  # the first row left-padded
            assert _relative_error(compiled(x, padding), model(x, padding)) <= 1e-5
    (report,) = gtb.last_report()
    assert len(report.compiled) == 1 and report.calls == 3, report.summary()
    assert report.per_shape is None and report.eager_calls == 0, report.summary()


class ModuloOfLength(nn.Module):
    def forward(self, x: Any) -> Any:
        return torch.exp(x) * (x.shape[1] % 5)  # a remainder of sizes: no graph arithmetic takes it


def test_symbolic_sizes_that_do_not_compile_are_specialised_per_shape_up_to_the_cache_size_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A graph whose symbols the import cannot take (a remainder of sizes used as a tensor) is compiled once per
    input shape, the reason in the report, and past cache_size_limit shapes new ones run in eager PyTorch."""
    model = ModuloOfLength()
    compiled = torch.compile(model, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(cache_size_limit=2)),
                             dynamic=True)
    with torch.no_grad():
        for length in (4, 4, 6, 4, 6, 9, 9):
            x = torch.randn(2, length)
            assert _relative_error(compiled(x), model(x)) <= 1e-5
    (report,) = gtb.last_report()
    assert "the symbolic size" in report.per_shape and "(?, ?, [?, ?]:float32)" in report.per_shape, report.summary()
    assert list(report.compiled) == ["(2, 4, [2, 4]:float32)", "(2, 6, [2, 6]:float32)"], report.summary()
    assert report.calls == 7 and report.eager_calls == 2
    assert "more than cache_size_limit=2 input shapes; (2, 9, [2, 9]:float32) and later" in capsys.readouterr().err


def test_bf16_inputs_and_results_share_memory_with_numpy() -> None:
    torch.manual_seed(0)
    model = Mlp().to(torch.bfloat16).eval()
    x = torch.randn(8, 16, dtype=torch.bfloat16)
    with torch.no_grad():
        got = torch.compile(model, backend="graphfuse")(x)
        want = model(x)
    assert got.dtype == torch.bfloat16 and _relative_error(got, want) <= 2e-2


class CacheUpdate(nn.Module):
    """A static KV cache written in place, as transformers' StaticCache does."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, cache: Any, positions: Any, x: Any) -> Any:
        cache.index_copy_(1, positions, self.proj(x))
        return cache.sum(dim=1)


def test_inputs_written_in_place_are_written_back() -> None:
    torch.manual_seed(0)
    model = CacheUpdate().eval()
    compiled = torch.compile(model, backend="graphfuse")
    cache, want_cache = torch.zeros(2, 8, 4), torch.zeros(2, 8, 4)
    with torch.no_grad():
        for step in range(3):
            positions, x = torch.tensor([2 * step, 2 * step + 1]), torch.randn(2, 2, 4)
            got = compiled(cache, positions, x)
            want = model(want_cache, positions, x)
            assert _relative_error(got, want) <= 1e-5
            assert _relative_error(cache, want_cache) <= 1e-6
    assert sum(len(report.compiled) for report in gtb.last_report()) == 1


def test_parameters_are_read_at_each_call_or_frozen_with_a_guard() -> None:
    """Passed at each call, or compiled in as constants (frozen_parameter) and compiled again when one of them is
    written in place or replaced: either way a changed parameter is seen."""
    torch.manual_seed(0)
    x = torch.randn(4, 16)
    for frozen in (False, True):
        torch._dynamo.reset()
        gtb.clear_reports()
        model = Mlp().eval()
        config = gtb.CompilerConfig()
        config.experimental_config.frozen_parameter = frozen
        compiled = torch.compile(model, backend=gtb.get_backend(compiler_config=config))
        with torch.no_grad():
            before = compiled(x)
            model.up.bias.add_(1.0)  # in place: its version counter moves
            after = compiled(x)
            assert _relative_error(after, model(x)) <= 1e-5 and not torch.equal(after, before)
            model.norm.weight = nn.Parameter(torch.full((32,), 2.0))  # replaced: a new storage
            again = compiled(x)
            assert _relative_error(again, model(x)) <= 1e-5
            compiled(x)
        recompiles = sum(report.recompiles for report in gtb.last_report())
        assert recompiles == (2 if frozen else 0), [report.summary() for report in gtb.last_report()]
        # x, and unless frozen the linear's and the layer norm's weights and biases
        assert gtb.last_report()[-1].arguments == (1 if frozen else 5)


# --------------------------------------------------------------------------
# Fallbacks.


class WithCumprod(nn.Module):
    def forward(self, x: Any) -> Any:
        return torch.cumprod(x, dim=1) + 1.0


def test_an_unsupported_op_runs_in_eager_with_a_warning_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    x = torch.rand(3, 5)
    with torch.no_grad():
        got = torch.compile(WithCumprod(), backend="graphfuse")(x)
    assert torch.equal(got, WithCumprod()(x))
    err = capsys.readouterr().err
    assert "[WARNING] graphfuse backend: FX graph 1 runs in eager PyTorch:" in err
    assert "unsupported ATen op 'aten.cumprod.default' at FX node 'cumprod'" in err
    assert "test_torch_backend.py:" in err and "torch.cumprod(x, dim=1)" in err  # the user's source line
    (report,) = gtb.last_report()
    assert report.eager_calls == 1 and not report.compiled and "aten.cumprod.default" in report.summary()


def test_fallback_error_raises_instead() -> None:
    backend = gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error"))
    message = r"FX graph 1: .*unsupported ATen op 'aten\.cumprod\.default'"
    with torch.no_grad(), pytest.raises(GraphfuseError, match=message):
        torch.compile(WithCumprod(), backend=backend)(torch.rand(3, 5))


def test_graphs_that_need_gradients_run_in_eager(capsys: pytest.CaptureFixture[str]) -> None:
    torch.manual_seed(0)
    model, x = Mlp(), torch.randn(4, 16)
    got = torch.compile(model, backend="graphfuse")(x)
    got.sum().backward()  # autograd still works: the graph ran in PyTorch
    assert model.up.weight.grad is not None
    assert "gradients are enabled and an input requires them" in capsys.readouterr().err


def test_a_graph_break_gives_two_graphs_both_compiled() -> None:
    def forward(x: Any) -> Any:
        y = torch.relu(x) * 2.0
        print("", end="")  # a graph break
        return torch.tanh(y) + 1.0

    x = torch.randn(4, 8)
    with torch.no_grad():
        got = torch.compile(forward, backend="graphfuse")(x)
    assert _relative_error(got, forward(x)) <= 1e-5
    reports = gtb.last_report()
    assert len(reports) == 2 and all(len(report.compiled) == 1 for report in reports)


# --------------------------------------------------------------------------
# Configuration.


@pytest.mark.parametrize(("fields", "message"), [
    ({"opt_level": 7}, "CompilerConfig.opt_level"),
    ({"cache_size_limit": 0}, "cache_size_limit must be a positive integer"),
    ({"fallback": "skip"}, "fallback must be 'eager' or 'error'"),
    ({"num_threads": 0}, "num_threads must be a positive integer"),
    ({"graph_kernel_flags": "--bogus=1"}, "unknown flag '--bogus'"),
    ({"fusion_switch_file": "no/such/fusion_switch.cfg"}, "no such file"),
])
def test_a_bad_config_is_an_error_naming_the_field(fields: dict, message: str) -> None:
    with pytest.raises(GraphfuseError, match=message):
        gtb.get_backend(compiler_config=gtb.CompilerConfig(**fields))


def test_pattern_fusion_pass_switch_also_governs_registered_replacements() -> None:
    def search(b: Any, x: Any) -> Any:
        return x * b.sigmoid(x)

    def replace(b: Any, x: Any) -> Any:
        return b.silu(x)

    graphfuse.register_replacement(search, replace, [np.ones((4, 8), np.float32)], name="backend_test_silu_fusion")
    try:
        def forward(x: Any) -> Any:
            return x * torch.sigmoid(x) + 1.0

        x = torch.randn(4, 8)
        fired = {}
        for switch in (True, False):
            torch._dynamo.reset()
            gtb.clear_reports()
            config = gtb.CompilerConfig(graph_kernel_flags="--disable_pass=add_layer_norm_fusion")
            config.experimental_config.pattern_fusion_pass = switch
            assert ("pattern_fusion_pass" in (config.flags_text() or "")) is not switch
            with torch.no_grad():
                got = torch.compile(forward, backend=gtb.get_backend(compiler_config=config))(x)
            assert _relative_error(got, forward(x)) <= 1e-5
            fired[switch] = gtb.last_report()[0].fusions
        assert fired[True].get("backend_test_silu_fusion") == 1 and "backend_test_silu_fusion" not in fired[False]
        off = gtb.CompilerConfig(graph_kernel_flags="--disable_pass=add_layer_norm_fusion")
        off.experimental_config.pattern_fusion_pass = False
        assert off.flags_text() == ("--disable_pass=add_layer_norm_fusion --disable_pass=add_layer_norm_fusion,"
                                    "pattern_fusion_pass")
    finally:
        graphfuse.unregister_replacement("backend_test_silu_fusion")


def test_the_config_is_copied_when_the_backend_is_made() -> None:
    config = gtb.CompilerConfig(opt_level=0)
    backend = gtb.get_backend(compiler_config=config)
    config.opt_level = 2  # too late for this backend
    with torch.no_grad():
        torch.compile(Mlp().eval(), backend=backend)(torch.randn(4, 16))
    assert not gtb.last_report()[0].fusions


# --------------------------------------------------------------------------
# The transformers library's own models.


@pytest.mark.parametrize("kind", ["llama", "qwen2", "mistral", "gpt2", "bert", "t5"])
def test_hf_models_under_torch_compile(kind: str) -> None:
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    network = _hf_network(hf, kind).eval()
    ids = torch.randint(0, 128, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.int64)
    mask[1, 7:] = 0  # the second sequence is 7 tokens, padded to 10
    extra = {} if kind in ("bert", "t5") else {"use_cache": False}
    with torch.no_grad():
        want = network(input_ids=ids, attention_mask=mask, **extra).last_hidden_state
        got = torch.compile(network, backend="graphfuse")(input_ids=ids, attention_mask=mask, **extra)
    assert _relative_error(got.last_hidden_state, want) <= 1e-5
    reports = gtb.last_report()
    assert reports and all(report.compiled and not report.eager_calls for report in reports)


def test_llama_generate_with_a_static_cache_gives_eager_tokens_without_recompiling() -> None:
    """Greedy generation of 32 tokens: one compile for the prompt, one for every decoding step after it."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    config = hf.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    model = hf.LlamaForCausalLM(config).eval()
    prompt = torch.randint(0, 128, (1, 7))
    settings = {"max_new_tokens": 32, "do_sample": False, "cache_implementation": "static"}
    with torch.no_grad():
        want = model.generate(prompt, **settings)
        model.forward = torch.compile(model.forward, backend="graphfuse")
        got = model.generate(prompt, **settings)
    assert torch.equal(got, want) and got.shape[1] == 7 + 32
    reports = gtb.last_report()
    assert sum(len(report.compiled) for report in reports) == 2, [report.summary() for report in reports]
    assert sum(report.calls for report in reports) == 32 and not any(report.eager_calls for report in reports)
    assert all(report.fusions.get("add_rms_norm_fusion") == 4 for report in reports)


@pytest.mark.parametrize("kind", ["llama", "qwen2", "gpt2"])
def test_generate_with_the_default_cache_compiles_three_times(kind: str) -> None:
    """transformers' default DynamicCache, whose length grows by a token per step: the prompt, the first step
    (an empty cache before it) and one compile with the cache length symbolic for every later step; no step runs
    in eager PyTorch and the tokens are eager's."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    small = {"vocab_size": 128, "num_attention_heads": 4}
    if kind == "gpt2":
        config = hf.GPT2Config(n_embd=64, n_inner=128, n_layer=2, n_positions=128, bos_token_id=0, eos_token_id=0,
                               n_head=4, vocab_size=128)
        model = hf.GPT2LMHeadModel(config).eval()
    else:
        config = {"llama": hf.LlamaConfig, "qwen2": hf.Qwen2Config}[kind](
            hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_key_value_heads=2,
            max_position_embeddings=128, **small)
        model = {"llama": hf.LlamaForCausalLM, "qwen2": hf.Qwen2ForCausalLM}[kind](config).eval()
    prompt = torch.randint(0, 128, (1, 7))
    settings = {"max_new_tokens": 24, "do_sample": False}
    backend = gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error"))
    with torch.no_grad():
        want = model.generate(prompt, **settings)
        model.forward = torch.compile(model.forward, backend=backend)
        got = model.generate(prompt, **settings)
    assert torch.equal(got, want) and got.shape[1] == 7 + 24
    reports = gtb.last_report()
    assert sum(len(report.compiled) for report in reports) <= 3, [report.summary() for report in reports]
    assert sum(report.calls for report in reports) == 24 and not any(report.eager_calls for report in reports)


# phi3, gptj and mixtral take 23-34 s each: make test-slow runs them
@pytest.mark.parametrize("name", ["mistral", pytest.param("phi3", marks=pytest.mark.slow),
                                  pytest.param("gptj", marks=pytest.mark.slow), "gpt2", "bloom", "falcon",
                                  pytest.param("mixtral", marks=pytest.mark.slow)])
def test_decoders_at_new_lengths_compile_once_symbolic(name: str) -> None:
    """The forward of a decoder at new lengths after a batch of 4 and one of 1: one symbolic compile serves
    every later length, nothing runs in eager PyTorch, outputs as eager's.  Mistral's symbolic graph returns its
    length input as an output (the cache keeps it): the compiled graph leaves it out and the call returns the
    length it was given.  Phi-3 splits each head into its rotary part, all of it here, and an empty rest beside
    dims that are dynamic: graph-fold-empty-tensors drops the rest and the concat that reads it.  GPT-J takes
    its rotary pairs as x[..., ::2] beside dynamic dims.  GPT-2 views its linear layers' [b * s, n] rows as
    [b, s, n] and Bloom its ALiBi as [b * heads, 1, s] (reshapes with a sizes operand); Falcon indexes one head
    of [b, s, heads, d]; Mixtral sorts its tokens by expert (histc, argsort, index_put, grouped_matmul over a
    dynamic number of rows)."""
    pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    import dataclasses

    from bench.zoo_models import TINY, ZOO, zoo_model

    zoo = ZOO[name]
    model = zoo_model(name, TINY)
    compiled = torch.compile(model, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error")))
    with torch.no_grad():
        for length, batch in ((12, 4), (12, 1), (8, 4), (17, 4), (33, 4)):
            inputs = zoo.inputs(dataclasses.replace(TINY, seq=length), batch)
            got, want = compiled(**inputs), model(**inputs)
            assert _relative_error(got.logits, want.logits) <= 1e-5, (length, batch)
    reports = gtb.last_report()
    assert sum(len(report.compiled) for report in reports) == 3, [report.summary() for report in reports]
    assert not any(report.eager_calls or report.per_shape for report in reports), [r.summary() for r in reports]


def test_llama_generate_from_prompts_of_several_lengths_compiles_each_graph_symbolic_once() -> None:
    """64 tokens from prompts of 5 lengths with the default cache (the rotary halves, the causal mask, the last
    token's slice and ``arange(n) + past_length`` under a symbolic length): the prompt and the decoding step are
    each compiled static for the first shape, then once symbolic, and once more each for the 1-token prompt
    (Dynamo specialises sizes of 1: the prompt, and the cache of one token after it); nothing is compiled per
    shape or run in eager PyTorch, and every token is eager's."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    config = hf.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    model = hf.LlamaForCausalLM(config).eval()
    settings = {"max_new_tokens": 64, "do_sample": False}
    forward = model.forward
    compiled = torch.compile(forward, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error")))
    with torch.no_grad():
        for length in (5, 9, 1, 31, 12):
            prompt = torch.randint(0, 128, (1, length))
            model.forward = forward
            want = model.generate(prompt, **settings)
            model.forward = compiled
            assert torch.equal(model.generate(prompt, **settings), want), length
    reports = gtb.last_report()
    assert sum(len(report.compiled) for report in reports) == 6, [report.summary() for report in reports]
    assert not any(report.eager_calls or report.per_shape for report in reports), [r.summary() for r in reports]


def test_info_log_names_each_compile(capsys: pytest.CaptureFixture[str]) -> None:
    log.configure("info")
    try:
        with torch.no_grad():
            torch.compile(Mlp().eval(), backend="graphfuse")(torch.randn(4, 16))
    finally:
        log.configure()
    assert "[INFO] graphfuse backend: FX graph 1 compiled for inputs ([4, 16]:float32)" in capsys.readouterr().err


def test_hf_llama_with_a_dynamic_sequence_length() -> None:
    """torch.compile(dynamic=True) hands over one graph with a symbolic length (its arange included); each length
    is compiled once and none runs eagerly."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    network = _hf_network(hf, "llama").eval()
    compiled = torch.compile(network, backend="graphfuse", dynamic=True)
    with torch.no_grad():
        for length in (6, 11, 6):
            ids = torch.randint(0, 128, (1, length))
            want = network(input_ids=ids, use_cache=False).last_hidden_state
            got = compiled(input_ids=ids, use_cache=False).last_hidden_state
            assert _relative_error(got, want) <= 1e-5
    reports = gtb.last_report()
    assert sum(len(report.compiled) for report in reports) == 2, [report.summary() for report in reports]
    assert sum(report.calls for report in reports) == 3 and not any(report.eager_calls for report in reports)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_empty_tensors_in_and_out_of_a_compiled_graph(dtype: Any) -> None:
    """Empty arguments and results pass through (buffers of no bytes); cat skips empty operands (a 1-D [0] one
    whatever the others' rank), a sum over nothing is 0 and any of nothing false, as in eager."""

    def forward(x: Any, rows: Any, columns: Any) -> Any:
        return (torch.cat([rows, x]), rows * 2, rows.sum(0), columns + 1, torch.cat([torch.tensor([]), x[0]]),
                (rows > 0).any(0))

    torch.manual_seed(0)
    inputs = (torch.randn(3, 4, dtype=dtype), torch.randn(0, 4, dtype=dtype), torch.randn(2, 0, dtype=dtype))
    backend = gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error"))
    with torch.no_grad():
        want = forward(*inputs)
        got = torch.compile(forward, backend=backend)(*inputs)
    for g, w in zip(got, want, strict=True):
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        torch.testing.assert_close(g, w, rtol=0, atol=0)
    (report,) = gtb.last_report()
    assert report.compiled and not report.eager_calls


def test_llama_with_the_default_cache_gives_eager_logits_and_cache() -> None:
    """transformers' default DynamicCache starts each layer empty (``torch.tensor([])``) and concatenates the new
    keys and values to it: strict, nothing runs eagerly, and the returned cache holds eager's keys and values.
    The second row is right-padded."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    config = hf.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2)
    model = hf.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 128, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.int64)
    mask[1, 7:] = 0
    backend = gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error"))
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask)
        got = torch.compile(model, backend=backend)(input_ids=ids, attention_mask=mask)
    assert _relative_error(got.logits, want.logits) <= 1e-5
    want_cache, got_cache = want.past_key_values, got.past_key_values
    assert len(got_cache.layers) == len(want_cache.layers) == 2
    for got_layer, want_layer in zip(got_cache.layers, want_cache.layers, strict=True):
        for got_states, want_states in ((got_layer.keys, want_layer.keys), (got_layer.values, want_layer.values)):
            assert got_states.shape == want_states.shape == (2, 2, 10, 16)
            torch.testing.assert_close(got_states, want_states, rtol=1e-5, atol=1e-6)
    reports = gtb.last_report()
    assert reports and all(report.compiled and not report.eager_calls for report in reports)


def test_phi3_concatenates_an_empty_rotary_part_back() -> None:
    """Phi-3 rotates whole heads, so the part of each head its rotary embedding passes through is an empty slice
    ([2, 4, 10, 0]) concatenated back to the rotated part: strict, nothing runs eagerly."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    config = hf.Phi3Config(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, pad_token_id=0, bos_token_id=1,
                           eos_token_id=2)
    model = hf.Phi3ForCausalLM(config).eval()
    ids = torch.randint(0, 128, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.int64)
    mask[1, 7:] = 0
    backend = gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error"))
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask, use_cache=False).logits
        got = torch.compile(model, backend=backend)(input_ids=ids, attention_mask=mask, use_cache=False).logits
    assert _relative_error(got, want) <= 1e-5
    reports = gtb.last_report()
    assert reports and all(report.compiled and not report.eager_calls for report in reports)


def test_inputs_on_another_device_run_in_eager(capsys: pytest.CaptureFixture[str]) -> None:
    def forward(x: Any) -> Any:
        return torch.relu(x) + 1.0

    x = torch.empty(4, 8, device="meta")
    with torch.no_grad():
        got = torch.compile(forward, backend="graphfuse")(x)
    assert got.device.type == "meta" and got.shape == (4, 8)
    assert "inputs on meta: graphfuse compiles for the CPU" in capsys.readouterr().err


@pytest.mark.parametrize(("kind", "dtype"), [("llama", torch.float32), ("llama", torch.bfloat16),
                                             ("qwen2", torch.float32), ("mistral", torch.bfloat16)])
def test_frozen_hf_decoders_fuse_their_mlp_and_norms(kind: str, dtype: Any) -> None:
    """With the weights compiled in, the separate gate and up projections become one matmul and a swiglu, and
    the norms after the residual adds fuse with them (in bf16 through HF's casts to f32 and back)."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    config_class = {"llama": hf.LlamaConfig, "qwen2": hf.Qwen2Config, "mistral": hf.MistralConfig}[kind]
    model_class = {"llama": hf.LlamaModel, "qwen2": hf.Qwen2Model, "mistral": hf.MistralModel}[kind]
    network = model_class(config_class(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64))
    network = network.to(dtype).eval()
    config = gtb.CompilerConfig()
    config.experimental_config.frozen_parameter = True
    ids = torch.randint(0, 128, (1, 10))
    with torch.no_grad():
        want = network(input_ids=ids, use_cache=False).last_hidden_state
        compiled = torch.compile(network, backend=gtb.get_backend(compiler_config=config))
        got = compiled(input_ids=ids, use_cache=False).last_hidden_state
    assert _relative_error(got, want) <= (1e-5 if dtype == torch.float32 else 2e-2)
    (report,) = gtb.last_report()
    norm = "add_rms_norm_fusion" if dtype == torch.float32 else "add_cast_rms_norm_cast_fusion"
    assert report.fusions.get("inference_swiglu_fusion") == 2 and report.fusions.get(norm) == 4, report.fusions


# --------------------------------------------------------------------------
# Attention's fully masked rows, as PyTorch defines them.


STRICT = gtb.CompilerConfig(fallback="error")


@pytest.mark.parametrize("opt_level", [0, 2])
def test_sdpa_gives_zero_for_query_rows_whose_mask_hides_every_key(opt_level: int) -> None:
    """A boolean and a -inf mask hiding every key from one query: PyTorch returns 0 there, not NaN; the
    compiled path (fused into flash attention at opt level 2) gives the same, the other rows unchanged."""
    import torch.nn.functional as F

    def attend(q: Any, k: Any, v: Any, allowed: Any, additive: Any) -> Any:
        # the second swaps q and k: one scores product each, or graph-cse would share it (no fusion then)
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=allowed),
                F.scaled_dot_product_attention(k, q, v, attn_mask=additive))

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 6, 8) for _ in range(3))
    allowed = torch.ones(2, 1, 6, 6, dtype=torch.bool).tril()
    allowed[1, :, :, :3] = False  # batch row 1 is left-padded by 3: its first 3 queries see no key
    additive = torch.zeros(2, 1, 6, 6).masked_fill(~allowed, -torch.inf)
    config = gtb.CompilerConfig(opt_level=opt_level, fallback="error")
    with torch.no_grad():
        want = attend(q, k, v, allowed, additive)
        got = torch.compile(attend, backend=gtb.get_backend(compiler_config=config))(q, k, v, allowed, additive)
    for g, w in zip(got, want, strict=True):
        assert not torch.isnan(w).any() and (w[1, :, :3] == 0).all()
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)
    (report,) = gtb.last_report()
    assert report.compiled and not report.eager_calls
    assert (report.fusions.get("FlashAttentionFusionV1") == 2) == (opt_level == 2), report.fusions


@pytest.mark.parametrize("keys", [32, 70], ids=["whole-vectors", "with-remainder"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_sdpa_rounds_where_pytorch_rounds(dtype: Any, keys: int) -> None:
    """f16/bf16 attention as PyTorch's CPU kernel computes it (scores and softmax in f32, its coarse exponential
    on whole vectors of keys and the accurate one on the remainder, the unnormalized probabilities rounded once
    for the product with V, times the reciprocal of the sum in f32): the compiled result equals eager's but
    where the order of the f32 sums moves a rounding (measured: none of these elements; with the accurate exp
    throughout 1.5-5% differ, with the scores and probabilities in the operands' type 42%).  Left-padded rows,
    whose queries see no key, give 0."""
    import torch.nn.functional as F

    def attend(q: Any, k: Any, v: Any, allowed: Any) -> Any:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)

    torch.manual_seed(0)
    q = torch.randn(2, 4, 32, 16).mul(2).to(dtype)
    k, v = (torch.randn(2, 4, keys, 16).mul(2).to(dtype) for _ in range(2))
    allowed = torch.ones(2, 1, 32, keys, dtype=torch.bool).tril(keys - 32)
    allowed[1, :, :, :keys - 27] = False  # the first 5 queries of batch row 1 see no key
    with torch.no_grad():
        want = attend(q, k, v, allowed)
        got = torch.compile(attend, backend=gtb.get_backend(compiler_config=STRICT))(q, k, v, allowed)
    assert got.dtype == dtype and (got[1, :, :5] == 0).all() and not torch.isnan(got).any()
    step = torch.finfo(dtype).eps * want.double().abs().max()
    assert (got.double() - want.double()).abs().max() <= step
    assert (got != want).float().mean().item() <= 0.002
    (report,) = gtb.last_report()
    assert report.compiled and not report.eager_calls


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_sdpa_exponentials_are_the_kernels(dtype: Any) -> None:
    """With V the identity each output is one rounded probability times the reciprocal of its row's sum, so a
    single exponential rounded the other way shows.  70 keys: the kernel's coarse exp on the whole vectors
    (64 keys on AVX-512, 64 on AVX2), its accurate exp on the rest; either exp everywhere moves elements."""
    import torch.nn.functional as F

    def attend(q: Any, k: Any, v: Any) -> Any:
        return F.scaled_dot_product_attention(q, k, v)

    torch.manual_seed(0)
    keys = 70
    q, k = torch.randn(2, 4, 32, keys).to(dtype), torch.randn(2, 4, keys, keys).to(dtype)
    v = torch.eye(keys, dtype=dtype).expand(2, 4, keys, keys).contiguous()
    with torch.no_grad():
        want = attend(q, k, v)
        got = torch.compile(attend, backend=gtb.get_backend(compiler_config=STRICT))(q, k, v)
    assert (got != want).sum().item() <= 2
    (report,) = gtb.last_report()
    assert report.compiled and not report.eager_calls


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_bias_is_added_before_rounding(dtype: Any) -> None:
    """linear, addmm and baddbmm in f16/bf16 add the bias to the f32 accumulator and round once, as PyTorch's
    CPU kernels: rounding the product first changes about a quarter of bf16 results by a step (measured
    27% for the linear)."""

    def products(x: Any, w: Any, b: Any, x3: Any, w3: Any, b3: Any) -> Any:
        return (torch.nn.functional.linear(x, w, b), torch.addmm(b, x[0], w.t(), beta=0.5, alpha=2.0),
                torch.baddbmm(b3, x3, w3, alpha=0.125))

    torch.manual_seed(0)
    args = (torch.randn(2, 32, 64), torch.randn(48, 64) * 0.1, torch.randn(48),
            torch.randn(4, 16, 32), torch.randn(4, 32, 24), torch.randn(4, 1, 24))
    args = tuple(a.to(dtype) for a in args)
    with torch.no_grad():
        want = products(*args)
        got = torch.compile(products, backend=gtb.get_backend(compiler_config=STRICT))(*args)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == dtype and (g != w).float().mean().item() <= 0.002
    (report,) = gtb.last_report()
    assert report.compiled and not report.eager_calls


def test_left_padded_llama_gives_eager_logits() -> None:
    """The reproducer of the padded-batch NaNs: LlamaForCausalLM, a row left-padded by 8 of 32 tokens, strict;
    with two layers a NaN of a masked query row would reach every position of that row."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    config = hf.LlamaConfig(vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2)
    model = hf.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 1000, (2, 32))
    mask = torch.ones(2, 32, dtype=torch.int64)
    mask[1, :8] = 0
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask, use_cache=False).logits
        got = torch.compile(model, backend=gtb.get_backend(compiler_config=STRICT))(
            input_ids=ids, attention_mask=mask, use_cache=False).logits
    assert not torch.isnan(got).any()
    assert _relative_error(got, want) <= 1e-5


def test_parameters_written_or_replaced_between_calls_are_read_afresh() -> None:
    """A parameter's numpy view is reused while the parameter is the same memory: a weight written in place is
    seen through it, a weight whose storage was replaced gets a new view."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(8, 4).eval()
    compiled = torch.compile(layer, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error")))
    x = torch.randn(3, 8)
    with torch.no_grad():
        for change in (None, lambda: layer.weight.mul_(-2.0), lambda: setattr(layer.weight, "data",
                                                                              torch.randn(4, 8))):
            if change is not None:
                change()
            torch.testing.assert_close(compiled(x), layer(x), rtol=1e-6, atol=1e-6)
    reports = gtb.last_report()  # one compile: the three calls ran the same version
    assert sum(len(r.compiled) for r in reports) == 1 and not any(r.eager_calls for r in reports)


# --------------------------------------------------------------------------
# Outputs that are views, as in eager.


def _strict() -> Any:
    return gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error"))


def test_outputs_that_view_inputs_are_views_of_them() -> None:
    """Eager returns x.view(-1), x.t(), x[0] and y.relu_() as views of x and y: writes through them reach x and y.
    The compiled graph returns the same views (made again on the inputs after the call), not copies."""

    def views(x: Any, y: Any) -> Any:
        return x.view(-1), x.t(), x[0], y.relu_(), x + 1

    compiled = torch.compile(views, backend=_strict())
    x, y = torch.randn(3, 4), torch.randn(5)
    y_before = y.clone()
    with torch.no_grad():
        flat, transposed, row, relu, plus = compiled(x, y)
    assert torch.equal(y, y_before.relu()) and relu.data_ptr() == y.data_ptr()
    assert transposed.shape == (4, 3) and transposed.stride() == (1, 4)
    assert all(v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() for v in (flat, transposed, row))
    assert plus.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    flat[1] = 100.0  # a write through one view is seen by the input and the others, as in eager
    assert x[0, 1] == 100.0 and transposed[1, 0] == 100.0 and row[1] == 100.0
    assert not any(r.eager_calls for r in gtb.last_report())


def test_outputs_that_view_another_output_view_it() -> None:
    def outputs(x: Any) -> Any:
        z = x * 2
        return z, z.view(-1), z.t()

    compiled = torch.compile(outputs, backend=_strict())
    with torch.no_grad():
        z, flat, transposed = compiled(torch.randn(3, 4))
    flat[1] = -5.0
    assert z[0, 1] == -5.0 and transposed[1, 0] == -5.0
    torch.testing.assert_close(z, flat.view(3, 4), rtol=0, atol=0)


def test_compiled_code_runs_on_the_tensors_memory() -> None:
    """The compiled code takes the tensors' addresses and writes results PyTorch allocated: a non-contiguous
    input (a transposed view and a slice, copied first), an input at a storage offset, bf16 and bool results,
    a run-time check raising as eager does; each call sees its own inputs."""

    def f(x: Any, y: Any, z: Any) -> Any:
        return (x * 2 + y).to(torch.bfloat16), x > y, z.sum(-1)

    compiled = torch.compile(f, backend=_strict())
    base = torch.randn(8, 6)
    with torch.no_grad():
        for step in range(3):
            x = (base * (step + 1)).t()  # 6 x 8, not contiguous
            y = torch.randn(16, 8)[3:9]  # contiguous, at an offset into its storage
            z = torch.randn(5, 8, 4)[:, ::2]  # strided
            for got, want in zip(compiled(x, y, z), f(x, y, z), strict=True):
                assert got.dtype == want.dtype and got.is_contiguous() and torch.equal(got, want)
                assert got.data_ptr() % 64 == 0

    def divide(a: Any, b: Any) -> Any:
        return a // b

    compiled_divide = torch.compile(divide, backend=_strict())
    a, b = torch.arange(12).reshape(3, 4), torch.ones(3, 4, dtype=torch.int64)
    with torch.no_grad():
        assert torch.equal(compiled_divide(a, b), a)
        b[1, 2] = 0
        with pytest.raises(ZeroDivisionError):
            compiled_divide(a, b)
    assert not any(r.eager_calls for r in gtb.last_report())


def test_outputs_made_again_as_views_are_not_computed() -> None:
    """The compiled code computes only the outputs that are not views: a graph of views alone (what a graph break
    between reshapes leaves, DeBERTa's relative positions) runs no compiled code and returns eager's views."""

    def views_only(x: Any) -> Any:
        return x.expand(4, 3, 5), x.transpose(1, 2)

    def views_and_values(x: Any) -> Any:
        return x.view(-1), x * 2, x.expand(2, 3, 5)

    x = torch.randn(1, 3, 5)
    for function, views, arguments in ((views_only, 2, 0), (views_and_values, 2, 1)):
        torch._dynamo.reset()
        gtb.clear_reports()
        compiled = torch.compile(function, backend=_strict())
        with torch.no_grad():
            got, want = compiled(x), function(x)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.stride() == w.stride() and torch.equal(g, w)
            shares = g.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
            assert shares == (w.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
        [report] = gtb.last_report()
        assert (report.views, report.arguments, report.eager_calls) == (views, arguments, 0)
        assert report.compiled


def test_outputs_viewing_an_intermediate_run_in_eager_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    """Two outputs viewing an intermediate the graph does not return: the compiled code would give two unrelated
    copies, so the graph runs in eager PyTorch and says why."""

    def outputs(x: Any) -> Any:
        z = x * 2
        return z.view(-1), z.t()

    compiled = torch.compile(outputs, backend="graphfuse")
    with torch.no_grad():
        flat, transposed = compiled(torch.randn(3, 4))
    flat[1] = -5.0
    assert transposed[1, 0] == -5.0
    assert "views of one intermediate the compiled code does not return" in capsys.readouterr().err
    assert gtb.last_report()[0].eager_calls == 1


@pytest.mark.parametrize("check", ["version", "content"])
def test_frozen_parameters_written_behind_the_version_counter(check: str) -> None:
    """Writes through ``.data`` or a numpy view do not move a parameter's version counter: the default check
    (documented) does not see them, ``frozen_parameter_check="content"`` does and compiles again."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(8, 4).eval()
    config = gtb.CompilerConfig(fallback="error")
    config.experimental_config.frozen_parameter = True
    config.experimental_config.frozen_parameter_check = check
    compiled = torch.compile(layer, backend=gtb.get_backend(compiler_config=config))
    x = torch.randn(3, 8)
    with torch.no_grad():
        before = compiled(x)
        layer.weight.data.add_(1.0)
        through_data = compiled(x)
        layer.bias.detach().numpy()[:] = 7.0
        through_numpy = compiled(x)
    recompiles = sum(r.recompiles for r in gtb.last_report())
    if check == "content":
        torch.testing.assert_close(through_numpy, layer(x), rtol=1e-6, atol=1e-6)
        assert not torch.equal(through_data, before) and recompiles == 2
    else:
        assert torch.equal(through_data, before) and torch.equal(through_numpy, before) and recompiles == 0


def test_frozen_parameter_check_is_checked() -> None:
    config = gtb.CompilerConfig()
    config.experimental_config.frozen_parameter_check = "hash"
    with pytest.raises(GraphfuseError, match="frozen_parameter_check must be 'version' or 'content'"):
        gtb.get_backend(compiler_config=config)
