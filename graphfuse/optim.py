"""Optimizer updates as compiled graphs: the parameters' step after a training step's gradients.

:class:`Adam` compiles one graph holding a ``graph.adam`` per parameter (MindSpore's Adam: the moments moved
toward the gradient and its square, the step scaled by ``lr * sqrt(1 - beta2^t) / (1 - beta1^t)``) and keeps
the moments between calls.  It is PyTorch's ``torch.optim.Adam`` up to where epsilon enters: here
``m / (sqrt(v) + eps)`` after the bias correction of the step size, there ``m_hat / (sqrt(v_hat) + eps)``,
which differ by a factor of ``sqrt(1 - beta2^t)`` on epsilon alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.compiler import Executable, compile

__all__ = ["Adam"]


class Adam:
    """Adam over parameters of the given shapes (f32): ``step(params, grads)`` returns the new parameters."""

    def __init__(self, shapes: Sequence[tuple[int, ...]], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, use_nesterov: bool = False):
        if not shapes:
            raise GraphfuseError("Adam needs at least one parameter")
        if not 0.0 <= betas[0] < 1.0 or not 0.0 <= betas[1] < 1.0:
            raise GraphfuseError(f"betas must be in [0, 1), got {betas}")
        self.shapes = [tuple(int(d) for d in s) for s in shapes]
        self.lr, self.betas, self.eps = lr, betas, eps
        self.steps = 0
        self.m = [np.zeros(s, np.float32) for s in self.shapes]
        self.v = [np.zeros(s, np.float32) for s in self.shapes]
        self.executable: Executable = compile(self._module(use_nesterov))

    def _module(self, use_nesterov: bool) -> object:
        b = GraphBuilder("adam_update")
        params = [b.arg(s) for s in self.shapes]
        grads = [b.arg(s) for s in self.shapes]
        ms = [b.arg(s) for s in self.shapes]
        vs = [b.arg(s) for s in self.shapes]
        scalars = [b.arg(()) for _ in range(6)]  # beta1^t, beta2^t, lr, beta1, beta2, eps
        new_params, new_ms, new_vs = [], [], []
        for p, g, m, v in zip(params, grads, ms, vs, strict=True):
            p2, m2, v2 = b.adam(p, m, v, *scalars, g, use_nesterov=use_nesterov)
            new_params.append(p2)
            new_ms.append(m2)
            new_vs.append(v2)
        b.ret(*new_params, *new_ms, *new_vs)
        return b.module

    def step(self, params: Sequence[np.ndarray], grads: Sequence[np.ndarray]) -> list[np.ndarray]:
        """One update: the new parameters (the moments are kept for the next call)."""
        if len(params) != len(self.shapes) or len(grads) != len(self.shapes):
            raise GraphfuseError(f"Adam was built for {len(self.shapes)} parameters, got {len(params)} and "
                                 f"{len(grads)} gradients")
        self.steps += 1
        beta1, beta2 = self.betas
        scalars = [np.float32(v) for v in (beta1**self.steps, beta2**self.steps, self.lr, beta1, beta2, self.eps)]
        out = self.executable(*[np.asarray(p, np.float32) for p in params],
                              *[np.asarray(g, np.float32) for g in grads], *self.m, *self.v,
                              *[np.asarray(v) for v in scalars])
        n = len(self.shapes)
        self.m, self.v = list(out[n:2 * n]), list(out[2 * n:])
        return list(out[:n])
