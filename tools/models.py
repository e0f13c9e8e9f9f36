"""Bundled model graphs, built with the builder API, for the demo, the tests and the benchmarks.

Weights are constants drawn from a seeded generator, stored the way PyTorch
stores them (``nn.Linear`` as ``[out, in]``, transposed in the graph; convs as
OIHW), as a graph exported from a framework looks: that is the kind of graph
the cleanup and fusion passes are meant for.  Activations (and BERT's
attention mask) are function arguments.

Every builder returns a :class:`ModelBuilder`: the finished
:class:`~graphfuse.dialect.builder.FunctionBuilder` (``.module`` is the
graph module) whose ``weights`` maps each parameter's name
(``"q_proj.weight"``, ``"bn1.var"``...) to the exact float32 array stored in
its ``arith.constant``, so an independent implementation (the tests' numpy
references) can recompute the layer with the same parameters.  Constants that
are not parameters (softmax scales, masks, RoPE tables) are not listed.

:data:`MODELS` names each model built with its default config and
:func:`model_inputs` gives matching random inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from graphfuse.dialect.builder import FunctionBuilder, Tensor


class ModelBuilder(FunctionBuilder):
    """A single-function builder that also records the parameters it stores as constants."""

    def __init__(self, name: str):
        super().__init__(name)
        #: parameter name -> the array stored in the graph, in creation order
        self.weights: dict[str, np.ndarray] = {}

    def param(self, name: str, value: np.ndarray) -> Tensor:
        """A float32 constant recorded under ``name`` in :attr:`weights`."""
        if name in self.weights:
            raise ValueError(f"parameter {name!r} is defined twice")
        array = np.ascontiguousarray(value, dtype=np.float32)
        self.weights[name] = array
        return self.const(array)


def _linear(
    b: ModelBuilder, x: Tensor, rng: np.random.Generator, out_dim: int, name: str = "linear", bias: bool = True
) -> Tensor:
    """x @ W^T (+ bias) with W stored [out, in], as a framework exports nn.Linear."""
    in_dim = x.shape[-1]
    weight = b.param(f"{name}.weight", rng.normal(0.0, in_dim**-0.5, (out_dim, in_dim)))
    if not bias:
        return b.matmul(x, b.transpose(weight, perm=[1, 0]))
    bias_value = b.param(f"{name}.bias", rng.normal(0.0, 0.02, (out_dim,)))
    return b.bias_add(b.matmul(x, b.transpose(weight, perm=[1, 0])), bias_value)


# --------------------------------------------------------------------------
# The pre-norm decoder block (GPT-style).


@dataclass(frozen=True)
class TransformerConfig:
    seq: int = 32
    d_model: int = 64
    heads: int = 4
    ffn: int = 256
    seed: int = 0

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


def _split_heads(b: FunctionBuilder, x: Tensor, cfg: TransformerConfig) -> Tensor:
    """[S, D] -> [H, S, Dh]."""
    return b.transpose(b.reshape(x, (cfg.seq, cfg.heads, cfg.head_dim)), perm=[1, 0, 2])


def transformer_block(cfg: TransformerConfig = TransformerConfig()) -> ModelBuilder:
    """A pre-norm decoder block: causal multi-head self-attention and a GELU MLP, with residuals.

    Returns the finished builder (``.module`` is the graph module); the one
    argument is the activation ``x`` of shape [seq, d_model].  Weights:
    ``ln1.*``, ``q_proj``/``k_proj``/``v_proj``/``o_proj``, ``ln2.*``,
    ``fc1``/``fc2`` (``.weight`` [out, in], ``.bias``).
    """
    rng = np.random.default_rng(cfg.seed)
    b = ModelBuilder("transformer_block")
    x = b.arg((cfg.seq, cfg.d_model))

    def norm(t: Tensor, name: str) -> Tensor:
        gamma = b.param(f"{name}.gamma", np.ones(cfg.d_model, np.float32))
        beta = b.param(f"{name}.beta", np.zeros(cfg.d_model, np.float32))
        return b.layer_norm(t, gamma, beta, epsilon=1e-5)

    h = norm(x, "ln1")
    q = _split_heads(b, _linear(b, h, rng, cfg.d_model, "q_proj"), cfg)
    k = _split_heads(b, _linear(b, h, rng, cfg.d_model, "k_proj"), cfg)
    v = _split_heads(b, _linear(b, h, rng, cfg.d_model, "v_proj"), cfg)
    # Exporters compute the softmax scale in the graph: 1/sqrt(head_dim).
    scale = b.rsqrt(b.const(np.full((1,), cfg.head_dim, np.float32)))
    scores = b.mul(b.matmul(q, k, transpose_b=True), scale)
    causal = np.triu(np.full((cfg.seq, cfg.seq), -1e9, np.float32), k=1)
    probs = b.softmax(b.add(scores, b.const(causal)), axis=-1)
    context = b.reshape(b.transpose(b.matmul(probs, v), perm=[1, 0, 2]), (cfg.seq, cfg.d_model))
    x1 = b.add(x, _linear(b, context, rng, cfg.d_model, "o_proj"))
    hidden = b.gelu(_linear(b, norm(x1, "ln2"), rng, cfg.ffn, "fc1"), approximate="tanh")
    y = b.add(x1, _linear(b, hidden, rng, cfg.d_model, "fc2"))
    b.ret(y)
    return b


# --------------------------------------------------------------------------
# MLP


@dataclass(frozen=True)
class MLPConfig:
    batch: int = 16
    features: int = 32
    hidden: int = 64
    ffn: int = 128
    bias: bool = True
    seed: int = 0


def mlp(cfg: MLPConfig = MLPConfig()) -> ModelBuilder:
    """A 3-layer MLP on x [batch, features] whose input projection is also the residual.

    ``h = fc1(x)`` (features -> hidden), ``y = fc3(gelu_tanh(fc2(relu(h)))) + h``
    (hidden -> ffn -> hidden); result [batch, hidden].  Weights ``fc1``,
    ``fc2``, ``fc3`` (``.weight`` [out, in], ``.bias`` unless ``cfg.bias`` is
    false).
    """
    rng = np.random.default_rng(cfg.seed)
    b = ModelBuilder("mlp")
    x = b.arg((cfg.batch, cfg.features))
    h = _linear(b, x, rng, cfg.hidden, "fc1", bias=cfg.bias)
    t = b.relu(h)
    t = b.gelu(_linear(b, t, rng, cfg.ffn, "fc2", bias=cfg.bias), approximate="tanh")
    y = b.add(_linear(b, t, rng, cfg.hidden, "fc3", bias=cfg.bias), h)
    b.ret(y)
    return b


# --------------------------------------------------------------------------
# A training step as MindSpore's graph holds it


@dataclass(frozen=True)
class TrainStepConfig:
    batch: int = 16
    features: int = 32
    hidden: int = 64
    classes: int = 10
    learning_rate: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8
    #: the step's number t (Adam's bias correction uses beta^t)
    step: int = 3
    seed: int = 0


def mlp_train_step(cfg: TrainStepConfig = TrainStepConfig()) -> ModelBuilder:
    """One training step of a 2-layer classifier, written with MindSpore's training ops: forward, backward and
    Adam, as a MindSpore training graph holds them.

    ``logits = fc2(relu(fc1(x)))``; ``SoftmaxCrossEntropyWithLogits(logits, labels)`` gives the per-row loss
    and its gradient; the backward is matmuls, ``BiasAddGrad`` and ``ReluGrad``; each parameter is updated by
    ``Adam`` with moments ``m`` and ``v`` (constants, as after some earlier steps).  Arguments x [batch,
    features] and one-hot labels [batch, classes]; results the mean loss, then ``fc1.weight``, ``fc1.bias``,
    ``fc2.weight``, ``fc2.bias`` updated.
    """
    rng = np.random.default_rng(cfg.seed)
    b = ModelBuilder("mlp_train_step")
    x, labels = b.arg((cfg.batch, cfg.features)), b.arg((cfg.batch, cfg.classes))
    shapes = {"fc1.weight": (cfg.hidden, cfg.features), "fc1.bias": (cfg.hidden,),
              "fc2.weight": (cfg.classes, cfg.hidden), "fc2.bias": (cfg.classes,)}
    params, moments = {}, {}
    for name, shape in shapes.items():
        params[name] = b.param(name, rng.normal(0.0, shape[-1] ** -0.5, shape))
        moments[name] = (b.param(f"{name}.m", rng.normal(0.0, 0.01, shape)),
                         b.param(f"{name}.v", rng.uniform(0.0, 1e-4, shape)))
    pre = b.bias_add(b.matmul(x, params["fc1.weight"], transpose_b=True), params["fc1.bias"])
    h = b.relu(pre)
    logits = b.bias_add(b.matmul(h, params["fc2.weight"], transpose_b=True), params["fc2.bias"])
    loss, backprop = b.softmax_cross_entropy_with_logits(logits, labels)
    mean_loss = b.reduce_mean(loss, axes=[0], keep_dims=False)
    dlogits = b.mul(backprop, b.const(np.float32(1.0 / cfg.batch)))
    dh = b.relu_grad(b.matmul(dlogits, params["fc2.weight"]), h)
    grads = {"fc2.weight": b.matmul(dlogits, h, transpose_a=True), "fc2.bias": b.bias_add_grad(dlogits, axis=1),
             "fc1.weight": b.matmul(dh, x, transpose_a=True), "fc1.bias": b.bias_add_grad(dh, axis=1)}
    scalars = [b.const(np.float32(v)) for v in (cfg.beta1**cfg.step, cfg.beta2**cfg.step, cfg.learning_rate,
                                                  cfg.beta1, cfg.beta2, cfg.epsilon)]
    updated = []
    for name in shapes:
        new_param, _, _ = b.adam(params[name], *moments[name], *scalars, grads[name])
        updated.append(new_param)
    b.ret(mean_loss, *updated)
    return b


# --------------------------------------------------------------------------
# BERT encoder layer


@dataclass(frozen=True)
class BertConfig:
    batch: int = 2
    seq: int = 16
    hidden: int = 64
    heads: int = 4
    ffn: int = 256
    epsilon: float = 1e-12
    #: "batch": an additive padding mask [batch, 1, seq, seq] (the extended mask BERT builds);
    #: "square": one [seq, seq] additive mask shared by every sequence and head
    mask: Literal["batch", "square"] = "batch"
    seed: int = 0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def mask_shape(self) -> tuple[int, ...]:
        return (self.batch, 1, self.seq, self.seq) if self.mask == "batch" else (self.seq, self.seq)


def bert_layer(cfg: BertConfig = BertConfig()) -> ModelBuilder:
    """A post-norm BERT encoder layer (HF BertLayer): arguments x [batch, seq, hidden] and an additive mask.

    ``a = LN1(x + o(attention(x, mask)))``, ``y = LN2(a + fc2(gelu_erf(fc1(a))))``.
    Scores are ``q @ transpose(k) / sqrt(head_dim)`` as BERT writes them.
    Weights ``q_proj``/``k_proj``/``v_proj``/``o_proj``/``fc1``/``fc2``
    (``.weight``, ``.bias``) and ``ln1``/``ln2`` (``.gamma``, ``.beta``).
    """
    rng = np.random.default_rng(cfg.seed)
    b = ModelBuilder("bert_layer")
    B, S, D, H, Dh = cfg.batch, cfg.seq, cfg.hidden, cfg.heads, cfg.head_dim
    x = b.arg((B, S, D))
    mask = b.arg(cfg.mask_shape)

    def heads(t: Tensor) -> Tensor:  # [B, S, D] -> [B, H, S, Dh]
        return b.transpose(b.reshape(t, (B, S, H, Dh)), perm=[0, 2, 1, 3])

    def norm(t: Tensor, name: str) -> Tensor:
        gamma = b.param(f"{name}.gamma", rng.normal(1.0, 0.1, (D,)))
        beta = b.param(f"{name}.beta", rng.normal(0.0, 0.1, (D,)))
        return b.layer_norm(t, gamma, beta, epsilon=cfg.epsilon)

    q = heads(_linear(b, x, rng, D, "q_proj"))
    k = heads(_linear(b, x, rng, D, "k_proj"))
    v = heads(_linear(b, x, rng, D, "v_proj"))
    scores = b.matmul(q, b.transpose(k, perm=[0, 1, 3, 2]))
    scores = b.div(scores, b.const(np.array(math.sqrt(Dh), np.float32)))
    probs = b.softmax(b.add(scores, mask), axis=-1)
    context = b.reshape(b.transpose(b.matmul(probs, v), perm=[0, 2, 1, 3]), (B, S, D))
    a = norm(b.add(_linear(b, context, rng, D, "o_proj"), x), "ln1")
    inner = b.gelu(_linear(b, a, rng, cfg.ffn, "fc1"), approximate="none")
    y = norm(b.add(_linear(b, inner, rng, D, "fc2"), a), "ln2")
    b.ret(y)
    return b


# --------------------------------------------------------------------------
# Llama decoder layer


@dataclass(frozen=True)
class LlamaConfig:
    seq: int = 16
    d_model: int = 64
    heads: int = 4
    #: key/value heads; fewer than ``heads`` is grouped-query attention
    kv_heads: int = 2
    ffn: int = 128
    epsilon: float = 1e-6
    #: rotary position embeddings on q and k (rotate_half form); None leaves them out
    rope_theta: float | None = 10000.0
    seed: int = 0

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    @property
    def groups(self) -> int:
        return self.heads // self.kv_heads


def rope_tables(seq: int, head_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin), each [seq, head_dim] float32, the two halves repeated (HF's LlamaRotaryEmbedding)."""
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(np.arange(seq, dtype=np.float64), inv_freq)
    angles = np.concatenate([angles, angles], axis=-1)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def llama_layer(cfg: LlamaConfig = LlamaConfig()) -> ModelBuilder:
    """A Llama decoder layer on x [seq, d_model]: pre-RMSNorm GQA attention and a SwiGLU MLP, with residuals.

    q, k and v come from one ``qkv_proj`` matmul split along the last axis
    into [heads*Dh, kv_heads*Dh, kv_heads*Dh]; q is viewed as [kv_heads,
    groups, S, Dh] and k, v as [kv_heads, 1, S, Dh], so matmul broadcasting
    shares each k/v head with its query group (HF's repeat_kv).  RoPE, scores
    ``q @ k^T * Dh^-0.5`` plus a causal mask, softmax, ``o_proj``, residual;
    RMSNorm, ``gate_up_proj`` split into halves, ``silu(gate) * up``,
    ``down_proj``, residual.  No biases.  Weights ``input_norm.gamma``,
    ``qkv_proj.weight``, ``o_proj.weight``, ``post_norm.gamma``,
    ``gate_up_proj.weight`` (gate rows first), ``down_proj.weight``.
    """
    if cfg.heads % cfg.kv_heads:
        raise ValueError(f"heads ({cfg.heads}) must be a multiple of kv_heads ({cfg.kv_heads})")
    rng = np.random.default_rng(cfg.seed)
    b = ModelBuilder("llama_layer")
    S, D, KV, G, Dh = cfg.seq, cfg.d_model, cfg.kv_heads, cfg.groups, cfg.head_dim
    x = b.arg((S, D))

    def norm(t: Tensor, name: str) -> Tensor:
        return b.rms_norm(t, b.param(f"{name}.gamma", rng.normal(1.0, 0.1, (D,))), epsilon=cfg.epsilon)

    def rope(t: Tensor) -> Tensor:  # t [..., S, Dh]
        if cfg.rope_theta is None:
            return t
        cos, sin = rope_tables(S, Dh, cfg.rope_theta)
        lo, hi = b.split(t, axis=-1, sizes=[Dh // 2, Dh // 2])
        rotated = b.concat(b.neg(hi), lo, axis=-1)
        return b.add(b.mul(t, b.const(cos)), b.mul(rotated, b.const(sin)))

    def heads(t: Tensor, groups: int) -> Tensor:  # [S, KV*groups*Dh] -> [KV, groups, S, Dh]
        return b.transpose(b.reshape(t, (S, KV, groups, Dh)), perm=[1, 2, 0, 3])

    qkv = _linear(b, norm(x, "input_norm"), rng, (cfg.heads + 2 * KV) * Dh, "qkv_proj", bias=False)
    q, k, v = b.split(qkv, axis=-1, sizes=[cfg.heads * Dh, KV * Dh, KV * Dh])
    q, k, v = rope(heads(q, G)), rope(heads(k, 1)), heads(v, 1)
    scores = b.mul(b.matmul(q, b.transpose(k, perm=[0, 1, 3, 2])), b.const(np.array(Dh**-0.5, np.float32)))
    causal = np.triu(np.full((S, S), -1e9, np.float32), k=1)
    probs = b.softmax(b.add(scores, b.const(causal)), axis=-1)
    context = b.reshape(b.transpose(b.matmul(probs, v), perm=[2, 0, 1, 3]), (S, cfg.heads * Dh))
    x1 = b.add(x, _linear(b, context, rng, D, "o_proj", bias=False))
    gate_up = _linear(b, norm(x1, "post_norm"), rng, 2 * cfg.ffn, "gate_up_proj", bias=False)
    gate, up = b.split(gate_up, axis=-1, sizes=[cfg.ffn, cfg.ffn])
    y = b.add(x1, _linear(b, b.mul(b.silu(gate), up), rng, D, "down_proj", bias=False))
    b.ret(y)
    return b


# --------------------------------------------------------------------------
# ResNet basic block


@dataclass(frozen=True)
class ResNetConfig:
    batch: int = 2
    channels: int = 8
    size: int = 8  # height = width
    #: a stride-2 block doubling the channels, with a 1x1 stride-2 conv + batch_norm shortcut
    downsample: bool = False
    epsilon: float = 1e-5
    seed: int = 0

    @property
    def out_channels(self) -> int:
        return 2 * self.channels if self.downsample else self.channels

    @property
    def stride(self) -> int:
        return 2 if self.downsample else 1


def resnet_block(cfg: ResNetConfig = ResNetConfig()) -> ModelBuilder:
    """A ResNet basic block on x [N, C, H, W] (NCHW, OIHW weights, no conv biases).

    ``relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut)``, both convs 3x3 pad 1
    (conv1 with the block's stride); the shortcut is x, or with
    ``cfg.downsample`` ``bn_down(conv_down(x))`` with a 1x1 stride-2 conv.
    Weights ``conv1``/``conv2``/``conv_down`` ``.weight`` and
    ``bn1``/``bn2``/``bn_down`` ``.scale``, ``.offset``, ``.mean``, ``.var``.
    """
    rng = np.random.default_rng(cfg.seed)
    b = ModelBuilder("resnet_block_downsample" if cfg.downsample else "resnet_block")
    channels, out_channels = cfg.channels, cfg.out_channels
    x = b.arg((cfg.batch, channels, cfg.size, cfg.size))

    def conv(t: Tensor, name: str, out: int, kernel: int, stride: int) -> Tensor:
        fan_in = t.shape[1] * kernel * kernel
        w = b.param(f"{name}.weight", rng.normal(0.0, (2.0 / fan_in) ** 0.5, (out, t.shape[1], kernel, kernel)))
        pad = kernel // 2
        return b.conv2d(t, w, strides=[stride, stride], pads=[pad, pad, pad, pad])

    def bn(t: Tensor, name: str) -> Tensor:
        n = t.shape[1]
        scale = b.param(f"{name}.scale", rng.uniform(0.5, 1.5, (n,)))
        offset = b.param(f"{name}.offset", rng.normal(0.0, 0.1, (n,)))
        mean = b.param(f"{name}.mean", rng.normal(0.0, 0.1, (n,)))
        var = b.param(f"{name}.var", rng.uniform(0.5, 1.5, (n,)))
        return b.batch_norm(t, scale, offset, mean, var, epsilon=cfg.epsilon)

    h = b.relu(bn(conv(x, "conv1", out_channels, 3, cfg.stride), "bn1"))
    h = bn(conv(h, "conv2", out_channels, 3, 1), "bn2")
    shortcut = bn(conv(x, "conv_down", out_channels, 1, cfg.stride), "bn_down") if cfg.downsample else x
    b.ret(b.relu(b.add(h, shortcut)))
    return b


# --------------------------------------------------------------------------
# Registry


#: each model's builder and default config
_MODEL_SPECS: dict[str, tuple[Callable[..., ModelBuilder], object]] = {
    "transformer_block": (transformer_block, TransformerConfig()),
    "mlp": (mlp, MLPConfig()),
    "bert_layer": (bert_layer, BertConfig()),
    "llama_layer": (llama_layer, LlamaConfig()),
    "resnet_block": (resnet_block, ResNetConfig()),
    "resnet_block_downsample": (resnet_block, ResNetConfig(downsample=True)),
}


#: training steps (several results: the loss, then the updated parameters), kept apart from MODELS
_TRAINING_SPECS: dict[str, tuple[Callable[..., ModelBuilder], object]] = {
    "mlp_train_step": (mlp_train_step, TrainStepConfig()),
}


def _bind(build: Callable[..., ModelBuilder], cfg: object) -> Callable[[], FunctionBuilder]:
    return lambda: build(cfg)


#: model name -> a function building it with its default config (a :class:`ModelBuilder`)
MODELS: dict[str, Callable[[], FunctionBuilder]] = {name: _bind(*spec) for name, spec in _MODEL_SPECS.items()}
#: training-step name -> a function building it with its default config
TRAINING_MODELS: dict[str, Callable[[], FunctionBuilder]] = {
    name: _bind(*spec) for name, spec in _TRAINING_SPECS.items()}


def padding_mask(batch: int, seq: int, lengths: list[int]) -> np.ndarray:
    """BERT's extended additive mask [batch, 1, seq, seq]: 0 for real keys, -1e9 for padding (keys >= length)."""
    mask = np.zeros((batch, 1, seq, seq), np.float32)
    for i, length in enumerate(lengths):
        mask[i, :, :, length:] = -1e9
    return mask


def inputs_for(cfg: object, seed: int = 0) -> list[np.ndarray]:
    """Random inputs (standard normal activations; masks of 0 / -1e9) for the model built from ``cfg``."""
    rng = np.random.default_rng(seed)

    def normal(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    if isinstance(cfg, TransformerConfig):
        return [normal(cfg.seq, cfg.d_model)]
    if isinstance(cfg, MLPConfig):
        return [normal(cfg.batch, cfg.features)]
    if isinstance(cfg, BertConfig):
        x = normal(cfg.batch, cfg.seq, cfg.hidden)
        # Sequence i has its last 3 * i positions padded (the first is full).
        lengths = [max(1, cfg.seq - 3 * i) for i in range(cfg.batch)]
        mask = padding_mask(cfg.batch, cfg.seq, lengths)
        return [x, mask if cfg.mask == "batch" else np.ascontiguousarray(mask[-1, 0])]
    if isinstance(cfg, LlamaConfig):
        return [normal(cfg.seq, cfg.d_model)]
    if isinstance(cfg, ResNetConfig):
        return [normal(cfg.batch, cfg.channels, cfg.size, cfg.size)]
    if isinstance(cfg, TrainStepConfig):
        labels = np.eye(cfg.classes, dtype=np.float32)[rng.integers(0, cfg.classes, cfg.batch)]
        return [normal(cfg.batch, cfg.features), labels]
    raise TypeError(f"no inputs known for config {cfg!r}")


def model_inputs(name: str, seed: int = 0) -> list[np.ndarray]:
    """Random inputs of the right shapes and dtypes for ``MODELS[name]()`` (masks: 0 / -1e9 patterns)."""
    specs = {**_MODEL_SPECS, **_TRAINING_SPECS}
    if name not in specs:
        raise KeyError(f"unknown model {name!r} (models: {', '.join(specs)})")
    return inputs_for(specs[name][1], seed)
