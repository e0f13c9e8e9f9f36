"""graphfuse-run: compile a graph module for the CPU, run it, check it against the reference interpreter, time it.

    graphfuse-run model.mlir [--entry NAME] [--inputs x.npz | --random] [--check] [--repeat N]
                  [--output y.npz] [--opt-level N | --pass-pipeline=...] [--graph-kernel-flags=...]
                  [--fusion-switch-file=...] [--rtol R] [--atol A] [--seed S]
                  [--target=cpu|npu] [--npu-target=NAME|PATH] [--no-double-buffer] [--repro-dir DIR]

The graph pipeline is the fusing default of ``graphfuse.compile`` (opt level
2) unless ``--opt-level`` or ``--pass-pipeline`` says otherwise.  Inputs come
from an ``.npz`` file (arrays named ``arg0``, ``arg1``... or taken in file
order) or are random (``--random``, the default when no file is given).
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
import statistics
import sys
import time
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np

from graphfuse.lowering.compiler import Executable, compile
from graphfuse.lowering.npu.compiler import NpuExecutable, compile_npu
from graphfuse.pipelines.opt_levels import OPT_LEVELS
from graphfuse.tools.accuracy import compare_output
from graphfuse.tools.reporting import REPRO_DIR_HELP, UsageError, reproducers_saved, run_tool

__all__ = ["load_inputs", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2 with a usage dump
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="graphfuse-run", description=__doc__.split("\n\n")[0], add_help=True)
    p.add_argument("input", help="graph-dialect .mlir file")
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
    p.add_argument("--output", help="save the results to this .npz file (out0, out1, ...)")
    level = p.add_mutually_exclusive_group()
    level.add_argument("--opt-level", type=int, choices=OPT_LEVELS, help="0 unfused ... 3 (default 2)")
    level.add_argument("--pass-pipeline", help="graph pipeline instead of the default")
    p.add_argument("--graph-kernel-flags", help="MS_DEV_GRAPH_KERNEL_FLAGS-style flags")
    p.add_argument("--fusion-switch-file", help="CANN fusion_switch.cfg")
    p.add_argument("--target", choices=("cpu", "npu"), default="cpu", help="run on the CPU or the emulated NPU")
    p.add_argument("--npu-target", default="910b", help="NPU target description: a bundled name or a .json path")
    p.add_argument("--no-double-buffer", action="store_true", help="NPU: one slot per transferred tile")
    p.add_argument("--repro-dir", metavar="DIR", help=REPRO_DIR_HELP)
    return p


def _random_inputs(executable: Executable | NpuExecutable, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for k, (shape, dtype) in enumerate(executable.inputs):
        if None in shape:
            raise UsageError(f"argument {k} has a dynamic shape; pass --inputs")
        if dtype == np.bool_:
            arrays.append(rng.random(shape) < 0.5)
        elif dtype.kind in "iu":
            arrays.append(rng.integers(-8, 8, shape).astype(dtype))
        elif dtype == ml_dtypes.bfloat16 or dtype.kind == "f":
            arrays.append(rng.standard_normal(shape).astype(np.float32).astype(dtype))
        else:
            raise UsageError(f"argument {k}: cannot make random values of dtype {dtype}")
    return arrays


def load_inputs(path: str, count: int) -> list[np.ndarray]:
    if Path(path).is_file() and not zipfile.is_zipfile(path):
        raise UsageError(f"'{path}' is not a readable .npz file: it is not a zip archive")
    try:
        with np.load(path, allow_pickle=False) as data:
            named = {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise UsageError(f"could not open input file '{path}'") from None
    except (ValueError, OSError) as error:
        raise UsageError(f"'{path}' is not a readable .npz file: {error}") from None
    if all(f"arg{k}" in named for k in range(count)):
        return [named[f"arg{k}"] for k in range(count)]
    if len(named) != count:
        raise UsageError(f"'{path}' holds {len(named)} array(s) ({', '.join(named) or 'none'}); the function takes "
                         f"{count}")
    return list(named.values())


def _body(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    start = time.perf_counter()
    source = Path(args.input)  # never read as MLIR text
    # The graph pipeline's rerun needs the same switches.
    rerun = [f"--{flag}={value}" for flag, value in (("graph-kernel-flags", args.graph_kernel_flags),
                                                     ("fusion-switch-file", args.fusion_switch_file)) if value]
    with reproducers_saved(args.repro_dir, source.stem, rerun):
        if args.target == "npu":
            executable = compile_npu(source, entry=args.entry, pipeline=args.pass_pipeline, opt_level=args.opt_level,
                                     graph_kernel_flags=args.graph_kernel_flags,
                                     fusion_switch_file=args.fusion_switch_file, target=args.npu_target,
                                     double_buffer=not args.no_double_buffer)
        else:
            executable = compile(source, entry=args.entry, pipeline=args.pass_pipeline, opt_level=args.opt_level,
                                 graph_kernel_flags=args.graph_kernel_flags,
                                 fusion_switch_file=args.fusion_switch_file)
    compile_seconds = time.perf_counter() - start
    n_inputs = len(executable.inputs)
    inputs = load_inputs(args.inputs, n_inputs) if args.inputs else _random_inputs(executable, args.seed)
    if isinstance(executable, NpuExecutable):
        print(f"@{executable.entry}: compiled for the emulated NPU '{executable.target.name}' in "
              f"{compile_seconds:.2f} s; {len(executable.kernels)} kernel(s); pipeline {executable.pipeline}")
        fired = {}
    else:
        fired = {k: v for k, v in executable.fusions.items() if v}
        print(f"@{executable.entry}: compiled in {compile_seconds:.2f} s; {executable.kernels} kernel(s); pipeline "
              f"{executable.pipeline}")
    if fired:
        print("  fusion statistics: " + ", ".join(f"{k}={v}" for k, v in sorted(fired.items())))
    outs = [np.empty(shape, dtype) for shape, dtype in executable.outputs]
    results = executable(*inputs, out=outs)
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
        try:
            np.savez(args.output, **{f"out{k}": r for k, r in enumerate(results)})
        except OSError as error:
            raise UsageError(f"could not write output file '{args.output}': {error.strerror or error}") from None
        print(f"  wrote {args.output}")
    if status:
        print("graphfuse-run: error: results differ from the reference interpreter beyond tolerance",
              file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_tool("graphfuse-run", _body, argv))


if __name__ == "__main__":
    main()
