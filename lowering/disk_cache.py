"""A content-addressed store of compiled code on disk, shared by every process of a user.

Each entry is a directory named by its key (a SHA-256 of everything its code depends on) holding files and an
``entry.json`` manifest with each file's size and SHA-256 and the entry's own metadata:

- **Writes are atomic.**  An entry is made in a scratch directory beside the entries and renamed into place
  whole; when two processes store the same key, the first rename wins and the other's copy is dropped.
  Readers never see a half-written entry.
- **A damaged entry is never loaded.**  A file that is missing, has another size or another hash, or a
  manifest that does not parse, makes the entry a miss: it is removed and the caller compiles again.
- **The size is bounded.**  After each store, the least recently used entries (by the manifest's modification
  time, which a hit refreshes) are removed until the store fits in its limit.

Where it is and whether it is used: :data:`CACHE_VARIABLE` (``0``, ``off``, ``false`` or ``no`` turn it off),
:data:`CACHE_DIR_VARIABLE` (default ``$XDG_CACHE_HOME/graphfuse``, else ``~/.cache/graphfuse``) and
:data:`CACHE_SIZE_VARIABLE` (bytes, or with a ``K``/``M``/``G`` suffix; default :data:`DEFAULT_LIMIT`).
``graphfuse-cache`` shows and clears it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphfuse.dialect.diagnostics import GraphfuseError

__all__ = [
    "CACHE_DIR_VARIABLE",
    "CACHE_SIZE_VARIABLE",
    "CACHE_VARIABLE",
    "DEFAULT_LIMIT",
    "CacheEntry",
    "DiskCache",
    "default_cache",
]

CACHE_VARIABLE = "GRAPHFUSE_CACHE"
CACHE_DIR_VARIABLE = "GRAPHFUSE_CACHE_DIR"
CACHE_SIZE_VARIABLE = "GRAPHFUSE_CACHE_SIZE"
#: The store's size limit when GRAPHFUSE_CACHE_SIZE is not set.
DEFAULT_LIMIT = 2 << 30
#: The layout of the entries; a store of another layout lives beside this one (its own subdirectory).
LAYOUT = 1
MANIFEST = "entry.json"
_OFF = {"0", "off", "false", "no"}
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str, what: str) -> int:
    """Bytes from ``text``: a whole number with an optional K, M, G or T suffix (powers of 1024)."""
    cleaned = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = cleaned[-1:] if cleaned[-1:] in _UNITS else ""
    number = cleaned[: len(cleaned) - len(unit)].strip()
    if not number.isdigit():
        raise GraphfuseError(f"{what}: '{text}' is not a size (bytes, or a number with K, M, G or T)")
    return int(number) * _UNITS[unit]


@dataclass(frozen=True)
class CacheEntry:
    """One stored entry: its key, its directory, its metadata and its size on disk."""

    key: str
    path: Path
    metadata: dict[str, Any]
    size: int
    #: seconds since the epoch of the last store or hit
    last_used: float

    def file(self, name: str) -> Path:
        return self.path / name


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _manifest(key: str, path: Path) -> tuple[CacheEntry, dict[str, tuple[int, str]]]:
    """The entry the manifest at ``path`` describes and its files (name -> (size, SHA-256)); raises OSError,
    ValueError, KeyError or TypeError for a manifest missing or malformed."""
    manifest = json.loads((path / MANIFEST).read_text())
    files = {name: (int(length), str(digest)) for name, (length, digest) in manifest["files"].items()}
    entry = CacheEntry(key, path, manifest["metadata"], sum(length for length, _ in files.values()),
                       (path / MANIFEST).stat().st_mtime)
    return entry, files


@dataclass(frozen=True)
class DiskCache:
    """The store at ``root`` (its entries are under ``root/v<LAYOUT>``), holding at most ``limit`` bytes."""

    root: Path
    limit: int = DEFAULT_LIMIT

    @property
    def entries_dir(self) -> Path:
        return self.root / f"v{LAYOUT}"

    def _entry_dir(self, key: str) -> Path:
        if not key or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"a cache key is a lowercase hex digest, not {key!r}")
        return self.entries_dir / key[:2] / key

    # ------------------------------------------------------------------ reading

    def get(self, key: str) -> CacheEntry | None:
        """The entry of ``key`` when it is whole (every file as its manifest says), else None; a damaged entry is
        removed.  A hit marks the entry used now."""
        path = self._entry_dir(key)
        entry = self._read(key, path)
        if entry is None:
            if path.exists():
                self._remove(path)
            return None
        with contextlib.suppress(OSError):  # a read-only store still serves its entries
            os.utime(path / MANIFEST)
        return entry

    def _read(self, key: str, path: Path) -> CacheEntry | None:
        """The entry at ``path`` if every file is as its manifest says, else None."""
        try:
            entry, files = _manifest(key, path)
            for name, (length, digest) in files.items():
                file = path / name
                if file.stat().st_size != length or _sha256(file) != digest:
                    return None
            return entry
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def entries(self) -> list[CacheEntry]:
        """Every entry whose manifest parses, least recently used first (files are not hashed)."""
        found = []
        if not self.entries_dir.is_dir():
            return found
        for shard in sorted(self.entries_dir.iterdir()):
            if not shard.is_dir():
                continue
            for path in shard.iterdir():
                try:
                    found.append(_manifest(path.name, path)[0])
                except (OSError, ValueError, KeyError, TypeError):
                    continue
        return sorted(found, key=lambda entry: entry.last_used)

    # ------------------------------------------------------------------ writing

    def put(self, key: str, files: dict[str, Path | bytes], metadata: dict[str, Any]) -> CacheEntry | None:
        """Store ``files`` (name -> a file to copy, or bytes) and ``metadata`` under ``key``; the entry, or None
        when the store cannot be written (a read-only or full disk: the compiled code is still used, just not
        kept).  An entry already there is kept."""
        final = self._entry_dir(key)
        try:
            self.entries_dir.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=f".{key[:16]}-", dir=self.entries_dir))
        except OSError:
            return None
        try:
            described = {}
            for name, content in files.items():
                target = scratch / name
                if isinstance(content, bytes):
                    target.write_bytes(content)
                else:
                    shutil.copyfile(content, target)
                described[name] = [target.stat().st_size, _sha256(target)]
            manifest = {"files": described, "metadata": metadata, "stored": time.time()}
            (scratch / MANIFEST).write_text(json.dumps(manifest))
            final.parent.mkdir(exist_ok=True)
            try:
                os.rename(scratch, final)
            except OSError:  # another process stored it first: keep that one
                self._remove(scratch)
        except OSError:
            self._remove(scratch)
            return None
        self.evict(self.limit)
        return self._read(key, final)

    def evict(self, limit: int) -> int:
        """Remove least recently used entries until the store holds at most ``limit`` bytes; how many went.
        Scratch directories a killed process left behind (older than an hour) go too."""
        removed = 0
        entries = self.entries()
        total = sum(entry.size for entry in entries)
        for entry in entries:
            if total <= limit:
                break
            self._remove(entry.path)
            total -= entry.size
            removed += 1
        with contextlib.suppress(OSError):
            for leftover in [*self.entries_dir.glob(".*"), *self.root.glob(".removed-*")]:
                if time.time() - leftover.stat().st_mtime > 3600:
                    shutil.rmtree(leftover, ignore_errors=True)
        return removed

    def clear(self) -> int:
        """Remove every entry; how many there were."""
        count = len(self.entries())
        self._remove(self.entries_dir)
        return count

    def _remove(self, path: Path) -> None:
        """Remove an entry (renamed aside first, so that no reader finds it half removed)."""
        aside = self.root / f".removed-{path.name}-{os.getpid()}-{time.monotonic_ns()}"
        try:
            os.rename(path, aside)
        except OSError:
            return
        shutil.rmtree(aside, ignore_errors=True)


def cache_dir() -> Path:
    """Where the store is: GRAPHFUSE_CACHE_DIR, else the user's cache directory."""
    given = os.environ.get(CACHE_DIR_VARIABLE, "").strip()
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "graphfuse"


def cache_limit() -> int:
    text = os.environ.get(CACHE_SIZE_VARIABLE, "").strip()
    return DEFAULT_LIMIT if not text else parse_size(text, CACHE_SIZE_VARIABLE)


def cache_enabled() -> bool:
    return os.environ.get(CACHE_VARIABLE, "").strip().lower() not in _OFF


def default_cache() -> DiskCache | None:
    """The store the environment selects, or None when GRAPHFUSE_CACHE turns it off."""
    if not cache_enabled():
        return None
    return DiskCache(cache_dir(), cache_limit())
