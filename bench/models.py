"""Real models for the bench: the transformers library's own model classes and the bundled ResNet block.

Each is built as the examples build it (``examples/transformers_models.py``,
``examples/resnet_basic_block.py``): a small config with random weights (a fixed seed, no downloads), in
eval mode, fed ``inputs_embeds`` [1, seq, hidden] for the transformers models (the layers alone, as the
examples time them), [1, channels, size, size] for the ResNet block.  transformers is an optional
extra (``pip install -e '.[models]'``); without it the transformers workloads report that they cannot run.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MODELS", "ModelSpec", "model", "model_flops"]

REPO = Path(__file__).resolve().parent.parent


class ModelSpec:
    """How to build one model: ``factory(**params) -> torch module`` and the shape of its one input."""

    def __init__(self, factory: Callable[..., Any], input_shape: Callable[..., tuple[int, ...]]):
        self.factory = factory
        self.input_shape = input_shape


def _example(name: str) -> Any:
    """The example script ``examples/<name>.py`` as a module (the bench builds its models the same way)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def _transformers_model(kind: str) -> Callable[..., Any]:
    def factory(seq: int, hidden: int, layers: int, heads: int, ffn: int) -> Any:
        model, _ = _example("transformers_models").build(kind, seq, hidden, layers, heads, ffn)
        return model

    return factory


def _resnet_block(size: int, channels: int) -> Any:
    block, _ = _example("resnet_basic_block").build(size=size, channels=channels)
    return block


def _tokens(seq: int, hidden: int, **_: int) -> tuple[int, ...]:
    return (1, seq, hidden)


MODELS: dict[str, ModelSpec] = {
    "llama": ModelSpec(_transformers_model("llama"), _tokens),
    "bert": ModelSpec(_transformers_model("bert"), _tokens),
    "gpt2": ModelSpec(_transformers_model("gpt2"), _tokens),
    "resnet_block": ModelSpec(_resnet_block, lambda size, channels: (1, channels, size, size)),
}


#: (name, params) -> the model built (a plain dict: torch.compile traces the lookup, and warns of lru_cache)
_BUILT: dict[tuple[str, tuple[tuple[str, int], ...]], Any] = {}


def model(name: str, **params: int) -> Any:
    """The model ``name`` at ``params`` (built once per process: the same weights for every variant)."""
    key = (name, tuple(sorted(params.items())))
    if key not in _BUILT:
        import torch

        torch.manual_seed(0)
        _BUILT[key] = MODELS[name].factory(**params).eval()
    return _BUILT[key]


def model_flops(name: str, **params: int) -> int:
    """Multiply-adds x 2 of the model's matmuls (projections, MLP, attention's two products) or convolutions."""
    if name == "resnet_block":
        size, channels = params["size"], params["channels"]
        return 2 * 2 * size * size * channels * channels * 9
    seq, hidden, layers, ffn = params["seq"], params["hidden"], params["layers"], params["ffn"]
    mlp = (3 if name == "llama" else 2) * hidden * ffn  # Llama's gate, up and down projections
    return layers * (2 * seq * (4 * hidden * hidden + mlp) + 2 * 2 * seq * seq * hidden)


def weight_bytes(name: str, **params: int) -> int:
    return sum(p.numel() * p.element_size() for p in model(name, **params).parameters())


def available(name: str) -> str | None:
    """None when the model can be built here, else why not."""
    if name != "resnet_block" and importlib.util.find_spec("transformers") is None:
        return "transformers not installed (pip install -e '.[models]')"
    if importlib.util.find_spec("torch") is None:
        return "torch not installed"
    return None
