"""Fusion switches from the seeds' two front ends, resolved with one semantics.

- MindSpore: ``MS_DEV_GRAPH_KERNEL_FLAGS`` / ``--graph-kernel-flags``:
  ``--key=value`` items separated by spaces, list values by commas, a bare
  ``--key`` is true.  Unknown keys and bad values warn (naming the flag and
  the valid choices), as MindSpore does; ``strict=True`` makes them errors.
- CANN: a ``fusion_switch.cfg`` file,
  ``{"Switch": {"GraphFusion": {"PassName": "on"|"off", "ALL": ...}, "UBFusion": {...}}}``,
  or the legacy format of one ``PassName:on`` line per pass.

Every entry point builds its switches with one constructor,
:meth:`FusionSwitches.from_sources`, from every source.  Whether a fusion
pass runs is decided in layers, each overriding the ones before it
(docs/fusion-switches.md):

1. the pass's default (its backends, and its driver's opt level);
2. the flags' ``enable_pass`` / ``disable_pass``: ``MS_DEV_GRAPH_KERNEL_FLAGS``
   first, then ``--graph-kernel-flags`` (``graph_kernel_flags=``), whose keys win;
3. the switch file's ``ALL`` for the pass's group, then its exact pass name
   (protected passes stay on under ``"ALL": "off"``, with a warning);
4. ``graph-fusion{enable-pass=... disable-pass=...}`` in the pipeline itself.

The same order holds for the other settings: an option written in the
pipeline (``opt-level``, ``enable-pass`` of ``graph-kernel-fusion``, ...)
wins over the flags, whose ``--graph-kernel-flags`` wins over the
environment.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc
from graphfuse.dialect.files import read_config_text
from graphfuse.dialect.nesting import line_col, nesting_message, too_deep
from graphfuse.pipelines.opt_levels import OPT_LEVELS
from graphfuse.pipelines.registry import canonical_pass_name, lookup_pass, pass_key

GROUPS = ("GraphFusion", "UBFusion")
#: The environment variable MindSpore reads its graph-kernel flags from.
FLAGS_VARIABLE = "MS_DEV_GRAPH_KERNEL_FLAGS"
#: The environment variable naming a switch file when no front end gives one (CANN's FUSION_SWITCH_FILE build
#: option, the IR build route of the seed).
SWITCH_FILE_VARIABLE = "FUSION_SWITCH_FILE"

_LIST_KEYS = (
    "enable_expand_ops", "disable_expand_ops", "enable_expand_ops_only",
    "enable_cluster_ops", "disable_cluster_ops", "enable_cluster_ops_only",
    "enable_packet_ops_only", "disable_packet_ops", "enable_pass", "disable_pass",
)
#: MindSpore's kernel-packet flags: known, and an error (no backend here has kernel packets), not a silent no-op.
_PACKET_KEYS = ("enable_packet_ops_only", "disable_packet_ops")
_BOOL_KEYS = ("dump_as_text", "enable_debug_mode")
_INT_KEYS = {"opt_level": (OPT_LEVELS[0], OPT_LEVELS[-1]), "composite_op_limit_size": (1, 1 << 20)}


@dataclass
class GraphKernelFlags:
    """Parsed ``MS_DEV_GRAPH_KERNEL_FLAGS``: every key MindSpore documents, with its default."""

    opt_level: int | None = None  # None: not given (each consumer keeps its own default)
    composite_op_limit_size: int | None = None
    dump_as_text: bool = False
    enable_debug_mode: bool = False
    lists: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict.fromkeys(_LIST_KEYS, ()))
    warnings: list[Diagnostic] = field(default_factory=list)
    given: set[str] = field(default_factory=set)  # keys the text set

    def merged_with(self, override: GraphKernelFlags) -> GraphKernelFlags:
        """These flags with every key that ``override`` sets replaced by its value."""
        out = GraphKernelFlags(self.opt_level, self.composite_op_limit_size, self.dump_as_text,
                               self.enable_debug_mode, dict(self.lists), [*self.warnings, *override.warnings],
                               self.given | override.given)
        for key in override.given:
            if key in _LIST_KEYS:
                out.lists[key] = override.lists[key]
            else:
                setattr(out, key, getattr(override, key))
        return out

    @property
    def enable_pass(self) -> tuple[str, ...]:
        return self.lists["enable_pass"]

    @property
    def disable_pass(self) -> tuple[str, ...]:
        return self.lists["disable_pass"]


def _flag_problem(flags: GraphKernelFlags, message: str, strict: bool, source: str) -> None:
    diag = Diagnostic("error" if strict else "warning", f"{source}: {message}")
    if strict:
        raise GraphfuseError([diag])
    flags.warnings.append(diag)


def parse_graph_kernel_flags(text: str, strict: bool = False, source: str = "graph kernel flags") -> GraphKernelFlags:
    """Parse a flags string such as ``--opt_level=2 --disable_pass=a,b --dump_as_text``."""
    flags = GraphKernelFlags()
    known = sorted([*_LIST_KEYS, *_BOOL_KEYS, *_INT_KEYS])
    for item in text.split():
        # The seed's examples are typeset with an en dash ("–key"); accept it as "--".
        stripped = re.sub(r"^(--|–|—)", "", item)
        if stripped == item or not stripped:
            _flag_problem(flags, f"'{item}' is not of the form --key=value", strict, source)
            continue
        key, has_value, value = stripped.partition("=")
        if key in _PACKET_KEYS:
            raise GraphfuseError([Diagnostic("error", f"{source}: flag '--{key}' does not apply to the CPU and "
                                            "emulated-NPU backends: kernel packet is a feature of MindSpore's "
                                            "Ascend backend (docs/fusion-switches.md)")])
        if key in _LIST_KEYS:
            items = tuple(v.strip() for v in value.split(",") if v.strip())
            if not items:
                _flag_problem(flags, f"flag '--{key}' needs a comma-separated list", strict, source)
                continue
            flags.lists[key] = items
            flags.given.add(key)
        elif key in _BOOL_KEYS:
            if not has_value or value.lower() in ("true", "1", "on"):
                setattr(flags, key, True)
                flags.given.add(key)
            elif value.lower() in ("false", "0", "off"):
                setattr(flags, key, False)
                flags.given.add(key)
            else:
                _flag_problem(flags, f"flag '--{key}' expects true or false, got '{value}'", strict, source)
        elif key in _INT_KEYS:
            low, high = _INT_KEYS[key]
            try:
                number = int(value)
            except ValueError:
                number = None
            if number is None or not low <= number <= high:
                _flag_problem(
                    flags, f"flag '--{key}' expects an integer in [{low}, {high}], got '{value}'", strict, source
                )
                continue
            setattr(flags, key, number)
            flags.given.add(key)
        else:
            _flag_problem(flags, f"unknown flag '--{key}' (valid flags: {', '.join(known)})", strict, source)
    for key in ("enable_pass", "disable_pass"):
        for name in flags.lists[key]:
            # A fusion pass, or a graph-kernel-fusion step (graph-kernel-fusion honours those names too).
            if _lookup_switchable(name) is None and not _is_step_name(name):
                reason = unsupported_reason(name)
                _flag_problem(flags, f"flag '--{key}' names pass '{name}', which is not implemented: {reason} "
                              "(docs/unsupported-passes.md)" if reason else
                              f"flag '--{key}' names unknown pass '{name}'", strict, source)
    return flags


def unsupported_reason(name: str) -> str | None:
    """Why a seed pass name that graphfuse does not implement is not (docs/unsupported-passes.md), or None."""
    from graphfuse.pipelines.fusion.cann import UNSUPPORTED_PASSES

    return UNSUPPORTED_PASSES.get(name)


def _is_step_name(name: str) -> bool:
    from graphfuse.pipelines.graph_kernel.fusion import is_step_name  # imported only when a name is to be checked

    return is_step_name(name)


def _lookup_switchable(name: str) -> Any:
    """The fusion pass class for a name (also ``stage.name``), or None."""
    from graphfuse.pipelines.fusion.base import FusionPass

    cls = lookup_pass(name)
    return cls if cls is not None and issubclass(cls, FusionPass) else None


# -- fusion_switch.cfg ---------------------------------------------------------


@dataclass
class SwitchFile:
    path: str
    all: dict[str, bool] = field(default_factory=dict)  # group -> ALL
    exact: dict[str, dict[str, bool]] = field(default_factory=lambda: {g: {} for g in GROUPS})
    warnings: list[Diagnostic] = field(default_factory=list)


#: Switch files are a few hundred bytes.  Reading stops one byte past this cap, so a wrong path (a log, a
#: device such as /dev/zero) is an error at once rather than memory growing without bound.
MAX_SWITCH_FILE_BYTES = 16 * 1024 * 1024


class _Pairs(list):
    """A JSON object as its (key, value) pairs in written order, duplicates kept (json keeps only the last)."""

    locations: list[tuple[int, int]]  # (line, column) of each key


def _switch_value(value: Any, name: str, path: str, line: int, col: int) -> bool:
    if isinstance(value, str) and value.lower() in ("on", "off"):
        return value.lower() == "on"
    raise GraphfuseError([Diagnostic("error", f"switch '{name}' must be \"on\" or \"off\", got {json.dumps(value)}",
                                     SourceLoc(path, line, col))])


def parse_switch_file(path: str | Path) -> SwitchFile:
    """Read a fusion_switch.cfg (JSON or the legacy line format) in time linear in its size."""
    path = str(path)
    text = read_config_text(path, "fusion switch file", MAX_SWITCH_FILE_BYTES,
                            "a switch file is a few lines of JSON")
    if text.lstrip().startswith("{"):
        return _parse_json_switches(text, path)
    return _parse_legacy_switches(text, path)


def _key_locations(text: str) -> list[tuple[int, int]]:
    """The (line, column) of every object key of valid JSON ``text``, in written order, in one pass."""
    found = []
    line, line_start, last = 1, 0, 0
    for match in re.finditer(r'"[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?', text):
        if match.group(1) is None:
            continue  # a string value, not a key
        offset = match.start()
        newlines = text.count("\n", last, offset)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", last, offset) + 1
        last = offset
        found.append((line, offset - line_start + 1))
    return found


def _attach_locations(value: Any, locations: Iterator[tuple[int, int]]) -> None:
    """Give every _Pairs in ``value`` the locations of its keys (keys are written in pre-order)."""
    if isinstance(value, _Pairs):
        value.locations = []
        for _, item in value:
            value.locations.append(next(locations))
            _attach_locations(item, locations)  # depth is bounded by too_deep's check
    elif isinstance(value, list):
        for item in value:
            _attach_locations(item, locations)


def _unique(pairs: _Pairs, result: SwitchFile) -> dict[str, tuple[Any, tuple[int, int]]]:
    """The pairs as a dict (the last of duplicate keys wins, as in json), warning about each duplicate."""
    out: dict[str, tuple[Any, tuple[int, int]]] = {}
    for (key, value), where in zip(pairs, pairs.locations, strict=True):
        if key in out:
            first = out[key][1][0]
            result.warnings.append(Diagnostic("warning", f"duplicate key '{key}' (lines {first} and {where[0]}): the "
                                                         "last one is used", SourceLoc(result.path, *where)))
        out[key] = (value, where)
    return out


def _parse_json_switches(text: str, path: str) -> SwitchFile:
    deep = too_deep(text, "json")
    if deep is not None:  # json recurses per level: RecursionError, not a message, past ~1000
        line, col = line_col(text, deep)
        raise GraphfuseError([Diagnostic("error", nesting_message(), SourceLoc(path, line, col))])
    try:
        data = json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as error:
        where = SourceLoc(path, error.lineno, error.colno)
        raise GraphfuseError([Diagnostic("error", f"malformed JSON: {error.msg}", where)]) from None
    _attach_locations(data, iter(_key_locations(text)))
    result = SwitchFile(path)
    structure = Diagnostic("error", 'expected {"Switch": {"GraphFusion": {...}, "UBFusion": {...}}}',
                           SourceLoc(path, 1, 1))
    if not isinstance(data, _Pairs):
        raise GraphfuseError([structure])
    top = _unique(data, result)
    if set(top) != {"Switch"} or not isinstance(top["Switch"][0], _Pairs):
        raise GraphfuseError([structure])
    for group, (switches, (line, col)) in _unique(top["Switch"][0], result).items():
        where = SourceLoc(path, line, col)
        if group not in GROUPS:
            raise GraphfuseError([Diagnostic("error", f"unknown section '{group}' (expected GraphFusion or UBFusion)",
                                             where)])
        if not isinstance(switches, _Pairs):
            raise GraphfuseError([Diagnostic("error", f"section '{group}' must be an object of pass switches", where)])
        for name, (value, (line, col)) in _unique(switches, result).items():
            _apply_switch(result, group, name, value, line, col)
    return result


def _parse_legacy_switches(text: str, path: str) -> SwitchFile:
    """One ``PassName:on|off`` per line; the name decides the group."""
    result = SwitchFile(path)
    seen: dict[str, int] = {}  # name -> line it was last given on
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, colon, value = line.partition(":")
        name = name.strip()
        if not colon:
            raise GraphfuseError([Diagnostic("error", f"expected 'PassName:on' or 'PassName:off', got '{line}'",
                                             SourceLoc(path, number, 1))])
        if name in seen:
            message = f"duplicate switch '{name}' (lines {seen[name]} and {number}): the last one is used"
            result.warnings.append(Diagnostic("warning", message, SourceLoc(path, number, 1)))
        seen[name] = number
        cls = _lookup_switchable(name)
        groups = GROUPS if name == "ALL" else ((cls.group,) if cls is not None else ("GraphFusion",))
        for group in groups:
            _apply_switch(result, group, name, value.strip(), number, 1)
    return result


def _apply_switch(result: SwitchFile, group: str, name: str, value: Any, line: int, col: int) -> None:
    """Record one switch; ``line`` and ``col`` locate it (a SourceLoc is made only for a diagnostic)."""
    enabled = _switch_value(value, name, result.path, line, col)
    if name == "ALL":
        result.all[group] = enabled
        return
    cls = _lookup_switchable(name)
    if cls is None:
        reason = unsupported_reason(name)
        message = (f"pass '{name}' is not implemented, its switch is ignored: {reason} (docs/unsupported-passes.md)"
                   if reason else f"unknown fusion pass '{name}' in section {group} is ignored")
        result.warnings.append(Diagnostic("warning", message, SourceLoc(result.path, line, col)))
        return
    if cls.group != group:
        result.warnings.append(Diagnostic("warning", f"pass '{name}' belongs to section {cls.group}, not {group}",
                                          SourceLoc(result.path, line, col)))
    result.exact[cls.group][canonical_pass_name(cls.name)] = enabled


# -- resolution ---------------------------------------------------------------------


@dataclass
class FusionSwitches:
    """Everything the front ends said about fusion passes; ``decide`` applies it to one pass."""

    flags: GraphKernelFlags = field(default_factory=GraphKernelFlags)
    switch_file: SwitchFile | None = None
    warnings: list[Diagnostic] = field(default_factory=list)
    _warned_protected: set[str] = field(default_factory=set)

    @classmethod
    def from_sources(
        cls,
        graph_kernel_flags: str | None = None,
        fusion_switch_file: str | Path | None = None,
        *,
        strict: bool = False,
        environ: Mapping[str, str] = os.environ,
        flags_source: str = "--graph-kernel-flags",
    ) -> FusionSwitches:
        """The switches of every source: ``MS_DEV_GRAPH_KERNEL_FLAGS`` in ``environ``, then the flags text
        (its keys win), and the switch file: ``fusion_switch_file``, else ``FUSION_SWITCH_FILE`` in
        ``environ``.  ``strict`` makes bad flags errors instead of warnings."""
        flags = parse_graph_kernel_flags(environ.get(FLAGS_VARIABLE, ""), strict, FLAGS_VARIABLE)
        if graph_kernel_flags:
            flags = flags.merged_with(parse_graph_kernel_flags(graph_kernel_flags, strict, flags_source))
        fusion_switch_file = fusion_switch_file or environ.get(SWITCH_FILE_VARIABLE) or None
        switch_file = parse_switch_file(fusion_switch_file) if fusion_switch_file else None
        return cls(flags, switch_file)

    def decide(self, cls: Any, default: bool) -> bool:
        """Whether fusion pass ``cls`` runs, given its default (layers 2 and 3 of the module doc)."""
        key = canonical_pass_name(cls.name)
        enabled = default
        if key in {pass_key(n) for n in self.flags.enable_pass}:
            enabled = True
        if key in {pass_key(n) for n in self.flags.disable_pass}:
            enabled = False
        if self.switch_file is not None:
            group_all = self.switch_file.all.get(cls.group)
            if group_all is not None:
                if not group_all and cls.protected:
                    if key not in self._warned_protected:
                        self._warned_protected.add(key)
                        message = f"pass '{cls.name}' is needed for correctness and stays on under \"ALL\": \"off\""
                        self.warnings.append(Diagnostic("warning", message))
                else:
                    enabled = group_all
            exact = self.switch_file.exact[cls.group].get(key)
            if exact is not None:
                enabled = exact
        return enabled

    def is_enabled(self, cls: Any) -> bool:
        """For a pass named explicitly in a pipeline: on unless a front end turns it off."""
        return self.decide(cls, default=True)
