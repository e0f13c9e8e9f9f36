"""The model zoo: transformers architectures as users build and call them (small configs, random weights).

Each :class:`ZooModel` builds one architecture of the transformers library from a config scaled by a
:class:`Size` (``TINY`` for the test suite, ``SMALL`` for ``make bench-zoo``) and makes its inputs the way
a user passes them:

- text models get ``input_ids`` and a 2-D ``attention_mask`` whose rows are padded: decoder-only LMs pad
  on the left (as ``generate`` and batched serving do), encoders and encoder-decoders on the right; a
  batch of 4 has one full row, one padded on the left, one on the right and one with a single real token,
  a batch of 1 is unpadded;
- decoder LMs are called with the library's defaults (``use_cache`` left alone: a ``DynamicCache``);
- vision models get ``pixel_values``, speech models ``input_values``, CLIP both text and pixels.

:func:`compared_tensors` lists every floating-point tensor of an output (the logits, hidden states and the
key/value cache's layers) in a fixed order, so that a compiled call can be checked against eager PyTorch
whole.  Nothing is downloaded: every weight comes from the seeded generator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["SMALL", "TINY", "ZOO", "Size", "ZooModel", "compared_tensors", "zoo_model"]

#: family -> the way the family's rows are padded in a batch
DECODER, ENCODER, SEQ2SEQ, VISION, MULTIMODAL, SPEECH, STATE_SPACE = (
    "decoder", "encoder", "encoder-decoder", "vision", "multimodal", "speech", "state-space")


@dataclass(frozen=True)
class Size:
    """The scale of every config of the zoo."""

    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    layers: int
    vocab: int
    seq: int
    image: int  # pixels per side of an image
    audio: int  # samples of a waveform
    experts: int = 4


TINY = Size(hidden=32, heads=4, kv_heads=2, ffn=64, layers=2, vocab=128, seq=12, image=32, audio=1600)
SMALL = Size(hidden=256, heads=8, kv_heads=4, ffn=512, layers=2, vocab=2048, seq=64, image=64, audio=8000)


@dataclass(frozen=True)
class ZooModel:
    """One architecture: how to build it at a :class:`Size` and what it is called with."""

    name: str
    family: str
    #: what the architecture covers that others do not (grouped-query, ALiBi, mixture of experts...)
    covers: str
    build: Callable[[Any, Size], Any]  # (transformers module, size) -> nn.Module in eval mode
    #: extra keyword inputs beyond the family's (e.g. T5's decoder_input_ids), from (torch, size, batch)
    extra_inputs: Callable[[Any, Size, int], dict[str, Any]] | None = None
    #: the family's inputs are built by :func:`inputs` unless this is given
    custom_inputs: Callable[[Any, Size, int], dict[str, Any]] | None = None
    tags: frozenset[str] = field(default_factory=frozenset)

    @property
    def is_decoder_lm(self) -> bool:
        return self.family in (DECODER, STATE_SPACE)

    def inputs(self, size: Size, batch: int, seed: int = 1) -> dict[str, Any]:
        """The keyword inputs of one call: a batch as a user passes it (see the module docstring)."""
        import torch

        generator = torch.Generator().manual_seed(seed)
        if self.custom_inputs is not None:
            return self.custom_inputs(torch, size, batch)
        if self.family == VISION:
            return {"pixel_values": torch.randn(batch, 3, size.image, size.image, generator=generator)}
        if self.family == SPEECH:
            return {"input_values": torch.randn(batch, size.audio, generator=generator)}
        ids = torch.randint(0, size.vocab, (batch, size.seq), generator=generator)
        inputs = {"input_ids": ids}
        if self.family != STATE_SPACE:
            inputs["attention_mask"] = padding_mask(torch, batch, size.seq, left=self.family == DECODER)
        if self.extra_inputs is not None:
            inputs.update(self.extra_inputs(torch, size, batch))
        return inputs


def padding_mask(torch: Any, batch: int, seq: int, left: bool) -> Any:
    """A 2-D mask of a padded batch: row 0 full, then rows padded on the model's side, the other side and
    down to one real token (a batch of 1 is unpadded)."""
    mask = torch.ones(batch, seq, dtype=torch.int64)
    pads = [seq // 3, seq // 4, seq - 1]
    sides = [left, not left, left]
    for row in range(1, batch):
        pad, on_left = pads[(row - 1) % 3], sides[(row - 1) % 3]
        if on_left:
            mask[row, :pad] = 0
        else:
            mask[row, seq - pad:] = 0
    return mask


def compared_tensors(output: Any) -> Iterator[tuple[str, Any]]:
    """(path, tensor) for every floating-point tensor of a model's output, in a fixed order.

    ModelOutputs are walked by field, tuples and lists by position, caches by layer (``keys`` and
    ``values`` of each).  Integer tensors and ``None`` fields are skipped."""
    import torch

    def walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
        if isinstance(value, torch.Tensor):
            if value.is_floating_point():
                yield path, value
        elif isinstance(value, Mapping):  # a ModelOutput (an OrderedDict of its fields that are not None)
            for key in value:
                yield from walk(value[key], f"{path}.{key}" if path else key)
        elif isinstance(value, (tuple, list)):
            for index, item in enumerate(value):
                yield from walk(item, f"{path}[{index}]")
        elif hasattr(value, "layers"):  # a transformers Cache: DynamicCache, EncoderDecoderCache's halves
            for index, layer in enumerate(value.layers):
                for name in ("keys", "values", "conv_states", "recurrent_states"):
                    yield from walk(getattr(layer, name, None), f"{path}.layers[{index}].{name}")
        elif hasattr(value, "self_attention_cache"):  # EncoderDecoderCache
            yield from walk(value.self_attention_cache, f"{path}.self_attention_cache")
            yield from walk(value.cross_attention_cache, f"{path}.cross_attention_cache")
        elif hasattr(value, "conv_states"):  # MambaCache
            for name in ("conv_states", "ssm_states"):
                yield from walk(getattr(value, name), f"{path}.{name}")

    yield from walk(output, "")


# --------------------------------------------------------------------------
# Configs, one small function per architecture: the names of config fields differ between model families.


def _eval(model: Any) -> Any:
    return model.eval()


def _lm(model_class: str, config_class: str, **fixed: Any) -> Callable[[Any, Size], Any]:
    """A decoder LM whose config takes Llama's field names."""

    def build(hf: Any, s: Size) -> Any:
        config = getattr(hf, config_class)(
            vocab_size=s.vocab, hidden_size=s.hidden, intermediate_size=s.ffn, num_hidden_layers=s.layers,
            num_attention_heads=s.heads, num_key_value_heads=s.kv_heads, max_position_embeddings=4 * s.seq,
            **fixed)
        return _eval(getattr(hf, model_class)(config))

    return build


def _moe(model_class: str, config_class: str, **fixed: Any) -> Callable[[Any, Size], Any]:
    """A mixture-of-experts decoder LM routing each token to two experts."""
    return _lm(model_class, config_class, num_experts_per_tok=2, **fixed)


def _gpt2(hf: Any, s: Size) -> Any:
    config = hf.GPT2Config(vocab_size=s.vocab, n_embd=s.hidden, n_layer=s.layers, n_head=s.heads,
                           n_inner=s.ffn, n_positions=4 * s.seq)
    return _eval(hf.GPT2LMHeadModel(config))


def _gpt_bigcode(hf: Any, s: Size) -> Any:
    config = hf.GPTBigCodeConfig(vocab_size=s.vocab, n_embd=s.hidden, n_layer=s.layers, n_head=s.heads,
                                 n_inner=s.ffn, n_positions=4 * s.seq, multi_query=True)
    return _eval(hf.GPTBigCodeForCausalLM(config))


def _gpt_neox(hf: Any, s: Size) -> Any:
    config = hf.GPTNeoXConfig(vocab_size=s.vocab, hidden_size=s.hidden, intermediate_size=s.ffn,
                              num_hidden_layers=s.layers, num_attention_heads=s.heads, rotary_pct=0.25,
                              use_parallel_residual=True, max_position_embeddings=4 * s.seq)
    return _eval(hf.GPTNeoXForCausalLM(config))


def _gptj(hf: Any, s: Size) -> Any:
    config = hf.GPTJConfig(vocab_size=s.vocab, n_embd=s.hidden, n_layer=s.layers, n_head=s.heads, n_inner=s.ffn,
                           rotary_dim=s.hidden // s.heads // 2, n_positions=4 * s.seq)
    return _eval(hf.GPTJForCausalLM(config))


def _opt(hf: Any, s: Size) -> Any:
    config = hf.OPTConfig(vocab_size=s.vocab, hidden_size=s.hidden, ffn_dim=s.ffn, num_hidden_layers=s.layers,
                          num_attention_heads=s.heads, word_embed_proj_dim=s.hidden,
                          max_position_embeddings=4 * s.seq)
    return _eval(hf.OPTForCausalLM(config))


def _falcon(hf: Any, s: Size) -> Any:
    config = hf.FalconConfig(vocab_size=s.vocab, hidden_size=s.hidden, num_hidden_layers=s.layers,
                             num_attention_heads=s.heads, num_kv_heads=s.kv_heads, new_decoder_architecture=True,
                             parallel_attn=True, max_position_embeddings=4 * s.seq)
    return _eval(hf.FalconForCausalLM(config))


def _falcon_alibi(hf: Any, s: Size) -> Any:
    config = hf.FalconConfig(vocab_size=s.vocab, hidden_size=s.hidden, num_hidden_layers=s.layers,
                             num_attention_heads=s.heads, alibi=True, multi_query=True, parallel_attn=False,
                             max_position_embeddings=4 * s.seq)
    return _eval(hf.FalconForCausalLM(config))


def _bloom(hf: Any, s: Size) -> Any:
    config = hf.BloomConfig(vocab_size=s.vocab, hidden_size=s.hidden, n_layer=s.layers, n_head=s.heads)
    return _eval(hf.BloomForCausalLM(config))


def _phi(hf: Any, s: Size) -> Any:
    config = hf.PhiConfig(vocab_size=s.vocab, hidden_size=s.hidden, intermediate_size=s.ffn,
                          num_hidden_layers=s.layers, num_attention_heads=s.heads, num_key_value_heads=s.kv_heads,
                          partial_rotary_factor=0.5, max_position_embeddings=4 * s.seq)
    return _eval(hf.PhiForCausalLM(config))


def _cohere(hf: Any, s: Size) -> Any:
    config = hf.CohereConfig(vocab_size=s.vocab, hidden_size=s.hidden, intermediate_size=s.ffn,
                             num_hidden_layers=s.layers, num_attention_heads=s.heads,
                             num_key_value_heads=s.kv_heads, max_position_embeddings=4 * s.seq)
    return _eval(hf.CohereForCausalLM(config))


def _mamba(hf: Any, s: Size) -> Any:
    config = hf.MambaConfig(vocab_size=s.vocab, hidden_size=s.hidden, state_size=8, num_hidden_layers=s.layers,
                            expand=2, conv_kernel=4, use_mambapy=False)
    return _eval(hf.MambaForCausalLM(config))


def _encoder(model_class: str, config_class: str, **fixed: Any) -> Callable[[Any, Size], Any]:
    """An encoder whose config takes BERT's field names."""

    def build(hf: Any, s: Size) -> Any:
        config = getattr(hf, config_class)(
            vocab_size=s.vocab, hidden_size=s.hidden, intermediate_size=s.ffn, num_hidden_layers=s.layers,
            num_attention_heads=s.heads, max_position_embeddings=4 * s.seq, **fixed)
        return _eval(getattr(hf, model_class)(config))

    return build


def _distilbert(hf: Any, s: Size) -> Any:
    config = hf.DistilBertConfig(vocab_size=s.vocab, dim=s.hidden, hidden_dim=s.ffn, n_layers=s.layers,
                                 n_heads=s.heads, max_position_embeddings=4 * s.seq)
    return _eval(hf.DistilBertModel(config))


def _albert(hf: Any, s: Size) -> Any:
    config = hf.AlbertConfig(vocab_size=s.vocab, embedding_size=s.hidden // 2, hidden_size=s.hidden,
                             intermediate_size=s.ffn, num_hidden_layers=s.layers, num_attention_heads=s.heads,
                             max_position_embeddings=4 * s.seq)
    return _eval(hf.AlbertModel(config))


def _mobilebert(hf: Any, s: Size) -> Any:
    config = hf.MobileBertConfig(vocab_size=s.vocab, hidden_size=s.hidden, embedding_size=s.hidden // 2,
                                 intermediate_size=s.ffn, intra_bottleneck_size=s.hidden // 2,
                                 true_hidden_size=s.hidden // 2, num_hidden_layers=s.layers,
                                 num_attention_heads=s.heads, num_feedforward_networks=2,
                                 max_position_embeddings=4 * s.seq)
    return _eval(hf.MobileBertModel(config))


def _modernbert(hf: Any, s: Size) -> Any:
    config = hf.ModernBertConfig(vocab_size=s.vocab, hidden_size=s.hidden, intermediate_size=s.ffn,
                                 num_hidden_layers=s.layers + 1, num_attention_heads=s.heads,
                                 global_attn_every_n_layers=2, local_attention=s.seq // 2,
                                 max_position_embeddings=4 * s.seq, pad_token_id=0, bos_token_id=1,
                                 eos_token_id=2, cls_token_id=1, sep_token_id=2)
    return _eval(hf.ModernBertModel(config))


def _t5(hf: Any, s: Size) -> Any:
    config = hf.T5Config(vocab_size=s.vocab, d_model=s.hidden, d_kv=s.hidden // s.heads, d_ff=s.ffn,
                         num_layers=s.layers, num_decoder_layers=s.layers, num_heads=s.heads,
                         feed_forward_proj="gated-gelu", decoder_start_token_id=0)
    return _eval(hf.T5ForConditionalGeneration(config))


def _bart(hf: Any, s: Size) -> Any:
    config = hf.BartConfig(vocab_size=s.vocab, d_model=s.hidden, encoder_layers=s.layers, decoder_layers=s.layers,
                           encoder_attention_heads=s.heads, decoder_attention_heads=s.heads,
                           encoder_ffn_dim=s.ffn, decoder_ffn_dim=s.ffn, max_position_embeddings=4 * s.seq)
    return _eval(hf.BartForConditionalGeneration(config))


def _decoder_ids(torch: Any, s: Size, batch: int) -> dict[str, Any]:
    generator = torch.Generator().manual_seed(2)
    return {"decoder_input_ids": torch.randint(1, s.vocab, (batch, s.seq // 2), generator=generator)}


def _whisper(hf: Any, s: Size) -> Any:
    config = hf.WhisperConfig(vocab_size=s.vocab, d_model=s.hidden, encoder_layers=s.layers,
                              decoder_layers=s.layers, encoder_attention_heads=s.heads,
                              decoder_attention_heads=s.heads, encoder_ffn_dim=s.ffn, decoder_ffn_dim=s.ffn,
                              num_mel_bins=16, max_source_positions=s.seq, max_target_positions=4 * s.seq,
                              pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    return _eval(hf.WhisperForConditionalGeneration(config))


def _whisper_inputs(torch: Any, s: Size, batch: int) -> dict[str, Any]:
    generator = torch.Generator().manual_seed(1)
    # The encoder's two convolutions halve the frames to max_source_positions.
    features = torch.randn(batch, 16, 2 * s.seq, generator=generator)
    return {"input_features": features, **_decoder_ids(torch, s, batch)}


def _vit(hf: Any, s: Size) -> Any:
    config = hf.ViTConfig(hidden_size=s.hidden, num_hidden_layers=s.layers, num_attention_heads=s.heads,
                          intermediate_size=s.ffn, image_size=s.image, patch_size=8, num_labels=10)
    return _eval(hf.ViTForImageClassification(config))


def _swin(hf: Any, s: Size) -> Any:
    # A window of 3 does not divide the 8x8 patches: Swin pads the feature map (aten.pad) before windowing.
    config = hf.SwinConfig(image_size=s.image, patch_size=4, embed_dim=s.hidden // 8, depths=[1, 1],
                           num_heads=[2, 4], window_size=3, num_labels=10)
    return _eval(hf.SwinForImageClassification(config))


def _convnext(hf: Any, s: Size) -> Any:
    config = hf.ConvNextConfig(num_channels=3, num_stages=2, hidden_sizes=[s.hidden // 8, s.hidden // 4],
                               depths=[1, 1], image_size=s.image, num_labels=10)
    return _eval(hf.ConvNextForImageClassification(config))


def _resnet(hf: Any, s: Size) -> Any:
    config = hf.ResNetConfig(num_channels=3, embedding_size=s.hidden // 8,
                             hidden_sizes=[s.hidden // 8, s.hidden // 4], depths=[1, 1], layer_type="bottleneck",
                             num_labels=10)
    return _eval(hf.ResNetForImageClassification(config))


def _mobilenet_v2(hf: Any, s: Size) -> Any:
    config = hf.MobileNetV2Config(num_channels=3, image_size=s.image, depth_multiplier=0.25, num_labels=10)
    return _eval(hf.MobileNetV2ForImageClassification(config))


def _segformer(hf: Any, s: Size) -> Any:
    width = s.hidden // 8
    config = hf.SegformerConfig(num_channels=3, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                                hidden_sizes=[width, 2 * width], patch_sizes=[7, 3], strides=[4, 2],
                                num_attention_heads=[1, 2], mlp_ratios=[2, 2], decoder_hidden_size=2 * width,
                                num_labels=4)
    return _eval(hf.SegformerForSemanticSegmentation(config))


def _clip(hf: Any, s: Size) -> Any:
    text = {"vocab_size": s.vocab, "hidden_size": s.hidden, "intermediate_size": s.ffn,
            "num_hidden_layers": s.layers, "num_attention_heads": s.heads, "max_position_embeddings": 4 * s.seq}
    vision = {"hidden_size": s.hidden, "intermediate_size": s.ffn, "num_hidden_layers": s.layers,
              "num_attention_heads": s.heads, "image_size": s.image, "patch_size": 8}
    text.update(pad_token_id=0, bos_token_id=1, eos_token_id=2)
    config = hf.CLIPConfig(text_config=text, vision_config=vision, projection_dim=s.hidden)
    return _eval(hf.CLIPModel(config))


def _clip_inputs(torch: Any, s: Size, batch: int) -> dict[str, Any]:
    generator = torch.Generator().manual_seed(1)
    return {"input_ids": torch.randint(0, s.vocab, (batch, s.seq), generator=generator),
            "attention_mask": padding_mask(torch, batch, s.seq, left=False),
            "pixel_values": torch.randn(batch, 3, s.image, s.image, generator=generator)}


def _wav2vec2(hf: Any, s: Size) -> Any:
    config = hf.Wav2Vec2Config(vocab_size=32, hidden_size=s.hidden, num_hidden_layers=s.layers,
                               num_attention_heads=s.heads, intermediate_size=s.ffn,
                               conv_dim=(s.hidden // 2,) * 3, conv_stride=(5, 4, 4), conv_kernel=(10, 4, 4),
                               num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                               feat_extract_norm="group")
    return _eval(hf.Wav2Vec2ForCTC(config))


_ZOO_LIST = [
    # decoder-only LMs
    ZooModel("llama", DECODER, "grouped-query attention, RoPE, RMSNorm, SwiGLU",
             _lm("LlamaForCausalLM", "LlamaConfig")),
    ZooModel("qwen2", DECODER, "attention biases", _lm("Qwen2ForCausalLM", "Qwen2Config")),
    ZooModel("qwen3", DECODER, "q/k norms", _lm("Qwen3ForCausalLM", "Qwen3Config")),
    ZooModel("mistral", DECODER, "sliding-window attention",
             _lm("MistralForCausalLM", "MistralConfig", sliding_window=8)),
    ZooModel("mixtral", DECODER, "mixture of experts (top-k routing)",
             _moe("MixtralForCausalLM", "MixtralConfig", num_local_experts=4)),
    ZooModel("qwen2_moe", DECODER, "mixture of experts with a shared expert",
             _moe("Qwen2MoeForCausalLM", "Qwen2MoeConfig", num_experts=4, moe_intermediate_size=64,
                  shared_expert_intermediate_size=64)),
    ZooModel("gemma", DECODER, "GeGLU, scaled embeddings", _lm("GemmaForCausalLM", "GemmaConfig", head_dim=8)),
    ZooModel("gemma2", DECODER, "logit soft-capping, alternating sliding windows",
             _lm("Gemma2ForCausalLM", "Gemma2Config", head_dim=8, sliding_window=8)),
    ZooModel("gemma3", DECODER, "local/global layers, q/k norms",
             _lm("Gemma3ForCausalLM", "Gemma3TextConfig", head_dim=8, sliding_window=8)),
    ZooModel("phi", DECODER, "partial rotary, parallel attention and MLP", _phi),
    ZooModel("phi3", DECODER, "fused qkv and gate/up projections",
             _lm("Phi3ForCausalLM", "Phi3Config", pad_token_id=0)),
    ZooModel("gpt2", DECODER, "learned positions, Conv1D projections", _gpt2),
    ZooModel("gpt_bigcode", DECODER, "multi-query attention", _gpt_bigcode),
    ZooModel("gpt_neox", DECODER, "partial rotary, parallel residual", _gpt_neox),
    ZooModel("gptj", DECODER, "interleaved rotary (repeat_interleave), parallel attention and MLP", _gptj),
    ZooModel("opt", DECODER, "learned positions from the mask's cumulative sum", _opt),
    ZooModel("falcon", DECODER, "new decoder architecture, parallel attention", _falcon),
    ZooModel("falcon_alibi", DECODER, "ALiBi, multi-query attention", _falcon_alibi),
    ZooModel("bloom", DECODER, "ALiBi (baddbmm)", _bloom),
    ZooModel("olmo", DECODER, "non-parametric layer norm", _lm("OlmoForCausalLM", "OlmoConfig")),
    ZooModel("olmo2", DECODER, "post-norms, q/k norms", _lm("Olmo2ForCausalLM", "Olmo2Config")),
    ZooModel("stablelm", DECODER, "partial rotary, layer norm",
             _lm("StableLmForCausalLM", "StableLmConfig", partial_rotary_factor=0.5)),
    ZooModel("granite", DECODER, "residual and logit multipliers", _lm("GraniteForCausalLM", "GraniteConfig")),
    ZooModel("cohere", DECODER, "interleaved rotary, parallel attention and MLP, logit scale", _cohere),
    ZooModel("starcoder2", DECODER, "sliding window, biases, layer norm",
             _lm("Starcoder2ForCausalLM", "Starcoder2Config", sliding_window=8)),
    ZooModel("mamba", STATE_SPACE, "selective state space (softplus, scans)", _mamba),
    # encoders
    ZooModel("bert", ENCODER, "absolute positions, token types", _encoder("BertModel", "BertConfig")),
    ZooModel("roberta", ENCODER, "positions from the padding", _encoder("RobertaModel", "RobertaConfig")),
    ZooModel("distilbert", ENCODER, "no token types", _distilbert),
    ZooModel("albert", ENCODER, "factorized embeddings, shared layers", _albert),
    ZooModel("electra", ENCODER, "embedding projection",
             _encoder("ElectraModel", "ElectraConfig", embedding_size=16)),
    ZooModel("deberta", ENCODER, "disentangled relative attention",
             _encoder("DebertaModel", "DebertaConfig", relative_attention=True, max_relative_positions=16,
                      pos_att_type=["c2p", "p2c"])),
    ZooModel("deberta_v2", ENCODER, "log-bucketed relative positions",
             _encoder("DebertaV2Model", "DebertaV2Config", relative_attention=True, position_buckets=8,
                      max_relative_positions=16, pos_att_type=["c2p", "p2c"])),
    ZooModel("modernbert", ENCODER, "local/global attention, unpadding", _modernbert),
    ZooModel("mobilebert", ENCODER, "bottlenecks, no-norm layers", _mobilebert),
    # encoder-decoders
    ZooModel("t5", SEQ2SEQ, "relative position buckets, gated GELU", _t5, extra_inputs=_decoder_ids),
    ZooModel("bart", SEQ2SEQ, "learned positions, cross-attention", _bart, extra_inputs=_decoder_ids),
    ZooModel("whisper", SEQ2SEQ, "audio convolutions, cross-attention", _whisper, custom_inputs=_whisper_inputs),
    # vision
    ZooModel("vit", VISION, "patch embedding, class token", _vit),
    ZooModel("swin", VISION, "shifted windows, padding", _swin),
    ZooModel("convnext", VISION, "depthwise 7x7 convolutions, channels-last layer norm", _convnext),
    ZooModel("resnet", VISION, "bottleneck convolutions, batch norm", _resnet),
    ZooModel("mobilenet_v2", VISION, "inverted residuals, depthwise convolutions, same padding", _mobilenet_v2),
    ZooModel("segformer", VISION, "efficient attention, bilinear upsampling", _segformer),
    # multimodal, speech
    ZooModel("clip", MULTIMODAL, "text and vision towers, causal text mask", _clip, custom_inputs=_clip_inputs),
    ZooModel("wav2vec2", SPEECH, "feature convolutions, group norm, positional convolution", _wav2vec2),
]

#: name -> the architecture, in the zoo's order
ZOO: dict[str, ZooModel] = {model.name: model for model in _ZOO_LIST}


def zoo_model(name: str, size: Size = SMALL) -> Any:
    """The architecture ``name`` built at ``size`` (seeded weights, eval mode)."""
    import torch
    import transformers

    torch.manual_seed(0)
    return ZOO[name].build(transformers, size)


def scaled(size: Size, **changes: int) -> Size:
    """``size`` with some fields changed (e.g. a longer sequence)."""
    return replace(size, **changes)
