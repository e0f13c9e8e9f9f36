"""Compile an imported module and compare it with PyTorch eager: :func:`compile_module`,
:func:`compare` (errors, the fusions that fired, time against eager)."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.utils._pytree as pytree

from graphfuse.dialect.interpreter import run_function
from graphfuse.frontends.torch.dtypes import to_numpy, to_torch
from graphfuse.frontends.torch.importer import ImportedModel, ParamsMode, import_module
from graphfuse.lowering.compiler import Executable
from graphfuse.lowering.compiler import compile as graphfuse_compile


@dataclass
class CompiledModule:
    """A model imported and compiled by graphfuse: call it like the model, with tensors."""

    imported: ImportedModel
    executable: Executable
    #: fusion_result.json of the graph pipeline that compiled it: group -> pass -> match_times/effect_times
    fusion_result: dict[str, dict[str, dict[str, str]]]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        outputs = self.executable(*self.imported.numpy_inputs(*args, **kwargs))
        return self.imported.unflatten([to_torch(o) for o in outputs])

    @property
    def fusions(self) -> dict[str, int]:
        """Fusion pass name -> how many times it rewrote the graph (passes that fired only)."""
        return fired_fusions(self.fusion_result)


def fired_fusions(fusion_result: dict[str, dict[str, dict[str, str]]]) -> dict[str, int]:
    """The passes of a fusion_result.json whose effect_times is not 0, with that count."""
    return {
        name: int(counts["effect_times"])
        for group in fusion_result.values()
        for name, counts in group.items()
        if int(counts["effect_times"])
    }


def compile_module(
    module: torch.nn.Module,
    example_args: tuple[Any, ...],
    example_kwargs: dict[str, Any] | None = None,
    *,
    params: ParamsMode = "constants",
    entry: str = "forward",
    dynamic_shapes: Any = None,
    **compile_options: Any,
) -> CompiledModule:
    """Import ``module`` (see :func:`import_module`) and compile it with :func:`graphfuse.compile`.

    ``compile_options`` go to ``graphfuse.compile`` (``opt_level``,
    ``graph_kernel_flags``, ``fusion_switch_file``...).
    """
    imported = import_module(
        module, example_args, example_kwargs, params=params, entry=entry, dynamic_shapes=dynamic_shapes
    )
    executable = graphfuse_compile(imported.module, entry=entry, **compile_options)
    return CompiledModule(imported, executable, executable.fusion_result)


@dataclass
class Comparison:
    """graphfuse against PyTorch eager on one model: errors, fusions and time."""

    name: str
    imported: ImportedModel
    executable: Executable
    #: max |graphfuse - PyTorch| over all outputs: compiled code, reference interpreter
    max_abs_error: float
    reference_max_abs_error: float
    fusions: dict[str, int]
    graphfuse_seconds: float
    torch_seconds: float
    repeat: int
    torch_threads: int

    def report(self) -> str:
        fused = ", ".join(f"{name} x{n}" for name, n in sorted(self.fusions.items())) or "none"
        speedup = self.torch_seconds / self.graphfuse_seconds if self.graphfuse_seconds else float("inf")
        return "\n".join(
            [
                f"== {self.name}",
                self.imported.summary(),
                f"fusions fired: {fused}",
                f"fused graph: {self.executable.kernels} kernels",
                f"max abs error vs PyTorch: compiled {self.max_abs_error:.3g}, "
                f"reference interpreter {self.reference_max_abs_error:.3g}",
                f"time per call (median of {self.repeat}): graphfuse {self.graphfuse_seconds * 1e3:.3f} ms, "
                f"PyTorch eager {self.torch_seconds * 1e3:.3f} ms ({self.torch_threads} thread"
                f"{'s' if self.torch_threads != 1 else ''}): {speedup:.2f}x",
            ]
        )


def max_abs_error(got: Iterable[np.ndarray], want: Iterable[Any]) -> float:
    """The largest |got - want| over all outputs (in float64); inf when shapes differ."""
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        w = to_numpy(w) if isinstance(w, torch.Tensor) else np.asarray(w)
        g64, w64 = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g64.shape != w64.shape:
            return math.inf
        if g64.size:
            worst = max(worst, float(np.max(np.abs(g64 - w64))))
    return worst


def _median_seconds(fn: Callable[[], Any], repeat: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compare(
    module: torch.nn.Module,
    example_args: tuple[Any, ...],
    example_kwargs: dict[str, Any] | None = None,
    *,
    name: str | None = None,
    params: ParamsMode = "constants",
    repeat: int = 20,
    torch_threads: int | None = 1,
    **compile_options: Any,
) -> Comparison:
    """Import, fuse, compile and run ``module``; compare with PyTorch eager on the example inputs.

    ``torch_threads`` sets PyTorch's intra-op threads while timing (1 by
    default: graphfuse's compiled code runs on one thread); None keeps the
    current setting.
    """
    kwargs = example_kwargs or {}
    compiled = compile_module(module, example_args, kwargs, params=params, **compile_options)
    imported, executable = compiled.imported, compiled.executable
    arrays = imported.numpy_inputs(*example_args, **kwargs)
    was_training = module.training
    module.eval()
    previous = torch.get_num_threads()
    try:
        with torch.no_grad():
            want = pytree.tree_leaves(module(*example_args, **kwargs))
        got = executable(*arrays)
        reference = run_function(imported.module, arrays, imported.entry)
        if torch_threads is not None:
            torch.set_num_threads(torch_threads)
        with torch.no_grad():
            torch_seconds = _median_seconds(lambda: module(*example_args, **kwargs), repeat)
        outputs = [np.empty([d or 0 for d in shape], dtype) for shape, dtype in executable.outputs]
        if all(all(d is not None for d in shape) for shape, _ in executable.outputs):
            graphfuse_seconds = _median_seconds(lambda: executable(*arrays, out=outputs), repeat)
        else:
            graphfuse_seconds = _median_seconds(lambda: executable(*arrays), repeat)
        threads = torch.get_num_threads()
    finally:
        torch.set_num_threads(previous)
        module.train(was_training)
    return Comparison(
        name or type(module).__name__,
        imported,
        executable,
        max_abs_error(got, want),
        max_abs_error(reference, want),
        compiled.fusions,
        graphfuse_seconds,
        torch_seconds,
        repeat,
        threads,
    )
