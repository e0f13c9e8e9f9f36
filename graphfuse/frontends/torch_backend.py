"""``torch.compile(model, backend="graphfuse")``: graphfuse as a TorchDynamo backend.

    import torch
    from graphfuse.frontends.torch_backend import CompilerConfig, get_backend

    compiled = torch.compile(model, backend="graphfuse")            # the default configuration

    config = CompilerConfig(opt_level=2)
    config.experimental_config.pattern_fusion_pass = False          # TorchAir's switch
    compiled = torch.compile(model, backend=get_backend(compiler_config=config))

The name ``"graphfuse"`` is registered through the ``torch_dynamo_backends``
entry point of the installed package, so ``torch.compile`` finds it without
an import.  Dynamo hands the backend one FX graph at a time (a model with
graph breaks gives several); for each the backend returns a callable that

1. keys a call on its inputs' shapes and dtypes (and the values of its
   non-tensor inputs), the sizes Dynamo made symbols left out
   (:mod:`graphfuse.frontends.dynamic_shapes`: one compile serves them all).
   Each new key exports the FX graph with ``torch.export`` on those inputs,
   imports it (:mod:`graphfuse.frontends.torch`) and compiles it with
   :func:`graphfuse.compile`; later calls with the same key reuse the
   compiled code.  At most ``cache_size_limit`` keys are compiled per FX
   graph; inputs of yet another shape run the FX graph in eager PyTorch, with
   a warning, instead of compiling without bound;
2. passes the inputs to the compiled code without copying them (contiguous
   CPU tensors are viewed as numpy arrays), returns its results as tensors
   sharing their memory, and writes the new values of inputs the graph
   mutates (a static KV cache's ``index_copy_``) back into those tensors.

A graph graphfuse cannot take (an ATen op the importer does not know, a
dynamic size it cannot compile, a tensor that needs gradients) runs in eager
PyTorch instead, and a warning names the op and the source line; with
``fallback="error"`` it is an error.  :func:`last_report` tells what
happened to every graph.
"""

from __future__ import annotations

import copy
import os
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import func as func_dialect

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import entry_function
from graphfuse.dialect.parsing import SourceText
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.frontends.dynamic_shapes import (
    NO_SYMBOLS,
    SymbolicInputs,
    export_dynamic_shapes,
    exported_symbolic_dims,
    sizes_read_from_tensors,
    symbolic_dims,
)
from graphfuse.frontends.torch import ImportedModel, fired_fusions, import_program
from graphfuse.frontends.torch.dtypes import _TORCH_DTYPES
from graphfuse.frontends.torch.export import export_inference
from graphfuse.frontends.torch_graph_cache import (
    ImportedGraph,
    StoredImport,
    graph_key,
    load_import,
    store_failure,
    store_import,
)
from graphfuse.lowering.compiler import Executable
from graphfuse.lowering.compiler import compile as graphfuse_compile
from graphfuse.lowering.options import CompileOptions, resolve_options
from graphfuse.pipelines import log
from graphfuse.pipelines.fusion.graph_fusion import PATTERN_FUSION_PASS
from graphfuse.pipelines.fusion.switches import FLAGS_VARIABLE, parse_graph_kernel_flags
from graphfuse.pipelines.opt_levels import opt_level_error

try:
    import torch
    from torch import fx
except ImportError as _error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "graphfuse.frontends.torch_backend needs PyTorch: install the extra with pip install 'graphfuse[torch]'"
    ) from _error

__all__ = ["BACKEND_NAME", "CompilerConfig", "ExperimentalConfig", "GraphReport", "get_backend", "graphfuse_backend",
           "last_report"]

#: the name ``torch.compile`` knows the backend by
BACKEND_NAME = "graphfuse"


@dataclass
class ExperimentalConfig:
    """TorchAir's ``experimental_config`` fields graphfuse honours."""

    #: FX-graph pattern fusion: the ``pattern_fusion_pass`` fusion pass and every pattern registered with
    #: ``graphfuse.register_replacement``.  Off turns them all off (docs/frontend-torch.md).
    pattern_fusion_pass: bool = True
    #: compile parameters and buffers in as constants (weights pre-packed, batch norms folded into
    #: convolutions).  A parameter written in place or replaced afterwards (its version counter or storage
    #: changes) makes the next call compile again.  Off, they are passed to the compiled code at every call.
    frozen_parameter: bool = False
    #: how a call tells that a frozen parameter changed: "version" (its storage and version counter: free, but
    #: blind to writes that bypass the counter, through ``.data``, a numpy view or another alias of the memory)
    #: or "content" (also a CRC-32 of its bytes at every call: sees every write, at about 4 GB/s of weights)
    frozen_parameter_check: Literal["version", "content"] = "version"


@dataclass
class CompilerConfig:
    """How the ``graphfuse`` backend compiles each FX graph (TorchAir's ``CompilerConfig``, for the CPU)."""

    #: graph pipeline opt level (0: no fusion; 1 and 2: docs/fusion-switches.md)
    opt_level: int = 2
    #: ``MS_DEV_GRAPH_KERNEL_FLAGS`` syntax, e.g. ``"--disable_pass=add_layer_norm_fusion"``
    graph_kernel_flags: str | None = None
    #: a CANN ``fusion_switch.cfg`` file
    fusion_switch_file: str | Path | None = None
    #: threads for the parallel loops (default: ``GRAPHFUSE_NUM_THREADS``, else every core)
    num_threads: int | None = None
    #: fast-math forms (FMA contraction, one reciprocal per row; docs/lowering.md)
    fast_math: bool = True
    #: input shapes compiled per FX graph; calls with further shapes run in eager PyTorch
    cache_size_limit: int = 8
    #: what a graph graphfuse cannot compile does: run in eager PyTorch with a warning, or raise
    fallback: Literal["eager", "error"] = "eager"
    experimental_config: ExperimentalConfig = field(default_factory=ExperimentalConfig)

    def check(self) -> None:
        """Raise :class:`GraphfuseError` naming the first field with a value the backend cannot use."""
        problem = opt_level_error(self.opt_level)
        if problem is not None:
            raise GraphfuseError(f"CompilerConfig.opt_level: {problem}")
        limit = self.cache_size_limit
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise GraphfuseError(f"CompilerConfig.cache_size_limit must be a positive integer, got {limit!r}")
        if self.fallback not in ("eager", "error"):
            raise GraphfuseError(f"CompilerConfig.fallback must be 'eager' or 'error', got {self.fallback!r}")
        threads = self.num_threads
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
            raise GraphfuseError(f"CompilerConfig.num_threads must be a positive integer, got {threads!r}")
        if self.graph_kernel_flags is not None:
            parse_graph_kernel_flags(self.graph_kernel_flags, strict=True, source="CompilerConfig.graph_kernel_flags")
        if self.fusion_switch_file is not None and not Path(self.fusion_switch_file).is_file():
            raise GraphfuseError(f"CompilerConfig.fusion_switch_file: no such file '{self.fusion_switch_file}'")
        if not isinstance(self.experimental_config, ExperimentalConfig):
            raise GraphfuseError("CompilerConfig.experimental_config must be an ExperimentalConfig")
        if self.experimental_config.frozen_parameter_check not in ("version", "content"):
            raise GraphfuseError("CompilerConfig.experimental_config.frozen_parameter_check must be 'version' or "
                                 f"'content', got {self.experimental_config.frozen_parameter_check!r}")

    def compile_options(self) -> CompileOptions:
        """The options an FX graph compiles with: these fields, and the environment and graphfuse.context as
        they are now (:func:`~graphfuse.lowering.options.resolve_options`)."""
        return resolve_options(opt_level=self.opt_level, graph_kernel_flags=self.flags_text(),
                               fusion_switch_file=self.fusion_switch_file, num_threads=self.num_threads,
                               fast_math=self.fast_math)

    def flags_text(self) -> str | None:
        """The graph-kernel flags to compile with: the user's, plus ``pattern_fusion_pass`` turned off when
        ``experimental_config.pattern_fusion_pass`` is False (the registered user patterns follow that pass's
        switch, docs/user-patterns.md).

        The user's ``--disable_pass`` list (or, without one, the environment's, which it would replace) is kept
        and extended, so the switch adds to what was asked rather than replacing it.
        """
        if self.experimental_config.pattern_fusion_pass:
            return self.graph_kernel_flags
        given = parse_graph_kernel_flags(self.graph_kernel_flags or "")
        if "disable_pass" not in given.given:
            given = parse_graph_kernel_flags(os.environ.get(FLAGS_VARIABLE, ""))
        disabled = [*given.disable_pass, PATTERN_FUSION_PASS]
        return f"{self.graph_kernel_flags or ''} --disable_pass={','.join(dict.fromkeys(disabled))}".strip()


# --------------------------------------------------------------------------
# What happened to each graph.


@dataclass
class GraphReport:
    """One FX graph Dynamo handed to the backend."""

    #: the backend's number for it, from 1 in the order Dynamo compiled them
    number: int
    #: FX nodes in the Dynamo graph
    nodes: int
    #: the input shapes compiled, and the seconds each compile took (export, import, graphfuse.compile)
    compiled: dict[str, float] = field(default_factory=dict)
    #: why calls ran in eager PyTorch (one entry per reason)
    fallbacks: list[str] = field(default_factory=list)
    #: fusion passes that fired in the last compile, with their counts
    fusions: dict[str, int] = field(default_factory=dict)
    #: graph ops of the last import
    graph_ops: dict[str, int] = field(default_factory=dict)
    #: tensors the last compiled version takes at each call (frozen parameters are not among them)
    arguments: int = 0
    #: outputs of the last compiled version that eager returns as views of an input or of another output: made
    #: again as such views after the call, not computed (a graph of views alone runs no compiled code)
    views: int = 0
    calls: int = 0
    eager_calls: int = 0
    #: compiles again because a frozen parameter changed
    recompiles: int = 0
    #: why the sizes Dynamo made symbols were compiled one shape at a time (None: they were not, or there were none)
    per_shape: str | None = None
    #: compiles taken whole from the on-disk compile cache (the import, and the code when there is any)
    from_cache: int = 0

    def summary(self) -> str:
        state = f"{len(self.compiled)} shape(s) compiled" if self.compiled else "not compiled"
        line = f"FX graph {self.number} ({self.nodes} nodes): {state}, {self.calls} call(s), {self.eager_calls} eager"
        if self.fusions:
            line += "; fusions " + ", ".join(f"{name} x{n}" for name, n in sorted(self.fusions.items()))
        if self.per_shape is not None:
            line += f"\n  compiled per shape: {self.per_shape}"
        return line + "".join(f"\n  eager: {reason}" for reason in self.fallbacks)


_REPORTS: list[GraphReport] = []
_REPORTS_LOCK = threading.Lock()


def last_report() -> list[GraphReport]:
    """The graphs of every ``graphfuse`` backend compile in this process, in order (a copy of the list)."""
    with _REPORTS_LOCK:
        return list(_REPORTS)


def clear_reports() -> None:
    with _REPORTS_LOCK:
        _REPORTS.clear()


# --------------------------------------------------------------------------
# Tensors in and out without copies.


def _as_array(tensor: torch.Tensor) -> np.ndarray:
    """A numpy view of a CPU tensor (a copy only when it is not contiguous); bf16 as ml_dtypes.bfloat16."""
    if tensor.requires_grad:
        tensor = tensor.detach()
    if not tensor.is_contiguous():
        tensor = tensor.contiguous()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


#: the PyTorch dtype of each numpy dtype a compiled function's results can have (the graph dialect's types)
_TORCH_DTYPE_OF: dict[np.dtype, torch.dtype] = {NUMPY_DTYPES[name]: dtype for name, dtype in _TORCH_DTYPES.items()}


def _as_tensor(array: np.ndarray) -> torch.Tensor:
    """A tensor sharing the memory of a result array."""
    if array.dtype == np.dtype(ml_dtypes.bfloat16):
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def _shape_key(args: Sequence[Any], positions: Sequence[int], scalars: Sequence[int],
               symbolic: SymbolicInputs = NO_SYMBOLS) -> tuple:
    """What a compiled version is specialised on: of the inputs at ``positions`` (not the parameters, whose shapes
    Dynamo's guards fix), each tensor's shape (``None`` for a dim ``symbolic`` makes a symbol) and dtype, every
    other input's value (not that of a symbolic size), and the value of the Python numbers Dynamo passes as 0-d
    tensors (``scalars``)."""
    key = []
    for i in positions:
        a = args[i]
        if i in scalars:
            key.append(("scalar", a.item()))
        elif i in symbolic.sizes:
            key.append(("size", None))
        elif isinstance(a, torch.Tensor):
            dims = symbolic.tensor_dims.get(i, ())
            shape = tuple(None if d in dims else n for d, n in enumerate(a.shape)) if dims else a.shape
            key.append((shape, a.dtype, a.device))
        else:
            key.append((type(a).__name__, a))
    return tuple(key)


def _describe(key: tuple) -> str:
    """The shapes of a key."""
    parts = []
    for entry in key:
        if isinstance(entry[1], torch.dtype):
            device = "" if entry[2].type == "cpu" else f"@{entry[2]}"
            shape = ", ".join("?" if n is None else str(n) for n in entry[0])
            parts.append(f"[{shape}]:{str(entry[1]).removeprefix('torch.')}{device}")
        elif entry[0] == "size":
            parts.append("?")  # a size Dynamo made a symbol
        else:
            parts.append(repr(entry[1]))
    return "(" + ", ".join(parts) + ")"


# --------------------------------------------------------------------------
# One FX graph.


@dataclass
class _Compiled:
    imported: ImportedGraph
    #: None when every result is a view made again after the call
    executable: Executable | None
    #: (data pointer, version counter[, CRC-32]) of each tensor compiled in as a constant: a change means recompiling
    constants: tuple[tuple[int, ...], ...] = ()
    #: position -> (data pointer, shape, dtype, numpy view) of the parameters passed at the last call: the same
    #: memory again reuses its view (hundreds of parameters per call)
    views: dict[int, tuple[int, torch.Size, torch.dtype, np.ndarray]] = field(default_factory=dict)
    #: the outputs eager returns as views of an input or of another output, made again as such views after the call
    aliases: _ViewReplay | None = None
    #: (position among the FX graph's inputs, whether it is a parameter) of each tensor the compiled code takes
    arguments: tuple[tuple[int, bool], ...] = ()
    #: the positions, among the imported function's results, of those the compiled code returns (the others are
    #: made again as views by ``aliases``)
    computed: tuple[int, ...] = ()
    #: how many results the imported function has
    results: int = 0
    #: (shape, dtype) of each result the compiled code returns, when it takes bare addresses
    #: (Executable.takes_addresses): the backend then allocates them as tensors, and passes every tensor's address;
    #: a result with a dynamic dim has None for shape (Executable.result_shapes tells it at each call)
    direct_results: tuple[tuple[tuple[int, ...] | None, torch.dtype], ...] | None = None


class _GraphRunner:
    """The callable returned to Dynamo for one FX graph: compiled versions per input shapes, eager otherwise."""

    def __init__(self, gm: fx.GraphModule, example_inputs: Sequence[Any], config: CompilerConfig, report: GraphReport):
        self.gm = gm
        self.config = config
        self.report = report
        self.versions: dict[tuple, _Compiled | str] = {}
        self.parameters = _static_input_positions(gm)
        self.parameter_set = frozenset(self.parameters)
        self.scalars = _scalar_input_positions(gm)
        inputs = sum(1 for node in gm.graph.nodes if node.op == "placeholder")
        #: the inputs a compiled version is keyed on: all but the parameters
        self.key_positions = tuple(i for i in range(inputs) if i not in self.parameter_set)
        self.static_inputs = self.parameters if config.experimental_config.frozen_parameter else []
        #: resolved once per graph: every shape of it compiles with the same options
        self.options = config.compile_options()
        #: the sizes Dynamo made symbols: one compile serves them all (until it fails; then one per shape)
        self.symbolic = symbolic_dims(gm)
        self._lock = threading.Lock()
        needs_grad = torch.is_grad_enabled() and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in example_inputs
        )
        self.eager_reason = (
            "gradients are enabled and an input requires them: graphfuse compiles inference graphs (call the "
            "model under torch.no_grad() or torch.inference_mode())" if needs_grad else None
        )
        if self.eager_reason is not None:
            self._fall_back(self.eager_reason)

    def __call__(self, *args: Any) -> Any:
        self.report.calls += 1
        if self.eager_reason is not None:
            return self._eager(args)
        key = _shape_key(args, self.key_positions, self.scalars, self.symbolic)
        with self._lock:
            version = self.versions.get(key)
            if isinstance(version, _Compiled) and version.constants != self._constant_state(args):
                # a frozen parameter was written in place (or replaced) since it was compiled in
                log.info(f"graphfuse backend: FX graph {self.report.number}: a frozen parameter changed; "
                         f"recompiling for inputs {_describe(key)}")
                self.report.recompiles += 1
                del self.versions[key]
                version = None
            if version is None:
                version = self._compile_version(key, args)
            if isinstance(version, _Compiled):
                # under the lock: a compiled version's scratch buffers serve one call at a time
                return self._run(version, args)
        return self._eager(args)

    def _eager(self, args: tuple) -> Any:
        self.report.eager_calls += 1
        return self.gm.forward(*args)

    def _fall_back(self, reason: str) -> str:
        if self.config.fallback == "error":
            raise GraphfuseError(f"graphfuse backend: FX graph {self.report.number}: {reason}")
        if reason not in self.report.fallbacks:
            self.report.fallbacks.append(reason)
            log.warning(f"graphfuse backend: FX graph {self.report.number} runs in eager PyTorch: {reason}")
        return reason

    def _compile_version(self, key: tuple, args: tuple) -> _Compiled | str:
        compiled_count = sum(isinstance(v, _Compiled) for v in self.versions.values())
        if compiled_count >= self.config.cache_size_limit:
            reason = (f"more than cache_size_limit={self.config.cache_size_limit} input shapes; "
                      f"{_describe(key)} and later new shapes are not compiled")
            self.versions[key] = self._fall_back(reason)
            return self.versions[key]
        devices = sorted({a.device.type for a in args if isinstance(a, torch.Tensor)} - {"cpu"})
        if devices:
            self.versions[key] = self._fall_back(f"inputs on {', '.join(devices)}: graphfuse compiles for the CPU")
            return self.versions[key]
        start = time.perf_counter()
        try:
            version: _Compiled | str = self._compile(args)
        except GraphfuseError as error:
            if self.symbolic:  # compiled per shape instead, as without symbols
                self.report.per_shape = f"{_first_line(error)} (inputs {_describe(key)})"
                log.info(f"graphfuse backend: FX graph {self.report.number}: its symbolic sizes do not compile "
                         f"({self.report.per_shape}); compiling each shape")
                self.symbolic = NO_SYMBOLS
                return self._compile_version(_shape_key(args, self.key_positions, self.scalars), args)
            version = self._fall_back(f"{_first_line(error)} (inputs {_describe(key)})")
        else:
            key = _shape_key(args, self.key_positions, self.scalars, self.symbolic)  # the dims left symbolic
            seconds = time.perf_counter() - start
            self.report.compiled[_describe(key)] = seconds
            self.report.fusions = fired_fusions(version.executable.fusion_result) if version.executable else {}
            self.report.graph_ops = dict(version.imported.graph_ops)
            self.report.arguments = len(version.arguments)
            self.report.views = version.results - len(version.computed)
            log.info(f"graphfuse backend: FX graph {self.report.number} compiled for inputs "
                     f"{_describe(key)} in {seconds:.2f} s")
        self.versions[key] = version
        return version

    def _constant_state(self, args: tuple) -> tuple[tuple[int, ...], ...]:
        """What the frozen parameters' values depend on: their storage and their in-place version counters, and
        with ``frozen_parameter_check="content"`` their bytes."""
        if self.config.experimental_config.frozen_parameter_check == "content":
            return tuple((args[i].data_ptr(), args[i]._version, _checksum(args[i])) for i in self.static_inputs
                         if isinstance(args[i], torch.Tensor))
        return tuple((args[i].data_ptr(), args[i]._version) for i in self.static_inputs
                     if isinstance(args[i], torch.Tensor))

    def _compile(self, args: tuple) -> _Compiled:
        key = graph_key(self.gm, args, self.scalars, self.symbolic, self.static_inputs, self.options)
        stored = None if key is None else load_import(key)
        if stored is not None:
            return self._compiled(stored, _view_replay(self.gm), args, imported_from_cache=True)
        try:
            aliases = _view_replay(self.gm)
            stored = self._import(args, aliases)
            compiled = self._compiled(stored, aliases, args)
        except GraphfuseError as error:  # it would fail the same way again: a later process is told at once
            if key is not None:
                store_failure(key, error)
            raise
        if key is not None:
            store_import(key, stored)
        return compiled

    def _compiled(self, stored: StoredImport, aliases: _ViewReplay | None, args: tuple,
                  imported_from_cache: bool = False) -> _Compiled:
        """The compiled version of an import (graphfuse.compile of its text, which its cache may hold)."""
        self.symbolic = stored.symbolic
        executable = None
        if stored.text is not None:
            executable = graphfuse_compile(SourceText(stored.text, "<module>"), options=self.options)
        # A graph of views alone has no code: its import is all there is to take from the cache.
        self.report.from_cache += imported_from_cache and (executable is None or executable.from_cache)
        arguments = tuple((position, position in self.parameter_set)
                          for position, taken in enumerate(stored.imported.tensor_inputs) if taken and executable)
        direct = None
        if executable is not None and executable.takes_addresses and \
                all(np.dtype(dtype) in _TORCH_DTYPE_OF for _, dtype in executable.outputs):
            direct = tuple((None if None in shape else shape, _TORCH_DTYPE_OF[np.dtype(dtype)])
                           for shape, dtype in executable.outputs)
        return _Compiled(stored.imported, executable, self._constant_state(args), aliases=aliases,
                         arguments=arguments, computed=stored.computed, results=stored.results,
                         direct_results=direct)

    def _import(self, args: tuple, aliases: _ViewReplay | None) -> StoredImport:
        """Export the FX graph for ``args`` and import it: the module's text to compile and how to call it."""
        # Frozen parameters, and the scalars inlined below (their tensors are then unused).
        constants = {i: args[i] for i in (*self.static_inputs, *self.scalars) if isinstance(args[i], torch.Tensor)}
        with torch.no_grad(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
            gm = _with_scalars_inlined(self.gm, {i: args[i].item() for i in self.scalars})
            dynamic_shapes = None
            if self.symbolic:
                gm = sizes_read_from_tensors(gm, self.symbolic)
                if gm is None:
                    raise GraphfuseError("a symbolic size input is not the size of an input tensor's dim")
                dynamic_shapes = export_dynamic_shapes(self.symbolic, args)
            try:
                program, decomposed = export_inference(gm, args, dynamic_shapes=dynamic_shapes)
            except Exception as error:  # torch.export reports what it cannot trace as many exception types
                raise GraphfuseError(f"torch.export could not export the graph: {_first_line(error)}") from None
            if self.symbolic:  # the dims the export kept symbolic; the others are keyed on their value
                self.symbolic = exported_symbolic_dims(program, self.symbolic)
            imported = import_program(program, input_mutations="results", constant_inputs=constants,
                                      decomposed=decomposed)
        # The outputs made again as views after the call are not computed: eager returns them without a copy, and
        # a graph of views alone (a reshape, an expand) runs no compiled code at all.
        first = len(imported.mutated_inputs)
        replayed = {first + k for k in aliases.outputs} if aliases is not None else set()
        results = _result_types(imported)
        computed = tuple(k for k in range(len(results)) if k not in replayed)
        if computed and replayed:
            _drop_results(imported, replayed)
        text = imported.module.operation.get_asm(enable_debug_info=True) if computed else None
        return StoredImport(text, ImportedGraph.of(imported), self.symbolic, computed, len(results))

    def _run(self, version: _Compiled, args: tuple) -> Any:
        imported = version.imported
        results: list[Any] = [None] * version.results
        if version.direct_results is not None:
            computed = self._run_direct(version, args)
        elif version.executable is not None:
            arrays = [self._parameter_view(version, position, args[position]) if parameter
                      else _as_array(args[position]) for position, parameter in version.arguments]
            computed = [_as_tensor(result) for result in version.executable(*arrays)]
        else:
            computed = []
        for position, result in zip(version.computed, computed, strict=True):
            results[position] = result
        for position, value in zip(imported.mutated_inputs, results, strict=False):
            args[position].copy_(value)
        if version.aliases is not None:  # after the write-back: a view of a mutated input shows its new values
            first = len(imported.mutated_inputs)
            results[first:] = version.aliases(args, results[first:])
        return imported.unflatten(results)

    @staticmethod
    def _run_direct(version: _Compiled, args: tuple) -> list[torch.Tensor]:
        """The compiled call on the tensors' own memory, its results allocated by PyTorch (64-byte aligned): no
        numpy array is made.  The shape key has fixed the inputs' shapes and dtypes, but for the dims compiled
        symbolic: the results' shapes then follow from the inputs' (Executable.result_shapes)."""
        executable = version.executable
        inputs = [args[position] for position, _ in version.arguments]
        inputs = [t if t.is_contiguous() else t.contiguous() for t in inputs]  # the copies live until the call ends
        if executable.function.dynamic_arguments:
            shapes = [tuple(inputs[k].shape) for k in executable.dynamic_inputs]
            inferred = executable.result_shapes(shapes)
            results = [torch.empty(inferred[k] if shape is None else shape, dtype=dtype)
                       for k, (shape, dtype) in enumerate(version.direct_results)]
            shapes += [tuple(results[k].shape) for k, (shape, _) in enumerate(version.direct_results) if shape is None]
        else:
            shapes = []
            results = [torch.empty(shape, dtype=dtype) for shape, dtype in version.direct_results]
        executable.run_addresses([t.data_ptr() for t in inputs] + [t.data_ptr() for t in results], shapes)
        return results

    @staticmethod
    def _parameter_view(version: _Compiled, position: int, tensor: torch.Tensor) -> np.ndarray:
        """The numpy view of a parameter: the last call's when the parameter is the same memory (a view shares
        it: the values written since are seen), else a new one."""
        pointer, shape, dtype = tensor.data_ptr(), tensor.shape, tensor.dtype
        cached = version.views.get(position)
        if cached is not None and cached[0] == pointer and cached[1] == shape and cached[2] == dtype and \
                tensor.is_contiguous():
            return cached[3]
        array = _as_array(tensor)
        if tensor.is_contiguous():
            version.views[position] = (pointer, shape, dtype, array)
        return array


def _result_types(imported: ImportedModel) -> list[ir.Type]:
    """The result types of the imported function."""
    func = entry_function(imported.module, imported.entry)
    return list(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).results)


def _drop_results(imported: ImportedModel, positions: set[int]) -> None:
    """Rewrite the imported function to return all but its results at ``positions`` (the compile's dead-code
    elimination then removes what only they needed)."""
    func = entry_function(imported.module, imported.entry)
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    kept = [value for k, value in enumerate(ret.operands) if k not in positions]
    with imported.module.context, ret.location, ir.InsertionPoint(ret):
        func_dialect.ReturnOp(kept)
        ret.erase()
        results = [t for k, t in enumerate(function_type.results) if k not in positions]
        func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(function_type.inputs, results))
        if "res_attrs" in func.attributes:
            attrs = ir.ArrayAttr(func.attributes["res_attrs"])
            func.attributes["res_attrs"] = ir.ArrayAttr.get([a for k, a in enumerate(attrs) if k not in positions])


class _ViewReplay:
    """The outputs of an FX graph that eager returns as views of its inputs (``x.t()``, ``x[0]``, ``x.relu_()``)
    or of another of its outputs, made again as views after the compiled call: writes through them reach what
    they view, as in eager.

    Dynamo's example values tell which tensors share storage.  Each aliasing output is walked back to its base (an
    input, or an output computed whole) through the nodes that alias their first tensor argument: a node that
    keeps its argument's layout (an in-place op, whose new values the backend has already written back) is that
    argument; one that changes it is a view op, replayed on the real tensors by a small FX graph.
    """

    def __init__(self, graph: fx.GraphModule, outputs: list[int], bases: list[int]):
        #: takes the FX graph's inputs, then the outputs at ``bases``; returns the outputs at ``outputs``
        self.graph = graph
        self.outputs = outputs
        self.bases = bases

    def __call__(self, args: Sequence[Any], results: list[torch.Tensor]) -> list[torch.Tensor]:
        views = self.graph.forward(*args, *(results[k] for k in self.bases))  # no nn.Module call machinery
        results = list(results)
        for position, view in zip(self.outputs, views, strict=True):
            results[position] = view
        return results


class _AliasUnsupported(Exception):
    """An output shares storage with a tensor the compiled code does not return (an intermediate)."""


def _storage_of(node: Any) -> Any:
    from torch.multiprocessing.reductions import StorageWeakRef

    value = node.meta.get("example_value") if isinstance(node, fx.Node) else None
    if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
        return None
    try:
        return StorageWeakRef(value.untyped_storage())
    except (NotImplementedError, RuntimeError):  # tensor subclasses without storage
        return None


def _layout(node: fx.Node) -> str:
    """Sizes, strides and offset of ``node``'s example value, as text (symbolic sizes compare by expression)."""
    value = node.meta["example_value"]
    return f"{list(value.shape)} {list(value.stride())} {value.storage_offset()}"


def _view_replay(gm: fx.GraphModule) -> _ViewReplay | None:
    """The :class:`_ViewReplay` of ``gm``'s outputs that alias an input or another output, None when none does.

    Raises GraphfuseError for an output viewing a tensor the compiled code does not return (the graph then runs
    in eager PyTorch).
    """
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    output_node = next(n for n in gm.graph.nodes if n.op == "output")
    flat: list[Any] = []  # the outputs in the order of the compiled code's results
    fx.node.map_aggregate(output_node.args[0], lambda a: flat.append(a) or a)
    inputs = {_storage_of(n) for n in placeholders} - {None}
    groups: dict[Any, list[int]] = {}
    for k, node in enumerate(flat):
        storage = _storage_of(node)
        if storage is not None:
            groups.setdefault(storage, []).append(k)
    # An output alone in storage of its own is a tensor like any other (a copy of a view of an intermediate is
    # indistinguishable from it); outputs sharing an input's storage view that input; several outputs sharing one
    # storage view the one that made it.
    bases: dict[Any, int] = {}
    aliased: list[int] = []
    for storage, members in groups.items():
        if storage in inputs:
            aliased += members
        elif len(members) > 1:
            makers = [k for k in members if not _aliases_an_argument(flat[k])]
            if not makers:
                raise GraphfuseError(f"outputs {', '.join(map(str, members))} are views of one intermediate the "
                                     "compiled code does not return (writes through one would not reach the others)")
            bases[storage] = makers[0]
            aliased += [k for k in members if k != makers[0]]
    if not aliased:
        return None
    aliased.sort()
    graph = fx.Graph()
    copied: dict[fx.Node, fx.Node] = {}
    for n in placeholders:
        copied[n] = graph.placeholder(n.name)
    base_positions = sorted(bases.values())
    base_nodes = {flat[k]: graph.placeholder(f"result_{k}") for k in base_positions}

    def replay(node: fx.Node) -> fx.Node:
        if node in copied:
            return copied[node]
        if node in base_nodes:
            return base_nodes[node]
        parent = _aliased_argument(node) if node.op in ("call_method", "call_function") else None
        if parent is None:
            raise _AliasUnsupported(node.name)
        if _layout(node) == _layout(parent):
            copied[node] = replay(parent)  # in place (written back already), or a view of the same layout
            return copied[node]
        if _in_place(node):  # x.t_(): replaying it would change the input's layout a second time
            raise _AliasUnsupported(node.name)
        copied[node] = graph.node_copy(node, lambda a: replay(a) if _storage_of(a) is not None else _plain(a))
        return copied[node]

    def _plain(a: fx.Node) -> fx.Node:
        """A non-tensor argument of a replayed view (a size): copied with what it depends on."""
        if a in copied:
            return copied[a]
        copied[a] = graph.node_copy(a, lambda b: replay(b) if _storage_of(b) is not None else _plain(b))
        return copied[a]

    try:
        graph.output(tuple(replay(flat[k]) for k in aliased))
    except _AliasUnsupported as error:
        raise GraphfuseError(f"an output views an input or another output through '{error}', which the backend "
                             "cannot make again as a view") from None
    return _ViewReplay(fx.GraphModule(gm, graph), aliased, base_positions)


def _in_place(node: fx.Node) -> bool:
    """A method or function that writes its first argument (``x.t_()``, ``torch.relu_``): named with a final ``_``
    (not a dunder), or called with ``inplace=True``."""
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    return (name.endswith("_") and not name.endswith("__")) or node.kwargs.get("inplace") is True


def _aliased_argument(node: fx.Node) -> fx.Node | None:
    """The first tensor argument of ``node`` whose storage ``node``'s result shares."""
    storage = _storage_of(node)
    for a in (*node.args, *node.kwargs.values()):
        if isinstance(a, fx.Node) and storage is not None and _storage_of(a) == storage:
            return a
    return None


def _aliases_an_argument(node: fx.Node) -> bool:
    return node.op in ("call_method", "call_function") and _aliased_argument(node) is not None


def _checksum(tensor: torch.Tensor) -> int:
    """CRC-32 of a tensor's bytes (without copying a contiguous one: _as_array gives C order)."""
    array = _as_array(tensor)
    return zlib.crc32(memoryview(array.reshape(-1).view(np.uint8))) if array.size else 0


def _static_input_positions(gm: fx.GraphModule) -> list[int]:
    """The inputs Dynamo marks as static: the module's parameters and buffers (lifted into graph inputs)."""
    positions = []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, node in enumerate(placeholders):
        if node.meta.get("tensor_dict", {}).get("_dynamo_static_input_type") is not None:
            positions.append(i)
    return positions


def _scalar_input_positions(gm: fx.GraphModule) -> list[int]:
    """The inputs that are Python numbers Dynamo passes as 0-d tensors and reads back with ``.item()`` (a layer
    norm's ``eps`` under ``dynamic=True``): torch.export cannot trace through the ``.item()``."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return [
        i for i, node in enumerate(placeholders)
        if getattr(node.meta.get("grapharg"), "pass_arg_as_tensor", False)
        and node.users and all(user.op == "call_method" and user.target == "item" for user in node.users)
    ]


def _with_scalars_inlined(gm: fx.GraphModule, values: dict[int, Any]) -> fx.GraphModule:
    """A copy of ``gm`` in which the ``.item()`` of each input at a position of ``values`` is that value."""
    if not values:
        return gm
    graph = fx.Graph()
    mapping: dict[fx.Node, fx.Node] = {}
    graph.output(graph.graph_copy(gm.graph, mapping))
    placeholders = [mapping[n] for n in gm.graph.nodes if n.op == "placeholder"]
    for position, value in values.items():
        for item in list(placeholders[position].users):
            for user in list(item.users):
                user.args = fx.node.map_arg(user.args, lambda n, item=item, value=value: value if n is item else n)
                user.kwargs = fx.node.map_arg(user.kwargs, lambda n, item=item, value=value: value if n is item else n)
            graph.erase_node(item)
    return fx.GraphModule(gm, graph)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


# --------------------------------------------------------------------------
# The backend.


def get_backend(*, compiler_config: CompilerConfig | None = None) -> Callable[..., Any]:
    """A backend for ``torch.compile(model, backend=...)`` compiling with ``compiler_config``.

    The configuration is checked here (a bad value is a :class:`GraphfuseError` naming the field) and copied:
    changing the object afterwards does not change the backend.
    """
    config = copy.deepcopy(compiler_config) if compiler_config is not None else CompilerConfig()
    if not isinstance(config, CompilerConfig):
        raise GraphfuseError(f"compiler_config must be a CompilerConfig, not {type(compiler_config).__name__}")
    config.check()

    def graphfuse(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        with _REPORTS_LOCK:
            report = GraphReport(len(_REPORTS) + 1, len(gm.graph.nodes))
            _REPORTS.append(report)
        passed = _passed_sizes(gm)
        if not passed:
            return _GraphRunner(gm, example_inputs, config, report)
        return _WithPassedSizes(_GraphRunner(_without_outputs(gm, [k for k, _ in passed]), example_inputs, config,
                                             report), passed)

    return graphfuse


def _passed_sizes(gm: fx.GraphModule) -> list[tuple[int, int]]:
    """(output position, input position) of the outputs that are the graph's own symbolic-size inputs, passed
    through (a cache keeping its length: Mistral's): the compiled graph leaves them out and the call returns
    the size it was given."""
    placeholders = {node: k for k, node in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")}
    outputs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    if not isinstance(outputs, tuple | list):
        return []
    return [(k, placeholders[value]) for k, value in enumerate(outputs)
            if isinstance(value, fx.Node) and value in placeholders
            and isinstance(value.meta.get("example_value"), torch.SymInt)]


def _without_outputs(gm: fx.GraphModule, positions: list[int]) -> fx.GraphModule:
    """A copy of ``gm`` whose output tuple leaves out ``positions``."""
    graph = copy.deepcopy(gm.graph)
    output = next(n for n in graph.nodes if n.op == "output")
    dropped = set(positions)
    output.args = (tuple(v for k, v in enumerate(output.args[0]) if k not in dropped),)
    return fx.GraphModule(gm, graph)


class _WithPassedSizes:
    """A graph's runner whose graph left out the sizes it passes through (:func:`_passed_sizes`): each call's
    results with those sizes put back at their positions."""

    def __init__(self, runner: _GraphRunner, passed: list[tuple[int, int]]) -> None:
        self.runner = runner
        self.passed = sorted(passed)

    def __call__(self, *args: Any) -> Any:
        results = list(self.runner(*args))
        for output, argument in self.passed:
            results.insert(output, args[argument])
        return tuple(results)


def graphfuse_backend(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """The backend ``torch.compile(backend="graphfuse")`` uses: the default :class:`CompilerConfig`."""
    return _default_backend()(gm, example_inputs)


_DEFAULT: list[Callable[..., Any]] = []


def _default_backend() -> Callable[..., Any]:
    if not _DEFAULT:
        _DEFAULT.append(get_backend())
    return _DEFAULT[0]
