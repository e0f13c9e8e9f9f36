"""GM traffic on the emulated NPU: bytes moved between GM and the on-chip buffers, unfused vs fused.

    python -m bench.npu_traffic [--target 910b] [--rows a,b] [--markdown FILE]

Rows: every bench workload at its small size (the transformer block among
them), every other bundled model, and a Llama layer at a real model's size
(hidden 4096, MLP 11008, 32 heads, 128 tokens; its weights are arguments;
about a minute per column).  Each is compiled for the emulated NPU
with five graph pipelines (:data:`VARIANTS`, the text ``graphfuse-run
--target=npu --pass-pipeline=...`` replays) and run once; the emulator counts
the GM bytes each kernel reads and writes.

- unfused: clean-up only, every op its own kernel;
- pattern-fused: the GraphFusion group only (``graph-fusion`` on its default
  ``cpu`` backend, where the UBFusion passes are off; the GraphFusion passes
  have the same defaults on both backends);
- graph-kernel-fused: graphfuse's default opt-level-2 graph pipeline
  (pattern fusion, then ``graph-kernel-fusion`` with the CPU cluster list);
- UB-fused: pattern fusion, then UB fusion (``graph-fusion{backend=npu}``,
  CANN's two phases), what the NPU backend fuses;
- all: the NPU compile default (opt level 2): pattern + UB fusion, then
  ``graph-kernel-fusion{backend=npu}``.

Every cell's results are compared with the reference interpreter (the table
shows the largest absolute error of its row; a cell outside tolerance stops
the script).  The factor is unfused bytes / cell bytes; the time is the cost
model's estimate of the whole graph (docs/npu.md).  The counts are
deterministic: they depend on the graphs and the target, not on the machine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
from mlir import ir

from bench.workloads import WORKLOADS
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.compiler import default_pipeline
from graphfuse.lowering.graph_pipelines import CLEANUP
from graphfuse.lowering.npu.compiler import compile_npu, npu_graph_pipeline
from graphfuse.tools.models import MODELS, model_inputs

__all__ = ["ROWS", "VARIANTS", "Measurement", "Row", "Variant", "measure", "table"]

OUTLINE = "graph-dce,outline-fused-ops"


@dataclass(frozen=True)
class Variant:
    title: str
    pipeline: str


VARIANTS: dict[str, Variant] = {
    "unfused": Variant("unfused", f"builtin.module({CLEANUP})"),
    "pattern": Variant("pattern-fused", f"builtin.module({CLEANUP},graph-fusion{{backend=cpu}},{OUTLINE})"),
    "graph_kernel": Variant("graph-kernel-fused", default_pipeline(2)),
    "ub": Variant("UB-fused", f"builtin.module({CLEANUP},graph-fusion{{backend=npu}},{OUTLINE})"),
    "all": Variant("all (NPU default)", npu_graph_pipeline(2)),
}


@dataclass(frozen=True)
class Row:
    title: str
    build: Callable[[], ir.Module]
    inputs: Callable[[], list[np.ndarray]]


def _workload_row(name: str) -> Row:
    workload = WORKLOADS[name]
    params = workload.sizes["small"]
    return Row(workload.title, lambda: workload.build(**params),
               lambda: workload.inputs(np.random.default_rng(0), **params))


def _model_row(name: str) -> Row:
    return Row(f"model {name}", lambda: MODELS[name]().module, lambda: model_inputs(name))


@cache
def _llama_layer(dim: int, hidden: int, heads: int, seq: int) -> tuple[ir.Module, list[np.ndarray]]:
    """examples/llama_decoder_layer.py's layer, imported with its weights as arguments (a 4096-wide layer's
    800 MB of weights would otherwise be constants in the IR), and its inputs."""
    import torch

    from bench.models import _example
    from graphfuse.frontends.torch import import_module

    torch.manual_seed(0)
    layer = _example("llama_decoder_layer").LlamaDecoderLayer(dim, heads, hidden=hidden).eval()
    x = torch.randn(1, seq, dim)
    imported = import_module(layer, (x,), params="arguments")
    return imported.module, imported.numpy_inputs(x)


def _llama_row(dim: int, hidden: int, heads: int, seq: int) -> Row:
    def build() -> ir.Module:
        module, _ = _llama_layer(dim, hidden, heads, seq)
        return ir.Module.parse(str(module), module.context)  # compile_npu does not change it; a copy anyway

    return Row(f"Llama layer, hidden {dim}, MLP {hidden}, {heads} heads, {seq} tokens (full size)", build,
               lambda: _llama_layer(dim, hidden, heads, seq)[1])


#: The bench workloads, then the bundled models they do not already cover (the transformer block workload at its
#: small size is the bundled transformer_block model), then a Llama layer at a real model's size.
ROWS: dict[str, Row] = {name: _workload_row(name) for name in WORKLOADS}
ROWS.update({name: _model_row(name) for name in MODELS if name not in WORKLOADS})
ROWS["llama_4096"] = _llama_row(4096, 11008, 32, 128)


@dataclass(frozen=True)
class Measurement:
    gm_bytes: int
    kernels: int
    #: the largest absolute difference from the reference interpreter
    max_error: float
    #: the cost model's estimate of the whole graph, seconds
    time_s: float = 0.0


def measure(row: Row, variant: Variant, target: str = "910b") -> Measurement:
    """GM bytes and kernels of one run; raises AssertionError when the results differ from the reference."""
    inputs = row.inputs()
    exe = compile_npu(row.build(), pipeline=variant.pipeline, target=target)
    got, want = exe(*inputs), exe.reference(*inputs)
    error = 0.0
    for g, w in zip(got, want, strict=True):
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6 * scale,
                                   err_msg=f"{row.title} ({variant.title}): differs from the reference interpreter")
        error = max(error, float(np.abs(g.astype(np.float64) - w).max()))
    report = exe.report()
    return Measurement(report.gm_bytes, len(report.rows), error, report.time_s)


def _cell(m: Measurement, base: Measurement | None) -> str:
    kernels = f"{m.kernels} kernel{'' if m.kernels == 1 else 's'}"
    factor = "" if base is None else f", {base.gm_bytes / m.gm_bytes:.2f}x"
    return f"{m.gm_bytes:,} B ({kernels}{factor}), {m.time_s * 1e6:.3g} us"


def table(names: list[str], target: str = "910b") -> str:
    """The markdown table of ``names`` (keys of :data:`ROWS`), every variant a column."""
    chosen = list(VARIANTS.values())
    lines = ["| graph (small size unless said) | " + " | ".join(v.title for v in chosen) + " | max abs error |",
             "|---|" + "---:|" * (len(chosen) + 1)]
    for name in names:
        row = ROWS[name]
        results: list[Measurement | str] = []
        for variant in chosen:
            try:
                results.append(measure(row, variant, target))
            except GraphfuseError as failure:  # a graph the NPU lowering cannot fit: the cell says why
                reason = str(failure).splitlines()[0].split("error: ", 1)[-1]
                print(f"{row.title} ({variant.title}): {reason}", file=sys.stderr, flush=True)
                results.append(f"does not fit: {reason.split(' (')[0]}")
        base = results[0] if isinstance(results[0], Measurement) else None
        cells = [m if isinstance(m, str) else _cell(m, None if k == 0 else base) for k, m in enumerate(results)]
        error = max((m.max_error for m in results if isinstance(m, Measurement)), default=0.0)
        lines.append(f"| {row.title} | " + " | ".join(cells) + f" | {error:.1e} |")
        print(f"{row.title}: done", file=sys.stderr, flush=True)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.npu_traffic", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="910b", help="NPU target description (name or .json path)")
    parser.add_argument("--rows", help="comma-separated workload or model names (default: all)")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--pipelines", action="store_true", help="print each column's graph pipeline and exit")
    args = parser.parse_args(argv)
    if args.pipelines:
        for variant in VARIANTS.values():
            print(f"{variant.title}: {variant.pipeline}")
        return 0
    names = args.rows.split(",") if args.rows else list(ROWS)
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        print(f"npu_traffic: error: unknown row(s): {', '.join(unknown)} (rows: {', '.join(ROWS)})", file=sys.stderr)
        return 1
    try:
        text = table(names, args.target)
    except GraphfuseError as error:  # its text starts with "error:" already
        print(f"npu_traffic: {error}", file=sys.stderr)
        return 1
    except AssertionError as error:
        print(f"npu_traffic: error: {error}", file=sys.stderr)
        return 1
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
