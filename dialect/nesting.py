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

__all__ = ["MAX_NESTING", "alias_too_deep", "line_col", "nesting_message", "too_deep"]

MAX_NESTING = 256

Syntax = Literal["mlir", "json", "pipeline"]

# The characters a scan stops at, per syntax: brackets, and the starts of comments and string literals.
_STOPS: dict[str, re.Pattern[str]] = {
    "mlir": re.compile(r'[/"\[({<\])}>]'),
    "json": re.compile(r'["\[{\]}]'),
    "pipeline": re.compile(r"""["'\[({\])}]"""),
}
# What is skipped whole from a stop character: comments and string literals (their brackets do not count).
_SKIPS: dict[str, dict[str, re.Pattern[str]]] = {
    "mlir": {"/": re.compile(r"//[^\n]*"), '"': re.compile(r'"(?:[^"\\\n]+|\\.)*"?')},
    "json": {'"': re.compile(r'"(?:[^"\\]+|\\.)*"?')},
    "pipeline": {'"': re.compile(r'"[^"]*"?'), "'": re.compile(r"'[^']*'?")},
}
_OPENERS = {"mlir": "[({<", "json": "[{", "pipeline": "[({"}


def too_deep(text: str, syntax: Syntax) -> int | None:
    """The offset of the first bracket nested deeper than :data:`MAX_NESTING` in ``text``, or None.

    Brackets of all kinds count together (the parsers recurse on each); a
    closer without an opener is left to the parser to report.  In MLIR '<'
    and '>' nest too (types, attributes), except in '->' and '>='.  The scan
    jumps from one stop character to the next in C (``re.search``), so text
    that is mostly numbers, such as a module of large constants, costs little
    Python.
    """
    openers = _OPENERS[syntax]
    if sum(text.count(c) for c in openers) <= MAX_NESTING:
        return None  # the common case: too few brackets to nest that deep, no scan needed
    search, skips = _STOPS[syntax].search, _SKIPS[syntax]
    depth, position = 0, 0
    while (stop := search(text, position)) is not None:
        offset = stop.start()
        char = text[offset]
        position = offset + 1
        skip = skips.get(char)
        if skip is not None:
            whole = skip.match(text, offset)  # None for a '/' that does not start a comment
            position = max(position, whole.end()) if whole is not None else position
        elif char in openers:
            depth += 1
            if depth > MAX_NESTING:
                return offset
        elif syntax == "mlir" and char == ">" and (text[offset - 1:offset] == "-" or text[position:offset + 2] == "="):
            continue  # '->' and '>=' are not brackets
        elif depth:
            depth -= 1
    return None


#: An attribute or type alias definition at the start of a line: ``#name = ...`` or ``!name = ...``.
_ALIAS_DEFINITION = re.compile(r"^([#!][A-Za-z_][\w$.\-]*)[ \t]*=", re.MULTILINE)
_ALIAS_REFERENCE = re.compile(r"[#!][A-Za-z_][\w$.\-]*")


def alias_too_deep(text: str) -> int | None:
    """The offset of the first alias definition whose chain of aliases is deeper than :data:`MAX_NESTING`, or None.

    ``#a1 = [#a0]``, ``#a2 = [#a1]``... nests one level per line: the bracket scan of :func:`too_deep` sees one
    level, but the attribute the parser builds (and every recursive walk over it) is as deep as the chain.  Each
    definition's depth is one more than the deepest alias it names (aliases are defined before use).
    """
    definitions = list(_ALIAS_DEFINITION.finditer(text))
    if len(definitions) <= MAX_NESTING:
        return None  # too few aliases to chain that deep
    depth: dict[str, int] = {}
    for k, match in enumerate(definitions):
        end = definitions[k + 1].start() if k + 1 < len(definitions) else text.find("\n", match.end())
        body = text[match.end(): end if end >= 0 else len(text)]
        deepest = max((depth.get(name, 0) for name in _ALIAS_REFERENCE.findall(body)), default=0)
        depth[match.group(1)] = deepest + 1
        if deepest + 1 > MAX_NESTING:
            return match.start()
    return None


def line_col(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def nesting_message() -> str:
    return f"nesting deeper than {MAX_NESTING}"
