"""Training steps through graphfuse: PyTorch's joint forward + backward graph imported
(import_training_step), compiled, and the parameters updated by graphfuse.optim.Adam; losses and gradients
against PyTorch eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphfuse
from graphfuse.frontends.torch import import_training_step
from graphfuse.optim import Adam

torch = pytest.importorskip("torch")

#: ATen ops only training graphs hold (test_frontend_torch's forward cases cannot reach them): the attention's
#: backward, and the backward ops import_training_step keeps whole as MindSpore's gradient ops.
GRADIENT_OPS = {
    "aten.threshold_backward.default": "graph.relu_grad", "aten.sigmoid_backward.default": "graph.sigmoid_grad",
    "aten.tanh_backward.default": "graph.tanh_grad", "aten.gelu_backward.default": "graph.gelu_grad",
    "aten._softmax_backward_data.default": "graph.softmax_grad",
    "aten._log_softmax_backward_data.default": "graph.log_softmax_grad",
    "aten.native_layer_norm_backward.default": "graph.layer_norm_grad",
}
TRAINING_ONLY_OPS = {"aten._scaled_dot_product_flash_attention_for_cpu_backward.default", *GRADIENT_OPS}


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1, self.norm, self.l2 = torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor]:
        hidden = torch.relu(torch.nn.functional.gelu(self.norm(self.l1(x))))
        return (torch.nn.functional.cross_entropy(self.l2(hidden), y),)


class EncoderLayer(torch.nn.Module):
    """PyTorch's own TransformerEncoderLayer (attention through SDPA) with a classification head."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.head = torch.nn.Linear(16, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor]:
        return (torch.nn.functional.cross_entropy(self.head(self.layer(x).mean(1)), y),)


class Activations(torch.nn.Module):
    """Every activation whose backward the import keeps whole (silu is traced as x * sigmoid(x)), a layer norm
    without weights, a softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.l1, self.norm, self.l2 = torch.nn.Linear(8, 12), torch.nn.LayerNorm(12, elementwise_affine=False), \
            torch.nn.Linear(12, 4)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor]:
        h = self.l1(x)
        functional = torch.nn.functional
        h = torch.sigmoid(h) + torch.tanh(h) + functional.silu(h) + functional.gelu(h, approximate="tanh")
        h = functional.threshold(self.norm(h), 0.1, 0.0) * torch.softmax(h, dim=-1)
        return (functional.cross_entropy(self.l2(h), y),)


CASES = {"mlp": (MLP, (5, 8), 4), "encoder-layer": (EncoderLayer, (4, 6, 16), 3),
         "activations": (Activations, (6, 8), 4)}


def _setup(name: str) -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    cls, shape, classes = CASES[name]
    torch.manual_seed(0)
    model = cls()
    return model, torch.randn(*shape), torch.randint(0, classes, (shape[0],))


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_autograd(name: str) -> None:
    model, x, y = _setup(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        step = import_training_step(model, (x, y))
    assert step.gradient_names == [n for n, p in model.named_parameters() if p.requires_grad]
    outs = graphfuse.compile(step.module)(*step.numpy_inputs(x, y))
    loss = model(x, y)[0]
    loss.backward()
    np.testing.assert_allclose(outs[0], loss.item(), rtol=1e-5)
    grads = dict(model.named_parameters())
    for name_, got in zip(step.gradient_names, outs[1:], strict=False):
        np.testing.assert_allclose(got, grads[name_].grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name_)
    if name == "encoder-layer":  # the attention's backward is imported as graph ops
        assert "aten._scaled_dot_product_flash_attention_for_cpu_backward.default" in step.aten_ops
    kept = {op for op in GRADIENT_OPS if op in step.aten_ops}
    # activations' threshold is 0.1, not relu's 0: a select, not a relu_grad
    gradient_ops = {GRADIENT_OPS[op] for op in kept} - ({"graph.relu_grad"} if name == "activations" else set())
    assert kept and all(op in str(step.module) for op in gradient_ops)
    if name == "activations":
        assert kept == set(GRADIENT_OPS)


@pytest.mark.parametrize("backend", ["cpu", "npu"])
def test_gradient_ops_are_expanded_as_appendix_1_says(backend: str) -> None:
    """The imported gradient ops are MindSpore's: graph-kernel fusion expands those the backend's column of
    Appendix 1 lists (GeLUGrad on both, ReluGrad on npu) and clusters their basic ops; the others (ReluGrad
    on the CPU, LayerNormGrad, LogSoftmaxGrad) stay whole and are lowered as one op each."""
    from graphfuse.lowering.graph_pipelines import graph_pipeline

    model, x, y = _setup("mlp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        step = import_training_step(model, (x, y))
    imported = str(step.module)
    assert all(op in imported for op in ("graph.relu_grad", "graph.layer_norm_grad", "graph.log_softmax_grad",
                                         "graph.gelu_grad"))
    module = graphfuse.parse_module(imported)
    graphfuse.run_pipeline(module, graph_pipeline(2, backend))  # the default pipeline's graph passes
    left = {op for op in GRADIENT_OPS.values() if f"{op}\"" in str(module)}
    expanded = {"graph.gelu_grad"} | ({"graph.relu_grad"} if backend == "npu" else set())
    assert left == {"graph.relu_grad", "graph.layer_norm_grad", "graph.log_softmax_grad"} - expanded
    assert "graph.kernel" in str(module)


@pytest.mark.parametrize("name", sorted(CASES))
def test_adam_training_matches_eager(name: str) -> None:
    """20 steps: graphfuse's fused step and Adam update against torch.optim.Adam on a copy of the model."""
    model, x, y = _setup(name)
    reference = type(model)()
    reference.load_state_dict(model.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        step = import_training_step(model, (x, y))
    executable = graphfuse.compile(step.module)
    params = dict(zip(step.parameter_names, step.parameters, strict=True))
    adam = Adam([params[n].shape for n in step.gradient_names], lr=1e-2)
    torch_adam = torch.optim.Adam(reference.parameters(), lr=1e-2)
    inputs = [x.numpy(), y.numpy()]
    for _ in range(20):
        outs = executable(*inputs, *[params[n] for n in step.parameter_names])
        grads = outs[1:1 + len(step.gradient_names)]
        params.update(zip(step.gradient_names, adam.step([params[n] for n in step.gradient_names], grads),
                          strict=True))
        torch_adam.zero_grad()
        loss = reference(x, y)[0]
        loss.backward()
        torch_adam.step()
        np.testing.assert_allclose(outs[0], loss.item(), rtol=2e-4, atol=1e-6)


def test_adam_rejects_misuse() -> None:
    with pytest.raises(graphfuse.GraphfuseError, match="at least one parameter"):
        Adam([])
    adam = Adam([(2, 3)])
    with pytest.raises(graphfuse.GraphfuseError, match="built for 1 parameters"):
        adam.step([np.zeros((2, 3), np.float32)] * 2, [np.zeros((2, 3), np.float32)])


def test_a_module_without_a_loss_is_a_located_error() -> None:
    with pytest.raises(graphfuse.GraphfuseError, match=r"could not trace .*training step"):
        import_training_step(torch.nn.Linear(3, 2), (torch.randn(4, 3),))


def test_the_training_example_runs() -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "train_encoder_layer.py"
    spec = importlib.util.spec_from_file_location("train_encoder_layer", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--steps", "3"]) == 0
