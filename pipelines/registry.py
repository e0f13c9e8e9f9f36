"""The one registry of graphfuse passes, by pipeline name."""

from __future__ import annotations

import difflib

from graphfuse.pipelines.pass_base import GraphPass

PASSES: dict[str, type[GraphPass]] = {}


def canonical_pass_name(name: str) -> str:
    """Pipeline names are compared with underscores read as dashes (seed names use both)."""
    return name.replace("_", "-")


def register_pass(cls: type[GraphPass]) -> type[GraphPass]:
    """Class decorator adding a pass to the registry."""
    key = canonical_pass_name(cls.name)
    if not cls.name or not cls.summary:
        raise ValueError(f"pass class {cls.__name__} needs a name and a summary")
    if key in PASSES and PASSES[key] is not cls:
        raise ValueError(f"a pass named '{cls.name}' is already registered")
    PASSES[key] = cls
    return cls


def unregister_pass(name: str) -> type[GraphPass]:
    """Remove a pass from the registry (user fusion patterns, tests); returns its class, KeyError when unknown."""
    return PASSES.pop(canonical_pass_name(name))


def _load_passes() -> None:
    from graphfuse.pipelines import passes  # noqa: F401  (registers the built-in passes)


def lookup_pass(name: str) -> type[GraphPass] | None:
    _load_passes()
    return PASSES.get(canonical_pass_name(name))


def all_passes() -> list[type[GraphPass]]:
    _load_passes()
    return sorted(PASSES.values(), key=lambda cls: cls.name)


def suggest_pass(name: str) -> str | None:
    """The closest registered name, for 'did you mean' hints."""
    _load_passes()
    matches = difflib.get_close_matches(canonical_pass_name(name), list(PASSES), n=1, cutoff=0.7)
    return PASSES[matches[0]].name if matches else None
