"""The torch backend's on-disk cache: an FX graph's import kept, so that a later process skips torch.export.

Exporting an FX graph with ``torch.export``, running its decompositions and importing the result take most of
a warm compile once graphfuse.compile's own cache (lowering/compile_cache.py) holds the code.  Keyed as
Inductor's FX graph cache is, on what Dynamo hands the backend, this cache keeps the import's result:

- **the key**: the FX graph's code (every submodule's, with the source lines Dynamo writes beside the nodes:
  they become the graph's locations), the bytes of the tensors it reads as attributes, each input's shape (the
  symbolic dims left out), dtype, device and layout, the values of the inputs compiled in (Python numbers,
  frozen parameters' bytes), the compile options, the front end's and compiler's code, PyTorch's version;
- **the entry**: the imported module's text (the compile then hits graphfuse.compile's cache, or compiles
  it without exporting again when that entry was evicted) and what the backend needs of the import to call
  it (:class:`ImportedGraph`); or, for a compile that failed, its message (:class:`CachedFailure`: a later
  process falls back at once, without exporting again).

It is used when graphfuse.compile's cache is (GRAPHFUSE_CACHE and friends) and stored in the same place.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx
from torch.utils import _pytree as pytree

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.frontends.dynamic_shapes import SymbolicInputs
from graphfuse.frontends.torch import ImportedModel
from graphfuse.lowering.compile_cache import code_fingerprint, compiler_fingerprint, options_key
from graphfuse.lowering.disk_cache import default_cache
from graphfuse.lowering.options import CompileOptions
from graphfuse.pipelines import log

__all__ = ["CachedFailure", "ImportedGraph", "StoredImport", "graph_key", "load_import", "store_failure",
           "store_import"]

ENTRY_VERSION = 1
_IMPORT = "import.json.zlib"


@dataclass(frozen=True)
class ImportedGraph:
    """What the backend needs of an FX graph's import to call its compiled code."""

    #: the flattened inputs the function writes (its first results are their new values)
    mutated_inputs: tuple[int, ...]
    #: per flattened input: whether the function takes it (a tensor) or it was compiled in
    tensor_inputs: tuple[bool, ...]
    #: the output structure of the exported graph
    out_spec: pytree.TreeSpec
    graph_ops: dict[str, int]

    @staticmethod
    def of(imported: ImportedModel) -> ImportedGraph:
        return ImportedGraph(tuple(imported.mutated_inputs), tuple(imported._tensor_inputs),
                             imported.call_spec.out_spec, dict(imported.graph_ops))

    def unflatten(self, outputs: Sequence[Any]) -> Any:
        """The graph's output structure holding ``outputs`` (the mutated inputs' new values left out)."""
        return pytree.tree_unflatten(list(outputs)[len(self.mutated_inputs):], self.out_spec)


@dataclass(frozen=True)
class StoredImport:
    """An import as the cache keeps it: the module's text (None: no result is computed) and its use."""

    text: str | None
    imported: ImportedGraph
    #: the symbolic dims the export kept
    symbolic: SymbolicInputs
    #: positions among the imported function's results of those the compiled code returns; how many there are
    computed: tuple[int, ...]
    results: int


class CachedFailure(GraphfuseError):
    """A compile of the graph for these inputs that failed in an earlier process, with that process's message:
    it would fail again (the key holds everything the compile depends on), so it is not tried again."""

    def __init__(self, message: str):
        Exception.__init__(self, message)
        self.diagnostics = []


def _graph_digest(gm: fx.GraphModule) -> str:
    """The FX graph's code, every nested graph's, and the tensors read as attributes."""
    digest = hashlib.sha256()
    for name, module in gm.named_modules():
        if isinstance(module, fx.GraphModule):  # the code as text: gm.code would also compile it
            digest.update(f"module {name}\n".encode() + module.graph.python_code(root_module="self").src.encode())
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        value: Any = gm
        for part in str(node.target).split("."):
            value = getattr(value, part)
        digest.update(f"attribute {node.target}\n".encode())
        if isinstance(value, torch.Tensor):
            digest.update(_tensor_bytes(value))
            digest.update(repr((tuple(value.shape), value.dtype)).encode())
        elif not isinstance(value, torch.nn.Module):
            digest.update(repr(value).encode())
    return digest.hexdigest()


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    flat = tensor.detach().contiguous().cpu().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def _input_key(position: int, value: Any, scalars: Sequence[int], symbolic: SymbolicInputs,
               frozen: Sequence[int]) -> list[Any]:
    if position in scalars:
        return ["scalar", value.item()]
    if position in symbolic.sizes:
        return ["size"]
    if isinstance(value, torch.Tensor):
        dims = symbolic.tensor_dims.get(position, ())
        shape = [None if d in dims else n for d, n in enumerate(value.shape)]
        described = ["tensor", shape, str(value.dtype), str(value.device), value.is_contiguous(),
                     value.requires_grad]
        if position in frozen:
            described.append(hashlib.sha256(_tensor_bytes(value)).hexdigest())
        return described
    return ["value", type(value).__name__, repr(value)]


def graph_key(gm: fx.GraphModule, args: Sequence[Any], scalars: Sequence[int], symbolic: SymbolicInputs,
              frozen: Sequence[int], options: CompileOptions) -> str | None:
    """The key of compiling ``gm`` for ``args``; None when the cache is off or the graph cannot be keyed (its
    attributes are not all tensors, modules and plain values)."""
    if default_cache() is None:
        return None
    try:
        described = {
            "version": ENTRY_VERSION,
            "graph": _graph_digest(gm),
            "inputs": [_input_key(k, a, scalars, symbolic, frozen) for k, a in enumerate(args)],
            "symbolic": [sorted(symbolic.tensor_dims.items()), sorted(symbolic.sizes)],
            "options": options_key(options),
            "code": [compiler_fingerprint(), code_fingerprint("graphfuse.frontends")],
            "torch": torch.__version__,
        }
        return hashlib.sha256(json.dumps(described, sort_keys=True, default=repr).encode()).hexdigest()
    except (AttributeError, TypeError, ValueError, RuntimeError) as error:
        log.debug(f"graphfuse backend: the FX graph is not cached on disk: {error}")
        return None


def store_failure(key: str, error: GraphfuseError) -> None:
    """Keep the failure of the compile under ``key``: a later process raises it as :class:`CachedFailure`."""
    store = default_cache()
    if store is not None:
        store.put(key, {_IMPORT: zlib.compress(json.dumps({"failure": str(error)}).encode(), 1)},
                  {"kind": "torch-import", "failed": True})


def store_import(key: str, stored: StoredImport) -> None:
    """Keep ``stored`` under ``key`` (nothing when the store cannot be written or the output structure cannot
    be written down)."""
    store = default_cache()
    if store is None:
        return
    try:
        description = {
            "text": stored.text,
            "mutated_inputs": list(stored.imported.mutated_inputs),
            "tensor_inputs": list(stored.imported.tensor_inputs),
            "out_spec": pytree.treespec_dumps(stored.imported.out_spec),
            "graph_ops": stored.imported.graph_ops,
            "symbolic": {"tensor_dims": [[k, list(d)] for k, d in stored.symbolic.tensor_dims.items()],
                         "sizes": sorted(stored.symbolic.sizes)},
            "computed": list(stored.computed),
            "results": stored.results,
        }
        packed = zlib.compress(json.dumps(description).encode(), 1)
    except (TypeError, ValueError, NotImplementedError) as error:
        log.debug(f"graphfuse backend: the import is not cached on disk: {error}")
        return
    store.put(key, {_IMPORT: packed}, {"kind": "torch-import"})


def load_import(key: str) -> StoredImport | None:
    """The import stored under ``key``, or None; raises :class:`CachedFailure` for a compile that failed."""
    store = default_cache()
    entry = None if store is None else store.get(key)
    if entry is None:
        return None
    try:
        described = json.loads(zlib.decompress(entry.file(_IMPORT).read_bytes()))
        if "failure" in described:
            failure = str(described["failure"])
        else:
            failure = None
            imported = ImportedGraph(tuple(described["mutated_inputs"]), tuple(described["tensor_inputs"]),
                                     pytree.treespec_loads(described["out_spec"]), dict(described["graph_ops"]))
            symbolic = SymbolicInputs({int(k): tuple(d) for k, d in described["symbolic"]["tensor_dims"]},
                                      frozenset(described["symbolic"]["sizes"]))
            stored = StoredImport(described["text"], imported, symbolic, tuple(described["computed"]),
                                  int(described["results"]))
    except (OSError, ValueError, KeyError, TypeError, zlib.error, GraphfuseError) as error:
        log.debug(f"graphfuse backend: cached import {key[:12]} not loaded: {error}")
        return None
    if failure is not None:
        raise CachedFailure(failure)
    return stored

