"""graphfuse's log: the seeds' INFO lines (pass lists, per-pass runs, per-pattern counts) and debug reasons.

Levels follow glog as MindSpore uses it: ``GLOG_v=0`` debug, ``1`` info,
``2`` warning (the default), ``3`` error; ``--log-level=NAME`` overrides it.
Lines are written to stderr as ``[INFO] message``.
"""

from __future__ import annotations

import logging
import os
import sys

from graphfuse.dialect.diagnostics import printable

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_GLOG_V = {"0": "debug", "1": "info", "2": "warning", "3": "error"}

_logger = logging.getLogger("graphfuse")
_logger.propagate = False


class _Handler(logging.StreamHandler):
    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self):  # always the current sys.stderr (tests and tools swap it)
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))  # log lines echo op and pass names: escape control characters


_handler = _Handler()
_handler.setFormatter(_Formatter("[%(levelname)s] %(message)s"))
_logger.addHandler(_handler)


def level_from_environment() -> str:
    """The level GLOG_v asks for ("warning" when unset or unknown)."""
    return _GLOG_V.get(os.environ.get("GLOG_v", "").strip(), "warning")


def configure(level: str | None = None) -> None:
    """Set the level by name; None reads GLOG_v."""
    name = (level or level_from_environment()).lower()
    if name not in LEVELS:
        raise ValueError(f"unknown log level '{level}' (expected one of {', '.join(LEVELS)})")
    _logger.setLevel(LEVELS[name])


configure()


def debug(message: str) -> None:
    _logger.debug(message)


def info(message: str) -> None:
    _logger.info(message)


def warning(message: str) -> None:
    _logger.warning(message)


def enabled(level: str) -> bool:
    return _logger.isEnabledFor(LEVELS[level])
