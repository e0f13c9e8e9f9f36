"""What a compile returns: :class:`Executable`, a compiled graph function called with numpy arrays.

:class:`CompiledGraph` is what every compiled graph offers besides the call (the CPU's :class:`Executable`, the
emulated NPU's executable).  The compiler (lowering/compiler.py) makes executables, the on-disk compile cache
(lowering/compile_cache.py) stores and loads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from mlir import ir

from graphfuse.dialect.context import make_context
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.parsing import SourceText, parse_module
from graphfuse.dialect.run_checks import RunCheckError, relocated
from graphfuse.lowering.launches import LaunchRunner
from graphfuse.lowering.runtime import CompiledFunction, aligned_empty
from graphfuse.lowering.shape_checks import DynamicShapes
from graphfuse.lowering.streaming import BUFFER_ALIGNMENT

__all__ = ["CompiledGraph", "Executable"]


class CompiledGraph:
    """What every compiled graph function offers besides the call (CPU :class:`Executable`, the emulated NPU's).

    Subclasses have ``entry``, ``source`` (the graph module as given) and ``function`` (whose ``inputs`` and
    ``outputs`` describe the arguments and results).
    """

    entry: str
    source: ir.Module
    function: Any

    def reference(self, *arrays: np.ndarray) -> list[np.ndarray]:
        """The reference interpreter's results on the unfused graph."""
        return run_function(self.source, list(arrays), self.entry)

    @property
    def inputs(self) -> list[tuple[tuple[int | None, ...], np.dtype]]:
        return [(s.shape, s.dtype) for s in self.function.inputs]

    @property
    def outputs(self) -> list[tuple[tuple[int | None, ...], np.dtype]]:
        return [(s.shape, s.dtype) for s in self.function.outputs]


@dataclass
class Executable(CompiledGraph):
    """A compiled graph function: call it with numpy arrays, get a list of numpy arrays."""

    entry: str
    #: the graph module as given (kept for :meth:`reference`), or its text: parsed when first asked for
    #: (:attr:`source`; code loaded from the compile cache may never need it)
    _source: ir.Module | SourceText
    #: the graph pipeline that ran, and the fused graph it produced
    pipeline: str
    fused_graph: str
    #: the linalg module handed to the runtime
    linalg: str
    function: CompiledFunction
    #: per fusion pass (or kernel step) how often it fired, from the graph pipeline's statistics
    fusions: dict[str, int] = field(default_factory=dict)
    kernels: int = 0
    #: fusion_result.json of the graph pipeline: {"graph_fusion": {pass: {"match_times", "effect_times"}}, "ub_fusion"}
    fusion_result: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    #: enable_debug_mode: the fused graph run launch by launch, checked around each (graphfuse.lowering.launches)
    launcher: LaunchRunner | None = None

    #: the file the graph came from (its locations name the parser's buffer "-")
    filename: str = "<module>"
    #: seconds per compile stage: parse, graph (pipeline), lowering (to linalg), bufferize (to the LLVM dialect), llvm;
    #: for code loaded from the on-disk cache, only ``cache`` (finding, checking and loading it)
    timings: dict[str, float] = field(default_factory=dict)
    #: the code was loaded from the on-disk compile cache (lowering/compile_cache.py), not compiled
    from_cache: bool = False

    @property
    def source(self) -> ir.Module:
        """The graph module as given."""
        if isinstance(self._source, SourceText):
            self._source = parse_module(self._source.text, self._source.filename, make_context())
        return self._source

    @cached_property
    def _dynamic_shapes(self) -> DynamicShapes:
        return DynamicShapes(self.source, self.entry, self.filename)

    @cached_property
    def _dynamic_inputs(self) -> bool:
        """Whether an input has a dynamic dimension (asked at every call)."""
        return any(None in shape for shape, _ in self.inputs)

    def __call__(self, *arrays: np.ndarray, out: list[np.ndarray] | None = None) -> list[np.ndarray]:
        if self._dynamic_inputs and len(arrays) == len(self.function.inputs):
            out = self._dynamic_shapes.out_buffers(arrays, out, self.function.outputs, BUFFER_ALIGNMENT, aligned_empty)
        if self.launcher is None:
            try:
                return self.function(*arrays, out=out)
            except RunCheckError as error:  # a division by zero or an index out of range, at its op in the file
                raise relocated(error, self.filename) from None
        inputs = self.function.check_inputs(arrays)
        buffers = None if out is None else self.function.check_outs(out, inputs)
        results = self.launcher(inputs)
        if buffers is None:
            return results
        for buffer, result in zip(buffers, results, strict=True):
            np.copyto(buffer, result)
        return buffers

    @property
    def takes_addresses(self) -> bool:
        """Whether :meth:`run_addresses` serves this graph: not launched op by op (debug mode)."""
        return self.launcher is None

    @cached_property
    def dynamic_inputs(self) -> tuple[int, ...]:
        """The inputs with a dynamic dim, whose shapes :meth:`result_shapes` and :meth:`run_addresses` take."""
        return tuple(k for k in self.function.dynamic_arguments if k < len(self.function.inputs))

    def result_shapes(self, shapes: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
        """The shapes of the results for :attr:`dynamic_inputs` of ``shapes`` (the others have their static
        shapes); an error naming the op whose operands disagree."""
        full = [spec.shape for spec in self.function.inputs]
        for k, shape in zip(self.dynamic_inputs, shapes, strict=True):
            full[k] = shape
        return self._dynamic_shapes.result_shapes(full)

    def run_addresses(self, addresses: list[int], shapes: Sequence[tuple[int, ...]] = ()) -> None:
        """Run on C-contiguous buffers given by address, inputs then results (results 64-byte aligned), of the
        shapes and dtypes of :attr:`inputs` and :attr:`outputs`, the shapes of those with a dynamic dim in
        ``shapes`` (CompiledFunction.run_addresses): for callers holding another library's tensors.  Nothing is
        checked: the sizes of the dynamic dims must agree (:meth:`result_shapes` checks them)."""
        try:
            self.function.run_addresses(addresses, shapes)
        except RunCheckError as error:
            raise relocated(error, self.filename) from None

    @property
    def debug(self) -> bool:
        """Whether enable_debug_mode runs this graph launch by launch."""
        return self.launcher is not None

    def empty_outputs(self) -> list[np.ndarray]:
        """Uninitialized ``out=`` arrays aligned as the compiled code prefers (64 bytes: streamed stores).

        Any C-contiguous array of the right shape and dtype works as ``out=``; one the compiled code cannot
        store into directly costs a copy per call.
        """
        return self.function.empty_outputs()
