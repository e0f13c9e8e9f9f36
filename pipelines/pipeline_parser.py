"""Parser for MLIR's textual pass-pipeline syntax.

The MLIR Python bindings cannot look up passes written in Python by name, so graphfuse-opt
parses pipeline strings itself: it runs its own passes in Python and hands every upstream pass
back to ``mlir.passmanager.PassManager`` as text.  For that the AST prints each element back as
canonical pipeline text (``PassElement.to_text`` / ``NestedPipeline.to_text``).

Grammar (what upstream ``mlir-opt`` accepts)::

    pipeline      ::= op-anchor '(' element-list? ')'          builtin.module(...)
    element-list  ::= element (',' element)*
    element       ::= op-anchor '(' element-list? ')'          func.func(cse, canonicalize)
                    | pass-name options?
    pass-name     ::= [A-Za-z_][A-Za-z0-9_\\-.]*                an op-anchor is a name followed by '('
    options       ::= '{' option* '}'                          whitespace separated
    option        ::= key ('=' value)?                         a bare key is a flag set to true
    value         ::= characters up to whitespace or the '}' closing the options; '{...}', '(...)',
                      '[...]' and "..." / '...' strings are kept whole (they may hold spaces and commas)

Whitespace is allowed around every token, but not inside ``key=value`` (whitespace ends an option).
Spans are ``(start, end)`` character offsets into the parsed text; they are excluded from equality,
so a tree parsed from ``to_text()`` output compares equal to the original.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphfuse.dialect.nesting import nesting_message, too_deep

__all__ = [
    "NestedPipeline",
    "PassElement",
    "PassOption",
    "PipelineSyntaxError",
    "parse_pass_list",
    "parse_pipeline",
    "split_list_value",
]

_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset("0123456789-.")
_KEY_CHARS = _NAME_CHARS
_OPENERS = {"{": "}", "(": ")", "[": "]"}
_CLOSERS = frozenset(_OPENERS.values())
_QUOTES = frozenset("\"'")


# --------------------------------------------------------------------------- AST


@dataclass(frozen=True)
class PassOption:
    """One ``key=value`` (or bare ``key`` flag, ``value is None``) inside a pass's ``{...}``."""

    key: str
    value: str | None
    span: tuple[int, int] = field(default=(0, 0), compare=False)

    def to_text(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"


@dataclass(frozen=True)
class PassElement:
    """A pass invocation: ``name`` or ``name{k=v flag}``."""

    name: str
    options: tuple[PassOption, ...] = ()
    span: tuple[int, int] = field(default=(0, 0), compare=False)

    def to_text(self) -> str:
        if not self.options:
            return self.name
        return self.name + "{" + " ".join(option.to_text() for option in self.options) + "}"

    def options_dict(self) -> dict[str, str | None]:
        """The options as a ``{key: value}`` dict (``None`` for bare flags), in written order."""
        return {option.key: option.value for option in self.options}


@dataclass(frozen=True)
class NestedPipeline:
    """A pipeline anchored on an operation: ``anchor(e1,e2,...)``."""

    anchor: str
    elements: tuple[PassElement | NestedPipeline, ...] = ()
    span: tuple[int, int] = field(default=(0, 0), compare=False)

    def to_text(self) -> str:
        return self.anchor + "(" + ",".join(element.to_text() for element in self.elements) + ")"


# --------------------------------------------------------------------------- errors


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    return line, offset - line_start + 1


class PipelineSyntaxError(Exception):
    """A malformed pipeline string; ``offset`` is the character offset the problem was found at."""

    def __init__(self, message: str, text: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.text = text
        self.offset = max(0, min(offset, len(text)))

    @property
    def line(self) -> int:
        return _line_col(self.text, self.offset)[0]

    @property
    def column(self) -> int:
        return _line_col(self.text, self.offset)[1]

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.message}"

    def render(self) -> str:
        """Three lines: ``line:col: message``, the offending source line, and a caret under the offset."""
        line_start = self.text.rfind("\n", 0, self.offset) + 1
        line_end = self.text.find("\n", self.offset)
        source_line = self.text[line_start : len(self.text) if line_end < 0 else line_end]
        # Keep tabs so the caret lines up however the terminal renders them.
        pad = "".join("\t" if ch == "\t" else " " for ch in self.text[line_start : self.offset])
        return f"{self}\n{source_line}\n{pad}^"


# --------------------------------------------------------------------------- parser


def _pos(text: str, offset: int) -> str:
    line, col = _line_col(text, offset)
    return f"{line}:{col}"


def _describe(ch: str) -> str:
    return "end of pipeline" if not ch else repr(ch)


class _Cursor:
    """A position in the pipeline text with the few primitives the parser needs."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        """The current character, or '' at the end of the text."""
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def take_while(self, chars: frozenset[str]) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1
        return self.text[start : self.pos]

    def error(self, message: str, offset: int | None = None) -> PipelineSyntaxError:
        return PipelineSyntaxError(message, self.text, self.pos if offset is None else offset)


class _Parser:
    """Recursive-descent parser over a ``_Cursor``; every method leaves the cursor after what it parsed."""

    def __init__(self, text: str) -> None:
        self.cur = _Cursor(text)
        self.text = text
        deep = too_deep(text, "pipeline")
        if deep is not None:  # the parser recurses per nesting level (and so do MLIR's for upstream elements)
            raise self.cur.error(nesting_message(), deep)

    # element-list -------------------------------------------------------------

    def element_list(self, closer: str | None, opened: tuple[str, int] | None = None) -> list:
        """Parse ``element (',' element)*`` up to ``closer`` (')' inside an anchor, None at top level).

        ``opened`` is ``(anchor, offset of its '(')`` for error messages.  The closer is not consumed.
        """
        cur = self.cur
        elements: list[PassElement | NestedPipeline] = []
        cur.skip_ws()
        if closer is not None and cur.peek() == closer:
            return elements  # empty nested pipeline, e.g. func.func()
        while True:
            cur.skip_ws()
            elements.append(self.element(after_comma=bool(elements), opened=opened))
            cur.skip_ws()
            ch = cur.peek()
            if ch == ",":
                cur.pos += 1
                continue
            if ch == (closer or ""):
                return elements
            raise self._unexpected_after_element(ch, closer, opened)

    def _unexpected_after_element(self, ch: str, closer: str | None, opened: tuple[str, int] | None):
        cur = self.cur
        if opened is not None:
            anchor, paren = opened
            where = f"'{anchor}(' opened at {_pos(self.text, paren)}"
            if not ch:
                return cur.error(f"expected ')' to close {where}")
            return cur.error(f"unexpected character {ch!r}; expected ',' or ')' to close {where}")
        if ch == ")":
            return cur.error("unbalanced ')' with no matching '('")
        if ch == "}":
            return cur.error("unbalanced '}' with no matching '{'")
        return cur.error(f"unexpected character {ch!r}; expected ',' or end of pipeline")

    # element ------------------------------------------------------------------

    def element(self, after_comma: bool, opened: tuple[str, int] | None) -> PassElement | NestedPipeline:
        cur = self.cur
        start = cur.pos
        if cur.peek() not in _NAME_START:
            raise self._missing_name(after_comma, opened)
        name = cur.take_while(_NAME_CHARS)
        name_end = cur.pos
        cur.skip_ws()
        if cur.peek() == "(":
            return self.nested(name, start)
        if cur.peek() == "{":
            options = self.options(name)
            return PassElement(name, options, (start, cur.pos))
        cur.pos = name_end  # leave trailing whitespace to the caller
        return PassElement(name, (), (start, name_end))

    def _missing_name(self, after_comma: bool, opened: tuple[str, int] | None) -> PipelineSyntaxError:
        cur = self.cur
        ch = cur.peek()
        if ch == ",":
            return cur.error("missing pass name before ','")
        if after_comma and (not ch or ch == ")"):
            return cur.error(f"missing pass name after ',' (found {_describe(ch)})")
        if not ch and opened is not None:
            anchor, paren = opened
            return cur.error(f"expected ')' to close '{anchor}(' opened at {_pos(self.text, paren)}")
        if ch == ")" and opened is None:
            return cur.error("unbalanced ')' with no matching '('")
        if ch == "(":
            return cur.error("missing op anchor name before '('")
        if ch == "{":
            return cur.error("missing pass name before '{'")
        return cur.error(f"expected a pass name, found {_describe(ch)}")

    def nested(self, anchor: str, start: int) -> NestedPipeline:
        cur = self.cur
        paren = cur.pos
        cur.pos += 1  # '('
        elements = self.element_list(")", opened=(anchor, paren))
        cur.pos += 1  # ')'
        return NestedPipeline(anchor, tuple(elements), (start, cur.pos))

    # options ------------------------------------------------------------------

    def options(self, pass_name: str) -> tuple[PassOption, ...]:
        cur = self.cur
        brace = cur.pos
        cur.pos += 1  # '{'
        options: list[PassOption] = []
        seen: dict[str, int] = {}
        while True:
            cur.skip_ws()
            ch = cur.peek()
            if ch == "}":
                cur.pos += 1
                return tuple(options)
            if not ch:
                raise cur.error(
                    f"expected '}}' to close the options of '{pass_name}' opened at {_pos(self.text, brace)}"
                )
            option = self.option(pass_name)
            if option.key in seen:
                raise cur.error(
                    f"duplicate option '{option.key}' for pass '{pass_name}' "
                    f"(first given at {_pos(self.text, seen[option.key])})",
                    option.span[0],
                )
            seen[option.key] = option.span[0]
            options.append(option)

    def option(self, pass_name: str) -> PassOption:
        cur = self.cur
        start = cur.pos
        key = cur.take_while(_KEY_CHARS)
        ch = cur.peek()
        if not key:
            if ch == "=":
                raise cur.error(f"missing option name before '=' in the options of '{pass_name}'")
            raise cur.error(f"unexpected character {ch!r} in the options of '{pass_name}'; expected an option name")
        if ch == "=":
            cur.pos += 1
            value = self.value(key)
            return PassOption(key, value, (start, cur.pos))
        if ch and not ch.isspace() and ch != "}":
            raise cur.error(f"unexpected character {ch!r} after option name '{key}'")
        return PassOption(key, None, (start, cur.pos))

    def value(self, key: str) -> str:
        """Scan an option value, keeping bracketed groups and quoted strings whole."""
        cur = self.cur
        text = self.text
        start = cur.pos
        stack: list[tuple[str, int]] = []  # (expected closer, offset of opener)
        while cur.pos < len(text):
            ch = text[cur.pos]
            if not stack and (ch.isspace() or ch == "}"):
                break
            if ch in _QUOTES:
                end = text.find(ch, cur.pos + 1)
                if end < 0:
                    raise cur.error(f"unterminated {ch} string in the value of option '{key}'")
                cur.pos = end + 1
                continue
            if ch in _OPENERS:
                stack.append((_OPENERS[ch], cur.pos))
            elif ch in _CLOSERS:
                if not stack:
                    raise cur.error(f"unbalanced {ch!r} in the value of option '{key}'")
                expected, opener = stack.pop()
                if ch != expected:
                    raise cur.error(
                        f"mismatched {ch!r} in the value of option '{key}'; expected {expected!r} to close "
                        f"{text[opener]!r} opened at {_pos(text, opener)}"
                    )
            cur.pos += 1
        if stack:
            expected, opener = stack[-1]
            raise cur.error(
                f"expected {expected!r} to close {text[opener]!r} opened at {_pos(text, opener)} "
                f"in the value of option '{key}'"
            )
        if cur.pos == start:
            raise cur.error(f"missing value after '{key}=' (write a bare '{key}' for a flag)")
        return text[start : cur.pos]


# --------------------------------------------------------------------------- public API


def parse_pass_list(text: str) -> tuple[PassElement | NestedPipeline, ...]:
    """Parse an unanchored ``element, element, ...`` list (e.g. ``cse,canonicalize{max-iterations=3}``)."""
    parser = _Parser(text)
    parser.cur.skip_ws()
    if parser.cur.at_end():
        raise parser.cur.error("empty pass pipeline", 0)
    elements = parser.element_list(None)
    return tuple(elements)


def parse_pipeline(text: str, default_anchor: str | None = None) -> NestedPipeline:
    """Parse an anchored pipeline such as ``builtin.module(func.func(cse),canonicalize)``.

    A single anchored pipeline is returned as written, whatever its anchor.  Anything else (a bare
    ``cse,canonicalize`` list, or several elements) is wrapped in ``default_anchor`` when one is
    given, and is an error otherwise.
    """
    parser = _Parser(text)
    cur = parser.cur
    cur.skip_ws()
    if cur.at_end():
        raise cur.error("empty pass pipeline", 0)
    first = parser.element(after_comma=False, opened=None)
    cur.skip_ws()
    if isinstance(first, NestedPipeline) and cur.at_end():
        return first
    if default_anchor is not None:
        elements = parse_pass_list(text)
        return NestedPipeline(default_anchor, elements, (0, len(text)))
    if cur.peek() == ")":
        raise cur.error("unbalanced ')' with no matching '('")
    if isinstance(first, NestedPipeline):
        raise cur.error(f"unexpected text after the closing ')' of '{first.anchor}('")
    raise cur.error("pass pipeline must be anchored on an operation, e.g. `builtin.module(...)`", first.span[0])


def split_list_value(value: str) -> list[str]:
    """Split a list-valued option (``a,b,{c,d},e``) on top-level commas.

    Commas inside ``{}``, ``()``, ``[]`` and quoted strings do not split.  Items are stripped of
    surrounding whitespace and empty items are dropped.  Unbalanced input is not an error here: an
    unclosed group or quote simply runs to the end of the value.
    """
    items: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for i, ch in enumerate(value):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in _QUOTES:
            quote = ch
        elif ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            items.append(value[start:i])
            start = i + 1
    items.append(value[start:])
    return [item.strip() for item in items if item.strip()]
