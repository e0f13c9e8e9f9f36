"""graphfuse-bisect: find the fusion pass, then the one rewrite, that makes a model's result deviate.

    graphfuse-bisect model.mlir [--inputs x.npz | --seed S] [--entry NAME] [--rtol R] [--atol A]
                     [--mode compiled|interpreter] [--opt-level N] [--graph-kernel-flags=...]
                     [--fusion-switch-file=...] [--fix-switch-file=PATH] [--load-pass-plugin=file.py]
                     [--linear] [--repro-dir=DIR]

Automates seed 000's manual hunt (turn every fusion off, turn passes back on
one by one until the result goes wrong):

1. the reference is the unfused result (opt level 0), compiled for the CPU in
   ``--mode=compiled`` (the default: what users run) or run by the reference
   interpreter in ``--mode=interpreter``;
2. the *units* are what the fusing pipeline runs, in execution order: the
   enabled pattern fusion passes, then graph-kernel fusion's expand, simplify
   and cluster steps.  Bisection over the length of the prefix of units that
   are on finds the first unit whose addition makes a result deviate
   (``--linear`` scans prefixes one by one instead);
3. within that unit, bisection over a rewrite budget (fuel: the unit may
   rewrite only k times) finds the first rewrite that deviates, named by its
   pattern and the location of the op it started from;
4. the fix (the culprit unit off) is checked: when a deviation remains (a
   second culprit, or passes that interact), the culprit stays off and the
   search repeats, so the fix printed is the set of units that must be off.

The fix is printed as ``--graph-kernel-flags`` text and, for pattern fusion
passes, as a fusion_switch.cfg (written to ``--fix-switch-file``), both
verified.  The model is MLIR text or bytecode; ``-`` reads it from standard
input, as graphfuse-opt does.  Exit status: 0 no deviation, 3 culprit found,
1 error.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from mlir import ir

from graphfuse.dialect import diagnostics
from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import GraphfuseError, set_parsed_buffer_name, source_loc
from graphfuse.dialect.files import write_file
from graphfuse.dialect.interpreter import entry_function, run_function
from graphfuse.dialect.parsing import SourceText, parse_module, read_input
from graphfuse.dialect.types import numpy_dtype, sig_from_type
from graphfuse.lowering.compiler import compile, default_pipeline
from graphfuse.pipelines.fusion.base import FusionPass
from graphfuse.pipelines.fusion.graph_fusion import GraphFusion, fusion_passes
from graphfuse.pipelines.fusion.switches import (
    GROUPS,
    FusionSwitches,
    SwitchFile,
)
from graphfuse.pipelines.graph_kernel.fusion import GraphKernelFusion
from graphfuse.pipelines.opt_levels import DEFAULT_OPT_LEVEL, OPT_LEVELS, opt_level_error
from graphfuse.pipelines.pass_base import RewriteBudget, RewriteRecord, limit_rewrites
from graphfuse.pipelines.registry import canonical_pass_name
from graphfuse.pipelines.runner import PipelineFailure, Reproducer, build_steps, run_pipeline
from graphfuse.tools.accuracy import OutputCheck, compare_output
from graphfuse.tools.graphfuse_opt import load_pass_plugin
from graphfuse.tools.graphfuse_run import load_inputs
from graphfuse.tools.reporting import (
    REPRO_DIR_HELP,
    UsageError,
    reproducer_stem,
    reproducers_saved,
    run_tool,
    write_reproducer,
)

__all__ = ["EXIT_CULPRIT", "BisectResult", "Bisector", "main"]

TOOL = "graphfuse-bisect"
#: Exit status when a culprit was found (0: no deviation, 1: error).
EXIT_CULPRIT = 3
#: graph-kernel-fusion's steps that rewrite (its cse/canonicalize/dce clean-ups stay on with it).
GRAPH_KERNEL_UNITS = ("graph-kernel-expand", "graph-kernel-simplify", "graph-kernel-cluster")
#: created ops listed for the culprit rewrite (an expansion creates many)
_MAX_CREATED_SHOWN = 4


@dataclass(frozen=True)
class Unit:
    """A switchable step of the fusing pipeline: a pattern fusion pass or a graph-kernel step."""

    name: str
    fusion_pass: type[FusionPass] | None = None  # None: a graph-kernel step

    @property
    def is_graph_kernel(self) -> bool:
        return self.fusion_pass is None


@dataclass(frozen=True)
class Deviation:
    """The first output beyond tolerance (or, with ``ok``, the output of largest relative error within it)."""

    output: int
    max_abs: float
    #: max_abs / max|reference| of the output (graphfuse.tools.accuracy's measure)
    max_rel: float
    ok: bool
    #: the run failed (a pass or the compile raised an error): a deviation too, bisected like one
    error: str | None = None
    #: the output's comparison (None for a failed run)
    check: OutputCheck | None = None
    #: a failed pipeline's reproducer, for the tool to write
    reproducer: Reproducer | None = None

    def describe(self, detail: bool = False) -> str:
        """The error in one line; ``detail`` adds the tolerance and, beyond it, where it fails."""
        if self.error is not None:
            return f"the run fails: {self.error}"
        if self.check is None:
            return f"result {self.output}: max abs error {self.max_abs:.3g}"
        text = f"result {self.output}: {self.check.summary(with_tolerance=detail)}"
        return f"{text}; {self.check.mismatch()}" if detail and not self.check.ok else text


@dataclass
class Culprit:
    unit: Unit
    #: prefix position (1-based) of the unit among the units searched
    position: int
    deviation: Deviation
    #: every rewrite the unit made (with the earlier units on), and the first one that deviates
    rewrites: list[RewriteRecord] = field(default_factory=list)
    instance: RewriteRecord | None = None
    instance_deviation: Deviation | None = None
    #: the ops the culprit rewrite created: (op name, how many, source locations they were fused from)
    fused_ops: list[tuple[str, int, list[str]]] = field(default_factory=list)
    #: ops whose expansion alone is the culprit (graph-kernel-expand): a narrower fix
    expand_ops: tuple[str, ...] = ()
    #: the culprit rewrite leaves IR that does not verify: the verifier's first error
    invalid_ir: str | None = None


@dataclass
class BisectResult:
    reference_vs_interpreter: Deviation | None
    full: Deviation
    units: list[Unit]
    culprits: list[Culprit]
    #: the fix: flags text, switch-file JSON (None when it cannot express the fix), whether each was verified
    fix_flags: str = ""
    fix_switch: dict | None = None
    fix_flags_verified: Deviation | None = None
    fix_switch_verified: Deviation | None = None
    trials: int = 0

    @property
    def deviates(self) -> bool:
        return not self.full.ok


def compare(reference: Sequence[np.ndarray], results: Sequence[np.ndarray], rtol: float, atol: float) -> Deviation:
    """Every output against the reference (:func:`compare_output`, graphfuse-run --check's rule): the first one
    beyond tolerance, else the one of largest relative error (ok)."""
    if len(reference) != len(results):
        raise GraphfuseError(f"the run returned {len(results)} results, the reference {len(reference)}")
    worst = Deviation(0, 0.0, 0.0, True)
    for k, (want, got) in enumerate(zip(reference, results, strict=True)):
        check = compare_output(want, got, rtol, atol)
        if check.problem is not None:
            return Deviation(k, float("inf"), float("inf"), False, check=check)
        if not check.ok:
            return Deviation(k, check.max_abs, check.relative, False, check=check)
        if worst.check is None or check.relative > worst.max_rel:
            worst = Deviation(k, check.max_abs, check.relative, True, check=check)
    return worst


def random_inputs(module: ir.Module, entry: str | None, seed: int) -> list[np.ndarray]:
    """Random inputs of the entry function's argument types (normal floats, small integers, random bools)."""
    func = entry_function(module, entry)
    rng = np.random.default_rng(seed)
    arrays = []
    for k, arg in enumerate(func.regions[0].blocks[0].arguments):
        sig = sig_from_type(arg.type)
        if sig is None or None in sig.shape:
            raise UsageError(f"argument {k} has type {arg.type}; pass --inputs")
        dtype = numpy_dtype(sig.dtype)
        if dtype == np.bool_:
            arrays.append(rng.random(sig.shape) < 0.5)
        elif dtype.kind in "iu":
            arrays.append(rng.integers(-8, 8, sig.shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(sig.shape).astype(np.float32).astype(dtype))
    return arrays


@contextlib.contextmanager
def _buffer_name(name: str) -> Iterator[None]:
    """Name op locations of the parsed text after the model file while bisecting."""
    previous = diagnostics._parsed_buffer_name
    set_parsed_buffer_name(name)
    try:
        yield
    finally:
        set_parsed_buffer_name(previous)


def _first_deviating(probe: Callable[[int], Deviation], high: int) -> int:
    """The least n in [1, high] whose probe deviates, by bisection: probe(0) is ok and probe(high) deviates."""
    low = 0
    while high - low > 1:
        middle = (low + high) // 2
        if probe(middle).ok:
            low = middle
        else:
            high = middle
    return high

class Bisector:
    """Runs configurations of the fusing pipeline and bisects the one whose rewrite deviates."""

    def __init__(
        self,
        text: str,
        filename: str,
        inputs: Sequence[np.ndarray],
        *,
        entry: str | None = None,
        mode: str = "compiled",
        rtol: float = 1e-4,
        atol: float = 1e-5,
        opt_level: int | None = None,
        graph_kernel_flags: str = "",
        fusion_switch_file: str | None = None,
        linear: bool = False,
        progress: Callable[[str], None] | None = None,
    ):
        if mode not in ("compiled", "interpreter"):
            raise UsageError(f"--mode must be compiled or interpreter, got '{mode}'")
        if not (rtol >= 0 and atol >= 0):  # NaN too: it would make every run match
            raise UsageError(f"--rtol and --atol must be non-negative numbers, got {rtol:g} and {atol:g}")
        self.text, self.filename, self.entry = text, filename, entry
        self._source = SourceText(text, filename)  # compiled under its own name: errors name the input file
        self.inputs = list(inputs)
        self.mode, self.rtol, self.atol, self.linear = mode, rtol, atol, linear
        self.flags_text = graph_kernel_flags
        self.switch_path = fusion_switch_file
        # Not strict: the flags' disable_pass may name graph-kernel steps, which the flags parser warns about.
        self.switches = FusionSwitches.from_sources(graph_kernel_flags, fusion_switch_file)
        flags = self.switches.flags
        #: what the flags and the switch file warned about
        self.warnings = list(flags.warnings)
        if self.switches.switch_file is not None:
            self.warnings += self.switches.switch_file.warnings
        level = opt_level if opt_level is not None else (
            flags.opt_level if flags.opt_level is not None else DEFAULT_OPT_LEVEL)
        problem = opt_level_error(level)
        if problem is not None:
            raise UsageError(problem)
        if level == 0:
            raise UsageError("opt level 0 runs no fusion: nothing to bisect")
        self.opt_level = level
        self.progress = progress or (lambda line: None)
        self.trials = 0
        self._context = make_context()
        self._base_steps = build_steps(default_pipeline(level), self._context)

    # -- configurations -----------------------------------------------------------

    def units(self, excluded: frozenset[str] = frozenset()) -> list[Unit]:
        """What the fusing pipeline runs with the given switches, in execution order (less ``excluded``)."""
        units: list[Unit] = []
        for step in self._base_steps:
            if isinstance(step.graph_pass, GraphFusion):
                units += [Unit(cls.name, cls) for cls in fusion_passes() if step.graph_pass.enabled(cls, self.switches)]
            elif isinstance(step.graph_pass, GraphKernelFusion):
                gk = step.graph_pass
                running = {name for name, instance in gk.steps(gk.resolved(self.switches.flags)) if instance}
                units += [Unit(name) for name in GRAPH_KERNEL_UNITS if name in running]
        return [u for u in units if u.name not in excluded]

    def pipeline(self, enabled: Sequence[Unit], all_units: Sequence[Unit]) -> str:
        """The default pipeline with every unit of ``all_units`` not in ``enabled`` switched off."""
        on = {u.name for u in enabled}
        off_fusion = tuple(u.name for u in all_units if not u.is_graph_kernel and u.name not in on)
        off_kernel = tuple(u.name for u in all_units if u.is_graph_kernel and u.name not in on)
        parts = []
        for step in self._base_steps:
            graph_pass = step.graph_pass
            if isinstance(graph_pass, GraphFusion) and off_fusion:
                graph_pass = dataclasses.replace(graph_pass, disable_pass=(*graph_pass.disable_pass, *off_fusion))
            elif isinstance(graph_pass, GraphKernelFusion) and off_kernel:
                graph_pass = dataclasses.replace(graph_pass, disable_pass=(*graph_pass.disable_pass, *off_kernel))
            parts.append(graph_pass.to_text() if graph_pass is not None else step.text)
        return "builtin.module(" + ",".join(parts) + ")"

    def run(self, pipeline: str, budget: RewriteBudget | None = None, flags: str | None = None,
            switch_file: str | None = None) -> list[np.ndarray]:
        """The results of the model through ``pipeline`` (under ``budget``), in the bisector's mode."""
        self.trials += 1
        flags = self.flags_text if flags is None else flags
        switch_file = self.switch_path if switch_file is None else switch_file
        scope = limit_rewrites(budget) if budget is not None else contextlib.nullcontext()
        with scope:
            if self.mode == "interpreter":
                module = parse_module(self.text, self.filename, self._context)
                switches = FusionSwitches.from_sources(flags, switch_file)
                run_pipeline(module, pipeline, switches=switches)
                return run_function(module, self.inputs, self.entry)
            executable = compile(self._source, entry=self.entry, pipeline=pipeline, graph_kernel_flags=flags,
                                 fusion_switch_file=switch_file)
            return executable(*self.inputs)

    def reference(self) -> list[np.ndarray]:
        if self.mode == "interpreter":
            return run_function(parse_module(self.text, self.filename, self._context), self.inputs, self.entry)
        return compile(self._source, entry=self.entry, opt_level=0)(*self.inputs)

    def interpreter_reference(self) -> list[np.ndarray]:
        return run_function(parse_module(self.text, self.filename, self._context), self.inputs, self.entry)

    # -- the search -----------------------------------------------------------------

    def bisect(self) -> BisectResult:
        """The whole search: :meth:`start`, then :meth:`search` when the fused run deviates."""
        result = self.start()
        if result.deviates:
            self.search(result)
        return result

    def _named_locations(self) -> contextlib.AbstractContextManager[None]:
        return _buffer_name(self.filename)

    def start(self) -> BisectResult:
        """Compute the reference and run the fully fused configuration."""
        with self._named_locations():
            return self._start()

    def _start(self) -> BisectResult:
        self._reference = self.reference()
        info = None
        if self.mode == "compiled":
            info = compare(self.interpreter_reference(), self._reference, self.rtol, self.atol)
        all_units = self.units()
        full = self._deviation(self.pipeline(all_units, all_units))
        result = BisectResult(info, full, all_units, [])
        result.trials = self.trials
        return result

    def search(self, result: BisectResult) -> None:
        """Find the culprit units and rewrites of a deviating run, and the verified fix."""
        with self._named_locations():
            self._search(result)

    def _search(self, result: BisectResult) -> None:
        all_units = result.units
        full = result.full
        none_on = self._deviation(self.pipeline([], all_units))
        if not none_on.ok:
            raise GraphfuseError(
                f"with every fusion unit off the result already deviates ({none_on.describe()}): "
                "the deviation does not come from fusion"
            )
        excluded: list[Unit] = []
        deviation = full
        while not deviation.ok:
            units = [u for u in all_units if u not in excluded]
            culprit = self._first_deviating_unit(units, all_units, excluded, deviation)
            self._bisect_instances(culprit, units, all_units, excluded)
            result.culprits.append(culprit)
            excluded.append(culprit.unit)
            remaining = [u for u in all_units if u not in excluded]
            deviation = self._deviation(self.pipeline(remaining, all_units))
            if not deviation.ok:
                self.progress(f"with {', '.join(u.name for u in excluded)} off, {deviation.describe()}: "
                              "searching again")
        self._make_fix(result)
        result.trials = self.trials

    def _deviation(self, pipeline: str, budget: RewriteBudget | None = None, flags: str | None = None,
                   switch_file: str | None = None) -> Deviation:
        try:
            results = self.run(pipeline, budget, flags, switch_file)
        except GraphfuseError as error:
            reproducer = error.reproducer if isinstance(error, PipelineFailure) else None
            return Deviation(-1, float("inf"), float("inf"), False, str(error.diagnostics[0]), reproducer=reproducer)
        return compare(self._reference, results, self.rtol, self.atol)

    def _first_deviating_unit(self, units: list[Unit], all_units: list[Unit], excluded: list[Unit],
                              full: Deviation) -> Culprit:
        """The smallest n such that units[:n] on (the others off) deviates; units[:0] is known not to."""
        cache: dict[int, Deviation] = {0: Deviation(0, 0.0, 0.0, True), len(units): full}

        def probe(n: int) -> Deviation:
            if n not in cache:
                cache[n] = self._deviation(self.pipeline(units[:n], all_units))
                verdict = "ok" if cache[n].ok else f"deviates ({cache[n].describe()})"
                self.progress(f"  units 1-{n} on (last: {units[n - 1].name}): {verdict}")
            return cache[n]

        if self.linear:
            first = next(n for n in range(1, len(units) + 1) if not probe(n).ok)
        else:
            first = _first_deviating(probe, len(units))
        return Culprit(units[first - 1], first, probe(first))

    def _bisect_instances(self, culprit: Culprit, units: list[Unit], all_units: list[Unit],
                          excluded: list[Unit]) -> None:
        """The first rewrite k of the culprit unit such that its first k rewrites deviate."""
        prefix = units[: culprit.position]
        pipeline = self.pipeline(prefix, all_units)
        recording = RewriteBudget(None, [culprit.unit.name])
        unlimited = self._deviation(pipeline, recording)
        culprit.rewrites = list(recording.records)
        if unlimited.ok or not culprit.rewrites:
            # Not reproducible under the budget, or a pass that rewrites without asking it.
            return
        cache: dict[int, tuple[Deviation, list[RewriteRecord]]] = {len(culprit.rewrites): (unlimited, [])}

        def probe(k: int) -> Deviation:
            if k not in cache:
                budget = RewriteBudget(k, [culprit.unit.name])
                cache[k] = (self._deviation(pipeline, budget), budget.records)
                verdict = "ok" if cache[k][0].ok else f"deviates ({cache[k][0].describe()})"
                self.progress(f"  {culprit.unit.name} limited to {k} rewrite(s): {verdict}")
            return cache[k][0]

        high = _first_deviating(probe, len(culprit.rewrites))
        culprit.instance = culprit.rewrites[high - 1]
        culprit.instance_deviation = probe(high)
        limited = cache[high][1]
        if limited and [r.describe() for r in limited] != [r.describe() for r in culprit.rewrites[:high]]:
            self.progress("  note: the limited run rewrote in another order than the unlimited one")
        try:
            culprit.fused_ops = self._created_ops(pipeline, culprit.unit.name, high)
        except GraphfuseError as error:
            # The rewrite broke the IR (a use before its definition, a type mismatch): nothing to list, the
            # verifier's message says what is wrong.
            culprit.invalid_ir = str(error.diagnostics[0])
        if culprit.unit.name == "graph-kernel-expand":
            culprit.expand_ops = (culprit.instance.pattern,)

    def _created_ops(self, pipeline: str, unit: str, k: int) -> list[tuple[str, int, list[str]]]:
        """The ops present after the unit's first k rewrites but not after k - 1 (the graph pipeline only)."""

        def ops_after(limit: int) -> Counter:
            module = parse_module(self.text, self.filename, self._context)
            with limit_rewrites(RewriteBudget(limit, [unit])):
                run_pipeline(module, pipeline, switches=self.switches)
            found: Counter = Counter()

            def visit(op: ir.Operation) -> ir.WalkResult:
                if op.name.startswith("graph."):
                    found[(op.name, tuple(_file_locations(op.location)))] += 1
                return ir.WalkResult.ADVANCE

            module.operation.walk(visit)
            return found

        created = ops_after(k) - ops_after(k - 1)
        return [(name, count, list(locations)) for (name, locations), count in sorted(created.items())]

    # -- the fix ------------------------------------------------------------------

    def _make_fix(self, result: BisectResult) -> None:
        units = [c.unit for c in result.culprits]
        base = self.switches.flags
        disable = list(base.disable_pass)
        disable += [u.name for u in units if u.name not in disable]
        result.fix_flags = _replace_flag(self.flags_text, "disable_pass", ",".join(disable))
        full_pipeline = self.pipeline(self.units(), self.units())
        result.fix_flags_verified = self._deviation(full_pipeline, flags=result.fix_flags)
        if all(not u.is_graph_kernel for u in units):
            result.fix_switch = switch_file_json(self.switches.switch_file, [u.fusion_pass for u in units])
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "fusion_switch.cfg"
                path.write_text(json.dumps(result.fix_switch, indent=2) + "\n")
                result.fix_switch_verified = self._deviation(full_pipeline, switch_file=str(path))


def _replace_flag(flags: str, key: str, value: str) -> str:
    """``flags`` with ``--key=...`` replaced by (or extended with) ``--key=value``."""
    kept = [item for item in flags.split() if item.lstrip("-–—").partition("=")[0] != key]
    return " ".join([*kept, f"--{key}={value}"])


def switch_file_json(base: SwitchFile | None, off: Sequence[type[FusionPass]]) -> dict:
    """A fusion_switch.cfg: the base file's switches plus each pass of ``off`` turned off."""
    from graphfuse.pipelines.registry import lookup_pass

    sections: dict[str, dict[str, str]] = {}
    if base is not None:
        for group in GROUPS:
            if group in base.all:
                sections.setdefault(group, {})["ALL"] = "on" if base.all[group] else "off"
            for key, enabled in base.exact[group].items():
                cls = lookup_pass(key)
                sections.setdefault(group, {})[cls.name if cls else key] = "on" if enabled else "off"
    for cls in off:
        section = sections.setdefault(cls.group, {})
        for name in [n for n in section if canonical_pass_name(n) == canonical_pass_name(cls.name)]:
            del section[name]
        section[cls.name] = "off"
    return {"Switch": sections}


def _file_locations(location: ir.Location) -> list[str]:
    """Every file:line:col inside a (fused) location."""
    try:
        if location.is_a_fused():
            return [where for inner in location.locations for where in _file_locations(inner)]
    except (AttributeError, ValueError):
        pass
    found = source_loc(location)
    return [str(found)] if found is not None else []


# -- command line ---------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2 with a usage dump
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog=TOOL, description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="graph-dialect .mlir or .mlirbc file; - reads standard input")
    p.add_argument("--entry", help="function to run (default: the first public one)")
    p.add_argument("--inputs", help=".npz file with the input arrays (arg0, arg1, ...); default: random")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--rtol", type=float, default=1e-4,
                   help="allowed error relative to the output's largest reference magnitude, as graphfuse-run "
                        "--check: |got - reference| <= atol + rtol * max|reference| (default 1e-4)")
    p.add_argument("--atol", type=float, default=1e-5,
                   help="allowed absolute error on top, for outputs that are all near zero (default 1e-5)")
    p.add_argument("--mode", default="compiled", choices=("compiled", "interpreter"),
                   help="run the CPU code (default) or the reference interpreter")
    p.add_argument("--opt-level", type=int, choices=OPT_LEVELS[1:],
                   help="the fusing level bisected (default: the flags' --opt_level, else 2)")
    p.add_argument("--graph-kernel-flags", default="", help="MS_DEV_GRAPH_KERNEL_FLAGS-style flags of the fused run")
    p.add_argument("--fusion-switch-file", help="CANN fusion_switch.cfg of the fused run")
    p.add_argument("--fix-switch-file", help="write the fix as a fusion_switch.cfg here (a file: the report on "
                   "standard output prints it too)")
    p.add_argument("--load-pass-plugin", action="append", default=[], metavar="FILE.py",
                   help="run a Python file that registers passes first (as graphfuse-opt does); may be repeated")
    p.add_argument("--linear", action="store_true", help="scan pass prefixes one by one instead of bisecting")
    p.add_argument("--quiet", action="store_true", help="print only the outcome, not every probe")
    p.add_argument("--repro-dir", metavar="DIR", help=REPRO_DIR_HELP)
    return p


def _warn(message: str) -> None:
    print(f"{TOOL}: warning: {diagnostics.printable(message)}", file=sys.stderr)


def _body(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.fix_switch_file == "-":  # write_file would make a file named "-"
        raise UsageError("--fix-switch-file -: the report, the fix in it, goes to standard output; name a file")
    for plugin in args.load_pass_plugin:
        load_pass_plugin(plugin)
    source = read_input(args.input)  # standard input for -, bytecode as its module's text
    text, name, stem = source.text, source.filename, reproducer_stem(args.input)
    # What a graphfuse-opt rerun of a failing pipeline needs besides the pipeline.
    rerun = [f"--load-pass-plugin={plugin}" for plugin in args.load_pass_plugin]
    rerun += [f"--{flag}={value}" for flag, value in (("graph-kernel-flags", args.graph_kernel_flags),
                                                      ("fusion-switch-file", args.fusion_switch_file)) if value]
    with _buffer_name(name), reproducers_saved(args.repro_dir, stem, rerun):
        module = parse_module(text, name)
        entry_function(module, args.entry)
        count = len(entry_function(module, args.entry).regions[0].blocks[0].arguments)
        inputs = load_inputs(args.inputs, count, warn=_warn) if args.inputs else random_inputs(module, args.entry,
                                                                                               args.seed)
        progress = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
        bisector = Bisector(text, name, inputs, entry=args.entry, mode=args.mode, rtol=args.rtol,
                            atol=args.atol, opt_level=args.opt_level, graph_kernel_flags=args.graph_kernel_flags,
                            fusion_switch_file=args.fusion_switch_file, linear=args.linear, progress=progress)
        for warning in bisector.warnings:
            print(f"{TOOL}: {warning}", file=sys.stderr)
        print(f"{TOOL}: {name}, {args.mode} mode, opt level {bisector.opt_level}, rtol {args.rtol:g}, "
              f"atol {args.atol:g}")
        result = bisector.start()
        _print_start(result, bisector)
        if result.full.reproducer is not None:  # the fused run fails: one reproducer, of the run the user asked for
            print(f"  {write_reproducer(result.full.reproducer, args.repro_dir, stem, rerun)}")
        if not result.deviates:
            return 0
        bisector.search(result)
    return report(result, bisector, args.fix_switch_file)


def _print_start(result: BisectResult, bisector: Bisector) -> None:
    reference = "unfused (opt level 0) " + ("compiled code" if bisector.mode == "compiled" else "graph, interpreted")
    print(f"reference: {reference}")
    if result.reference_vs_interpreter is not None:
        info = result.reference_vs_interpreter
        verdict = "within tolerance" if info.ok else "BEYOND tolerance"
        print(f"  unfused compiled vs the reference interpreter: {info.describe()} ({verdict})")
    print(f"fusion units in execution order ({len(result.units)}): "
          f"{', '.join(u.name for u in result.units) or 'none'}")
    if not result.deviates:
        print(f"no deviation: every result of the fused run matches the reference "
              f"(largest: {result.full.describe()}); {result.trials} run(s)")
    else:
        print(f"fused run: {result.full.describe(detail=True)}; bisecting")


def report(result: BisectResult, bisector: Bisector, fix_switch_file: str | None) -> int:
    """Print the outcome of a search; returns the exit status."""
    for culprit in result.culprits:
        unit = culprit.unit
        print(f"first deviating pass: {unit.name} (unit {culprit.position}; with the units before it: "
              f"{culprit.deviation.describe()})")
        if culprit.instance is not None:
            k, n = culprit.instance.index, len(culprit.rewrites)
            print(f"culprit: {culprit.instance.describe()} (rewrite {k} of {n})")
            assert culprit.instance_deviation is not None
            print(f"  deviation: {culprit.instance_deviation.describe(detail=True)}")
            if culprit.invalid_ir is not None:
                print(f"  it leaves invalid IR: {culprit.invalid_ir}")
            shown = culprit.fused_ops[:_MAX_CREATED_SHOWN]
            for name, count, locations in shown:
                times = f"{count} x " if count > 1 else ""
                print(f"  created {times}{name} from {', '.join(locations) or 'ops without location'}")
            if len(culprit.fused_ops) > len(shown):
                print(f"  created {len(culprit.fused_ops) - len(shown)} more kind(s) of op")
            print(f"  rewrites {', '.join(str(i) for i in range(1, k))} of {unit.name} before it keep the results"
                  if k > 1 else f"  it is the first rewrite of {unit.name}")
        elif culprit.rewrites:
            print(f"culprit: {unit.name} ({len(culprit.rewrites)} rewrites; the deviation did not reproduce "
                  "under a rewrite budget, so no single rewrite is named)")
        else:
            print(f"culprit: {unit.name} (it recorded no rewrite: a pass that rewrites without asking the "
                  "rewrite budget; no single rewrite can be named)")
    print("fix (turn off):")
    print(f"  --graph-kernel-flags=\"{result.fix_flags}\"")
    _print_verified("flags", result.fix_flags_verified)
    if result.fix_switch is not None:
        text = json.dumps(result.fix_switch)
        if fix_switch_file:
            write_file(fix_switch_file, json.dumps(result.fix_switch, indent=2) + "\n", "fusion switch file")
            print(f"  fusion_switch.cfg written to {fix_switch_file}: {text}")
        else:
            print(f"  fusion_switch.cfg (write it with --fix-switch-file=PATH): {text}")
        _print_verified("switch file", result.fix_switch_verified)
    else:
        print("  (a fusion_switch.cfg switches pattern fusion passes only, not graph-kernel steps)")
    for culprit in result.culprits:
        if culprit.expand_ops:
            print(f"  narrower: --graph-kernel-flags=\"--disable_expand_ops={','.join(culprit.expand_ops)}\" keeps "
                  "the other expansions")
        if culprit.instance is not None and len(culprit.rewrites) > 1:
            print(f"  graphfuse cannot switch off one rewrite of a pass: the fix turns off all "
                  f"{len(culprit.rewrites)} rewrites of {culprit.unit.name}")
    print(f"{result.trials} run(s)")
    return EXIT_CULPRIT


def _print_verified(what: str, deviation: Deviation | None) -> None:
    if deviation is None:
        return
    if deviation.ok:
        print(f"  verified: with the {what} every result matches the reference (largest: {deviation.describe()})")
    else:
        print(f"  NOT verified: with the {what}, {deviation.describe()}")


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_tool(TOOL, _body, argv))


if __name__ == "__main__":
    main()
