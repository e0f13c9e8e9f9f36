"""graphfuse-opt: mlir-opt for the graph dialect, with graphfuse's passes.

Flags, output and error format follow mlir-opt: one input file (or stdin),
``-o``, ``--pass-pipeline``/``-p``, one flag per pass (graphfuse's and
upstream's, in command-line order), ``--split-input-file``,
``--verify-diagnostics``, IR printing, statistics and timing.  Errors print as
``file:line:col: error: message`` and exit with code 1.
"""

from __future__ import annotations

import json
import re
import runpy
import shlex
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import mlir
from mlir import ir
from mlir.passmanager import PassManager

from graphfuse.dialect.context import (
    IRDL_DIALECTS,
    has_dialect,
    load_user_dialects,
    make_context,
    register_irdl_dialects,
    user_dialects,
)
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc, set_parsed_buffer_name
from graphfuse.dialect.files import check_distinct_files, write_output
from graphfuse.dialect.parsing import module_bytecode, name_parsed_buffer, parse_module, read_input, relocate
from graphfuse.lowering.options import CompileOptions, resolve_options
from graphfuse.pipelines import log
from graphfuse.pipelines.registry import all_passes, lookup_pass
from graphfuse.pipelines.reports import STATISTICS_DISPLAYS, TIMING_DISPLAYS, ReportNode
from graphfuse.pipelines.runner import Instrumentation, Pipeline, PipelineFailure, Reproducer
from graphfuse.tools.reporting import DiagnosticPrinter, UsageError, reproducer_stem, run_tool, save_reproducer

TOOL = "graphfuse-opt"
SPLIT_MARKER = "// -----"


@dataclass
class Options:
    input: str = "-"
    output: str = "-"
    pipeline: str | None = None
    pass_flags: list[str] = field(default_factory=list)
    split_input_file: bool = False
    split_marker: str = SPLIT_MARKER
    verify_diagnostics: bool = False
    instrumentation: Instrumentation = field(default_factory=Instrumentation)
    print_generic: bool = False
    print_debuginfo: bool = False
    allow_unregistered: bool = False
    dump_pass_pipeline: bool = False
    list_passes: bool = False
    #: --print-cpu-pipeline's entry function (None: the flag is not given)
    print_cpu_pipeline: str | None = None
    version: bool = False
    help: bool = False
    graph_kernel_flags: str | None = None
    strict_flags: bool = False
    fusion_switch_file: str | None = None
    log_level: str | None = None
    fusion_result: str | None = None
    dump_dir: str | None = None
    pass_plugins: list[str] = field(default_factory=list)
    repro_dir: str | None = None
    emit_bytecode: bool = False
    print_local_scope: bool = False
    pretty_debuginfo: bool = False
    assume_verified: bool = False
    elide_elements_larger: int | None = None
    disable_threading: bool = False
    no_implicit_module: bool = False
    crash_reproducer: str | None = None
    run_reproducer: bool = False
    irdl_files: list[str] = field(default_factory=list)
    dialect_plugins: list[str] = field(default_factory=list)
    show_dialects: bool = False

    def print_options(self) -> dict[str, object]:
        """The printer's options (``Operation.get_asm`` keywords) the flags set, for the output and IR dumps."""
        return {"print_generic_op_form": self.print_generic, "enable_debug_info": self.print_debuginfo,
                "pretty_debug_info": self.pretty_debuginfo, "use_local_scope": self.print_local_scope,
                "large_elements_limit": self.elide_elements_larger, "assume_verified": self.assume_verified}


@dataclass(frozen=True)
class Flag:
    name: str
    help: str
    value: str = "none"  # "none", "required" (--x=V or --x V) or "optional" (--x or --x=V)
    metavar: str = ""


FLAGS = [
    Flag("o", "Output file (default: stdout)", "required", "<filename>"),
    Flag("pass-pipeline", "A textual pass pipeline, e.g. 'builtin.module(graph-cse,canonicalize)'", "required",
         "<pipeline>"),
    Flag("p", "Alias for --pass-pipeline", "required", "<pipeline>"),
    Flag("split-input-file", "Split the input at '// -----' lines and process each chunk independently",
         "optional", "<marker>"),
    Flag("verify-diagnostics", "Check diagnostics against expected-* annotations in the input"),
    Flag("mlir-print-ir-before", "Print the IR before each listed pass", "required", "<pass,...>"),
    Flag("mlir-print-ir-after", "Print the IR after each listed pass", "required", "<pass,...>"),
    Flag("mlir-print-ir-before-all", "Print the IR before every pass"),
    Flag("mlir-print-ir-after-all", "Print the IR after every pass"),
    Flag("mlir-print-ir-after-change", "Print the IR after a pass only when it changed the IR"),
    Flag("mlir-print-ir-after-failure", "Print the IR after a pass that failed"),
    Flag("mlir-print-ir-module-scope", "Print the whole module when printing IR of nested passes"),
    Flag("mlir-print-ir-tree-dir", "Print the IR dumps of --mlir-print-ir-* into files of a tree of op directories "
         "under this directory instead of stderr", "required", "<dir>"),
    Flag("mlir-pass-statistics", "Print pass statistics after the pipeline ran"),
    Flag("mlir-pass-statistics-display", "How --mlir-pass-statistics shows the statistics: pipeline (the "
         "default: per pass, in pipeline order) or list (merged by pass name)", "required", "<value>"),
    Flag("mlir-timing", "Print a per-pass execution time report"),
    Flag("mlir-timing-display", "How --mlir-timing shows the times: tree (the default: in pipeline order, nested "
         "passes under their pipeline) or list (merged by name, slowest first)", "required", "<value>"),
    Flag("mlir-print-op-generic", "Print every op in the generic form"),
    Flag("mlir-print-debuginfo", "Print locations"),
    Flag("emit-bytecode", "Write the output as MLIR bytecode (input bytecode is read by its content)"),
    Flag("mlir-print-local-scope", "Print locations inline and types without aliases (local scope)"),
    Flag("mlir-pretty-debuginfo", "Print locations in the pretty form (file:line:col)"),
    Flag("mlir-print-assume-verified", "Print without verifying the IR first"),
    Flag("mlir-elide-elementsattrs-if-larger", "Elide elements attributes with more elements than this", "required",
         "<uint>"),
    Flag("mlir-disable-threading", "Run the pass managers on one thread"),
    Flag("no-implicit-module", "Do not wrap the input in a module: it must be a single top-level operation"),
    Flag("mlir-pass-pipeline-crash-reproducer", "When the pipeline fails, write the module it started from and the "
         "pipeline to this file, as mlir-opt does", "required", "<filename>"),
    Flag("run-reproducer", "Run the pipeline a reproducer file (mlir-opt's format) carries"),
    Flag("verify-each", "Verify the IR after every pass (default true)", "optional", "<bool>"),
    Flag("graph-kernel-flags", "MindSpore-style fusion flags, e.g. \"--opt_level=2 --disable_pass=a,b\" "
         "(added to MS_DEV_GRAPH_KERNEL_FLAGS; these win)", "required", "<flags>"),
    Flag("strict-flags", "Unknown keys and bad values in graph kernel flags are errors, not warnings"),
    Flag("fusion-switch-file", "CANN fusion_switch.cfg: turn GraphFusion/UBFusion passes on or off "
         "(default: $FUSION_SWITCH_FILE)", "required", "<file>"),
    Flag("fusion_switch_file", "Alias for --fusion-switch-file (ATC's spelling)", "required", "<file>"),
    Flag("log-level", "debug, info, warning (default) or error; GLOG_v=0..3 sets the same", "required", "<level>"),
    Flag("fusion-result", "Write match/effect counts per fusion pass to this fusion_result.json", "required",
         "<file>"),
    Flag("dump-dir", "Write the IR after every pass to NNNN_<pass>.mlir files in this directory", "required",
         "<dir>"),
    Flag("repro-dir", "When a pass fails on input read from stdin, save it here as the reproducer (default: "
         "graphfuse-repro/ under the temp dir); a file input is its own reproducer", "required", "<dir>"),
    Flag("load-pass-plugin", "Run a Python file that registers passes (e.g. user fusion patterns) before the "
         "pipeline is read; may be repeated", "required", "<file.py>"),
    Flag("irdl-file", "IRDL file to register before processing the input (its dialects parse and verify); may be "
         "repeated", "required", "<filename>"),
    Flag("load-dialect-plugin", "Run a Python file that registers dialects (graphfuse.register_irdl_dialects) "
         "before the input is read; may be repeated", "required", "<file.py>"),
    Flag("show-dialects", "Print the list of registered dialects and exit"),
    Flag("allow-unregistered-dialect", "Accept ops of dialects that are not loaded"),
    Flag("dump-pass-pipeline", "Print the pipeline that will run, with all options, to stderr"),
    Flag("list-passes", "List the graphfuse passes with their options and exit"),
    Flag("print-cpu-pipeline", "Print the pipeline graphfuse.compile lowers linalg IR to the LLVM dialect with, for "
         "this entry function (default main) and this machine's threads and streaming, and exit", "optional",
         "<entry>"),
    Flag("version", "Print the version and exit"),
    Flag("help", "Print this help and exit"),
    Flag("h", "Alias for --help"),
]
_FLAGS_BY_NAME = {f.name: f for f in FLAGS}


def _bool_value(name: str, text: str | None) -> bool:
    if text is None or text.lower() in ("true", "1"):
        return True
    if text.lower() in ("false", "0"):
        return False
    raise UsageError(f"option '--{name}' expects true or false, got '{text}'")


def _choice(name: str, text: str | None, choices: Sequence[str]) -> str:
    if text not in choices:
        raise UsageError(f"for the --{name} option: Cannot find option named '{text}'!")
    return text


def _is_upstream_pass(name: str, context: ir.Context) -> bool:
    try:
        with context:
            PassManager.parse(f"builtin.module({name})")
    except ValueError:
        return False
    return True


def load_pass_plugin(path: str) -> None:
    """Execute a Python file that registers passes with ``graphfuse.pipelines.registry.register_pass``."""
    if not Path(path).is_file():
        raise UsageError(f"could not load pass plugin '{path}': no such file")
    try:
        runpy.run_path(path, run_name="graphfuse_pass_plugin")
    except GraphfuseError as error:  # e.g. register_replacement's checks: keep their located diagnostics
        raise GraphfuseError([Diagnostic(d.severity, f"in pass plugin '{path}': {d.message}", d.location, d.notes)
                              for d in error.diagnostics]) from None
    except Exception as error:  # the plugin is user code: report, never a traceback
        detail = "".join(traceback.format_exception_only(error)).strip()
        raise UsageError(f"could not load pass plugin '{path}': {detail}") from None


def load_dialect_plugin(path: str, context: ir.Context) -> None:
    """Execute a Python file that registers dialects (``graphfuse.register_irdl_dialects``); load them into
    ``context``.  mlir-opt's plugins are C++ shared libraries, which the Python bindings cannot load."""
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"could not load dialect plugin '{path}': no such file")
    with file.open("rb") as stream:
        if stream.read(4) in (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"MZ\x90\x00"):
            raise UsageError(
                f"could not load dialect plugin '{path}': it is a shared library; {TOOL} runs MLIR through its Python "
                "bindings and cannot load C++ dialect plugins: define the dialect in IRDL and pass --irdl-file, or "
                "register it from a Python plugin (graphfuse.register_irdl_dialects)")
    try:
        runpy.run_path(path, run_name="graphfuse_dialect_plugin")
    except GraphfuseError as error:
        raise GraphfuseError([Diagnostic(d.severity, f"in dialect plugin '{path}': {d.message}", d.location, d.notes)
                              for d in error.diagnostics]) from None
    except Exception as error:  # the plugin is user code: report, never a traceback
        detail = "".join(traceback.format_exception_only(error)).strip()
        raise UsageError(f"could not load dialect plugin '{path}': {detail}") from None
    load_user_dialects(context)


def registered_dialects(context: ir.Context) -> list[str]:
    """The dialects ``context`` can load, sorted: MLIR's (the names the pinned mlir-opt lists and those with
    Python bindings; the context is asked about each), graphfuse's and those registered from IRDL files."""
    candidates = {*IRDL_DIALECTS, *user_dialects()}
    package = Path(next(iter(mlir.__path__)))
    for module in (package / "dialects").glob("_*_ops_gen.py"):
        found = re.search(r'DIALECT_NAMESPACE = "([^"]+)"', module.read_text())
        if found:
            candidates.add(found.group(1))
    try:
        listed = subprocess.run([str(package / "bin" / "mlir-opt"), "--show-dialects"], capture_output=True,
                                text=True, check=False).stdout
    except OSError:
        listed = ""
    if listed.startswith("Available Dialects:"):
        candidates.update(name.strip() for name in listed.partition(":")[2].split(",") if name.strip())
    return sorted(name for name in candidates if has_dialect(context, name))


def _plugin_paths(argv: list[str]) -> list[str]:
    """Plugins must load before the other flags are read: they add pass flags."""
    paths = []
    for i, arg in enumerate(argv):
        name, has_value, value = arg.lstrip("-").partition("=")
        if arg.startswith("-") and name == "load-pass-plugin":
            paths.append(value if has_value else (argv[i + 1] if i + 1 < len(argv) else ""))
    return paths


def parse_args(argv: list[str], context: ir.Context) -> Options:
    opts = Options()
    inst = opts.instrumentation
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            positional.extend(argv[i:])
            break
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, has_value, value = arg.lstrip("-").partition("=")
        flag = _FLAGS_BY_NAME.get(name)
        if flag is None:
            # Any other --name[=options] is a pass: graphfuse's, else upstream's.
            if lookup_pass(name) is None and not _is_upstream_pass(name, context):
                raise UsageError(f"unknown command line argument '{arg}'; try '{TOOL} --help'")
            opts.pass_flags.append(f"{name}{{{value}}}" if has_value else name)
            continue
        text: str | None = value if has_value else None
        if flag.value == "required" and not has_value:
            if i >= len(argv):
                raise UsageError(f"option '{arg}' requires a value")
            text = argv[i]
            i += 1
        elif flag.value == "none" and has_value:
            raise UsageError(f"option '--{name}' does not take a value")
        _apply_flag(opts, inst, flag.name, text)
    if len(positional) > 1:
        raise UsageError(f"too many positional arguments: {' '.join(positional)} (expected one input file)")
    if positional:
        opts.input = positional[0]
    if opts.pipeline is not None and opts.pass_flags:
        raise UsageError("'--pass-pipeline' cannot be combined with individual pass flags")
    if opts.emit_bytecode and opts.split_input_file:
        raise UsageError("'--emit-bytecode' writes one module: it cannot be combined with '--split-input-file'")
    return opts


def _apply_flag(opts: Options, inst: Instrumentation, name: str, text: str | None) -> None:
    def pass_list(value: str | None) -> frozenset[str]:
        return frozenset(p.strip() for p in (value or "").split(",") if p.strip())

    if name == "o":
        opts.output = text or "-"
    elif name in ("pass-pipeline", "p"):
        opts.pipeline = text
    elif name == "split-input-file":
        opts.split_input_file = True
        if text:
            opts.split_marker = text
    elif name == "verify-diagnostics":
        opts.verify_diagnostics = True
    elif name == "mlir-print-ir-before":
        inst.print_before = (inst.print_before or frozenset()) | pass_list(text)
    elif name == "mlir-print-ir-after":
        inst.print_after = (inst.print_after or frozenset()) | pass_list(text)
    elif name == "mlir-print-ir-before-all":
        inst.print_before = frozenset({"all"})
    elif name == "mlir-print-ir-after-all":
        inst.print_after = frozenset({"all"})
    elif name == "mlir-print-ir-after-change":
        inst.print_after_change = True
    elif name == "mlir-print-ir-after-failure":
        inst.print_after_failure = True
    elif name == "mlir-print-ir-module-scope":
        inst.print_module_scope = True
    elif name == "mlir-print-ir-tree-dir":
        inst.tree_dir = text
    elif name == "mlir-pass-statistics":
        inst.statistics = True
    elif name == "mlir-pass-statistics-display":
        inst.statistics_display = _choice(name, text, STATISTICS_DISPLAYS)
    elif name == "mlir-timing":
        inst.timing = True
    elif name == "mlir-timing-display":
        inst.timing_display = _choice(name, text, TIMING_DISPLAYS)
    elif name == "mlir-print-op-generic":
        opts.print_generic = True
    elif name == "mlir-print-debuginfo":
        opts.print_debuginfo = True
    elif name == "emit-bytecode":
        opts.emit_bytecode = True
    elif name == "mlir-print-local-scope":
        opts.print_local_scope = True
    elif name == "mlir-pretty-debuginfo":
        opts.pretty_debuginfo = True
    elif name == "mlir-print-assume-verified":
        opts.assume_verified = True
    elif name == "mlir-elide-elementsattrs-if-larger":
        if not (text or "").isdigit():
            raise UsageError(f"invalid argument '{text}' to option '--{name}': expected an unsigned integer")
        opts.elide_elements_larger = int(text)
    elif name == "mlir-disable-threading":
        opts.disable_threading = True
    elif name == "no-implicit-module":
        opts.no_implicit_module = True
    elif name == "mlir-pass-pipeline-crash-reproducer":
        opts.crash_reproducer = text
    elif name == "run-reproducer":
        opts.run_reproducer = True
    elif name == "verify-each":
        inst.verify_each = _bool_value(name, text)
    elif name == "irdl-file":
        opts.irdl_files.append(text or "")
    elif name == "load-dialect-plugin":
        opts.dialect_plugins.append(text or "")
    elif name == "show-dialects":
        opts.show_dialects = True
    elif name == "allow-unregistered-dialect":
        opts.allow_unregistered = True
    elif name == "dump-pass-pipeline":
        opts.dump_pass_pipeline = True
    elif name == "list-passes":
        opts.list_passes = True
    elif name == "print-cpu-pipeline":
        opts.print_cpu_pipeline = text or "main"
    elif name == "version":
        opts.version = True
    elif name in ("help", "h"):
        opts.help = True
    elif name == "graph-kernel-flags":
        opts.graph_kernel_flags = text
    elif name == "strict-flags":
        opts.strict_flags = True
    elif name in ("fusion-switch-file", "fusion_switch_file"):
        opts.fusion_switch_file = text
    elif name == "log-level":
        opts.log_level = text
    elif name == "fusion-result":
        opts.fusion_result = text
    elif name == "dump-dir":
        opts.dump_dir = text
    elif name == "load-pass-plugin":
        opts.pass_plugins.append(text or "")
    elif name == "repro-dir":
        opts.repro_dir = text


# -- text output --------------------------------------------------------------


def help_text() -> str:
    lines = [f"OVERVIEW: {TOOL}: mlir-opt for the graph dialect, with graphfuse's fusion passes", "",
             f"USAGE: {TOOL} [options] [input-file]", "", "OPTIONS:"]
    for flag in FLAGS:
        dash = "-" if len(flag.name) == 1 else "--"
        spelled = f"{dash}{flag.name}" + (f"={flag.metavar}" if flag.metavar else "")
        lines.append(f"  {spelled:<38} {flag.help}")
    lines += ["", "PASSES (graphfuse; see --list-passes for their options; upstream MLIR passes are accepted "
              "by their mlir-opt names, e.g. --canonicalize, --cse):"]
    lines += [f"  --{cls.name:<36} {cls.summary}" for cls in all_passes()]
    return "\n".join(lines) + "\n"


def list_passes_text() -> str:
    out = ["graphfuse passes (run as --NAME, or NAME{option=value ...} in --pass-pipeline):"]
    for cls in all_passes():
        out.append(f"  {cls.name}")
        out.append(f"      {cls.summary}")
        for info in cls.option_infos():
            default = cls().to_text(all_options=True)  # noqa: F841  (kept simple below)
            out.append(f"      {info.flag}=<{info.type_text}>  {info.help} (default: {_default_text(info.default)})")
        for stat, description in cls.statistics.items():
            out.append(f"      statistic {stat}: {description}")
    return "\n".join(out) + "\n"


def _default_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value) or "(empty)"
    return str(value)


def version_text() -> str:
    bindings = metadata.version("xtc-mlir-python-bindings")
    return f"{TOOL} version {metadata.version('graphfuse')}\n  MLIR Python bindings {bindings}\n"


# -- processing -----------------------------------------------------------------


@dataclass
class Chunk:
    text: str
    first_line: int  # 0-based line of the chunk's first line in the whole input


def split_chunks(text: str, marker: str) -> list[Chunk]:
    chunks, current, start = [], [], 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if line.strip() == marker:
            chunks.append(Chunk("".join(current), start))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append(Chunk("".join(current), start))
    return chunks


@dataclass
class ChunkResult:
    output: str | bytes | None  # printed module (bytecode with --emit-bytecode), None when the chunk failed
    diagnostics: list[Diagnostic]


class Driver:
    def __init__(self, opts: Options, options: CompileOptions, context: ir.Context, display_name: str):
        self.opts = opts
        self.context = context
        self.display_name = display_name
        self.collected: list[Diagnostic] = []
        text = opts.pipeline
        if text is None and opts.pass_flags:
            text = "builtin.module(" + ",".join(opts.pass_flags) + ")"
        self.switches = options.switches(flags_source="--graph-kernel-flags")
        self.pipeline = (
            Pipeline(text, context, opts.instrumentation, on_warning=self.collected.append,
                     switches=self.switches, dump_dir=opts.dump_dir)
            if text is not None else None  # an empty --pass-pipeline is an error, as in mlir-opt
        )
        #: seconds spent parsing and printing: the Parser and Output rows of --mlir-timing
        self.parse_seconds = 0.0
        self.output_seconds = 0.0

    def rerun_options(self) -> list[str]:
        """The flags besides the pipeline that a rerun needs: pass plugins and fusion switches."""
        options = [f"--load-pass-plugin={path}" for path in self.opts.pass_plugins]
        if self.opts.graph_kernel_flags is not None:
            options.append(f"--graph-kernel-flags={self.opts.graph_kernel_flags}")
        if self.opts.fusion_switch_file is not None:
            options.append(f"--fusion-switch-file={self.opts.fusion_switch_file}")
        return options

    def reproducer(self) -> str:
        parts = [TOOL, *(shlex.quote(o) for o in self.rerun_options()),
                 f"--pass-pipeline={shlex.quote(self.pipeline.text)}"]
        if self.opts.split_input_file:
            parts.append("--split-input-file")
        parts.append(shlex.quote(self.opts.input))
        return " ".join(parts)

    def process(self, chunk: Chunk) -> ChunkResult:
        self.collected.clear()
        output, diagnostics = self._process(chunk)
        located = [relocate(d, self.display_name) for d in [*self.collected, *diagnostics]]
        return ChunkResult(output, located)

    def _process(self, chunk: Chunk) -> tuple[str | bytes | None, list[Diagnostic]]:
        start = time.perf_counter()
        try:
            module = parse_module(chunk.text, self.display_name, self.context, chunk.first_line)
        except GraphfuseError as error:
            return None, error.diagnostics
        finally:
            self.parse_seconds += time.perf_counter() - start
        if self.pipeline is not None:
            before = module.operation.get_asm() if self.opts.crash_reproducer else None
            try:
                self.pipeline.run(module)
            except PipelineFailure as failure:
                if before is not None:  # mlir-opt's crash reproducer: the module, then the pipeline it failed in
                    _write_output(self.opts.crash_reproducer, before + _reproducer_resources(self.pipeline.text,
                                                                                             self.opts))
                    failure = failure.with_note(f"reproducer generated at `{self.opts.crash_reproducer}`")
                if self.opts.input == "-":  # no file to name: save this chunk as the reproducer
                    failure.reproducer = Reproducer(chunk.text, self.pipeline.text, failure.step)
                    saved = save_reproducer(failure, self.opts.repro_dir, reproducer_stem(self.opts.input),
                                            self.rerun_options())
                    return None, saved.diagnostics
                return None, failure.with_note(f"reproduce with: {self.reproducer()}").diagnostics
        start = time.perf_counter()
        with self.context:  # locations name the input file, not the parser's buffer "-"
            if self.opts.emit_bytecode:
                text: str | bytes = module_bytecode(module, self.display_name)
            else:
                printed = module.operation
                if self.opts.no_implicit_module and not _explicit_module(chunk.text):
                    top = list(module.body.operations)
                    if len(top) != 1:
                        # (at line 0 like mlir-opt: the whole buffer, not a place in it)
                        return None, [Diagnostic("error", "source must contain a single top-level operation, found: "
                                                 f"{len(top)}", SourceLoc(self.display_name, 0, 0))]
                    printed = top[0].operation.detach_from_parent()  # the top-level op, printed as one
                text = printed.get_asm(**self.opts.print_options())
                if self.opts.print_debuginfo:
                    text = name_parsed_buffer(text, self.display_name)
        self.output_seconds += time.perf_counter() - start
        return text, []


def _reproducer_resources(pipeline: str, opts: Options) -> str:
    """The ``mlir_reproducer`` resource mlir-opt appends to a reproducer (``--run-reproducer`` reads it)."""
    quoted = pipeline.replace("\\", "\\\\").replace('"', '\\"')
    return (f'\n{{-#\n  external_resources: {{\n    mlir_reproducer: {{\n      pipeline: "{quoted}",\n'
            f"      disable_threading: {'true' if opts.disable_threading else 'false'},\n"
            f"      verify_each: {'true' if opts.instrumentation.verify_each else 'false'}\n    }}\n  }}\n#-}}\n")


_REPRODUCER = re.compile(r"\{-#.*?mlir_reproducer\s*:\s*\{(?P<body>.*?)#-\}", re.S)


def reproducer_options(text: str) -> tuple[str, bool, bool] | None:
    """(pipeline, disable_threading, verify_each) of the ``mlir_reproducer`` resource in ``text``, or None."""
    found = _REPRODUCER.search(text)
    if found is None:
        return None
    body = found.group("body")  # (up to the end of the metadata: the pipeline may hold braces)
    pipeline = re.search(r'pipeline\s*:\s*"((?:[^"\\]|\\.)*)"', body)
    if pipeline is None:
        if re.search(r"\bpipeline\s*:", body):
            raise UsageError("the reproducer's mlir_reproducer.pipeline must be a string")
        return None

    def flag(name: str, default: bool) -> bool:
        value = re.search(rf"\b{name}\s*:\s*([^,\s}}]*)", body)
        if value is None:
            return default
        if value.group(1) not in ("true", "false"):
            raise UsageError(f"the reproducer's mlir_reproducer.{name} must be true or false, got "
                             f"'{value.group(1)}'")
        return value.group(1) == "true"

    text_pipeline = re.sub(r"\\(.)", r"\1", pipeline.group(1))
    return text_pipeline, flag("disable_threading", False), flag("verify_each", True)


_LEADING_COMMENTS = re.compile(r"(?:\s+|//[^\n]*)*")


def _explicit_module(text: str) -> bool:
    """Whether the input's first operation is a module written out (not one the parser wraps around)."""
    rest = text[_LEADING_COMMENTS.match(text).end():]
    return rest.startswith(("module", '"builtin.module"'))


# -- --verify-diagnostics ---------------------------------------------------------

_EXPECTED = re.compile(r"expected-(error|warning|note|remark)\s*(?:@(above|below|[+-]?\d+))?\s*\{\{(.*?)\}\}")


@dataclass
class Expectation:
    severity: str
    line: int  # 1-based line the diagnostic must be reported at
    message: str
    where: SourceLoc  # the annotation itself
    matched: bool = False


def expectations(chunk: Chunk, display_name: str) -> list[Expectation]:
    found = []
    for index, line in enumerate(chunk.text.splitlines()):
        number = chunk.first_line + index + 1
        for match in _EXPECTED.finditer(line):
            severity, offset, message = match.groups()
            target = number
            if offset == "above":
                target = number - 1
            elif offset == "below":
                target = number + 1
            elif offset is not None:
                target = number + int(offset) if offset[0] in "+-" else int(offset)
            found.append(Expectation(severity, target, message, SourceLoc(display_name, number, match.start() + 1)))
    return found


def check_expectations(result: ChunkResult, expected: list[Expectation]) -> list[Diagnostic]:
    """mlir-opt's verifier handler: every diagnostic expected, every expectation produced."""
    problems = []
    for diag in result.diagnostics:
        match = next(
            (
                e for e in expected
                if not e.matched and e.severity == diag.severity and diag.location is not None
                and e.line == diag.location.line and e.message in diag.message
            ),
            None,
        )
        if match is not None:
            match.matched = True
        else:
            problems.append(Diagnostic("error", f"unexpected {diag.severity}: {diag.message}", diag.location))
    for e in expected:
        if not e.matched:
            problems.append(Diagnostic("error", f'expected {e.severity} "{e.message}" was not produced', e.where))
    return problems


# -- main -------------------------------------------------------------------------


def _main(argv: list[str]) -> int:
    started = time.perf_counter()  # --mlir-timing's Total
    context = make_context()
    for path in _plugin_paths(argv):
        load_pass_plugin(path)
    opts = parse_args(argv, context)
    if opts.disable_threading:
        context.enable_multithreading(False)
    opts.instrumentation.print_options = opts.print_options()
    if opts.help:
        sys.stdout.write(help_text())
        return 0
    if opts.version:
        sys.stdout.write(version_text())
        return 0
    if opts.list_passes:
        sys.stdout.write(list_passes_text())
        return 0
    # the compile's options, resolved once: the switches of MS_DEV_GRAPH_KERNEL_FLAGS, --graph-kernel-flags and
    # --fusion-switch-file (or FUSION_SWITCH_FILE), this machine's threads and streaming
    options = resolve_options(graph_kernel_flags=opts.graph_kernel_flags, fusion_switch_file=opts.fusion_switch_file,
                              strict_flags=opts.strict_flags)
    if opts.print_cpu_pipeline is not None:
        from graphfuse.lowering.buffer_pool import buffer_pool_library
        from graphfuse.lowering.codegen.cpu.pipeline import cpu_pipeline_text  # the code generator's imports

        pooled = buffer_pool_library() is not None  # as graphfuse.compile's JIT code allocates
        sys.stdout.write(cpu_pipeline_text(opts.print_cpu_pipeline, options.threads, options.streaming, pooled) + "\n")
        return 0
    for path in opts.dialect_plugins:
        load_dialect_plugin(path, context)
    for path in opts.irdl_files:
        register_irdl_dialects(Path(path), context)
    if opts.show_dialects:
        sys.stdout.write(f"Available Dialects: {','.join(registered_dialects(context))}\n")
        return 0
    context.allow_unregistered_dialects = opts.allow_unregistered
    try:
        log.configure(opts.log_level)
    except ValueError as error:
        raise UsageError(str(error)) from None
    # -o may rewrite the input in place (read whole first, as mlir-opt does); the reports may not, and no two
    # outputs may be one file.
    reports = [(what, path) for what, path in (("fusion result file", opts.fusion_result),
                                               ("crash reproducer", opts.crash_reproducer)) if path is not None]
    check_distinct_files([("input file", opts.input)], reports)
    check_distinct_files([], [("output file", opts.output), *reports])
    source = read_input(opts.input)
    text, display_name = source.text, source.filename
    if opts.run_reproducer:  # the reproducer's pipeline and options, as mlir-opt --run-reproducer takes them
        carried = reproducer_options(text)
        if carried is None:
            raise UsageError(f"'--run-reproducer': '{opts.input}' carries no mlir_reproducer resource")
        opts.pipeline, threads_off, opts.instrumentation.verify_each = carried
        opts.pass_flags = []
        if threads_off:
            context.enable_multithreading(False)
    printer = DiagnosticPrinter(TOOL)
    printer.add_source(display_name, text)
    # Logs (e.g. why a pattern did not fuse) locate ops of the parsed buffer "-" in the input file.
    set_parsed_buffer_name(display_name)
    driver = Driver(opts, options, context, display_name)
    switch_file = driver.switches.switch_file
    for diag in [*driver.switches.flags.warnings, *(switch_file.warnings if switch_file else [])]:
        printer.print(diag)
    if opts.dump_pass_pipeline and driver.pipeline is not None:
        sys.stderr.write(f"Pass Manager with {len(driver.pipeline.steps)} passes:\n{driver.pipeline.full_text()}\n")
    chunks = split_chunks(text, opts.split_marker) if opts.split_input_file else [Chunk(text, 0)]
    outputs: list[str] = []
    failed = False
    for chunk in chunks:
        result = driver.process(chunk)
        if opts.verify_diagnostics:
            problems = check_expectations(result, expectations(chunk, display_name))
        else:
            problems = [d for d in result.diagnostics]
            failed |= any(d.severity == "error" for d in result.diagnostics)
        failed |= opts.verify_diagnostics and bool(problems)
        for diag in problems:
            printer.print(diag)
        if result.output is not None:
            outputs.append(result.output)
    for diag in driver.switches.warnings:
        printer.print(diag)
    if driver.pipeline is not None and opts.fusion_result:
        _write_output(opts.fusion_result, json.dumps(driver.pipeline.fusion_result(), indent=2, sort_keys=True))
    if driver.pipeline is not None and driver.pipeline.has_run and opts.instrumentation.statistics:
        sys.stderr.write(driver.pipeline.statistics_report())
    if driver.pipeline is not None and opts.instrumentation.timing:
        sys.stderr.write(driver.pipeline.timing_report(
            time.perf_counter() - started,
            before=[ReportNode("Parser", wall=driver.parse_seconds, user=driver.parse_seconds)],
            after=[ReportNode("Output", wall=driver.output_seconds, user=driver.output_seconds)]))
    if outputs or not failed:  # like mlir-opt, a run that produced nothing leaves no output file
        bytecode = opts.emit_bytecode and outputs  # one module (no --split-input-file)
        # each module printed then a blank line, chunks separated by the marker: mlir-opt's output byte for byte
        _write_output(opts.output, outputs[0] if bytecode else "".join(
            f"{text}\n" + (f"{SPLIT_MARKER}\n" if k + 1 < len(outputs) else "") for k, text in enumerate(outputs)))
    return 1 if failed else 0


def _write_output(path: str, text: str | bytes) -> None:
    if isinstance(text, str) and text and not text.endswith("\n"):
        text += "\n"
    write_output(path, text)  # a file whole or not at all: a failed write leaves the old file


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_tool(TOOL, _main, argv))


if __name__ == "__main__":
    main()
