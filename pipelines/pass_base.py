"""The base class of graphfuse passes.

A pass is a frozen dataclass whose fields are its pipeline options (xDSL
style).  ``graph-cse`` has none; a pass with options looks like

    @dataclass(frozen=True)
    class GraphFusion(GraphPass):
        name: ClassVar[str] = "graph-fusion"
        summary: ClassVar[str] = "Pattern fusion passes"
        opt_level: int = option(2, "fusion level, 0 disables fusion")
        disable_pass: tuple[str, ...] = option((), "passes to switch off")

and is written ``graph-fusion{opt-level=1 disable-pass=a,b}`` in a pipeline:
field names take dashes, lists are comma-separated, a bare ``flag`` is true.

Rewrite budget ("fuel", as LLVM's ``-opt-bisect-limit`` and debug counters):
:func:`limit_rewrites` installs a :class:`RewriteBudget` for the code it
wraps (a context variable, so it is scoped to the caller).  Rewriting passes
ask it before each rewrite (:func:`try_consume_rewrite`, or
:meth:`RewriteBudget.has_fuel` then :meth:`RewriteBudget.consume`); once it
is spent they report "no match", and every rewrite it allowed is recorded
with its pass, pattern and location.  Without a budget (the default) nothing
is limited or recorded.  graphfuse-bisect uses it to find the one rewrite
that changes a result.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import itertools
import types
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mlir import ir

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc, source_loc


class OptionError(ValueError):
    """A pass option is unknown or its value does not parse."""


def option(default: Any, help: str) -> Any:
    """Declare a pass option (a dataclass field) with its help text."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class OptionInfo:
    field_name: str
    flag: str  # the spelling in pipelines: opt_level -> opt-level
    type: Any
    default: Any
    help: str

    @property
    def type_text(self) -> str:
        return _type_text(self.type)


def _type_text(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "|".join(str(a) for a in typing.get_args(tp))
    if origin is tuple:
        return f"list<{_type_text(typing.get_args(tp)[0])}>"
    return {int: "int", bool: "bool", str: "string", float: "float"}.get(tp, str(tp))


def _convert(info: OptionInfo, text: str | None, tp: Any = None) -> Any:
    tp = info.type if tp is None else tp
    origin = typing.get_origin(tp)
    if tp is bool:
        if text is None or text.lower() in ("true", "1", "on"):
            return True
        if text.lower() in ("false", "0", "off"):
            return False
        raise OptionError(f"expects true or false, got '{text}'")
    if text is None:
        raise OptionError("needs a value")
    if origin is tuple:
        from graphfuse.pipelines.pipeline_parser import split_list_value

        return tuple(_convert(info, item, typing.get_args(tp)[0]) for item in split_list_value(text))
    if origin is Literal:
        choices = [str(a) for a in typing.get_args(tp)]
        if text not in choices:
            raise OptionError(f"expects one of {', '.join(choices)}, got '{text}'")
        return text
    if tp is int:
        try:
            return int(text, 0)
        except ValueError:
            raise OptionError(f"expects an integer, got '{text}'") from None
    if tp is float:
        try:
            return float(text)
        except ValueError:
            raise OptionError(f"expects a number, got '{text}'") from None
    if tp is str:
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
            return text[1:-1]
        return text
    raise TypeError(f"unsupported option type {tp!r}")


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(_format(v) for v in value)
    if isinstance(value, str) and (" " in value or value == ""):
        return f'"{value}"'
    return str(value)


# -- rewrite budget ---------------------------------------------------------------


@dataclass(frozen=True)
class RewriteRecord:
    """One rewrite a budget allowed: the n-th (from 1) counted rewrite of the budget."""

    index: int
    pass_name: str
    pattern: str
    #: file:line:col of the op the rewrite started from (the pattern's root), or None when it has no location
    location: SourceLoc | None
    #: the op's name (e.g. graph.rms_norm): names the instance when there is no location
    op_name: str = ""

    def describe(self) -> str:
        where = str(self.location) if self.location else f"an op without location ({self.op_name})"
        return f"{self.pass_name}: pattern {self.pattern} at {where}"


class RewriteBudget:
    """At most ``limit`` rewrites (None: unlimited) by the passes in ``passes`` (None: every pass).

    Rewrites of passes outside ``passes`` are neither limited nor recorded.
    """

    def __init__(self, limit: int | None = None, passes: Iterable[str] | None = None):
        if limit is not None and limit < 0:
            raise ValueError(f"a rewrite budget cannot be negative, got {limit}")
        self.limit = limit
        self.passes = None if passes is None else frozenset(canonical_pass_name(name) for name in passes)
        self.records: list[RewriteRecord] = []

    def applies_to(self, pass_name: str) -> bool:
        return self.passes is None or canonical_pass_name(pass_name) in self.passes

    @property
    def spent(self) -> int:
        return len(self.records)

    def has_fuel(self, pass_name: str) -> bool:
        """Whether ``pass_name`` may rewrite once more (always, for a pass the budget does not cover)."""
        return not self.applies_to(pass_name) or self.limit is None or self.spent < self.limit

    def consume(self, pass_name: str, pattern: str, location: ir.Location | None = None, op_name: str = "") -> None:
        """Record a rewrite that happened (call after :meth:`has_fuel` said yes)."""
        if self.applies_to(pass_name):
            where = source_loc(location) if location is not None else None
            self.records.append(RewriteRecord(self.spent + 1, pass_name, pattern, where, op_name))

    def try_consume(self, pass_name: str, pattern: str, location: ir.Location | None = None,
                    op_name: str = "") -> bool:
        """For a pass about to rewrite: False when the budget is spent (do not rewrite), else records it."""
        if not self.has_fuel(pass_name):
            return False
        self.consume(pass_name, pattern, location, op_name)
        return True


def canonical_pass_name(name: str) -> str:
    """The key every pass name is compared by: underscores read as dashes (the seeds spell names both
    ways), and a ``stage.`` prefix (MindSpore's ``stage.pass`` in flags) dropped."""
    return name.rsplit(".", 1)[-1].replace("_", "-")


_ACTIVE_BUDGET: contextvars.ContextVar[RewriteBudget | None] = contextvars.ContextVar(
    "graphfuse_rewrite_budget", default=None
)


def active_rewrite_budget() -> RewriteBudget | None:
    """The budget installed by :func:`limit_rewrites`, or None (no limit: the default)."""
    return _ACTIVE_BUDGET.get()


@contextlib.contextmanager
def limit_rewrites(budget: RewriteBudget) -> Iterator[RewriteBudget]:
    """Install ``budget`` for the passes run inside the ``with`` block."""
    token = _ACTIVE_BUDGET.set(budget)
    try:
        yield budget
    finally:
        _ACTIVE_BUDGET.reset(token)


def try_consume_rewrite(pass_name: str, pattern: str, location: ir.Location | None = None,
                        op_name: str = "") -> bool:
    """The public check for a pass about to rewrite: True (go ahead, recorded) unless a budget is spent."""
    budget = _ACTIVE_BUDGET.get()
    return budget is None or budget.try_consume(pass_name, pattern, location, op_name)


class PassFailure(GraphfuseError):
    """A pass found the IR unfit for it and stopped (the pipeline fails)."""


_GRAPH_IDS = itertools.count()
_GRAPH_ID: contextvars.ContextVar[int] = contextvars.ContextVar("graphfuse_graph_id", default=0)


def current_graph_id() -> int:
    """The id of the graph (module) the running pipeline works on, as GE numbers the graphs of a session: the
    fusion log's ``RunOnePattern:GraphId[N]``."""
    return _GRAPH_ID.get()


def enter_graph() -> contextvars.Token[int]:
    """Give the module a pipeline is about to run on the next graph id; reset with :func:`leave_graph`."""
    return _GRAPH_ID.set(next(_GRAPH_IDS))


def leave_graph(token: contextvars.Token[int]) -> None:
    _GRAPH_ID.reset(token)


class PassContext:
    """What a running pass may use: statistics, fusion counts, switches, diagnostics, IR dumps."""

    def __init__(self, pass_: GraphPass, switches: typing.Any = None, dump: typing.Any = None):
        self.pass_ = pass_
        self.statistics: dict[str, int] = dict.fromkeys(type(pass_).statistics, 0)
        self.warnings: list[Diagnostic] = []
        #: the fusion switches in force (a FusionSwitches), or None when nothing was configured
        self.switches = switches
        #: (group, pass name, pattern name) -> [matched_times, effected_times]
        self.fusion: dict[tuple[str, str, str], list[int]] = {}
        #: callable(name, module) writing an IR dump after a sub-pass, or None
        self.dump = dump

    def record_fusion(self, pass_: typing.Any, pattern: str, matched: int, effected: int) -> None:
        counts = self.fusion.setdefault((pass_.group, pass_.name, pattern), [0, 0])
        counts[0] += matched
        counts[1] += effected

    def count(self, statistic: str, amount: int = 1) -> None:
        if statistic not in self.statistics:
            raise KeyError(f"pass '{self.pass_.name}' declares no statistic '{statistic}'")
        self.statistics[statistic] += amount

    def fail(self, message: str, location: ir.Location | None = None) -> typing.NoReturn:
        raise PassFailure([Diagnostic("error", message, source_loc(location) if location else None)])

    def warn(self, message: str, location: ir.Location | None = None) -> None:
        self.warnings.append(Diagnostic("warning", message, source_loc(location) if location else None))


@dataclass(frozen=True)
class GraphPass:
    """Base of every graphfuse pass: subclasses set ``name``/``summary`` and implement ``run``."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    #: statistic name -> description, as mlir-opt --mlir-pass-statistics prints them
    statistics: ClassVar[dict[str, str]] = {}

    def run(self, module: ir.Module, context: PassContext) -> None:
        raise NotImplementedError

    # -- options --------------------------------------------------------------

    @classmethod
    @functools.cache  # per class: resolving the type hints at each instantiation was 4% of a test run
    def option_infos(cls) -> tuple[OptionInfo, ...]:
        hints = typing.get_type_hints(cls)
        infos = []
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            if isinstance(tp, types.UnionType):
                raise TypeError(f"option {f.name} of {cls.__name__}: union types are not supported")
            infos.append(OptionInfo(f.name, f.name.replace("_", "-"), tp, f.default, f.metadata.get("help", "")))
        return tuple(infos)

    @classmethod
    def from_options(cls, options: typing.Iterable[tuple[str, str | None]]) -> GraphPass:
        """Instantiate from pipeline options ``[(flag, text or None)]``; raises OptionError."""
        by_flag = {info.flag: info for info in cls.option_infos()}
        by_flag.update({info.field_name: info for info in cls.option_infos()})
        values = {}
        for key, text in options:
            info = by_flag.get(key)
            if info is None:
                known = ", ".join(i.flag for i in cls.option_infos()) or "none"
                raise OptionError(f"pass '{cls.name}' has no option '{key}' (options: {known})")
            try:
                values[info.field_name] = _convert(info, text)
            except OptionError as error:
                raise OptionError(f"option '{info.flag}' of pass '{cls.name}' {error}") from None
        return cls(**values)

    def to_text(self, all_options: bool = False) -> str:
        """Pipeline text: ``name`` or ``name{opt=value ...}`` (non-default options, or all)."""
        parts = []
        for info in self.option_infos():
            value = getattr(self, info.field_name)
            if all_options or value != info.default:
                parts.append(f"{info.flag}={_format(value)}")
        return self.name + ("{" + " ".join(parts) + "}" if parts else "")
