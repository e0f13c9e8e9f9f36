"""A depth guard for text handed to recursive parsers.

MLIR's parser, Python's ``json`` and graphfuse's pipeline parser all recurse
once per nesting level.  Deep enough input overflows the native stack (MLIR:
a segfault at about 2,200 nested regions or 9,000 nested ``[``) or Python's
recursion limit (``json``, the pipeline parser: RecursionError near 1,000).
:func:`too_deep` finds such input with one linear scan before any of them
runs, so it becomes a located ``nesting deeper than N`` error.

:data:`MAX_NESTING` is far above anything real (a graph module nests a few
regions and types; a switch file or NPU target is three objects deep) and an
order of magnitude below the shallowest crash measured with an 8 MB stack, so
smaller thread stacks are safe too.  This module is pure Python (the pipeline
parser uses it without the MLIR bindings).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["MAX_NESTING", "line_col", "nesting_message", "too_deep"]

MAX_NESTING = 256

Syntax = Literal["mlir", "json", "pipeline"]

# One alternation per syntax: comments and string literals are matched whole (their brackets do not count),
# then single brackets.  In MLIR '<' and '>' nest too (types, attributes), except in '->' and '>='.
_TOKENS: dict[str, re.Pattern[str]] = {
    "mlir": re.compile(r'//[^\n]*|"(?:[^"\\\n]|\\.)*"?|->|>=|[\[({<\])}>]'),
    "json": re.compile(r'"(?:[^"\\]|\\.)*"?|[\[{\]}]'),
    "pipeline": re.compile(r""""[^"]*"?|'[^']*'?|[\[({\])}]"""),
}
_OPENERS = {"mlir": "[({<", "json": "[{", "pipeline": "[({"}


def too_deep(text: str, syntax: Syntax) -> int | None:
    """The offset of the first bracket nested deeper than :data:`MAX_NESTING` in ``text``, or None.

    Brackets of all kinds count together (the parsers recurse on each); a
    closer without an opener is left to the parser to report.
    """
    openers = _OPENERS[syntax]
    if sum(text.count(c) for c in openers) <= MAX_NESTING:
        return None  # the common case: too few brackets to nest that deep, no scan needed
    depth = 0
    for match in _TOKENS[syntax].finditer(text):
        token = match.group()
        if len(token) != 1:
            continue  # a comment, a string, '->' or '>='
        if token in openers:
            depth += 1
            if depth > MAX_NESTING:
                return match.start()
        elif depth and token not in "\"'":
            depth -= 1
    return None


def line_col(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def nesting_message() -> str:
    return f"nesting deeper than {MAX_NESTING}"
