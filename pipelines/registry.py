"""The registry of graphfuse passes, by pipeline name.

Two kinds of entries:

- *loaders*: the built-in passes.  Their table (``graphfuse.builtin_passes``)
  lives above every layer that defines passes and hands each name a function
  that imports its class on first use, as xDSL's pass table does.  So listing
  pass names imports nothing, and no built-in pass imports this module.
- *classes* registered at run time: pass plugins (``graphfuse-opt
  --load-pass-plugin``, with :func:`register_pass`) and user fusion patterns
  (``graphfuse.register_replacement``).

Pass names are compared by ``pass_base.canonical_pass_name`` (the seeds
spell them with underscores and dashes alike).
:func:`generation` counts the changes made at run time, so caches of compiled
code can tell that the set of passes changed.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from graphfuse.pipelines.pass_base import canonical_pass_name

if TYPE_CHECKING:
    from graphfuse.pipelines.pass_base import GraphPass

PassLoader = Callable[[], "type[GraphPass]"]

#: canonical name -> loader of a built-in pass (imports its module on first use)
_LOADERS: dict[str, PassLoader] = {}
#: canonical name -> the name as written by the pass (the key's original spelling)
_NAMES: dict[str, str] = {}
#: canonical name -> class: loaded built-ins and passes registered at run time
_CLASSES: dict[str, type[GraphPass]] = {}
#: canonical name -> position of registration, so that passes of equal priority keep their registration order
_ORDER: dict[str, int] = {}
#: canonical other name -> canonical name of the pass it names (the seeds' names for a pass graphfuse calls
#: otherwise)
_ALIASES: dict[str, str] = {}
_generation = 0


def lazy_pass(module: str, class_name: str) -> PassLoader:
    """A loader of ``class_name`` from the module named ``module`` (imported when the pass is first asked for)."""
    return lambda: getattr(importlib.import_module(module), class_name)


def add_pass_loaders(table: Mapping[str, PassLoader]) -> None:
    """Add built-in passes by name, each with the function that loads its class."""
    for name, loader in table.items():
        key = canonical_pass_name(name)
        _LOADERS[key] = loader
        _NAMES.setdefault(key, name)
        _ORDER.setdefault(key, len(_ORDER))


def add_pass_aliases(table: Mapping[str, str]) -> None:
    """Let each key name the pass named by its value: in pipelines, flags, switch files and lookups."""
    for alias, name in table.items():
        _ALIASES[canonical_pass_name(alias)] = canonical_pass_name(name)


def pass_key(name: str) -> str:
    """The canonical name of the pass ``name`` names: its own, or the one an alias stands for."""
    key = canonical_pass_name(name)
    return _ALIASES.get(key, key)


def aliases_of(name: str) -> list[str]:
    """The other names of the pass ``name`` (canonical spelling)."""
    key = pass_key(name)
    return sorted(alias for alias, target in _ALIASES.items() if target == key)


def register_pass(cls: type[GraphPass]) -> type[GraphPass]:
    """Add a pass class at run time (a plugin, a user pattern); usable as a class decorator.

    A name already taken by another pass is an error; registering the same
    class again is not.
    """
    global _generation
    key = canonical_pass_name(cls.name)
    if not cls.name or not cls.summary:
        raise ValueError(f"pass class {cls.__name__} needs a name and a summary")
    if key in _ALIASES or key in _LOADERS or (key in _CLASSES and _CLASSES[key] is not cls):
        raise ValueError(f"a pass named '{cls.name}' is already registered")
    if _CLASSES.get(key) is not cls:
        _CLASSES[key] = cls
        _NAMES[key] = cls.name
        _ORDER[key] = len(_ORDER)
        _generation += 1
    return cls


def unregister_pass(name: str) -> type[GraphPass]:
    """Remove a pass registered at run time; returns its class.  KeyError when no such pass was registered."""
    global _generation
    key = canonical_pass_name(name)
    if key in _LOADERS:
        raise KeyError(f"'{name}' is a built-in pass and cannot be removed")
    cls = _CLASSES.pop(key)
    del _NAMES[key], _ORDER[key]
    _generation += 1
    return cls


def generation() -> int:
    """How many times passes were registered or removed at run time (compiled-code caches key on it)."""
    return _generation


def runtime_passes() -> list[str]:
    """The passes registered at run time (plugins, user patterns) and not removed since, by name."""
    return sorted(_NAMES[key] for key in _CLASSES if key not in _LOADERS)


def pass_names() -> list[str]:
    """Every pass name, sorted; imports no pass."""
    return sorted(_NAMES.values(), key=str.lower)


def lookup_pass(name: str) -> type[GraphPass] | None:
    """The pass class of a name (in either spelling, or an alias), loading a built-in one on first use; None
    when unknown."""
    key = pass_key(name)
    cls = _CLASSES.get(key)
    if cls is None and key in _LOADERS:
        cls = _CLASSES[key] = _LOADERS[key]()
    return cls


def all_passes() -> list[type[GraphPass]]:
    """Every pass class, sorted by name (loads every built-in pass)."""
    classes = [lookup_pass(key) for key in list(_NAMES)]
    return sorted((cls for cls in classes if cls is not None), key=lambda cls: cls.name)


def registration_order(cls: type[GraphPass]) -> int:
    """When ``cls`` was added (table order for built-ins, then run-time registrations)."""
    return _ORDER.get(canonical_pass_name(cls.name), len(_ORDER))


def suggest_pass(name: str) -> str | None:
    """The closest pass name, for 'did you mean' hints (imports no pass)."""
    matches = difflib.get_close_matches(canonical_pass_name(name), list(_NAMES), n=1, cutoff=0.7)
    return _NAMES[matches[0]] if matches else None
