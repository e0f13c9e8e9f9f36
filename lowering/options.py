"""The options of one compile, resolved once where it starts and handed down.

``graphfuse.compile``, ``graphfuse.compile_library`` (``graphfuse-compile``), ``graphfuse.distributed.compile``,
``compile_npu`` and the ``torch.compile`` backend's ``CompilerConfig`` take the same options; ``graphfuse-opt``
resolves them too, for its fusion switches and the CPU pipeline it prints.  The module imports nothing that
compiles, so a tool pays nothing for it.
:func:`resolve_options` turns what the caller gave, and what it left to graphfuse.context and the environment
(``MS_DEV_GRAPH_KERNEL_FLAGS``, ``FUSION_SWITCH_FILE``, ``GRAPHFUSE_NUM_THREADS``, ``GRAPHFUSE_STREAM_MIN_BYTES``,
the context's flags, graph-kernel switch and ``save_graphs``), into one frozen :class:`CompileOptions`.  The
stages take that object and read none of those sources again, and the compile cache keys on it and on the
module's text: a variable changed after the options were resolved changes nothing they compile.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.host import check_thread_count, codegen_jobs, default_threads, stream_min_bytes
from graphfuse.pipelines.context import get_context, graph_kernel_enabled
from graphfuse.pipelines.fusion.switches import (
    FLAGS_VARIABLE,
    MAX_SWITCH_FILE_BYTES,
    SWITCH_FILE_VARIABLE,
    FusionSwitches,
)
from graphfuse.pipelines.opt_levels import Backend, opt_level_error

__all__ = ["DEFAULT_LLVM_OPT_LEVEL", "CompileOptions", "resolve_options"]

#: LLVM's optimization level for compiled code (the JIT's ``jit_opt_level``, the ahead-of-time compiler's
#: ``codegen_opt_level``).  2, not 3: the code reaches LLVM vectorized and tiled, and on the bench's
#: workloads and the zoo's graphs O3 ran no faster (within run-to-run noise) while it compiled 7-40% longer
#: (ResNet's graph 4.2 -> 2.5 s, MobileNetV2's 10.4 -> 8.2 s, Llama's 4.3 -> 4.0 s; docs/performance.md).
DEFAULT_LLVM_OPT_LEVEL = 2


@dataclass(frozen=True)
class CompileOptions:
    """Everything besides the module that decides the code a compile makes (see the module's docstring).

    Build it with :func:`resolve_options`; two equal options compile a module to the same code.
    """

    target: Backend = "cpu"
    #: the graph pipeline as given, or None for that of ``opt_level``
    pipeline: str | None = None
    #: the graph pipeline's opt level as given (None: the flags', else the default)
    opt_level: int | None = None
    #: ``MS_DEV_GRAPH_KERNEL_FLAGS`` as it was: the lowest layer of the flags
    environment_flags: str = ""
    #: graphfuse.context's flags, then the caller's: their keys win over the environment's
    graph_kernel_flags: str = ""
    #: the CANN switch file (the caller's, else ``FUSION_SWITCH_FILE``), and its bytes when it is a regular file
    #: that could be read.  Options compare by the bytes, not the path: an edited file is other options, a copy
    #: elsewhere the same (a file that cannot be read fails the compile, which is then not cached; a pipe or a
    #: device, read only by the compile, makes the options uncacheable: :attr:`cacheable`).
    fusion_switch_file: str | None = field(default=None, compare=False)
    fusion_switch_content: bytes | None = None
    #: bad flags are errors, not warnings
    strict_flags: bool = False
    #: graphfuse.context's graph-kernel switch: on, off, or None (the opt level decides)
    graph_kernel: bool | None = None
    #: LLVM's opt level for the generated code
    jit_opt_level: int = DEFAULT_LLVM_OPT_LEVEL
    #: threads of the parallel loops
    threads: int = 1
    #: the fast-math forms (FMA contraction, one reciprocal per row)
    fast_math: bool = True
    #: the loop-nest footprint from which stores into the results stream past the caches (None: never)
    streaming: int | None = None
    #: where graphfuse.context's ``save_graphs`` writes each stage's IR (None: it is off)
    save_graphs_dir: str | None = None
    #: processes generating a large module's code (``GRAPHFUSE_CODEGEN_JOBS``, else the CPUs): how fast the code
    #: is made, not what it is, so not compared
    codegen_jobs: int = field(default=1, compare=False)

    @property
    def cacheable(self) -> bool:
        """Whether a compile with these options may be cached: its switch file, if any, is known by its bytes."""
        return self.fusion_switch_file is None or self.fusion_switch_content is not None

    def switches(self, flags_source: str = "graph kernel flags") -> FusionSwitches:
        """The fusion switches of these options' flags and switch file (a fresh value: it collects warnings);
        ``flags_source`` names the caller's flags in their warnings (a tool's option)."""
        return FusionSwitches.from_sources(self.graph_kernel_flags or None, self.fusion_switch_file,
                                           strict=self.strict_flags,
                                           environ={FLAGS_VARIABLE: self.environment_flags},
                                           flags_source=flags_source)


def resolve_options(
    *,
    target: Backend = "cpu",
    pipeline: str | None = None,
    opt_level: int | None = None,
    graph_kernel_flags: str | None = None,
    fusion_switch_file: str | Path | None = None,
    strict_flags: bool = False,
    jit_opt_level: int = DEFAULT_LLVM_OPT_LEVEL,
    num_threads: int | None = None,
    fast_math: bool = True,
) -> CompileOptions:
    """The options of a compile from the caller's arguments (``graphfuse.compile``'s), graphfuse.context and the
    environment as they are now.  Bad values are errors here, before anything is compiled."""
    # 2.0 and True would be equal options to 2 and 1
    problem = opt_level_error(opt_level) if opt_level is not None else None
    if problem is not None:
        raise GraphfuseError(problem)
    if pipeline is not None and opt_level is not None:
        raise GraphfuseError("pass either pipeline= or opt_level=, not both")
    if not isinstance(jit_opt_level, int) or isinstance(jit_opt_level, bool) or not 0 <= jit_opt_level <= 3:
        raise GraphfuseError(f"jit_opt_level must be 0..3, got {jit_opt_level!r}")
    threads = default_threads() if num_threads is None else check_thread_count(num_threads)
    context_flags = str(get_context("graph_kernel_flags") or "")
    flags = f"{context_flags} {graph_kernel_flags or ''}".strip()
    switch_file = fusion_switch_file or os.environ.get(SWITCH_FILE_VARIABLE) or None
    save_graphs = get_context("save_graphs")
    return CompileOptions(
        target=target,
        pipeline=pipeline,
        opt_level=opt_level,
        environment_flags=os.environ.get(FLAGS_VARIABLE, ""),
        graph_kernel_flags=flags,
        fusion_switch_file=None if switch_file is None else str(switch_file),
        fusion_switch_content=_content(switch_file),
        strict_flags=bool(strict_flags),
        graph_kernel=graph_kernel_enabled(),
        jit_opt_level=jit_opt_level,
        threads=threads,
        fast_math=bool(fast_math),
        streaming=stream_min_bytes(),
        save_graphs_dir=str(Path(get_context("save_graphs_path")) / "graphfuse_ir") if save_graphs else None,
        codegen_jobs=codegen_jobs(),
    )


def _content(path: str | Path | None) -> bytes | None:
    """A regular switch file's bytes, or None when there is none, it cannot be read or is too large (the compile
    then says why) or it is not a regular file: a device reads without end (/dev/zero), and a pipe
    (``--fusion-switch-file=<(...)``) is for the switches' parse to read, once."""
    if not path:
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as stream:
            data = stream.read(MAX_SWITCH_FILE_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_SWITCH_FILE_BYTES else None
