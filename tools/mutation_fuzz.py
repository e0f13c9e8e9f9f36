"""Mutation fuzzing of the file readers: MLIR bytecode and ONNX models with a few bytes changed.

    python -m graphfuse.tools.fuzz --mutate bytecode --count 10000 [--seed 0]
    python -m graphfuse.tools.fuzz --mutate onnx --count 10000 [--seed 0]

The seeds are the bundled models as bytecode (``graphfuse.tools.models``) and
models of ONNX's own backend tests (the ``model.onnx`` files its wheel ships:
simple graphs, PyTorch operators and converted PyTorch models).
Mutation ``i`` of run ``S`` takes seed file ``i mod n`` and changes, inserts
or deletes 1 to 8 bytes, or cuts the file short, chosen by ``random.Random("S:i")``:
reproducible from ``(S, i)`` alone.  Each case is read in a child process forked from a fork server
(bytecode by ``parse_module``, ONNX by ``convert_model``), so a crash is
counted as one: the outcomes are ``read`` (a valid file), ``error`` (a
GraphfuseError: the expected answer to a broken file), ``traceback`` (any
other exception), ``signal`` (the reader killed the process) and ``hang`` (no
answer within ``--case-timeout``).  Only the first two are acceptable; the
exit status is 1 when any other occurs, and each such case is printed with
the command that re-runs it.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import random
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mlir import ir

__all__ = ["KINDS", "OUTCOMES", "Mutation", "mutate", "run_mutations", "seed_files"]

#: What can be fuzzed: the reader each kind of file goes through.
KINDS = ("bytecode", "onnx")
#: Outcomes of a case, the acceptable ones first.
OUTCOMES = ("read", "error", "traceback", "signal", "hang")
#: ONNX backend models used as seeds (a spread over the folders), each at most ONNX_SEED_BYTES.
ONNX_SEED_CASES = 40
ONNX_SEED_BYTES = 64 << 10


@dataclass(frozen=True)
class Mutation:
    kind: str
    seed: int
    index: int
    data: bytes
    #: which seed file, and what was done to it
    description: str


@cache
def seed_files(kind: str) -> tuple[tuple[str, bytes], ...]:
    """(name, bytes) of the files mutations start from."""
    if kind == "bytecode":
        from graphfuse.tools import models

        root = Path(models.__file__).parents[1]  # as the locations spell it (co_filename, not resolved)
        return tuple((name, _checkout_independent_bytecode(build().module, root))
                     for name, build in sorted(models.MODELS.items()))
    import onnx

    root = Path(onnx.__file__).parent / "backend" / "test" / "data"
    files = [path for folder in ("simple", "pytorch-operator", "pytorch-converted")
             for path in sorted(root.glob(f"{folder}/*/model.onnx")) if path.stat().st_size <= ONNX_SEED_BYTES]
    step = max(1, len(files) // ONNX_SEED_CASES)
    return tuple((path.parent.name, path.read_bytes()) for path in files[::step][:ONNX_SEED_CASES])


def _checkout_independent_bytecode(module: ir.Module, root: Path) -> bytes:
    """The module as bytecode with its file locations relative to ``root``: the seeds, and so mutation ``i``, are
    the same bytes in every checkout (absolute paths would shift every offset)."""
    from mlir import ir

    from graphfuse.dialect.parsing import module_bytecode

    asm = module.operation.get_asm(enable_debug_info=True).replace(f'loc("{root}/', 'loc("')
    return module_bytecode(ir.Module.parse(asm, module.context))


def mutate(kind: str, seed: int, index: int) -> Mutation:
    """Mutation ``index`` of run ``seed``: a seed file with 1 to 8 bytes changed, inserted or deleted, or cut."""
    seeds = seed_files(kind)
    name, original = seeds[index % len(seeds)]
    rng = random.Random(f"{seed}:{index}")
    data = bytearray(original)
    changes = []
    for _ in range(rng.randint(1, 8)):
        action = rng.choice(("set", "set", "set", "flip", "insert", "delete", "cut"))
        # bytecode keeps its magic number (else it is not read as bytecode at all)
        at = rng.randrange(4 if kind == "bytecode" else 0, max(5, len(data)))
        at = min(at, len(data) - 1)
        if action == "set":
            data[at] = rng.randrange(256)
        elif action == "flip":
            data[at] ^= 1 << rng.randrange(8)
        elif action == "insert":
            data[at:at] = bytes([rng.randrange(256)])
        elif action == "delete" and len(data) > 5:
            del data[at]
        elif action == "cut":
            del data[max(at, 5):]
        changes.append(f"{action}@{at}")
    return Mutation(kind, seed, index, bytes(data), f"{name}: {', '.join(changes)}")


def _read(kind: str, data: bytes) -> None:
    """What the tools do with such a file: parse and verify it, or import it."""
    if kind == "bytecode":
        from graphfuse.dialect.parsing import parse_module

        parse_module(data, "fuzzed.mlirbc")
    else:
        from graphfuse.frontends.onnx import convert_model

        convert_model(data)


@cache
def _processes() -> multiprocessing.context.BaseContext:
    """Where each case is read: a child forked from a fork server, a fresh interpreter with the readers imported.

    A child forked from the caller itself inherited whatever the caller had done: in a test process that had run
    other tests before, children reading valid mutations crashed (SIGSEGV in the verifier's Python code) where the
    same cases read fine from a fresh process.  The fork server starts once; each child is forked from it.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["graphfuse.tools.mutation_fuzz", "graphfuse.dialect.parsing"])
    return context


def _read_case(kind: str, data: bytes, answer: multiprocessing.connection.Connection) -> None:
    """In the child: read the file, send the outcome (a crash sends nothing)."""
    from graphfuse.dialect.diagnostics import GraphfuseError

    try:
        _read(kind, data)
        report = ("read", "")
    except GraphfuseError:
        report = ("error", "")
    except BaseException as error:  # what the tools would show as a traceback
        report = ("traceback", "".join(traceback.format_exception_only(error)).strip())
    answer.send(report)
    answer.close()


def run_case(mutation: Mutation, timeout: float) -> tuple[str, str]:
    """(outcome, detail) of reading ``mutation`` in a child process (:func:`_processes`)."""
    processes = _processes()
    answers, answer = processes.Pipe(duplex=False)
    child = processes.Process(target=_read_case, args=(mutation.kind, mutation.data, answer))
    child.start()
    answer.close()
    if not answers.poll(timeout):
        child.kill()
        child.join()
        answers.close()
        return "hang", f"no answer in {timeout:g} s"
    try:
        outcome, detail = answers.recv()
    except EOFError:  # the child died before answering
        outcome, detail = "", ""
    answers.close()
    child.join()
    if child.exitcode is not None and child.exitcode < 0:
        return "signal", signal.Signals(-child.exitcode).name
    return (outcome or "signal"), detail


def run_mutations(kind: str, count: int, seed: int = 0, first: int = 0, timeout: float = 60.0,
                  report: Callable[[str], None] = print) -> Counter:
    """Read ``count`` mutations of ``kind``; report each unacceptable case; return the outcome counts."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    tally: Counter = Counter()
    for index in range(first, first + count):
        mutation = mutate(kind, seed, index)
        outcome, detail = run_case(mutation, timeout)
        tally[outcome] += 1
        if outcome not in ("read", "error"):
            report(f"{outcome}: {kind} mutation {index} of seed {seed} ({mutation.description}): {detail}\n"
                   f"  re-run: python -m graphfuse.tools.fuzz --mutate {kind} --seed {seed} --first {index} --count 1")
    return tally


def main_mutations(kind: str, count: int, seed: int, first: int, timeout: float) -> int:
    """The ``--mutate`` mode of ``graphfuse.tools.fuzz``: a table of outcomes; 1 when a case crashed or hung."""
    start = time.perf_counter()
    tally = run_mutations(kind, count, seed, first, timeout, report=lambda line: print(line, flush=True))
    seconds = time.perf_counter() - start
    print(f"{kind}: {count} mutations in {seconds:.0f} s: "
          + ", ".join(f"{outcome} {tally[outcome]}" for outcome in OUTCOMES))
    sys.stdout.flush()
    return 1 if any(tally[outcome] for outcome in OUTCOMES[2:]) else 0
