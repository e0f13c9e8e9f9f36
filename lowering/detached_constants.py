"""Large constants of an LLVM-dialect module moved out of its LLVM IR into files of raw bytes, assembled into the
object code with ``.incbin``.

LLVM IR text spells each element of a constant out (some 25 characters per f32): a 1024 x 1024 weight took 7 s
to compile that way, LLVM parsing the text.  graphfuse-compile's libraries and the split code generator's
pieces (both go through LLVM IR text) take their large constants this way.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mlir import ir

from graphfuse.lowering.linker import host_triple

__all__ = ["DETACHED_MIN_BYTES", "DetachedConstant", "constants_assembly", "detach_constants"]

#: Constants from this size on are detached.
DETACHED_MIN_BYTES = 4096


@dataclass(frozen=True)
class DetachedConstant:
    """A constant of the module, written to a file and assembled under a hidden (library-private) name."""

    symbol: str
    path: Path
    size: int
    alignment: int

    def assembly(self) -> str:
        return (f'\n\t.section\t.rodata.graphfuse,"a",@progbits\n\t.p2align\t{self.alignment.bit_length() - 1}\n'
                f"\t.globl\t{self.symbol}\n\t.hidden\t{self.symbol}\n\t.type\t{self.symbol},@object\n"
                f'{self.symbol}:\n\t.incbin\t"{self.path}"\n\t.size\t{self.symbol}, {self.size}\n')


def constants_assembly(constants: list[DetachedConstant]) -> str:
    """Assembly defining ``constants``."""
    return "".join(constant.assembly() for constant in constants)


def detach_constants(module: ir.Operation, prefix: str, directory: Path) -> list[DetachedConstant]:
    """Turn the large dense constant globals of the LLVM-dialect ``module`` into hidden external declarations
    named ``<prefix>_<global>`` and write their bytes into ``directory`` (ELF targets; elsewhere they stay
    inline).  Splats and element types numpy has no buffer for (bf16) stay inline."""
    if "-linux" not in host_triple() and not host_triple().endswith("-elf"):
        return []
    constants = []
    with module.context:
        for op in list(module.regions[0].blocks[0].operations):
            op = op.operation
            if op.name != "llvm.mlir.global" or "constant" not in op.attributes or "value" not in op.attributes:
                continue
            value = op.attributes["value"]
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if not isinstance(value, ir.DenseElementsAttr) or value.is_splat or not re.fullmatch(r"[\w.$]+", name):
                continue
            try:
                data = np.ascontiguousarray(np.array(value)).tobytes()
            except (TypeError, ValueError, RuntimeError):
                continue
            shaped = ir.ShapedType(value.type)
            width = getattr(shaped.element_type, "width", None) or 0
            if len(data) < DETACHED_MIN_BYTES or len(data) * 8 != math.prod(shaped.shape) * width:
                continue
            symbol = f"{prefix}_{name}"
            path = directory / f"weight{len(constants)}.bin"
            path.write_bytes(data)
            alignment = ir.IntegerAttr(op.attributes["alignment"]).value if "alignment" in op.attributes else 16
            ir.SymbolTable.replace_all_symbol_uses(name, symbol, module)
            ir.SymbolTable.set_symbol_name(op, symbol)
            del op.attributes["value"]
            op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")
            op.attributes["visibility_"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)  # hidden
            constants.append(DetachedConstant(symbol, path, len(data), alignment))
    return constants
