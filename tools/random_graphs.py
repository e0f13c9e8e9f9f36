"""Random graph-dialect programs and random fusion switch sets, for differential testing.

One generator, two sources of randomness: :class:`RandomChooser` (a seeded
``random.Random``, used by ``python -m graphfuse.tools.fuzz`` so long runs
need no hypothesis database) and :func:`graph_cases` / :func:`switch_sets`
(hypothesis strategies, which shrink a failing case to a small one).  Both
drive :func:`generate_graph`, which returns a :class:`GraphCase`: a plain
description (arguments, constants, op nodes, outputs, input arrays) that
:meth:`GraphCase.build` turns into a module through the builder API.

What the graphs hold:

- ops of the catalog (``graphfuse.dialect.catalog``) on f32, f16, bf16, i32,
  i64 and i1 values, with numpy broadcasting between operands of different
  ranks and unit dims, constants, multi-result ops (split, dynamic_quant,
  fused ops), values reused by several ops (shared subexpressions) and
  intermediates returned as results;
- the patterns the fusion passes look for, planted at random (add ->
  layer_norm, add -> rms_norm [-> quantize], the cast chain around rms_norm,
  add_rms_norm -> dynamic_quant, matmul epilogues, matmul -> split, attention
  chains, swiglu by split or slices, conv -> batch_norm [-> bias], split ->
  conv -> concat, whole-input convs, reshape/transpose chains, split ->
  concat, nested concats, the small-op softmax), sometimes with an
  intermediate also used elsewhere so the passes' negative branches run;
- in a quarter of the graphs (the *structure family*, :data:`STRUCTURE_STEPS`),
  the data flow of real models over 40 to 2000 ops: values read by many ops
  (hubs), diamonds and residual blocks, wide fan-out and fan-in, long chains,
  around the ops and motifs above.

Every op is built only when it is well defined and well conditioned on the
case's inputs: the generator evaluates each new op with the reference
semantics as it goes and rejects it when the result is not finite, too large,
or too close to a discontinuity (see :data:`TOLERANCES` and
:func:`check_value`); in structure graphs also when its f16/bf16 rounding
strays too far from the same computation in f32 (:data:`ROUNDING_SHARE`).
Input ranges: floats uniform in +-[0.25, 2] (strictly positive where an op
needs it), integers in [-8, 8], booleans fair.  The comparison a differential
test makes is :func:`compare_results`.

The parts: :mod:`graphfuse.tools.random_graph_cases` (tolerances, choosers, the case description, the value
checks), :mod:`graphfuse.tools.random_graph_generator` (the op generator),
:mod:`graphfuse.tools.random_graph_motifs` (the planted patterns and the structure family); this module
assembles a graph, compares results and draws switch sets.
"""


from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphfuse.dialect.types import FLOAT_DTYPES
from graphfuse.tools.random_graph_cases import (
    TOLERANCES,
    Chooser,
    GraphCase,
    HypothesisChooser,
    RandomChooser,
    Reject,
    Value,
    _as_f64,
    coarsest,
    tolerance,
)
from graphfuse.tools.random_graph_generator import Generator
from graphfuse.tools.random_graph_motifs import MOTIF_PASSES, MOTIFS, STRUCTURE_STEPS, structure_size

#: What the fuzzer and the tests use, wherever it is defined.
__all__ = [
    "MOTIFS",
    "MOTIF_PASSES",
    "STRUCTURE_RATE",
    "STRUCTURE_STEPS",
    "TOLERANCES",
    "Generator",
    "GraphCase",
    "RandomChooser",
    "Reject",
    "SwitchSet",
    "Value",
    "compare_results",
    "generate_graph",
    "graph_cases",
    "plant",
    "random_switch_set",
    "structure_size",
    "switch_sets",
]


#: The share of structure graphs among the graphs of :func:`generate_graph`.
STRUCTURE_RATE = 0.25


def plant(chooser: Chooser, motif: Callable[[Generator], None]) -> GraphCase:
    """A graph holding one instance of ``motif`` (raises Reject when this draw does not fit it)."""
    g = Generator(chooser)
    motif(g)
    g.case.motifs.append(motif.__name__.removeprefix("motif_"))
    g._choose_outputs()
    return g.case


def generate_graph(chooser: Chooser, max_ops: int = 14, motif_rate: float = 0.35,
                   structure_rate: float = STRUCTURE_RATE, max_structure_ops: int = 2000) -> GraphCase:
    """A random graph (see the module docstring) drawn from ``chooser``: with probability ``structure_rate`` one of
    the structure family (40 to ``max_structure_ops`` ops, :func:`structure_size`), else one of at most about
    ``max_ops`` ops; ``motif_rate``: how many steps plant a fusion pattern rather than a single op."""
    g = Generator(chooser, max_ops, motif_rate)
    if structure_rate > 0 and chooser.boolean(structure_rate):
        return g.generate_structured(structure_size(chooser, max_structure_ops))
    return g.generate()


def compare_results(values: Sequence[Value], got: Sequence[np.ndarray], what: str) -> list[str]:
    """Differences of ``got`` from the generator's reference ``values`` beyond :data:`TOLERANCES`; [] if none."""
    problems = []
    if len(got) != len(values):
        return [f"{what}: {len(got)} results, expected {len(values)}"]
    for k, (want, array) in enumerate(zip(values, got, strict=True)):
        array = np.asarray(array)
        expected = want.array
        if array.shape != expected.shape or array.dtype != expected.dtype:
            problems.append(f"{what}: result {k} is {array.dtype}{list(array.shape)}, expected "
                            f"{expected.dtype}{list(expected.shape)}")
            continue
        if want.sig.dtype in FLOAT_DTYPES:
            rtol, atol = tolerance(coarsest([want.sig.dtype, want.precision]))
            a, b = _as_f64(array), _as_f64(expected)
            error = np.abs(a - b) - (atol * want.scale + rtol * np.abs(b))
            if not np.all(np.isfinite(a)) or (error.size and error.max() > 0):
                worst = int(np.nanargmax(np.where(np.isfinite(a), np.abs(a - b), np.inf)))
                problems.append(f"{what}: result {k} ({want.sig}) differs: at flat index {worst} got "
                                f"{a.flat[worst]!r}, expected {b.flat[worst]!r} (rtol {rtol}, atol {atol} x scale "
                                f"{want.scale:.3g})")
        else:
            limit = 1 if want.quantized else 0
            diff = np.abs(array.astype(np.int64) - expected.astype(np.int64))
            if diff.size and diff.max() > limit:
                worst = int(np.argmax(diff))
                problems.append(f"{what}: result {k} ({want.sig}) differs: at flat index {worst} got "
                                f"{array.flat[worst]!r}, expected {expected.flat[worst]!r}")
    return problems


@dataclass
class SwitchSet:
    """How one pipeline run is switched: graph pipeline text, MindSpore flags, a CANN switch file."""

    pipeline: str
    flags: str = ""
    switch_file: str = ""  # contents of fusion_switch.cfg ("" for none)
    #: for compiled runs: graphfuse.compile's opt_level (None: compile the pipeline above instead)
    compile_opt_level: int | None = None

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=1)


def _subset(c: Chooser, options: Sequence[str], most: int = 3) -> list[str]:
    return list(dict.fromkeys(c.choice(options) for _ in range(c.integer(1, most))))


def random_switch_set(c: Chooser) -> SwitchSet:
    """Random switches for every front end (see docs/testing.md)."""
    from graphfuse.pipelines.fusion.graph_fusion import fusion_passes
    from graphfuse.pipelines.graph_kernel.fusion import STEPS
    from graphfuse.pipelines.graph_kernel.op_names import MINDSPORE_OPS

    fusion_names = [cls.name for cls in fusion_passes() if cls.__module__.startswith("graphfuse.")]
    op_names = sorted(MINDSPORE_OPS)
    steps = [name for name, _ in STEPS]
    elements = []
    if c.boolean(0.7):
        elements.append(c.choice(("graph-canonicalize,graph-cse,graph-dce", "graph-canonicalize", "graph-cse")))
    if c.boolean(0.15):  # named passes in a random order, each on unless a front end turns it off
        elements.append(",".join(_subset(c, fusion_names, 4)))
    else:
        options = [f"opt-level={c.integer(0, 3)}"]
        if c.boolean(0.3):
            options.append("enable-pass=" + ",".join(_subset(c, fusion_names)))
        if c.boolean(0.3):
            options.append("disable-pass=" + ",".join(_subset(c, fusion_names)))
        elements.append("graph-fusion{" + " ".join(options) + "}")
    if c.boolean(0.7):
        options = []
        if c.boolean(0.6):
            options.append(f"opt-level={c.integer(0, 3)}")
        for key in ("enable-expand-ops", "disable-expand-ops", "enable-cluster-ops", "disable-cluster-ops"):
            if c.boolean(0.15):
                options.append(f"{key}=" + ",".join(_subset(c, op_names)))
        if c.boolean(0.1):
            options.append("disable-pass=" + ",".join(_subset(c, steps, 2)))
        elements.append("graph-kernel-fusion" + ("{" + " ".join(options) + "}" if options else ""))
    tail = c.choice(("", "graph-dce", "graph-dce,outline-fused-ops", "graph-decompose", "graph-canonicalize,graph-dce"))
    if tail:
        elements.append(tail)
    pipeline = f"builtin.module({','.join(elements)})"

    flags = []
    if c.boolean(0.4):
        flags.append(f"--opt_level={c.integer(0, 3)}")
    for key in ("enable_expand_ops", "disable_expand_ops", "enable_expand_ops_only", "enable_cluster_ops",
                "disable_cluster_ops", "enable_cluster_ops_only"):
        if c.boolean(0.08):
            flags.append(f"--{key}=" + ",".join(_subset(c, op_names)))
    for key in ("enable_pass", "disable_pass"):
        if c.boolean(0.2):
            flags.append(f"--{key}=" + ",".join(_subset(c, fusion_names)))

    switch_file = ""
    if c.boolean(0.3):
        if c.boolean(0.8):
            groups: dict[str, dict[str, str]] = {}
            for group in ("GraphFusion", "UBFusion"):
                entries: dict[str, str] = {}
                if c.boolean(0.5):
                    entries["ALL"] = c.choice(("on", "off"))
                for name in _subset(c, fusion_names) if c.boolean(0.7) else []:
                    entries[name] = c.choice(("on", "off"))
                if entries:
                    groups[group] = entries
            switch_file = json.dumps({"Switch": groups}, indent=1)
        else:  # the legacy one-line-per-pass format
            switch_file = "".join(f"{name}:{c.choice(('on', 'off'))}\n" for name in ["ALL", *_subset(c, fusion_names)])
    compile_opt_level = c.integer(0, 3) if c.boolean(0.6) else None
    return SwitchSet(pipeline, " ".join(flags), switch_file, compile_opt_level)


def graph_cases(max_ops: int = 14, structure_rate: float = STRUCTURE_RATE, max_structure_ops: int = 120):
    """A hypothesis strategy of :class:`GraphCase` (shrinks through its choices, toward the small-graph family).
    Structure graphs stop at ``max_structure_ops`` ops: hypothesis records every choice, and its buffer is small."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw: Callable[[Any], Any]) -> GraphCase:
        return generate_graph(HypothesisChooser(draw), max_ops, structure_rate=structure_rate,
                              max_structure_ops=max_structure_ops)

    return strategy()


def switch_sets():
    """A hypothesis strategy of :class:`SwitchSet`."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw: Callable[[Any], Any]) -> SwitchSet:
        return random_switch_set(HypothesisChooser(draw))

    return strategy()
