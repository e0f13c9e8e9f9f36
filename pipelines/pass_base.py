"""The base class of graphfuse passes.

A pass is a frozen dataclass whose fields are its pipeline options (xDSL
style).  ``graph-cse`` has none; a pass with options looks like

    @register_pass
    @dataclass(frozen=True)
    class GraphFusion(GraphPass):
        name: ClassVar[str] = "graph-fusion"
        summary: ClassVar[str] = "Pattern fusion passes"
        opt_level: int = option(2, "fusion level, 0 disables fusion")
        disable_pass: tuple[str, ...] = option((), "passes to switch off")

and is written ``graph-fusion{opt-level=1 disable-pass=a,b}`` in a pipeline:
field names take dashes, lists are comma-separated, a bare ``flag`` is true.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mlir import ir

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc


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


class PassFailure(GraphfuseError):
    """A pass found the IR unfit for it and stopped (the pipeline fails)."""


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
    def option_infos(cls) -> list[OptionInfo]:
        hints = typing.get_type_hints(cls)
        infos = []
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            if isinstance(tp, types.UnionType):
                raise TypeError(f"option {f.name} of {cls.__name__}: union types are not supported")
            infos.append(OptionInfo(f.name, f.name.replace("_", "-"), tp, f.default, f.metadata.get("help", "")))
        return infos

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
