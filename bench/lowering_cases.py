"""Lowering performance cases: fused (opt level 2) against unfused (opt level 0) on the same graph.

    python -m bench.lowering_cases [--calls 10] [--rounds 3] [--case NAME ...] [--no-torch]

Each case is a graph the lowering once made slow when fused, or slow at every
opt level:

- ``linear_bias``: ``x[2, 64, 128] @ w[128, 512] + b`` (a rank-3 x rank-2
  matmul fused into ``matmul_bias_add`` and outlined as a kernel);
- ``attention``: ``flash_attention`` of q/k/v ``[2, 4, 64, 32]`` with a mask
  ``[2, 1, 1, 64]`` (fused) against the same op decomposed op by op;
- ``conv3x3``, ``conv3x3_s2``, ``conv1x1``: conv2d + relu at ResNet sizes;
- ``resnet_block`` and ``llama_seq64``: the bundled PyTorch examples
  (``examples/``), when torch is installed.

Both variants of a case are compiled first, then called in turns (the
variants interleaved within each round, so the machine's drift hits them
alike, and which one goes first alternates); the figure is the median of ``--calls`` calls, best of ``--rounds``
rounds, in ms.  ``fused/unfused`` below 1 means fusion pays.  Every result is
checked against the reference interpreter before timing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import graphfuse
from graphfuse.dialect.builder import GraphBuilder

__all__ = ["CASES", "Case", "measure"]


@dataclass(frozen=True)
class Case:
    name: str
    title: str
    #: opt level -> (a callable running the compiled code once, its result list, the reference result list)
    compile: Callable[[int], tuple[Callable[[], Any], Callable[[], list[np.ndarray]], list[np.ndarray]]]


def _graph_case(build: Callable[[], Any], shapes: list[tuple[int, ...]]) -> Callable[[int], Any]:
    def compile_at(opt_level: int):
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
        exe = graphfuse.compile(build(), opt_level=opt_level)
        outs = exe(*inputs)  # buffers for the timed calls (out=), as the bench does

        def run() -> None:
            exe(*inputs, out=outs)

        return run, lambda: exe(*inputs), exe.reference(*inputs)

    return compile_at


def _linear_bias() -> Any:
    b = GraphBuilder("linear_bias")
    x, w, bias = b.arg((2, 64, 128)), b.arg((128, 512)), b.arg((512,))
    b.ret(b.add(b.matmul(x, w), bias))
    return b.module


def _attention() -> Any:
    b = GraphBuilder("attention")
    q, k, v = (b.arg((2, 4, 64, 32)) for _ in range(3))
    mask = b.arg((2, 1, 1, 64))
    b.ret(b.flash_attention(q, k, v, mask, scale=32**-0.5))
    return b.module


def _conv(channels: int, size: int, kernel: int, stride: int) -> Callable[[], Any]:
    def build() -> Any:
        b = GraphBuilder("conv_relu")
        x, w = b.arg((1, channels, size, size)), b.arg((channels, channels, kernel, kernel))
        pad = kernel // 2
        b.ret(b.relu(b.conv2d(x, w, strides=[stride, stride], pads=[pad] * 4)))
        return b.module

    return build


def _example(path: str, make: Callable[[Any], tuple[Any, tuple[Any, ...]]]) -> Callable[[int], Any]:
    """A case from one of the bundled PyTorch examples (needs torch)."""

    def compile_at(opt_level: int):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        assert spec is not None and spec.loader is not None
        example = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example)
        from graphfuse.frontends.torch import compile_module

        module, args = make(example)
        compiled = compile_module(module, args, opt_level=opt_level)
        arrays = compiled.imported.numpy_inputs(*args)
        exe = compiled.executable
        outs = exe(*arrays)

        def run() -> None:
            exe(*arrays, out=outs)

        return run, lambda: exe(*arrays), exe.reference(*arrays)

    return compile_at


_EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")

CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case(
            "linear_bias",
            "x[2,64,128] @ w[128,512] + b",
            _graph_case(_linear_bias, [(2, 64, 128), (128, 512), (512,)]),
        ),
        Case(
            "attention",
            "flash_attention q/k/v [2,4,64,32], mask [2,1,1,64]",
            _graph_case(_attention, [(2, 4, 64, 32)] * 3 + [(2, 1, 1, 64)]),
        ),
        Case(
            "conv3x3",
            "conv2d 3x3 32->32 @32x32 + relu",
            _graph_case(_conv(32, 32, 3, 1), [(1, 32, 32, 32), (32, 32, 3, 3)]),
        ),
        Case(
            "conv3x3_s2",
            "conv2d 3x3 stride 2 64->64 @32x32 + relu",
            _graph_case(_conv(64, 32, 3, 2), [(1, 64, 32, 32), (64, 64, 3, 3)]),
        ),
        Case(
            "conv1x1",
            "conv2d 1x1 64->64 @32x32 + relu",
            _graph_case(_conv(64, 32, 1, 1), [(1, 64, 32, 32), (64, 64, 1, 1)]),
        ),
        Case(
            "resnet_block",
            "examples/resnet_basic_block.py, 32 channels, 32x32",
            _example(os.path.join(_EXAMPLES, "resnet_basic_block.py"), lambda ex: ex.build(32, 32)),
        ),
        Case(
            "llama_seq64",
            "examples/llama_decoder_layer.py, seq 64, dim 128",
            _example(os.path.join(_EXAMPLES, "llama_decoder_layer.py"), lambda ex: ex.build(seq=64, dim=128)),
        ),
    )
}

_TORCH_CASES = ("resnet_block", "llama_seq64")


def _max_rel_error(want: list[np.ndarray], got: list[np.ndarray]) -> float:
    worst = 0.0
    for w, g in zip(want, got, strict=True):
        w64, g64 = np.asarray(w, np.float64), np.asarray(g, np.float64)
        scale = max(float(np.abs(w64).max(initial=0.0)), 1e-30)
        worst = max(worst, float(np.abs(w64 - g64).max(initial=0.0)) / scale)
    return worst


def measure(case: Case, calls: int = 10, rounds: int = 3) -> dict[str, float]:
    """ms per call of both variants (median of ``calls``, best of ``rounds``) and their max relative errors."""
    variants = {"unfused": case.compile(0), "fused": case.compile(2)}
    result: dict[str, float] = {}
    for name, (_, outputs, reference) in variants.items():
        result[f"{name} err"] = _max_rel_error(reference, outputs())
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        times: dict[str, list[float]] = {name: [] for name in variants}
        for call in range(calls):
            # alternate which variant goes first: the second one runs in the caches the first one left
            order = list(variants.items())
            for name, (run, _, _) in order if call % 2 else order[::-1]:
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
        for name, values in times.items():
            best[name] = min(best[name], float(np.median(values)) * 1e3)
    result.update(best)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10, help="timed calls per round and variant (median)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (best median)")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="run only these cases")
    parser.add_argument("--no-torch", action="store_true", help="skip the cases built from the PyTorch examples")
    args = parser.parse_args(argv)
    names = args.case or list(CASES)
    if args.no_torch or importlib.util.find_spec("torch") is None:
        names = [n for n in names if n not in _TORCH_CASES]
    print("| case | unfused ms | fused ms | fused/unfused | max rel err (unfused, fused) |")
    print("|---|---|---|---|---|")
    for name in names:
        r = measure(CASES[name], args.calls, args.rounds)
        print(
            f"| {CASES[name].title} | {r['unfused']:.3f} | {r['fused']:.3f} | {r['fused'] / r['unfused']:.2f} "
            f"| {r['unfused err']:.1e}, {r['fused err']:.1e} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
