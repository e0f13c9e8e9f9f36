"""GM traffic on the emulated NPU: bytes moved between GM and the on-chip buffers, unfused vs fused.

    python -m bench.npu_traffic [--target 910b] [--workloads a,b] [--markdown FILE]

For the bench workloads at their small sizes (the transformer block among
them), each graph is compiled for the emulated NPU with four graph pipelines
and run once; the emulator counts the GM bytes each kernel reads and writes.

- unfused: opt level 0, every op its own kernel (each intermediate goes to GM
  and back);
- pattern-fused: the GraphFusion-group pattern passes only (``graph-fusion``
  with the UBFusion group's passes disabled);
- graph-kernel-fused: pattern fusion + ``graph-kernel-fusion{opt-level=2}``;
- UB-fused: pattern fusion + CANN's UB fusion phase (``ub-fusion``), when that
  pass is registered (the column is left out otherwise);
- opt level 2: the NPU compile default, everything above.

Every variant's results are checked against the reference interpreter first.
The factor is unfused bytes / variant bytes.  The counts are deterministic:
they depend on the graphs and the target's capacities, not on the machine.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from bench.workloads import WORKLOADS
from graphfuse.lowering.compiler import CLEANUP
from graphfuse.lowering.npu.compiler import compile_npu, npu_graph_pipeline
from graphfuse.pipelines.fusion.graph_fusion import fusion_passes
from graphfuse.pipelines.registry import lookup_pass

OUTLINE = "graph-dce,outline-fused-ops"


def _pattern_fusion() -> str:
    """graph-fusion for the NPU with the UBFusion group (run by ub-fusion) switched off."""
    ub_fusion = lookup_pass("ub-fusion")
    groups = set(getattr(ub_fusion, "groups", ()))
    names = [cls.name for cls in fusion_passes() if cls.group in groups]
    return "graph-fusion{backend=npu" + (f" disable-pass={','.join(names)}" if names else "") + "}"


@dataclass(frozen=True)
class Variant:
    title: str
    pipeline: str


def variants() -> list[Variant]:
    pattern = _pattern_fusion()
    found = [
        Variant("unfused", npu_graph_pipeline(0)),
        Variant("pattern-fused", f"builtin.module({CLEANUP},{pattern},{OUTLINE})"),
        Variant("graph-kernel-fused",
                f"builtin.module({CLEANUP},{pattern},graph-kernel-fusion{{opt-level=2 backend=npu}},{OUTLINE})"),
    ]
    if lookup_pass("ub-fusion") is not None:
        found.append(Variant("UB-fused", f"builtin.module({CLEANUP},{pattern},ub-fusion,{OUTLINE})"))
    found.append(Variant("opt level 2", npu_graph_pipeline(2)))
    return found


def measure(name: str, variant: Variant, target: str) -> tuple[int, int]:
    """(GM bytes, kernels) of one run; raises if the results differ from the reference interpreter."""
    workload = WORKLOADS[name]
    params = workload.sizes["small"]
    inputs = workload.inputs(np.random.default_rng(0), **params)
    exe = compile_npu(workload.build(**params), pipeline=variant.pipeline, target=target)
    got, want = exe(*inputs), exe.reference(*inputs)
    for g, w in zip(got, want, strict=True):
        scale = max(1.0, float(np.abs(w).max()))
        if not np.allclose(g, w, rtol=2e-5, atol=2e-6 * scale):
            raise SystemExit(f"{name} ({variant.title}): results differ from the reference interpreter")
    report = exe.report()
    return report.gm_bytes, len(report.rows)


def table(names: list[str], target: str) -> str:
    chosen = variants()
    header = "| workload (small size) | " + " | ".join(v.title for v in chosen) + " |"
    lines = [header, "|---|" + "---:|" * len(chosen)]
    for name in names:
        cells = []
        base = None
        for variant in chosen:
            gm_bytes, kernels = measure(name, variant, target)
            base = gm_bytes if base is None else base
            factor = "" if variant.title == "unfused" else f", {base / gm_bytes:.2f}x"
            cells.append(f"{gm_bytes:,} B ({kernels} kernel{'' if kernels == 1 else 's'}{factor})")
        lines.append(f"| {WORKLOADS[name].title} | " + " | ".join(cells) + " |")
    if lookup_pass("ub-fusion") is None:
        lines.append("")
        lines.append("(no UB-fused column: the `ub-fusion` pass is not registered in this build)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.npu_traffic", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="910b", help="NPU target description (name or .json path)")
    parser.add_argument("--workloads", help="comma-separated workload names (default: all)")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    names = args.workloads.split(",") if args.workloads else list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(unknown)} (workloads: {', '.join(WORKLOADS)})")
    text = table(names, args.target)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(text + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
