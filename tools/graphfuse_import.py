"""graphfuse-import: translate an ONNX model into a graph-dialect .mlir module.

    graphfuse-import model.onnx [-o model.mlir] [--entry NAME] [--input-shape NAME=D0,D1,...]...
                     [--bind NAME=values.npy]... [--mlir-print-debuginfo]

The module holds one public function (``@main`` unless ``--entry`` says
otherwise) whose arguments are the graph inputs and whose results are the
graph outputs, in order.  ``--input-shape`` fixes the shape of an input with
symbolic dimensions; ``--bind`` turns an input into a constant read from a
``.npy`` file (for inputs used as shapes, axes, ...).  ``--mlir-print-debuginfo``
prints the locations, which name the ONNX node of every op.  Needs the
``graphfuse[onnx]`` extra.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from graphfuse.dialect.files import check_distinct_files, write_file
from graphfuse.tools.reporting import UsageError, run_tool

MAX_DIMENSION = 2**63 - 1

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2 with a usage dump
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="graphfuse-import", description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="ONNX model (.onnx)")
    p.add_argument("-o", "--output", default="-", help="output .mlir file (default: standard output)")
    p.add_argument("--entry", default="main", help="name of the generated function (default: main)")
    p.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="static shape for a graph input with symbolic dimensions")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=FILE.npy",
                   help="make a graph input a constant holding the array in FILE.npy")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations (the ONNX node of each op)")
    return p


def _split_assignment(text: str, option: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise UsageError(f"{option} expects NAME=VALUE, got '{text}'")
    return name, value


def _input_shapes(items: list[str]) -> dict[str, list[int]]:
    shapes: dict[str, list[int]] = {}
    for item in items:
        name, value = _split_assignment(item, "--input-shape")
        try:
            dims = [int(d) for d in value.split(",")]
        except ValueError:
            raise UsageError(f"--input-shape {name}: '{value}' is not a comma-separated list of sizes") from None
        if any(d < 0 for d in dims):
            raise UsageError(f"--input-shape {name}: sizes must be non-negative, got '{value}'")
        if any(d > MAX_DIMENSION for d in dims):  # MLIR's dimensions are signed 64-bit integers
            raise UsageError(f"--input-shape {name}: sizes must be at most 2^63 - 1, got '{value}'")
        shapes[name] = dims
    return shapes


def _bindings(items: list[str]) -> dict[str, np.ndarray]:
    bound: dict[str, np.ndarray] = {}
    for item in items:
        name, path = _split_assignment(item, "--bind")
        try:
            bound[name] = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise UsageError(f"--bind {name}: could not open '{path}'") from None
        except (ValueError, OSError) as error:
            raise UsageError(f"--bind {name}: '{path}' is not a readable .npy file: {error}") from None
    return bound


def _body(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        from graphfuse.frontends.onnx import convert_model
    except ImportError:
        raise UsageError("the ONNX front end needs the onnx package: pip install 'graphfuse[onnx]'") from None
    check_distinct_files([("input model", args.input)], [("output file", args.output)])
    imported = convert_model(Path(args.input), entry=args.entry, constant_inputs=_bindings(args.bind),
                             input_shapes=_input_shapes(args.input_shape))
    text = imported.module.operation.get_asm(enable_debug_info=args.mlir_print_debuginfo)
    if args.output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    write_file(args.output, text)  # whole or not at all
    return 0


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_tool("graphfuse-import", _body, argv))


if __name__ == "__main__":
    main()
