"""graphfuse-run: compile a graph module for the CPU, run it, check it against the reference interpreter, time it.

    graphfuse-run model.mlir [--entry NAME] [--inputs x.npz | --random] [--check] [--repeat N]
                  [--output y.npz] [--opt-level N | --pass-pipeline=...] [--graph-kernel-flags=...]
                  [--fusion-switch-file=...] [--rtol R] [--atol A] [--seed S]
                  [--target=cpu|npu] [--npu-target=NAME|PATH] [--no-double-buffer] [--repro-dir DIR]

The graph is MLIR text or bytecode; ``-`` reads it from standard input (its
errors then name ``<stdin>``, as graphfuse-opt's).  The graph pipeline is the
fusing default of ``graphfuse.compile`` (opt level 2) unless ``--opt-level`` or
``--pass-pipeline`` says otherwise.  Inputs come from an ``.npz`` file or are
random (``--random``, the default when no file is given; ``--seed`` >= 0).
Argument k is the array named ``argK``, ``arr_K`` (np.savez's name for an
unnamed array) or the argument's own name when the module keeps it
(``graphfuse-import --mlir-print-debuginfo``); a missing one is an error, an
array no argument takes is a warning.  ``--output`` writes exactly the file
named (np.savez alone would append ``.npz``; ``-`` is refused: the report goes
to standard output).
``--check`` compares every result with the reference interpreter on the
unfused graph, output by output: exit 1 when an element's error exceeds
``--atol + --rtol * max|reference|`` (the largest magnitude of that output;
see :mod:`graphfuse.tools.accuracy`), printing the failing elements' count,
the worst one's index and both values.

``--target=npu`` compiles for the emulated NPU instead (``--npu-target``
picks the target description, default ``910b``) and prints a per-kernel
table: tiles, UB and L1 peaks, GM bytes read and written (counted while the
emulation runs) and the cost model's estimated time.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import ml_dtypes
import numpy as np

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, printable, source_loc
from graphfuse.dialect.files import atomic_output, check_distinct_files, sync_to_disk
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.parsing import input_source, relocate
from graphfuse.lowering.compiler import Executable, compile
from graphfuse.lowering.npu.compiler import NpuExecutable, compile_npu
from graphfuse.pipelines.opt_levels import OPT_LEVELS
from graphfuse.tools.accuracy import compare_output
from graphfuse.tools.reporting import REPRO_DIR_HELP, UsageError, reproducer_stem, reproducers_saved, run_tool

__all__ = ["load_inputs", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2 with a usage dump
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="graphfuse-run", description=__doc__.split("\n\n")[0], add_help=True)
    p.add_argument("input", help="graph-dialect .mlir or .mlirbc file; - reads standard input")
    p.add_argument("--entry", help="function to run (default: the first public one)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--inputs", help=".npz file with the input arrays")
    source.add_argument("--random", action="store_true", help="random inputs (the default without --inputs)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--check", action="store_true", help="compare with the reference interpreter")
    p.add_argument("--rtol", type=float, default=1e-4,
                   help="--check: allowed error relative to the output's largest reference magnitude, max|reference| "
                        "(default 1e-4); an element passes when |got - reference| <= atol + rtol * max|reference|")
    p.add_argument("--atol", type=float, default=1e-5,
                   help="--check: allowed absolute error on top, for outputs that are all near zero (default 1e-5)")
    p.add_argument("--repeat", type=int, default=1, help="timed calls (median printed)")
    p.add_argument("--output", help="save the results to this .npz file (out0, out1, ...; not -: standard output "
                   "takes the report)")
    level = p.add_mutually_exclusive_group()
    level.add_argument("--opt-level", type=int, choices=OPT_LEVELS, help="0 unfused ... 3 (default 2)")
    level.add_argument("--pass-pipeline", help="graph pipeline instead of the default")
    p.add_argument("--graph-kernel-flags", help="MS_DEV_GRAPH_KERNEL_FLAGS-style flags")
    p.add_argument("--fusion-switch-file", "--fusion_switch_file",
                   help="CANN fusion_switch.cfg (default: $FUSION_SWITCH_FILE; --fusion_switch_file is ATC's spelling)")
    p.add_argument("--target", choices=("cpu", "npu"), default="cpu", help="run on the CPU or the emulated NPU")
    p.add_argument("--npu-target", default="910b", help="NPU target description: a bundled name or a .json path")
    p.add_argument("--no-double-buffer", action="store_true", help="NPU: one slot per transferred tile")
    p.add_argument("--num-threads", type=int, metavar="N",
                   help="CPU: threads of the parallel loops (default: GRAPHFUSE_NUM_THREADS, else the cores available)")
    p.add_argument("--no-fast-math", action="store_true",
                   help="CPU: lower without the fast-math forms (FMA contraction, one reciprocal per row)")
    p.add_argument("--repro-dir", metavar="DIR", help=REPRO_DIR_HELP)
    return p


#: Values drawn at a time: numpy draws float64 (int64), cast into the input chunk by chunk, so an input costs its own
#: size; cast as a whole, an 800 MB f32 input held 2.4 GB while it was made.  Normals and uniforms come out the same.
_DRAW_CHUNK = 1 << 20


def _drawn(shape: tuple[int, ...], dtype: np.dtype, draw: Callable[[int], np.ndarray]) -> np.ndarray:
    array = np.empty(shape, dtype)
    flat = array.reshape(-1)
    for start in range(0, flat.size, _DRAW_CHUNK):
        flat[start:start + _DRAW_CHUNK] = draw(min(_DRAW_CHUNK, flat.size - start))
    return array


def _random_inputs(executable: Executable | NpuExecutable, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for k, (shape, dtype) in enumerate(executable.inputs):
        if None in shape:
            arg = functions(executable.source)[executable.entry].regions[0].blocks[0].arguments[k]
            raise GraphfuseError([relocate(Diagnostic(
                "error", f"argument {k} of @{executable.entry} ({arg.type}) has a dynamic shape: random inputs need "
                "static ones; pass --inputs", source_loc(arg.location)), getattr(executable, "filename", "<module>"))])
        if dtype == np.bool_:
            arrays.append(_drawn(shape, dtype, lambda n: rng.random(n) < 0.5))
        elif dtype.kind in "iu":
            arrays.append(_drawn(shape, dtype, lambda n: rng.integers(-8, 8, n)))
        elif dtype == ml_dtypes.bfloat16 or dtype.kind == "f":
            arrays.append(_drawn(shape, dtype, lambda n: rng.standard_normal(n).astype(np.float32)))
        else:
            raise UsageError(f"argument {k}: cannot make random values of dtype {dtype}")
    return arrays


def _warn(message: str) -> None:
    print(f"warning: {printable(message)}", file=sys.stderr)


def load_inputs(path: str, count: int, names: Sequence[str | None] = (),
                warn: Callable[[str], None] = _warn) -> list[np.ndarray]:
    """The ``count`` arguments of a function from the .npz file ``path``, matched by name, never by file order.

    Argument k is the array named ``argK``, ``arr_K`` (what np.savez calls its K-th unnamed array) or
    ``names[k]`` (the argument's own name, when known).  A missing or ambiguous argument is an error; arrays
    no argument takes are passed to ``warn``.
    """
    if Path(path).is_file() and not zipfile.is_zipfile(path):
        raise UsageError(f"'{path}' is not a readable .npz file: it is not a zip archive")
    try:
        with np.load(path, allow_pickle=False) as data:
            named = {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise UsageError(f"could not open input file '{path}'") from None
    except (ValueError, OSError, EOFError) as error:  # EOFError: an empty stream (/dev/null)
        raise UsageError(f"'{path}' is not a readable .npz file: {error}") from None
    held = ", ".join(named) or "no arrays"
    inputs = []
    for k in range(count):
        own = names[k] if k < len(names) else None
        accepted = list(dict.fromkeys(n for n in (f"arg{k}", f"arr_{k}", own) if n))
        found = [n for n in accepted if n in named]
        if not found:
            wanted = " or ".join(f"'{n}'" for n in accepted)
            raise UsageError(f"'{path}' has no array for argument {k} (named {wanted}); it holds {held}")
        if len(found) > 1:
            raise UsageError(f"'{path}' has {len(found)} arrays for argument {k} ({', '.join(found)}); keep one")
        inputs.append(named.pop(found[0]))
    if named:
        warn(f"'{path}': array(s) {', '.join(named)} match no argument of the function and are ignored (argument k "
             "is read from the array argK, arr_K or the argument's own name)")
    return inputs


def _argument_names(executable: Executable | NpuExecutable) -> list[str | None]:
    """The entry's argument names where the module keeps them (a name location, as graphfuse-import writes)."""
    block = functions(executable.source)[executable.entry].regions[0].blocks[0]
    return [arg.location.name_str if arg.location.is_a_name() else None for arg in block.arguments]


def _check_arguments(args: argparse.Namespace) -> None:
    """Values argparse's types let through that would fail late or silently mislead."""
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    if args.num_threads is not None and args.num_threads < 1:
        raise UsageError(f"--num-threads must be a positive integer, got {args.num_threads}")
    if args.seed < 0:  # numpy's generators take no negative seed (a ValueError after compiling)
        raise UsageError(f"--seed must be a non-negative integer, got {args.seed}")
    for flag, value in (("--rtol", args.rtol), ("--atol", args.atol)):
        # NaN fails every comparison and a negative tolerance every element: the check would be meaningless.
        if not math.isfinite(value) or value < 0:
            raise UsageError(f"{flag} must be a non-negative finite number, got {value:g}")
    if args.output == "-":  # np.savez would write a file named "-"
        raise UsageError("--output -: the report goes to standard output; name an .npz file for the results")
    if args.output is not None and Path(args.output).is_dir():
        raise UsageError(f"could not write output file '{args.output}': it is a directory")
    if args.output is not None:
        try:
            inputs = [("input file", args.input)] + ([("inputs file", args.inputs)] if args.inputs else [])
            check_distinct_files(inputs, [("output file", args.output)])
        except GraphfuseError as error:
            raise UsageError(error.diagnostics[0].message) from None


def save_outputs(path: str, results: Sequence[np.ndarray]) -> None:
    """Write the results to exactly ``path`` as out0, out1, ..., whole or not at all (a failed write leaves the
    old file), or a UsageError saying why not.

    np.savez given a name appends '.npz' when it is missing (``--output /tmp`` wrote ``/tmp.npz``); given an
    open file it writes there, and a failed write or flush (a full disk, /dev/full) raises here.
    """
    try:
        with atomic_output(path) as scratch, open(scratch, "wb") as stream:
            np.savez(stream, **{f"out{k}": r for k, r in enumerate(results)})
            sync_to_disk(stream)
    except GraphfuseError as error:
        raise UsageError(error.diagnostics[0].message) from None


def _body(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    _check_arguments(args)
    start = time.perf_counter()
    source = input_source(args.input)  # a file's path is never read as MLIR text
    # The graph pipeline's rerun needs the same switches.
    rerun = [f"--{flag}={value}" for flag, value in (("graph-kernel-flags", args.graph_kernel_flags),
                                                     ("fusion-switch-file", args.fusion_switch_file)) if value]
    with reproducers_saved(args.repro_dir, reproducer_stem(args.input), rerun):
        if args.target == "npu":
            executable = compile_npu(source, entry=args.entry, pipeline=args.pass_pipeline, opt_level=args.opt_level,
                                     graph_kernel_flags=args.graph_kernel_flags,
                                     fusion_switch_file=args.fusion_switch_file, target=args.npu_target,
                                     double_buffer=not args.no_double_buffer)
        else:
            executable = compile(source, entry=args.entry, pipeline=args.pass_pipeline, opt_level=args.opt_level,
                                 graph_kernel_flags=args.graph_kernel_flags,
                                 fusion_switch_file=args.fusion_switch_file, num_threads=args.num_threads,
                                 fast_math=not args.no_fast_math)
    compile_seconds = time.perf_counter() - start
    n_inputs = len(executable.inputs)
    if args.inputs:
        inputs = load_inputs(args.inputs, n_inputs, _argument_names(executable),
                             lambda message: print(f"graphfuse-run: warning: {printable(message)}", file=sys.stderr))
    else:
        inputs = _random_inputs(executable, args.seed)
    if isinstance(executable, NpuExecutable):
        print(f"@{printable(executable.entry)}: compiled for the emulated NPU '{executable.target.name}' in "
              f"{compile_seconds:.2f} s; {len(executable.kernels)} kernel(s); pipeline {executable.pipeline}")
        fired = {}
    else:
        fired = {k: v for k, v in executable.fusions.items() if v}
        how = "loaded from the compile cache" if executable.from_cache else "compiled"
        print(f"@{printable(executable.entry)}: {how} in {compile_seconds:.2f} s; {executable.kernels} "
              f"kernel(s); pipeline {executable.pipeline}")
    if fired:
        print("  fusion statistics: " + ", ".join(f"{k}={v}" for k, v in sorted(fired.items())))
    # Results with dynamic dimensions are sized by the call (from the inputs' shapes); the timed calls reuse them.
    static = all(None not in shape for shape, _ in executable.outputs)
    outs = [np.empty(shape, dtype) for shape, dtype in executable.outputs] if static else None
    results = executable(*inputs, out=outs)
    outs = results
    times = []
    for _ in range(args.repeat):
        begin = time.perf_counter()
        executable(*inputs, out=outs)
        times.append(time.perf_counter() - begin)
    print(f"  run: median {statistics.median(times) * 1e3:.3f} ms over {args.repeat} call(s) "
          f"(min {min(times) * 1e3:.3f} ms)")
    for k, r in enumerate(results):
        print(f"  result {k}: {r.dtype.name}{list(r.shape)}")
    if isinstance(executable, NpuExecutable):
        print(executable.report().table())
    status = 0
    if args.check:
        start = time.perf_counter()
        reference = executable.reference(*inputs)
        ref_seconds = time.perf_counter() - start
        print(f"  reference interpreter: {ref_seconds * 1e3:.1f} ms")
        for k, (want, got) in enumerate(zip(reference, results, strict=True)):
            check = compare_output(want, got, args.rtol, args.atol)
            print(f"  check result {k}: {check.summary()}: {'ok' if check.ok else 'MISMATCH'}")
            if not check.ok:
                print(f"    {check.mismatch()}")
                status = 1
    if args.output:
        save_outputs(args.output, results)
        print(f"  wrote {printable(args.output)}")
    if status:
        print("graphfuse-run: error: results differ from the reference interpreter beyond tolerance",
              file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_tool("graphfuse-run", _body, argv))


if __name__ == "__main__":
    main()
