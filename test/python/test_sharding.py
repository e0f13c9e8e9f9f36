"""Tensor parallelism: graphs annotated with shard-dialect shardings, partitioned per rank, run on every rank at
once, equal the single-device graph."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from graphfuse import GraphfuseError, run_function, run_function_ranks, run_pipeline, sharding

torch = pytest.importorskip("torch", reason="the PyTorch front end needs the torch extra (pip install '.[torch]')")


def _hf_llama(heads: int = 4, layers: int = 1, kv_heads: int | None = None):
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    from graphfuse.frontends.torch import import_module

    torch.manual_seed(0)
    config = hf.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=layers,
                            num_attention_heads=heads, num_key_value_heads=kv_heads or heads, vocab_size=100)

    class Layers(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = hf.LlamaModel(config).eval()

        def forward(self, embeds: torch.Tensor) -> torch.Tensor:
            return self.model(inputs_embeds=embeds, use_cache=False).last_hidden_state

    x = torch.randn(1, 16, 64)
    imported = import_module(Layers(), (x,), params="arguments")
    return imported, [x.numpy(), *imported.parameters]


@pytest.mark.parametrize("ranks", [2, 4])
def test_transformers_llama_split_over_ranks_equals_one_device(ranks: int) -> None:
    imported, arguments = _hf_llama(layers=2)
    spec = sharding.megatron_shardings(imported.parameter_names)
    assert sorted(set(spec.values())) == [0, 1] and len(spec) == 14  # 7 linear layers per decoder layer
    annotated = sharding.shard_arguments(imported.module, spec, ranks)
    per_rank = [sharding.partition(annotated, rank) for rank in range(ranks)]
    text = str(per_rank[0])
    assert text.count('"graph.all_reduce"') == 4 and '"graph.all_gather"' not in text  # o_proj, down_proj x 2
    (want,) = run_function(imported.module, arguments)
    results = run_function_ranks(per_rank, [sharding.shard_argument_arrays(arguments, spec, rank, ranks)
                                            for rank in range(ranks)])
    for (got,) in results:
        assert float(np.abs(got - want).max() / np.abs(want).max()) <= 1e-5
    # The default pipeline fuses each row-parallel matmul with its all_reduce.
    fused = graphfuse.parse_module(str(per_rank[1]))
    run_pipeline(fused, "builtin.module(graph-fusion)")
    assert str(fused).count('"graph.matmul_all_reduce"') == 4 and '"graph.all_reduce"' not in str(fused)


def test_a_layout_the_heads_cannot_follow_is_made_whole() -> None:
    """The q, k, v projections split along their input (row-parallel where Megatron splits columns): their
    results are partial sums, which the heads' reshape cannot take, so they are summed (all_reduce) first;
    the result is still the one-device result."""
    imported, arguments = _hf_llama(heads=4)
    spec = {k: 1 for k in sharding.megatron_shardings(imported.parameter_names)}
    ranks = 2
    annotated = sharding.shard_arguments(imported.module, spec, ranks)
    per_rank = [sharding.partition(annotated, rank) for rank in range(ranks)]
    assert str(per_rank[0]).count('"graph.all_reduce"') == 7  # every linear layer's partial result
    (want,) = run_function(imported.module, arguments)
    results = run_function_ranks(per_rank, [sharding.shard_argument_arrays(arguments, spec, r, ranks)
                                            for r in range(ranks)])
    assert all(float(np.abs(got - want).max()) <= 1e-5 * float(np.abs(want).max()) for (got,) in results)


def test_shard_arguments_errors() -> None:
    module = graphfuse.parse_module("func.func @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {\n"
                                    "  return %x : tensor<4x6xf32>\n}\n")
    with pytest.raises(GraphfuseError, match="argument 3 does not exist"):
        sharding.shard_arguments(module, {3: 0}, 2)
    with pytest.raises(GraphfuseError, match=r"argument 0 \(tensor<4x6xf32>\) has no dimension 2"):
        sharding.shard_arguments(module, {0: 2}, 2)
    annotated = sharding.shard_arguments(module, {0: 1}, 2)
    with pytest.raises(GraphfuseError, match=r"already has a shard\.grid"):
        sharding.shard_arguments(annotated, {0: 1}, 2)
    with pytest.raises(GraphfuseError, match="does not divide into 4"):
        sharding.shard_array(np.zeros((4, 6)), 1, 0, 4)
    # A returned split value is gathered back whole.
    rank_graph = sharding.partition(annotated, 1)
    assert '"graph.all_gather"' in str(rank_graph)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    results = run_function_ranks([sharding.partition(annotated, r) for r in range(2)],
                                 [[sharding.shard_array(x, 1, r, 2)] for r in range(2)])
    assert all(np.array_equal(got, x) for (got,) in results)
