"""The depth guard of the parsers (graphfuse.dialect.nesting): against a character-by-character reference."""

from __future__ import annotations

import random

import pytest

from graphfuse.dialect.nesting import MAX_NESTING, too_deep


def _reference(text: str, syntax: str) -> int | None:
    """The rules, one character at a time: comments and strings skipped, '->' and '>=' not brackets in MLIR."""
    openers = {"mlir": "[({<", "json": "[{", "pipeline": "[({"}[syntax]
    closers = {"mlir": "])}>", "json": "]}", "pipeline": "])}"}[syntax]
    quotes = {"mlir": '"', "json": '"', "pipeline": "\"'"}[syntax]
    depth, i = 0, 0
    while i < len(text):
        char = text[i]
        if syntax == "mlir" and text.startswith("//", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            continue
        if char in quotes:
            i += 1
            while i < len(text) and text[i] != char:
                if syntax == "mlir" and text[i] == "\n":
                    break  # an MLIR string literal ends at the line's end
                if syntax != "pipeline" and text[i] == "\\":
                    if text[i + 1:i + 2] in ("", "\n"):
                        break  # an escape needs a character on the same line: the literal ends here
                    i += 1
                i += 1
            i += 1 if i < len(text) and text[i] == char else 0
            continue
        if char in openers:
            depth += 1
            if depth > MAX_NESTING:
                return i
        elif char in closers and depth:
            if not (syntax == "mlir" and char == ">" and (text[i - 1:i] == "-" or text[i + 1:i + 2] == "=")):
                depth -= 1
        i += 1
    return None


@pytest.mark.parametrize("syntax", ["mlir", "json", "pipeline"])
def test_too_deep_follows_the_reference(syntax: str) -> None:
    pieces = {"mlir": ["[", "(", "{", "<", "<", "]", ")", "}", ">", "->", ">=", "//", '"', "\\", "\n", "a", "-"],
              "json": ["[", "{", "[", "]", "}", '"', "\\", "\n", ","],
              "pipeline": ["[", "(", "{", "[", "]", ")", "}", '"', "'", "a"]}[syntax]
    weights = [6 if piece in "[({<" else 1 for piece in pieces]  # deep often enough to matter
    rng = random.Random(0)
    deep = 0
    for _ in range(1500):
        text = "".join(rng.choices(pieces, weights, k=rng.randint(200, 1200)))
        want = _reference(text, syntax)
        assert too_deep(text, syntax) == want, text
        deep += want is not None
    assert deep > 100


def test_too_deep_skips_numbers_and_strings_of_large_constants() -> None:
    rows = ", ".join("[" + ", ".join(["-1.5e-01"] * 64) + "]" for _ in range(300))
    text = f'%0 = arith.constant dense<[{rows}]> : tensor<300x64xf32>\n%1 = arith.constant dense<"0x{"AB" * 5000}">'
    assert too_deep(text, "mlir") is None
    assert too_deep("<" * (MAX_NESTING + 1), "mlir") == MAX_NESTING
