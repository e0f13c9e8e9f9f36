"""NPU target descriptions: on-chip buffer capacities and alignments, GM bandwidth, vector and cube throughput.

A target is a small JSON file.  ``load_target("910b")`` reads the bundled
``npu_targets/910b.json``; any other argument containing a path separator or
ending in ``.json`` is read as a file.  A malformed file is a located error
(``file:line:col: error: ...``), a missing or mistyped key names the key.
The figures are an emulation model (docs/npu.md says where each comes from),
not a device specification.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc
from graphfuse.dialect.files import read_config_text
from graphfuse.dialect.nesting import line_col, nesting_message, too_deep

__all__ = ["BUFFER_SPACES", "BufferSpec", "NpuTarget", "bundled_targets", "load_target"]

TARGET_DIR = Path(__file__).resolve().parent / "npu_targets"
#: Target files are a few hundred bytes: reading stops one byte past this, so a wrong path (a device such as
#: /dev/zero, a large log) is an error at once rather than memory growing without bound.
MAX_TARGET_FILE_BYTES = 1 << 20
#: The on-chip memory spaces a target describes (GM is off-chip and unbounded).
BUFFER_SPACES = ("ub", "l1", "l0a", "l0b", "l0c")
_RATES = ("gm_bandwidth_bytes_per_s", "vector_ops_per_s", "cube_flops_per_s")


@dataclass(frozen=True)
class BufferSpec:
    bytes: int
    alignment: int

    def footprint(self, size: int) -> int:
        """``size`` bytes rounded up to the buffer's alignment (what an allocation of that size occupies)."""
        return -(-size // self.alignment) * self.alignment


@dataclass(frozen=True)
class NpuTarget:
    name: str
    description: str
    buffers: dict[str, BufferSpec]
    gm_bandwidth_bytes_per_s: float
    vector_ops_per_s: float
    cube_flops_per_s: float
    #: the file the description was read from
    path: str

    @property
    def ub(self) -> BufferSpec:
        return self.buffers["ub"]

    def buffer(self, space: str) -> BufferSpec:
        return self.buffers[space]


def bundled_targets() -> list[str]:
    return sorted(p.stem for p in TARGET_DIR.glob("*.json"))


def load_target(name_or_path: str | Path) -> NpuTarget:
    """The target named ``name_or_path`` (a bundled target) or read from that file; GraphfuseError if invalid."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or "/" in text or text.endswith(".json"):
        path, shown = Path(text), text
    else:
        path, shown = TARGET_DIR / f"{text}.json", f"npu_targets/{text}.json"
        if not path.is_file():
            raise GraphfuseError(
                f"unknown NPU target '{text}' (bundled targets: {', '.join(bundled_targets())}; or give a .json path)"
            )
    return _load(str(path.resolve()) if path.is_file() else str(path), shown)


@cache
def _load(resolved: str, shown: str) -> NpuTarget:
    """The target in file ``resolved``; diagnostics name it ``shown`` (the path as given)."""
    text = read_config_text(resolved, "NPU target file", MAX_TARGET_FILE_BYTES,
                            "a target description is a few lines of JSON", shown)
    deep = too_deep(text, "json")
    if deep is not None:  # json would raise RecursionError past ~1000 levels
        raise GraphfuseError([Diagnostic("error", nesting_message(), SourceLoc(shown, *line_col(text, deep)))])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        where = SourceLoc(shown, error.lineno, error.colno)
        raise GraphfuseError([Diagnostic("error", f"invalid JSON in NPU target: {error.msg}", where)]) from None
    return _parse(data, text, shown, resolved)


def _key_loc(text: str, key: str, shown: str) -> SourceLoc:
    """Where ``"key"`` first appears in the file (line 1, col 1 when it does not)."""
    match = re.search(rf'"{re.escape(key)}"\s*:', text)
    if match is None:
        return SourceLoc(shown, 1, 1)
    line = text.count("\n", 0, match.start()) + 1
    col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
    return SourceLoc(shown, line, col)


def _parse(data: object, text: str, shown: str, resolved: str) -> NpuTarget:
    def fail(message: str, key: str | None = None) -> GraphfuseError:
        where = _key_loc(text, key, shown) if key else SourceLoc(shown, 1, 1)
        return GraphfuseError([Diagnostic("error", message, where)])

    if not isinstance(data, dict):
        raise fail("an NPU target must be a JSON object")

    def number(obj: dict, key: str, what: str, integer: bool) -> float:
        if key not in obj:
            raise fail(f"NPU target is missing the key '{what}'")
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or (integer and value != int(value)):
            kind = "an integer" if integer else "a number"
            raise fail(f"'{what}' must be {kind}, got {json.dumps(value)}", key)
        if value <= 0:
            raise fail(f"'{what}' must be positive, got {value}", key)
        return int(value) if integer else float(value)

    for key in ("name", "description"):
        if key not in data:
            raise fail(f"NPU target is missing the key '{key}'")
        if not isinstance(data[key], str):
            raise fail(f"'{key}' must be a string", key)
    if "buffers" not in data:
        raise fail("NPU target is missing the key 'buffers'")
    if not isinstance(data["buffers"], dict):
        raise fail("'buffers' must be an object", "buffers")
    buffers = {}
    for space in BUFFER_SPACES:
        spec = data["buffers"].get(space)
        if spec is None:
            raise fail(f"NPU target is missing the key 'buffers.{space}'", "buffers")
        if not isinstance(spec, dict):
            raise fail(f"'buffers.{space}' must be an object with 'bytes' and 'alignment'", space)
        size = number(spec, "bytes", f"buffers.{space}.bytes", True)
        alignment = number(spec, "alignment", f"buffers.{space}.alignment", True)
        buffers[space] = BufferSpec(int(size), int(alignment))
    unknown = sorted(set(data["buffers"]) - set(BUFFER_SPACES))
    if unknown:
        raise fail(f"unknown buffer '{unknown[0]}' (buffers: {', '.join(BUFFER_SPACES)})", unknown[0])
    rates = {key: number(data, key, key, False) for key in _RATES}
    return NpuTarget(data["name"], data["description"], buffers, path=resolved, **rates)
