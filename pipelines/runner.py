"""Run a textual pass pipeline that mixes graphfuse passes and upstream MLIR passes.

The bindings cannot find Python passes by name, so the pipeline string is
parsed here (:mod:`graphfuse.pipelines.pipeline_parser`) and turned into steps:
each graphfuse pass is a Python step run on the whole module; each upstream
element (``canonicalize``, ``func.func(cse)``...) is handed to its own
``PassManager``.  A graphfuse pass written inside ``func.func(...)`` is run on
every function at module level, which is equivalent because graphfuse passes
work function by function.

Around every step the runner does what mlir-opt's instrumentation does: IR
printing before/after, timing, statistics, and verification (MLIR's verifier
plus graph-verify).  A failing step raises :class:`PipelineFailure`, which
knows the pipeline text needed to reproduce it; :func:`run_pipeline` adds a
:class:`Reproducer` (the module before the pipeline) without writing a file:
the command-line tools write it (``--repro-dir``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from mlir import ir
from mlir.passmanager import PassManager

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, from_mlir_error
from graphfuse.dialect.verifier import verify_operation
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, enter_graph, leave_graph
from graphfuse.pipelines.pipeline_parser import (
    NestedPipeline,
    PassElement,
    PipelineSyntaxError,
    parse_pipeline,
)
from graphfuse.pipelines.registry import lookup_pass, suggest_pass
from graphfuse.pipelines.reports import (
    ReportNode,
    parse_statistics,
    parse_timing,
    report_header,
    statistics_report,
    timing_report,
)

#: Anchors under which graphfuse passes may be written (they run module-wide).
_FUNCTION_ANCHORS = ("func.func",)


class PipelineError(GraphfuseError):
    """The pipeline text itself is wrong: syntax, unknown pass, bad option."""


#: Where the command-line tools write reproducers by default: this directory under the temp dir.
REPRO_DIR_NAME = "graphfuse-repro"


@dataclass(frozen=True)
class Reproducer:
    """What reproduces a failed pipeline run: the module as it was before the pipeline, and the pipeline."""

    module: str
    pipeline: str
    step: str  # the pass that failed

    def command(self, path: str, options: Sequence[str] = ()) -> str:
        """The graphfuse-opt command that reruns the pipeline on the module saved at ``path``."""
        return " ".join(["graphfuse-opt", *(shlex.quote(o) for o in options),
                         f"--pass-pipeline={shlex.quote(self.pipeline)}", shlex.quote(str(path))])

    def file_name(self, stem: str = "module") -> str:
        """``<stem>-<pass>-<hash>.mlir``: the same failure rewrites its file rather than adding one."""
        digest = hashlib.sha256(f"{self.pipeline}\n{self.module}".encode()).hexdigest()[:10]
        return f"{_safe_name(stem)}-{_safe_name(self.step)}-{digest}.mlir"

    def write(self, directory: str | Path, stem: str = "module", options: Sequence[str] = ()) -> Path:
        """Save the module (with the command as a comment on top) in ``directory``, created if missing."""
        path = Path(directory) / self.file_name(stem)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = f"// graphfuse reproducer: pass '{self.step}' failed; reproduce with:\n"
        path.write_text(f"{header}// {self.command(path, options)}\n{self.module}")
        return path


def default_repro_dir() -> Path:
    """``graphfuse-repro/`` under the temp dir (``$TMPDIR``), where the tools write reproducers by default."""
    return Path(tempfile.gettempdir()) / REPRO_DIR_NAME


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._") or "module"


class PipelineFailure(GraphfuseError):
    """A step failed while running; ``pipeline`` is the text that reproduces it.

    ``reproducer`` (set by :func:`run_pipeline`) holds the module as it was
    before the pipeline; ``reproducer.write(directory)`` saves it.  Nothing is
    written unless asked.
    """

    def __init__(self, diagnostics: list[Diagnostic], step: str, pipeline: str,
                 reproducer: Reproducer | None = None):
        super().__init__(diagnostics)
        self.step = step
        self.pipeline = pipeline
        self.reproducer = reproducer

    def with_note(self, message: str) -> PipelineFailure:
        """The same failure with ``note: message`` added to its first diagnostic."""
        first = self.diagnostics[0]
        first = dataclasses.replace(first, notes=[*first.notes, Diagnostic("note", message)])
        return PipelineFailure([first, *self.diagnostics[1:]], self.step, self.pipeline, self.reproducer)


@dataclass
class Step:
    """One unit of execution: a graphfuse pass, or one upstream pipeline element."""

    text: str  # pipeline text of this step
    argument: str  # the name used by --mlir-print-ir-before/after
    graph_pass: GraphPass | None = None
    anchor: str | None = None  # for upstream steps: the op name the element nests under

    @property
    def is_graph_pass(self) -> bool:
        return self.graph_pass is not None


@dataclass
class Instrumentation:
    """mlir-opt's observability switches, applied by :meth:`Pipeline.run`."""

    print_before: frozenset[str] | None = None  # pass arguments; None = none; "all" in set = every pass
    print_after: frozenset[str] | None = None
    print_after_change: bool = False
    print_after_failure: bool = False
    print_module_scope: bool = False
    statistics: bool = False
    #: --mlir-pass-statistics-display: "pipeline" or "list" (graphfuse.pipelines.reports)
    statistics_display: str = "pipeline"
    timing: bool = False
    #: --mlir-timing-display: "tree" or "list"
    timing_display: str = "tree"
    verify_each: bool = True
    stream: TextIO | None = None  # where dumps and reports go (default sys.stderr)
    #: --mlir-print-ir-tree-dir: IR dumps go to files in a tree of op directories here instead of the stream
    tree_dir: str | None = None
    #: how IR dumps are printed (``Operation.get_asm`` keywords: locations, generic form...); {} = the default
    print_options: dict[str, Any] = field(default_factory=dict)

    def wants(self, which: frozenset[str] | None, step: Step) -> bool:
        return which is not None and ("all" in which or step.argument in which)


@dataclass
class StepRecord:
    step: Step
    runs: int = 0  # modules this step has run on
    seconds: float = 0.0
    statistics: dict[str, int] = field(default_factory=dict)
    #: an upstream step's statistics and timing, as its pass manager reported them (summed over runs)
    upstream_statistics: list[ReportNode] = field(default_factory=list)
    upstream_timing: list[ReportNode] = field(default_factory=list)
    #: (group, pass, pattern) -> [matched_times, effected_times]
    fusion: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)


def _upstream_steps(element: PassElement | NestedPipeline, anchor: str) -> list[Step]:
    """Steps for an upstream element; ``a(p1,p2)`` becomes ``a(p1)``, ``a(p2)``.

    Splitting a nested pipeline pass by pass gives each pass its own IR dumps,
    timing and statistics.  It does not change the result: nested passes run
    on ops that are isolated from above, so running p1 on every function and
    then p2 is the same as running p1, p2 function by function.
    """
    if isinstance(element, PassElement):
        return [Step(element.to_text(), element.name, anchor=anchor)]
    if all(isinstance(e, PassElement) for e in element.elements):
        return [
            Step(NestedPipeline(element.anchor, (e,)).to_text(), e.name, anchor=anchor) for e in element.elements
        ]
    return [Step(element.to_text(), element.anchor, anchor=anchor)]


def _contains_graph_pass(element: PassElement | NestedPipeline) -> bool:
    if isinstance(element, PassElement):
        return lookup_pass(element.name) is not None
    return any(_contains_graph_pass(e) for e in element.elements)


def _graph_step(element: PassElement, text: str) -> Step:
    cls = lookup_pass(element.name)
    assert cls is not None
    try:
        instance = cls.from_options((o.key, o.value) for o in element.options)
    except OptionError as error:
        raise PipelineError(f"invalid pass pipeline '{text}': {error}") from None
    return Step(instance.to_text(), cls.name, graph_pass=instance)


def _check_upstream(step: Step, text: str, context: ir.Context) -> None:
    """Let PassManager validate an upstream element now, before anything runs."""
    # LLVM's option parser writes why an option value is bad to fd 2, not into the exception: keep it.
    with _captured_stderr_fd() as native_output:
        try:
            with context:
                PassManager.parse(f"builtin.module({step.text})")
            error = None
        except ValueError as raised:
            error = raised
    if error is not None:
        # One line: the messages without their "<where>: error: " prefixes, the parser's echo of the
        # text and its caret.
        raw = [line.strip() for line in f"{native_output[0]}\n{error}".splitlines()]
        lines = []
        for index, line in enumerate(raw):
            echo = index + 1 < len(raw) and raw[index + 1] == "^"
            if not line or line == "^" or echo or line == step.text or line.startswith("builtin.module("):
                continue
            lines.append(line.split("error: ", 1)[1] if "error: " in line else line.lstrip(": "))
        message = "; ".join(dict.fromkeys(lines))
        unknown = re.search(r"'([^']+)' does not refer to a registered pass", message)
        hint = suggest_pass(unknown.group(1)) if unknown else None
        if hint:
            message += f"; did you mean '{hint}'?"
        raise PipelineError(f"invalid pass pipeline '{text}': {message}") from None


def build_steps(text: str, context: ir.Context) -> list[Step]:
    """Parse pipeline ``text`` (``builtin.module(...)`` or a bare pass list) into steps."""
    if not isinstance(text, str):
        raise PipelineError(f"a pass pipeline is text, e.g. 'builtin.module(graph-cse)', not {type(text).__name__}")
    try:
        root = parse_pipeline(text, default_anchor="builtin.module")
    except PipelineSyntaxError as error:
        raise PipelineError(f"invalid pass pipeline: {error.render()}") from None
    if root.anchor != "builtin.module":
        raise PipelineError(
            f"invalid pass pipeline '{text}': the pipeline must be anchored on 'builtin.module', not '{root.anchor}'"
        )
    steps: list[Step] = []
    for element in root.elements:
        if isinstance(element, PassElement):
            if lookup_pass(element.name) is not None:
                steps.append(_graph_step(element, text))
            else:
                steps.extend(_upstream_steps(element, "builtin.module"))
            continue
        if not _contains_graph_pass(element):
            steps.extend(_upstream_steps(element, "builtin.module"))
            continue
        if element.anchor not in _FUNCTION_ANCHORS or any(isinstance(e, NestedPipeline) for e in element.elements):
            raise PipelineError(
                f"invalid pass pipeline '{text}': graphfuse passes can be nested only directly under "
                f"{', '.join(_FUNCTION_ANCHORS)}, not in '{element.to_text()}'"
            )
        # Hoist: func.func(a, graph-x, b) -> func.func(a), graph-x, func.func(b).
        run: list[PassElement] = []
        for inner in [*element.elements, None]:
            if inner is None or lookup_pass(inner.name) is not None:
                if run:
                    nested = NestedPipeline(element.anchor, tuple(run))
                    steps.extend(_upstream_steps(nested, "builtin.module"))
                    run = []
                if inner is not None:
                    steps.append(_graph_step(inner, text))
            else:
                run.append(inner)
    for step in steps:
        if not step.is_graph_pass:
            _check_upstream(step, text, context)
    return steps


@contextlib.contextmanager
def _captured_stderr_fd() -> Iterator[list[str]]:
    """Collect what native code writes to fd 2 (PassManager reports go there, not to sys.stderr)."""
    sys.stderr.flush()
    saved = os.dup(2)
    out: list[str] = []
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode(errors="replace"))


class Pipeline:
    """A parsed, validated pipeline, ready to run on modules of one context."""

    def __init__(
        self,
        text: str,
        context: ir.Context,
        instrumentation: Instrumentation | None = None,
        on_warning: Callable[[Diagnostic], None] | None = None,
        switches: Any = None,
        dump_dir: str | None = None,
    ):
        self.context = context
        self.steps = build_steps(text, context)
        self.instrumentation = instrumentation or Instrumentation()
        if self.instrumentation.print_module_scope:
            # MLIR refuses (aborts) to print module-scope IR from a multi-threaded pass manager.
            context.enable_multithreading(False)
        #: one record per step, accumulated over every module the pipeline runs on
        self.records: list[StepRecord] = [StepRecord(step) for step in self.steps]
        #: the fusion switches of the flag and switch-file front ends (a FusionSwitches), or None
        self.switches = switches
        #: write the IR after every pass to NNNN_<pass>.mlir files here (seed 000's IR dumps)
        self.dump_dir = Path(dump_dir) if dump_dir else None
        self._dumps = 0
        self._tree_files = TreeFiles()
        #: where warnings of passes go (default: printed to the instrumentation stream)
        self.on_warning = on_warning or (lambda diag: self.stream.write(f"{diag}\n"))

    @property
    def text(self) -> str:
        return "builtin.module(" + ",".join(s.text for s in self.steps) + ")"

    def full_text(self) -> str:
        """The pipeline with every option spelled out (for --dump-pass-pipeline)."""
        parts = [s.graph_pass.to_text(all_options=True) if s.graph_pass else s.text for s in self.steps]
        return "builtin.module(" + ",".join(parts) + ")"

    @property
    def stream(self) -> TextIO:
        return self.instrumentation.stream or sys.stderr

    def run(self, module: ir.Module) -> None:
        """Run every step on ``module`` in place; raises PipelineFailure on the first failing step."""
        graph = enter_graph()
        try:
            self._run_steps(module)
        finally:
            leave_graph(graph)

    def _run_steps(self, module: ir.Module) -> None:
        for index, (step, record) in enumerate(zip(self.steps, self.records, strict=True)):
            start = time.perf_counter()
            record.runs += 1
            try:
                self._run_step(step, module, record)
            except GraphfuseError as error:
                self._fail(index, error.diagnostics, module)
            except ir.MLIRError as error:
                self._fail(index, from_mlir_error(error), module)
            except Exception as error:  # a bug in a pass: report it as one, not as a traceback
                detail = "".join(traceback.format_exception_only(error)).strip()
                message = f"internal error in pass '{step.argument}': {detail}"
                if os.environ.get("GRAPHFUSE_DEBUG"):
                    traceback.print_exc()
                self._fail(index, [Diagnostic("error", message)], module)
            finally:
                record.seconds += time.perf_counter() - start
            if self.instrumentation.verify_each:
                diagnostics = verify_module(module)
                if diagnostics:
                    self._fail(index, diagnostics, module, after=True)
            if self.dump_dir is not None:
                self.write_dump(step.argument, module)

    def write_dump(self, name: str, module: ir.Module) -> None:
        """Write the IR to ``NNNN_<name>.mlir`` in the dump directory: the pass name reads off the file name."""
        assert self.dump_dir is not None
        self.dump_dir.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        (self.dump_dir / f"{self._dumps:04d}_{safe}.mlir").write_text(str(module))
        self._dumps += 1

    def fusion_result(self) -> dict[str, dict[str, dict[str, str]]]:
        """fusion_result.json as CANN writes it: group -> pass -> match_times/effect_times."""
        result: dict[str, dict[str, dict[str, str]]] = {"graph_fusion": {}, "ub_fusion": {}}
        totals: dict[tuple[str, str], list[int]] = {}
        for record in self.records:
            for (group, pass_name, _pattern), (matched, effected) in record.fusion.items():
                counts = totals.setdefault((group, pass_name), [0, 0])
                counts[0] += matched
                counts[1] += effected
        for (group, pass_name), (matched, effected) in totals.items():
            if not matched:
                continue  # like CANN, list the passes whose patterns matched
            part = "ub_fusion" if group == "UBFusion" else "graph_fusion"
            result[part][pass_name] = {"match_times": str(matched), "effect_times": str(effected)}
        return result

    def _fail(self, index: int, diagnostics: list[Diagnostic], module: ir.Module, after: bool = False) -> None:
        step = self.steps[index]
        if self.instrumentation.print_after_failure:
            name = type(step.graph_pass).__name__ if step.graph_pass else step.argument
            self._dump(f"IR Dump After {name} Failed ({step.argument})", module, step.argument)
        when = "after" if after else "in"
        first = dataclasses.replace(
            diagnostics[0], notes=[*diagnostics[0].notes, Diagnostic("note", f"{when} pass '{step.argument}'")]
        )
        raise PipelineFailure([first, *diagnostics[1:]], step.argument, self.text)

    def _dump(self, title: str, module: ir.Module, argument: str) -> None:
        options = self.instrumentation.print_options
        text = module.operation.get_asm(**options) if options else str(module)
        dump = f"// -----// {title} //----- //\n{text}\n\n"
        if self.instrumentation.tree_dir is not None:
            self._tree_files.write(self.instrumentation.tree_dir, [_op_directory(module.operation)], argument, dump)
            return
        self.stream.write(dump)
        self.stream.flush()

    def _run_step(self, step: Step, module: ir.Module, record: StepRecord) -> None:
        inst = self.instrumentation
        if step.is_graph_pass:
            if inst.wants(inst.print_before, step):
                self._dump(f"IR Dump Before {type(step.graph_pass).__name__} ({step.argument})", module,
                           step.argument)
            before = str(module) if inst.print_after_change else None
            dump = (lambda name, m: self.write_dump(f"{step.argument}_{name}", m)) if self.dump_dir else None
            context = PassContext(step.graph_pass, self.switches, dump)
            with self.context, ir.Location.unknown():
                step.graph_pass.run(module, context)
            for key, (matched, effected) in context.fusion.items():
                counts = record.fusion.setdefault(key, [0, 0])
                counts[0] += matched
                counts[1] += effected
            for name, value in context.statistics.items():
                record.statistics[name] = record.statistics.get(name, 0) + value
            for warning in context.warnings:
                self.on_warning(warning)
            changed = before is None or str(module) != before
            if inst.wants(inst.print_after, step) or (inst.print_after_change and changed):
                self._dump(f"IR Dump After {type(step.graph_pass).__name__} ({step.argument})", module,
                           step.argument)
            return
        with self.context:
            pm = PassManager.parse(f"builtin.module({step.text})")
            pm.enable_verifier(inst.verify_each)
            before = inst.wants(inst.print_before, step)
            after = inst.wants(inst.print_after, step)
            tree = None
            if before or after or inst.print_after_change:
                # Into a directory of its own, renumbered into the tree afterwards: this pass manager counts the
                # dumps of each op from 0, the tree counts them over the whole pipeline.
                tree = tempfile.mkdtemp(prefix="graphfuse-ir-tree-") if inst.tree_dir is not None else None
                pm.enable_ir_printing(
                    print_before_all=before,
                    print_after_all=after,
                    print_after_change=inst.print_after_change,
                    print_module_scope=inst.print_module_scope,
                    tree_printing_dir_path=tree,
                )
            if inst.statistics or inst.timing:
                if inst.statistics:
                    pm.enable_statistics()
                if inst.timing:
                    pm.enable_timing()
                # The reports go to fd 2: statistics when the run ends, timing when the pass manager is destroyed.
                with _captured_stderr_fd() as captured:
                    try:
                        pm.run(module.operation)
                    finally:
                        del pm
                        if tree is not None:
                            self._tree_files.collect(tree, inst.tree_dir)
                dumps, statistics, timing = _split_reports(captured[0])
                self.stream.write(dumps)
                _add_nodes(record.upstream_statistics, parse_statistics(statistics))
                _add_nodes(record.upstream_timing, parse_timing(timing))
            else:
                self.stream.flush()
                sys.stderr.flush()
                try:
                    pm.run(module.operation)
                finally:
                    if tree is not None:
                        self._tree_files.collect(tree, inst.tree_dir)
    # -- reports --------------------------------------------------------------

    @property
    def has_run(self) -> bool:
        return any(record.runs for record in self.records)

    def _nodes(self, statistics: bool) -> list[ReportNode]:
        nodes = []
        for record in self.records:
            if not record.runs:
                continue
            if record.step.is_graph_pass:
                described = type(record.step.graph_pass).statistics
                counted = {name: (value, described[name]) for name, value in record.statistics.items()}
                nodes.append(ReportNode(record.step.argument, counted, record.seconds, record.seconds))
            else:
                nodes.extend(record.upstream_statistics if statistics else record.upstream_timing)
        return nodes

    def statistics_report(self) -> str:
        """mlir-opt's pass statistics report, in the instrumentation's display."""
        return statistics_report(self._nodes(statistics=True), self.instrumentation.statistics_display)

    def timing_report(self, wall: float, before: Sequence[ReportNode] = (), after: Sequence[ReportNode] = ()) -> str:
        """mlir-opt's execution time report of a run that took ``wall`` seconds; ``before``/``after`` add rows
        such as parsing and output."""
        nodes = [*before, *self._nodes(statistics=False), *after]
        return timing_report(nodes, wall, self.instrumentation.timing_display)


def _op_directory(op: ir.Operation) -> str:
    """An op's directory in an IR tree: its name with '_' for '.', then its symbol name (mlir-opt's naming)."""
    symbol = ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else "no-symbol-name"
    return f"{op.name.replace('.', '_')}_{symbol}"


class TreeFiles:
    """The files of ``--mlir-print-ir-tree-dir``, numbered as mlir-opt numbers them over a whole pipeline.

    A dump of an op goes to ``<dir>/<root op>/.../<op>/<counts>_<pass>.mlir``: the op's own count (its dumps
    so far, from 0) after the count of each op around it (0 before that op's first own dump).
    """

    def __init__(self) -> None:
        self.counts: dict[tuple[str, ...], int] = {}

    def write(self, root: str, path: list[str], argument: str, text: str) -> None:
        counts = [self.counts.setdefault(tuple(path[:k]), 0) for k in range(1, len(path))]
        own = self.counts[tuple(path)] = self.counts.get(tuple(path), -1) + 1
        directory = Path(root, *path)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{'_'.join(map(str, [*counts, own]))}_{argument}.mlir").write_text(text)

    def collect(self, scratch: str, root: str) -> None:
        """Move the files one pass manager wrote into ``scratch`` (counted from 0) into the tree at ``root``."""
        files = []
        for file in Path(scratch).rglob("*.mlir"):
            path = list(file.relative_to(scratch).parts[:-1])
            parts = file.stem.split("_", len(path))  # a count per op on the path, then the pass argument
            files.append((path, int(parts[-2]), parts[-1], file))
        for path, _, argument, file in sorted(files, key=lambda f: (f[0], f[1])):
            self.write(root, path, argument, file.read_text())
        shutil.rmtree(scratch, ignore_errors=True)


_STATISTICS_TITLE = "... Pass statistics report ..."
_TIMING_TITLE = "... Execution time report ..."


def _split_reports(text: str) -> tuple[str, str, str]:
    """(IR dumps, statistics report, timing report) of what a pass manager wrote to fd 2."""
    statistics = timing = ""
    timing_header = report_header(_TIMING_TITLE)
    if timing_header in text:
        text, _, timing = text.partition(timing_header)
    statistics_header = report_header(_STATISTICS_TITLE)
    if statistics_header in text:
        text, _, statistics = text.partition(statistics_header)
    return text, statistics, timing


def _add_nodes(total: list[ReportNode], new: list[ReportNode]) -> None:
    """Add a step's report of one run to its reports of the runs before (the same tree every run)."""
    if [n.name for n in total] != [n.name for n in new]:
        total[:] = new
        return
    for mine, theirs in zip(total, new, strict=True):
        mine.add(theirs)


def verify_module(module: ir.Module) -> list[Diagnostic]:
    """MLIR's verifier, then graph-verify; diagnostics for everything wrong (empty when valid)."""
    try:
        module.operation.verify()
    except ir.MLIRError as error:
        return from_mlir_error(error)
    return verify_operation(module.operation)


def run_pipeline(
    module: ir.Module,
    pipeline: str,
    instrumentation: Instrumentation | None = None,
    repro_dir: str | None = None,
    switches: Any = None,
    dump_dir: str | None = None,
    verify_each_step: bool = True,
) -> Pipeline:
    """Parse ``pipeline`` and run it on ``module`` in place; returns the Pipeline (for its reports).

    On failure the raised PipelineFailure's ``reproducer`` holds the module as
    it was before the pipeline and the pipeline that ran.  No file is written,
    unless ``repro_dir`` is given: then the module is saved there and a note
    gives the graphfuse-opt command that reproduces the failure.

    ``verify_each_step=False`` (what ``graphfuse.compile`` runs) verifies the
    module once, after the last step, instead of after each (on a lowered
    5,000-op graph the verifiers took 1.3 s).  When a step fails or leaves
    invalid IR, the pipeline runs again on a copy of the module as it was
    given, verifying after each step: the failure names the step that broke
    the IR, as it would have.
    """
    if not verify_each_step:
        return _run_verified_at_end(module, pipeline, instrumentation, repro_dir, switches, dump_dir)
    runner = Pipeline(pipeline, module.context, instrumentation, switches=switches, dump_dir=dump_dir)
    snapshot = str(module)
    try:
        runner.run(module)
    except PipelineFailure as failure:
        reproducer = Reproducer(snapshot, runner.text, failure.step)
        failure = PipelineFailure(failure.diagnostics, failure.step, failure.pipeline, reproducer)
        if repro_dir is not None:
            path = reproducer.write(repro_dir)
            failure = failure.with_note(f"reproduce with: {reproducer.command(path)}")
        raise failure from None
    return runner


def _run_verified_at_end(module: ir.Module, pipeline: str, instrumentation: Instrumentation | None,
                         repro_dir: str | None, switches: Any, dump_dir: str | None) -> Pipeline:
    """run_pipeline with one verification at the end; a failure is located by running again from a copy."""
    unverified = dataclasses.replace(instrumentation or Instrumentation(), verify_each=False)
    runner = Pipeline(pipeline, module.context, unverified, switches=switches, dump_dir=dump_dir)
    given = _copy_of(module)
    try:
        runner.run(module)
        diagnostics = verify_module(module)
        step = runner.steps[-1].argument if runner.steps else ""
    except PipelineFailure as failure:
        diagnostics, step = failure.diagnostics, failure.step
    if not diagnostics:
        return runner
    snapshot = str(given)
    run_pipeline(given, pipeline, instrumentation, repro_dir, switches, dump_dir)  # raises the located failure
    # The verified run passed where the unverified one failed (a pass that depends on when it is verified):
    # report what the unverified run found.
    raise PipelineFailure(diagnostics, step, runner.text, Reproducer(snapshot, runner.text, step))


def _copy_of(module: ir.Module) -> ir.Module:
    """A copy of ``module`` with its locations (cloned, not printed and parsed: a large module prints slowly)."""
    clone = module.operation.clone()
    copy = ir.Module.create(module.operation.location)
    for name in clone.attributes:
        copy.operation.attributes[name] = clone.attributes[name]
    insertion = ir.InsertionPoint(copy.body)
    for op in list(clone.regions[0].blocks[0].operations):
        insertion.insert(op.detach_from_parent())
    clone.erase()
    return copy
