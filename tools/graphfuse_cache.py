"""graphfuse-cache: show, prune and clear the on-disk compile cache.

    graphfuse-cache [info]                    where it is, whether it is on, its entries and bytes
    graphfuse-cache list                      every entry, least recently used first
    graphfuse-cache prune [--max-size SIZE]   drop least recently used entries down to SIZE (default: the limit)
    graphfuse-cache clear                     drop every entry
    (each takes --dir DIR: that cache instead of the one the environment selects)

graphfuse.compile, graphfuse-run and the torch backend keep compiled code there
(GRAPHFUSE_CACHE_DIR, else ``$XDG_CACHE_HOME/graphfuse`` or ``~/.cache/graphfuse``),
at most GRAPHFUSE_CACHE_SIZE bytes; GRAPHFUSE_CACHE=0 turns it off (docs/compile-cache.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from graphfuse.lowering.codegen.cpu.specs import format_bytes
from graphfuse.lowering.disk_cache import DiskCache, cache_dir, cache_enabled, cache_limit, parse_size
from graphfuse.tools.reporting import UsageError, run_tool

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2 with a usage dump
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="graphfuse-cache", description=__doc__.split("\n\n")[0])
    p.add_argument("command", nargs="?", default="info", choices=("info", "list", "prune", "clear"))
    p.add_argument("--dir", help="the cache directory (default: GRAPHFUSE_CACHE_DIR, else the user's cache)")
    p.add_argument("--max-size", help="prune: the size to keep at most (bytes, or with K, M, G; default: the limit)")
    return p


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _body(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.max_size is not None and args.command != "prune":
        raise UsageError("--max-size goes with prune")
    store = DiskCache(Path(args.dir) if args.dir else cache_dir(), cache_limit())
    if store.root.exists() and not store.root.is_dir():
        raise UsageError(f"'{store.root}' is not a directory")
    entries = store.entries()
    total = sum(entry.size for entry in entries)
    if args.command == "info":
        state = "on" if cache_enabled() else "off (GRAPHFUSE_CACHE)"
        kinds: dict[str, int] = {}
        for entry in entries:
            kind = str(entry.metadata.get("kind", "?"))
            kinds[kind] = kinds.get(kind, 0) + 1
        print(f"compile cache: {store.root} ({state})")
        print(f"entries: {len(entries)}" + (f" ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})"
                                             if kinds else ""))
        print(f"size: {format_bytes(total)} of at most {format_bytes(store.limit)}")
    elif args.command == "list":
        for entry in entries:
            described = ", ".join(f"{k}={v}" for k, v in sorted(entry.metadata.items()))
            print(f"{entry.key[:16]}  {_when(entry.last_used)}  {format_bytes(entry.size):>10}  {described}")
    elif args.command == "prune":
        limit = store.limit if args.max_size is None else parse_size(args.max_size, "--max-size")
        removed = store.evict(limit)
        print(f"removed {removed} entr{'y' if removed == 1 else 'ies'}; "
              f"{format_bytes(sum(entry.size for entry in store.entries()))} left")
    else:
        removed = store.clear()
        print(f"removed {removed} entr{'y' if removed == 1 else 'ies'} from {store.root}")
    return 0


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_tool("graphfuse-cache", _body, argv))


if __name__ == "__main__":
    main()
