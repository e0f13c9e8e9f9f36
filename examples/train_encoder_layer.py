"""Train PyTorch's TransformerEncoderLayer (with a classification head) for N steps through graphfuse.

    python examples/train_encoder_layer.py [--steps 20] [--lr 0.01]

Each step is one compiled graph: the forward pass, the loss and the backward pass, imported from PyTorch's
own autograd tracing (``import_training_step``); the parameters are updated by ``graphfuse.optim.Adam``
(one compiled graph of ``graph.adam`` ops).  The same model trained by eager PyTorch with ``torch.optim.Adam``
runs beside it; the script prints both losses per step and exits 1 when they part by more than 1e-3
(relative).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import torch

import graphfuse
from graphfuse.frontends.torch import import_training_step
from graphfuse.optim import Adam


class Classifier(torch.nn.Module):
    def __init__(self, width: int = 32, heads: int = 4, classes: int = 5):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(width, heads, dim_feedforward=2 * width, dropout=0.0,
                                                      batch_first=True)
        self.head = torch.nn.Linear(width, classes)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor]:
        return (torch.nn.functional.cross_entropy(self.head(self.layer(x).mean(1)), labels),)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = Classifier()
    reference = Classifier()
    reference.load_state_dict(model.state_dict())
    x, labels = torch.randn(8, 10, 32), torch.randint(0, 5, (8,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.export's own deprecation notices
        step = import_training_step(model, (x, labels))
    print(step.summary())
    executable = graphfuse.compile(step.module)
    params = dict(zip(step.parameter_names, step.parameters, strict=True))
    trained = step.gradient_names
    adam = Adam([params[n].shape for n in trained], lr=args.lr)
    torch_adam = torch.optim.Adam(reference.parameters(), lr=args.lr)
    worst = 0.0
    ours_time = theirs_time = 0.0
    for i in range(args.steps):
        start = time.perf_counter()
        outs = executable(x.numpy(), labels.numpy(), *[params[n] for n in step.parameter_names])
        new = adam.step([params[n] for n in trained], outs[1:1 + len(trained)])
        params.update(zip(trained, new, strict=True))
        ours_time += time.perf_counter() - start
        start = time.perf_counter()
        torch_adam.zero_grad()
        loss = reference(x, labels)[0]
        loss.backward()
        torch_adam.step()
        theirs_time += time.perf_counter() - start
        worst = max(worst, abs(float(outs[0]) - loss.item()) / max(abs(loss.item()), 1e-12))
        print(f"step {i:3d}  graphfuse loss {float(outs[0]):.6f}  PyTorch loss {loss.item():.6f}")
    print(f"largest relative difference {worst:.1e}; {1e3 * ours_time / args.steps:.2f} ms per step "
          f"(graphfuse), {1e3 * theirs_time / args.steps:.2f} ms (PyTorch eager)")
    return 0 if worst <= 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
