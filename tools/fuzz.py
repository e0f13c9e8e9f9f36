"""Differential fuzzing of the whole compiler: random graphs x random switch sets, against the reference interpreter.

    python -m graphfuse.tools.fuzz --count 10000 [--seed 0] [--switch-sets 2] [--compile-every 25]
                                   [--npu-every 100] [--compile-max-ops 300] [--structure-rate 0.25]
                                   [--max-structure-ops 2000] [--workers 1] [--failures-dir DIR]
    python -m graphfuse.tools.fuzz --seed 0 --case 1234          # re-run one case here, verbosely
    python -m graphfuse.tools.fuzz --mutate bytecode --count 10000  # the file readers instead (mutation_fuzz)

Graph ``i`` of seed ``S`` is ``generate_graph(RandomChooser("S:i"))`` and its
switch set ``j`` is ``random_switch_set(RandomChooser("S:i:j"))``
(:mod:`graphfuse.tools.random_graphs`), so every case is reproducible from
``(S, i)`` alone (and the size options).  A quarter of the graphs
(``--structure-rate``) are of the structure family: 40 to 2000 ops with the
value reuse, diamonds, fan-in, fan-out and long chains of real graphs.  For
each pair the graph pipeline runs with the switch set's flags and switch file
(every pass verified after it runs: invalid IR is an outcome of its own), the
fused graph is
run by the reference interpreter and compared with the unfused graph's results
within the documented tolerances; every ``--compile-every``-th graph of at
most ``--compile-max-ops`` ops is also compiled to CPU code
(``graphfuse.compile``, by the switch set's opt level or its pipeline) and
run, and every ``--npu-every``-th for the emulated NPU
(``graphfuse.lowering.npu.compile_npu``).

Cases run in worker subprocesses that report each case before and after it
runs, so a process abort (SIGABRT from an assertion in the bindings) or a hang
is pinned to its case, counted, and the worker restarted after it.  Failing
cases are written to ``--failures-dir`` (the graph as MLIR, its inputs as
.npz, the switch set, the message) with the command that re-runs them.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import run_function
from graphfuse.pipelines.fusion.switches import FusionSwitches
from graphfuse.pipelines.runner import PipelineFailure, run_pipeline, verify_module
from graphfuse.tools.mutation_fuzz import KINDS, main_mutations
from graphfuse.tools.random_graphs import (
    STRUCTURE_RATE,
    GraphCase,
    RandomChooser,
    SwitchSet,
    compare_results,
    generate_graph,
    random_switch_set,
)
from graphfuse.tools.reporting import UsageError, run_tool

#: Outcome kinds, in the order of the final table; "verifier" is invalid IR: the verifier rejected what a pass left.
OUTCOMES = ("ok", "mismatch", "verifier", "error", "abort", "timeout")


@dataclass
class Outcome:
    """What one (graph, switch set) run gave: ``kind`` is one of :data:`OUTCOMES`."""

    kind: str
    message: str = ""
    pipelines: int = 0
    compiled: int = 0
    #: fusion passes and kernel steps that changed something, for coverage statistics
    fired: list[str] = field(default_factory=list)
    #: a compile hit a documented limitation (:data:`UNSUPPORTED`)
    unsupported: bool = False


def _switches(switch_set: SwitchSet, workdir: Path) -> tuple[FusionSwitches, Path | None]:
    path = None
    if switch_set.switch_file:
        path = workdir / "fusion_switch.cfg"
        path.write_text(switch_set.switch_file)
    # The switch set alone: the fuzzer's own environment must not change what a case runs.
    return FusionSwitches.from_sources(switch_set.flags, path, environ={}), path


#: Errors that are documented limitations, not bugs: the run is counted as "unsupported" (none at present:
#: booleans, once refused by the emulated NPU, run there as bytes).
UNSUPPORTED: tuple[str, ...] = ()


def invalid_ir(error: GraphfuseError) -> bool:
    """Whether ``error`` is the verifier rejecting the IR a pass left (the pipeline runner verifies after every
    pass, graph and lowering passes alike, and notes "after pass '<name>'"), rather than a pass failing."""
    return any(note.message.startswith("after pass '") for d in error.diagnostics for note in d.notes)


def failure_kind(error: GraphfuseError) -> str:
    return "verifier" if invalid_ir(error) else "error"


def check_case(case: GraphCase, switch_set: SwitchSet, compile_it: bool = False, npu: bool = False,
               workdir: Path | None = None) -> Outcome:
    """Run the differential properties for one graph and one switch set (see the module docstring).

    ``compile_it`` also compiles the graph to CPU code, ``npu`` for the emulated NPU, and compares their results.
    """
    with tempfile.TemporaryDirectory(prefix="graphfuse-fuzz-") as tmp:
        workdir = workdir or Path(tmp)
        module = case.build()
        diagnostics = verify_module(module)
        if diagnostics:
            return Outcome("verifier", f"the generated graph does not verify: {diagnostics[0]}")
        reference = case.output_values()
        unfused = run_function(module, case.inputs)
        problems = compare_results(reference, unfused, "interpreter on the unfused graph")
        if problems:
            return Outcome("mismatch", "; ".join(problems))
        switches, switch_path = _switches(switch_set, workdir)
        outcome = Outcome("ok")
        try:
            runner = run_pipeline(module, switch_set.pipeline, switches=switches, repro_dir=str(workdir))
        except PipelineFailure as failure:
            if invalid_ir(failure):
                return Outcome("verifier", f"invalid IR after {failure.step}: {failure.diagnostics[0]}", 1)
            return Outcome("error", f"pipeline failed in {failure.step}: {failure.diagnostics[0]}", 1)
        outcome.pipelines = 1
        outcome.fired = sorted(
            {pass_name for record in runner.records for (_, pass_name, _), (_, effected) in record.fusion.items()
             if effected}
            | {f"{record.step.argument}.{name}" for record in runner.records
               for name, value in record.statistics.items() if value}
        )
        try:
            fused = run_function(module, case.inputs)
        except GraphfuseError as error:
            return Outcome("error", f"interpreter on the fused graph: {error}", 1)
        problems = compare_results(reference, fused, "interpreter on the fused graph")
        if problems:
            return Outcome("mismatch", "; ".join(problems), 1, fired=outcome.fired)
        if compile_it:
            compiled = _compiled_outcome(case, switch_set, switch_path, reference, npu=False)
            if compiled.kind != "ok":
                return Outcome(compiled.kind, compiled.message, 1, 1, outcome.fired)
            outcome.compiled += 1
        if npu:
            compiled = _compiled_outcome(case, switch_set, switch_path, reference, npu=True)
            if compiled.kind not in ("ok", "unsupported"):
                return Outcome(compiled.kind, compiled.message, 1, outcome.compiled + 1, outcome.fired)
            outcome.compiled += compiled.kind == "ok"
            outcome.unsupported = compiled.kind == "unsupported"
        return outcome


def _compiled_outcome(case: GraphCase, switch_set: SwitchSet, switch_path: Path | None, reference: list,
                      npu: bool) -> Outcome:
    """Compile for the CPU (graphfuse.compile) or the emulated NPU (compile_npu), run, compare."""
    import graphfuse
    from graphfuse.lowering.compiler import clear_cache

    what = "emulated NPU" if npu else "compiled CPU code"
    options = {"graph_kernel_flags": switch_set.flags or None, "fusion_switch_file": switch_path}
    if switch_set.compile_opt_level is not None:
        options["opt_level"] = switch_set.compile_opt_level
    else:
        options["pipeline"] = switch_set.pipeline
    try:
        if npu:
            from graphfuse.lowering.npu.compiler import compile_npu

            executable = compile_npu(case.build(), **options)
        else:
            executable = graphfuse.compile(case.build(), **options)
        got = executable(*case.inputs)
    except GraphfuseError as error:
        if any(text in str(error) for text in UNSUPPORTED):
            return Outcome("unsupported", f"{what}: {error}")
        if invalid_ir(error):
            return Outcome("verifier", f"{what}: invalid IR after {_failed_step(error)}: {error}")
        return Outcome("error", f"{what}: {error}")
    finally:
        clear_cache()  # one executable per case: keep a long run's memory flat
    problems = compare_results(reference, got, what)
    return Outcome("mismatch", "; ".join(problems)) if problems else Outcome("ok")


def _failed_step(error: GraphfuseError) -> str:
    return error.step if isinstance(error, PipelineFailure) else "a pass"


def case_seed(seed: int, index: int) -> str:
    return f"{seed}:{index}"


def make_case(seed: int, index: int, max_ops: int = 14, structure_rate: float = STRUCTURE_RATE,
              max_structure_ops: int = 2000) -> GraphCase:
    return generate_graph(RandomChooser(case_seed(seed, index)), max_ops, structure_rate=structure_rate,
                          max_structure_ops=max_structure_ops)


def _case_of(args: argparse.Namespace, index: int) -> GraphCase:
    return make_case(args.seed, index, args.max_ops, args.structure_rate, args.max_structure_ops)


def _compiles(args: argparse.Namespace, case: GraphCase, index: int, every: int) -> bool:
    """Whether graph ``index`` is compiled too: every ``every``-th graph, up to --compile-max-ops ops (the CPU
    compile of a graph of thousands of ops takes minutes: such graphs run through the pipelines only)."""
    return every > 0 and index % every == 0 and case.op_count_needed <= args.compile_max_ops


def make_switch_set(seed: int, index: int, which: int) -> SwitchSet:
    return random_switch_set(RandomChooser(f"{case_seed(seed, index)}:{which}"))


# --------------------------------------------------------------------------
# Worker: runs cases [start, stop) and reports each on stdout as one JSON line.


def _worker(args: argparse.Namespace) -> int:
    out = sys.stdout
    for index in range(args.start, args.stop):
        case: GraphCase | None = None  # generated once for all its switch sets (a big one takes a second)
        for which in range(args.switch_sets):
            print(json.dumps({"event": "start", "index": index, "which": which}), file=out, flush=True)
            if index == args.abort_at:  # tests of the driver: die as an assertion in the bindings would
                os.abort()
            try:
                if case is None:
                    case = _case_of(args, index)
                compile_it = which == 0 and _compiles(args, case, index, args.compile_every)
                npu = which == 0 and _compiles(args, case, index, args.npu_every)
                outcome = check_case(case, make_switch_set(args.seed, index, which), compile_it, npu)
            except GraphfuseError as error:
                outcome = Outcome(failure_kind(error), str(error))
            except Exception as error:  # a bug in graphfuse (or the generator): report it, keep going
                detail = "".join(traceback.format_exception_only(error)).strip()
                outcome = Outcome("error", f"internal error: {detail}")
            record = {"event": "done", "index": index, "which": which, **outcome.__dict__}
            if case is not None:
                record.update(ops=case.op_count_needed, structure=bool(case.structure))
            print(json.dumps(record), file=out, flush=True)
    return 0


# --------------------------------------------------------------------------
# Driver.


@dataclass
class Tally:
    graphs: set[int] = field(default_factory=set)
    #: graphs of the structure family, and the most ops any graph had
    structure_graphs: set[int] = field(default_factory=set)
    most_ops: int = 0
    switch_sets: int = 0
    pipelines: int = 0
    compiled: int = 0
    unsupported: int = 0
    outcomes: Counter = field(default_factory=Counter)
    fired: Counter = field(default_factory=Counter)
    failures: list[dict] = field(default_factory=list)

    def add(self, record: dict) -> None:
        self.graphs.add(record["index"])
        if record.get("structure"):
            self.structure_graphs.add(record["index"])
        self.most_ops = max(self.most_ops, record.get("ops", 0))
        self.switch_sets += 1
        self.pipelines += record.get("pipelines", 0)
        self.compiled += record.get("compiled", 0)
        self.unsupported += record.get("unsupported", False)
        self.outcomes[record["kind"]] += 1
        self.fired.update(record.get("fired", []))
        if record["kind"] != "ok":
            self.failures.append(record)


class _Worker:
    """One worker subprocess running cases [next, stop)."""

    def __init__(self, args: argparse.Namespace, start: int, stop: int):
        self.args, self.next, self.stop = args, start, stop
        self.current: tuple[int, int] | None = None
        self.started = time.monotonic()
        self.process: subprocess.Popen | None = None
        self.spawn()

    def spawn(self) -> None:
        stop = min(self.next + self.args.batch, self.stop)  # a fresh process per batch keeps memory bounded
        command = [sys.executable, "-m", "graphfuse.tools.fuzz", "--worker", "--seed", str(self.args.seed),
                   "--start", str(self.next), "--stop", str(stop), "--switch-sets", str(self.args.switch_sets),
                   "--compile-every", str(self.args.compile_every), "--npu-every", str(self.args.npu_every),
                   "--compile-max-ops", str(self.args.compile_max_ops), *_size_options(self.args)]
        if self.args.abort_at is not None:
            command += ["--abort-at", str(self.args.abort_at)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(self.process.stdout, self.lines), daemon=True).start()
        self.started = time.monotonic()

    @staticmethod
    def _read(stream, lines: queue.Queue) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)  # end of output: the process is exiting

    def poll(self, tally: Tally, on_failure) -> bool:
        """Read what the worker reported; restart it after an abort or a hang.  False once it is finished."""
        if self.process is None:
            return False
        exited = False
        while not self.lines.empty():
            line = self.lines.get()
            if line is None:
                exited = True
                self.process.wait()
                break
            record = json.loads(line)
            if record["event"] == "start":
                self.current = (record["index"], record["which"])
                self.started = time.monotonic()
            else:
                self.current = None
                tally.add(record)
                if record["kind"] != "ok":
                    on_failure(record)
                self.next = record["index"] + 1
        if not exited:
            if self.current is not None and time.monotonic() - self.started > self.args.case_timeout:
                self.process.kill()
                self.process.wait()
                self._lost("timeout", f"no result after {self.args.case_timeout:.0f} s", tally, on_failure)
            return True
        code = self.process.returncode
        if self.current is not None:  # died inside a case: an abort
            reason = f"signal {-code}" if code < 0 else f"exit status {code}"
            self._lost("abort", f"the worker process died ({reason})", tally, on_failure)
            return self.process is not None
        if code != 0:
            raise GraphfuseError(f"a worker exited with status {code} outside any case")
        self.process = None
        if self.next < self.stop:  # the batch is done: the next one in a fresh process
            self.spawn()
            return True
        return False

    def _lost(self, kind: str, message: str, tally: Tally, on_failure) -> None:
        """Count the case the worker was running as ``kind`` and restart the worker after its graph."""
        assert self.current is not None
        index, which = self.current
        record = {"event": "done", "index": index, "which": which, "kind": kind, "message": message}
        tally.add(record)
        on_failure(record)
        self.current = None
        self.next = index + 1  # the graph's remaining switch sets are skipped
        self.process = None
        if self.next < self.stop:
            self.spawn()


def _size_options(args: argparse.Namespace) -> list[str]:
    """The options that decide what graph a (seed, index) is: a case re-runs with them."""
    return ["--max-ops", str(args.max_ops), "--structure-rate", str(args.structure_rate),
            "--max-structure-ops", str(args.max_structure_ops)]


def write_failure(directory: Path, args: argparse.Namespace, record: dict) -> None:
    """The failing case as files: graph, inputs, switch set, message and the command that re-runs it."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = directory / f"case_{args.seed}_{record['index']}_{record['which']}"
    try:
        case = _case_of(args, record["index"])
        stem.with_suffix(".mlir").write_text(str(case.build()))
        np.savez(stem.with_suffix(".npz"), **{f"arg{k}": a for k, a in enumerate(case.inputs)})
        stem.with_suffix(".switches.json").write_text(make_switch_set(args.seed, record["index"],
                                                                      record["which"]).to_json())
    except Exception as error:  # the generator itself failed: the message still says what happened
        record = {**record, "message": f"{record['message']} (could not write the case: {error})"}
    command = (f"python -m graphfuse.tools.fuzz --seed {args.seed} --case {record['index']} --which "
               f"{record['which']} {' '.join(_size_options(args))}")
    stem.with_suffix(".txt").write_text(f"{record['kind']}: {record['message']}\nreproduce: {command}\n")


def _table(tally: Tally, seconds: float, args: argparse.Namespace) -> str:
    rows = [
        ("graphs", len(tally.graphs)),
        ("structure graphs", len(tally.structure_graphs)),
        ("most ops in a graph", tally.most_ops),
        ("switch sets", tally.switch_sets),
        ("pipelines run", tally.pipelines),
        ("compiled runs", tally.compiled),
        ("unsupported", tally.unsupported),
        ("mismatches", tally.outcomes["mismatch"]),
        ("invalid IR", tally.outcomes["verifier"]),
        ("errors", tally.outcomes["error"]),
        ("aborts", tally.outcomes["abort"]),
        ("timeouts", tally.outcomes["timeout"]),
        ("time", f"{seconds:.0f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"graphfuse fuzz: seed {args.seed}, {args.count} graphs x {args.switch_sets} switch sets, "
             f"compiled every {args.compile_every} (CPU), every {args.npu_every} (emulated NPU) up to "
             f"{args.compile_max_ops} ops; structure graphs {args.structure_rate:g} of them, up to "
             f"{args.max_structure_ops} ops"]
    lines += [f"  {name:<{width}}  {value}" for name, value in rows]
    return "\n".join(lines)


def _signatures(failures: list[dict]) -> Counter:
    """Failures grouped by kind and message, with the case-specific parts (numbers, types) blotted out."""
    signatures: Counter = Counter()
    for record in failures:
        first = record["message"].splitlines()[0] if record["message"] else ""
        first = re.sub(r"\(bufferized signature .*", "", first)
        first = re.sub(r"tensor<[^>]*>|memref<[^>]*>|-?\d+(\.\d+)?(e[-+]?\d+)?", "#", first)
        signatures[(record["kind"], first[:160])] += 1
    return signatures


def _drive(args: argparse.Namespace) -> int:
    failures_dir = Path(args.failures_dir)
    tally = Tally()
    start = time.monotonic()
    last_report = start

    def on_failure(record: dict) -> None:
        write_failure(failures_dir, args, record)
        print(f"  case {record['index']}/{record['which']}: {record['kind']}: {record['message'][:300]}", flush=True)

    first, last = args.first, args.first + args.count
    per_worker = -(-args.count // max(1, args.workers))
    workers = [_Worker(args, a, min(a + per_worker, last)) for a in range(first, last, per_worker)]
    while workers:
        workers = [w for w in workers if w.poll(tally, on_failure)]
        now = time.monotonic()
        if now - last_report > args.progress_seconds:
            last_report = now
            bad = sum(v for k, v in tally.outcomes.items() if k != "ok")
            print(f"  {len(tally.graphs)}/{args.count} graphs, {tally.switch_sets} switch sets, "
                  f"{tally.compiled} compiled, {bad} failing, {now - start:.0f} s", flush=True)
        time.sleep(0.05)
    print(_table(tally, time.monotonic() - start, args))
    if tally.failures:
        print("failures by kind and first line of the message:")
        for (kind, signature), count in _signatures(tally.failures).most_common():
            print(f"  {count:6}  {kind}: {signature}")
    if args.coverage:
        print("fusion passes / kernel steps that fired (switch sets):")
        for name, count in sorted(tally.fired.items()):
            print(f"  {name:<48} {count}")
    if tally.failures:
        print(f"failing cases written to {failures_dir}/")
    return 1 if tally.failures else 0


def reduce_case(case: GraphCase, still_fails: Callable[[GraphCase], bool]) -> GraphCase:
    """A smaller case on which ``still_fails`` holds: drop outputs, then cut ops into arguments, to a fixpoint."""
    changed = True
    while changed:
        changed = False
        for output in list(case.outputs):
            if len(case.outputs) > 1:
                smaller = case.with_changes(outputs=[o for o in case.outputs if o != output])
                if still_fails(smaller):
                    case, changed = smaller, True
        for node in reversed(case.needed_nodes()):
            if node.kind == "op":
                smaller = case.with_changes(cut=node)
                if still_fails(smaller):
                    case, changed = smaller, True
    return case


def _one_case(args: argparse.Namespace) -> int:
    """Re-run one case in this process and print everything about it."""
    case = _case_of(args, args.case)
    print(f"// {case.describe()}")
    print(case.build())
    which = range(args.switch_sets) if args.which is None else [args.which]
    status = 0
    for j in which:
        switch_set = make_switch_set(args.seed, args.case, j)
        compile_it = j == 0 and _compiles(args, case, args.case, args.compile_every)
        npu = j == 0 and _compiles(args, case, args.case, args.npu_every)
        print(f"// switch set {j}: {switch_set.to_json()}")
        outcome = check_case(case, switch_set, compile_it or args.compile, npu or args.compile)
        print(f"// {outcome.kind}: {outcome.message}  (fired: {', '.join(outcome.fired) or 'nothing'})")
        status |= outcome.kind != "ok"
        if args.reduce and outcome.kind not in ("ok", "abort", "timeout"):
            signature = _signatures([{"kind": outcome.kind, "message": outcome.message}])

            def still_fails(smaller: GraphCase, switch_set: SwitchSet = switch_set, signature: Counter = signature,
                            flags: tuple[bool, bool] = (compile_it or args.compile, npu or args.compile)) -> bool:
                try:
                    again = check_case(smaller, switch_set, *flags)
                except Exception:  # a different failure: not the one being reduced
                    return False
                return _signatures([{"kind": again.kind, "message": again.message}]) == signature

            reduced = reduce_case(case, still_fails)
            print(f"// reduced to {reduced.op_count_needed} ops, the same failure:")
            print(reduced.build())
    return status


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2 with a usage dump
        raise UsageError(message)


def _body(argv: list[str]) -> int:
    parser = _Parser(prog="python -m graphfuse.tools.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100, help="number of graphs (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="run seed; graph i is seeded by 'seed:i' (default 0)")
    parser.add_argument("--first", type=int, default=0, help="index of the first graph (default 0)")
    parser.add_argument("--switch-sets", type=int, default=2, help="random switch sets per graph (default 2)")
    parser.add_argument("--compile-every", type=int, default=25,
                        help="compile every K-th graph to CPU code too (0: never; default 25)")
    parser.add_argument("--npu-every", type=int, default=100,
                        help="compile every K-th graph for the emulated NPU too (0: never; default 100)")
    parser.add_argument("--max-ops", type=int, default=14, help="most generic steps per graph (default 14)")
    parser.add_argument("--structure-rate", type=float, default=STRUCTURE_RATE,
                        help=f"share of structure-family graphs (default {STRUCTURE_RATE:g})")
    parser.add_argument("--max-structure-ops", type=int, default=2000,
                        help="most ops of a structure-family graph (40 to this; default 2000)")
    parser.add_argument("--compile-max-ops", type=int, default=300,
                        help="compile only graphs of at most this many ops (default 300)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--batch", type=int, default=500, help="graphs per worker process (default 500)")
    parser.add_argument("--case-timeout", type=float, default=300.0, help="seconds before a case counts as hung")
    parser.add_argument("--failures-dir", default=str(Path(tempfile.gettempdir()) / "graphfuse-fuzz-failures"),
                        help="where failing cases go (default: graphfuse-fuzz-failures in the temp dir)")
    parser.add_argument("--progress-seconds", type=float, default=30.0, help="seconds between progress lines")
    parser.add_argument("--coverage", action="store_true", help="also print how often each fusion fired")
    parser.add_argument("--case", type=int, help="re-run graph CASE of --seed in this process, verbosely")
    parser.add_argument("--which", type=int, help="with --case: only this switch set")
    parser.add_argument("--reduce", action="store_true",
                        help="with --case: shrink a failing graph (drop outputs, cut ops) and print it")
    parser.add_argument("--compile", action="store_true",
                        help="with --case: compile every switch set (CPU and emulated NPU)")
    parser.add_argument("--mutate", choices=KINDS,
                        help="instead: mutation-fuzz the reader of this kind of file (graphfuse.tools.mutation_fuzz)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--abort-at", type=int, help=argparse.SUPPRESS)  # testing the driver: abort at this graph
    parser.add_argument("--start", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stop", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case is None and (args.which is not None or args.reduce or args.compile):
        parser.error("--which, --reduce and --compile go with --case")
    if min(args.count, args.compile_every, args.npu_every) < 0 or min(args.switch_sets, args.workers, args.batch) < 1:
        parser.error("--count, --compile-every and --npu-every must be >= 0; --switch-sets, --workers, --batch >= 1")
    if not 0 <= args.structure_rate <= 1 or args.max_structure_ops < 40:
        parser.error("--structure-rate must be in [0, 1] and --max-structure-ops >= 40")
    if args.mutate is not None:
        return main_mutations(args.mutate, args.count, args.seed, args.first, min(args.case_timeout, 60.0))
    if args.worker:
        return _worker(args)
    if args.case is not None:
        return _one_case(args)
    return _drive(args)


def main(argv: list[str] | None = None) -> int:
    return run_tool("graphfuse fuzz", _body, argv)


if __name__ == "__main__":
    sys.exit(main())
