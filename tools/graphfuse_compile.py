"""graphfuse-compile: compile a graph function ahead of time into a shared library, object, assembly or LLVM IR.

    graphfuse-compile model.mlir -o libmodel.so [--header model.h] [--emit=llvm-ir|asm|obj|shared]
                      [--name PREFIX] [--entry NAME] [--opt-level N | --pass-pipeline=...]
                      [--graph-kernel-flags=...] [--fusion-switch-file=...] [--num-threads N]
                      [--no-fast-math] [--codegen-opt-level N] [--mcpu CPU] [--repro-dir DIR]

The code is what ``graphfuse.compile`` JIT-compiles for the same options,
called through a C function with plain pointers (docs/deployment.md):
``int <name>_<entry>(const float *arg0, ..., float *out0, ..., void *workspace)``.
``--emit`` defaults to what the output's suffix says (``.so``, ``.o``, ``.s``,
``.ll``; a shared library otherwise).  ``-`` as the input reads standard
input; ``-o -`` writes standard output (assembly unless ``--emit`` says
otherwise, object code or a shared library too, as ``graphfuse-opt
--emit-bytecode`` writes bytecode there), ``--header -`` the header.
``--name`` prefixes the exported symbols (default: the output file's name
without ``lib`` and suffixes).  The thread count is fixed at compile time
(default 1; above 1 the library needs the OpenMP runtime it is linked
against).  ``graphfuse.load_library`` calls a shared library from Python.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graphfuse.dialect.parsing import input_source
from graphfuse.lowering.aot import EMIT_KINDS, compile_library, emit_kind_of
from graphfuse.lowering.options import DEFAULT_LLVM_OPT_LEVEL
from graphfuse.pipelines.opt_levels import OPT_LEVELS
from graphfuse.tools.reporting import REPRO_DIR_HELP, UsageError, reproducer_stem, reproducers_saved, run_tool

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2 with a usage dump
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="graphfuse-compile", description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="graph-dialect .mlir or .mlirbc file; - reads standard input")
    p.add_argument("-o", dest="output", required=True, metavar="FILE",
                   help="output file; - writes standard output (assembly unless --emit says otherwise)")
    p.add_argument("--emit", choices=EMIT_KINDS, help="what to write (default: by the output's suffix)")
    p.add_argument("--header", metavar="FILE",
                   help="also write the C header declaring the entry point (- writes standard output)")
    p.add_argument("--name", help="prefix of the exported symbols (default: from the output file's name)")
    p.add_argument("--entry", help="function to compile (default: the first public one)")
    level = p.add_mutually_exclusive_group()
    level.add_argument("--opt-level", type=int, choices=OPT_LEVELS, help="0 unfused ... 3 (default 2)")
    level.add_argument("--pass-pipeline", help="graph pipeline instead of the default")
    p.add_argument("--graph-kernel-flags", help="MS_DEV_GRAPH_KERNEL_FLAGS-style flags")
    p.add_argument("--fusion-switch-file", "--fusion_switch_file",
                   help="CANN fusion_switch.cfg (default: $FUSION_SWITCH_FILE; --fusion_switch_file is ATC's spelling)")
    p.add_argument("--num-threads", type=int, default=1, metavar="N",
                   help="threads of the parallel loops, fixed in the code (default 1; more links the OpenMP runtime)")
    p.add_argument("--no-fast-math", action="store_true",
                   help="lower without the fast-math forms (FMA contraction, one reciprocal per row)")
    p.add_argument("--codegen-opt-level", type=int, choices=(0, 1, 2, 3), default=DEFAULT_LLVM_OPT_LEVEL,
                   help=f"LLVM optimization and code-generation level (default {DEFAULT_LLVM_OPT_LEVEL}, as the JIT's)")
    p.add_argument("--mcpu", default="native",
                   help="LLVM CPU to generate code for (default: this machine's, with its features)")
    p.add_argument("--repro-dir", metavar="DIR", help=REPRO_DIR_HELP)
    return p


def _body(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    kind = emit_kind_of(args.output, args.emit)
    if args.num_threads < 1:
        raise UsageError(f"--num-threads must be at least 1, got {args.num_threads}")
    for path in (args.output, args.header):
        if path in (None, "-"):
            continue
        if Path(path).is_dir():
            raise UsageError(f"cannot write '{path}': it is a directory")
        if not Path(path).parent.is_dir():
            raise UsageError(f"cannot write '{path}': no directory '{Path(path).parent}'")
    source = input_source(args.input)  # a file's path is never read as MLIR text
    rerun = [f"--{flag}={value}" for flag, value in (("graph-kernel-flags", args.graph_kernel_flags),
                                                     ("fusion-switch-file", args.fusion_switch_file)) if value]
    with reproducers_saved(args.repro_dir, reproducer_stem(args.input), rerun):
        compile_library(
            source, args.output, emit=kind, header=args.header, name=args.name, entry=args.entry,
            pipeline=args.pass_pipeline, opt_level=args.opt_level, graph_kernel_flags=args.graph_kernel_flags,
            fusion_switch_file=args.fusion_switch_file, num_threads=args.num_threads,
            fast_math=not args.no_fast_math, codegen_opt_level=args.codegen_opt_level, target_cpu=args.mcpu)
    return 0


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_tool("graphfuse-compile", _body, argv))


if __name__ == "__main__":
    main()
