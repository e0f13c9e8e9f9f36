"""graphfuse: an operator-fusion compiler for neural-network graphs, built on MLIR.

The public Python API:

- build graphs: :func:`GraphBuilder` (one function), :class:`ModuleBuilder`;
- read graphs: :func:`parse_module`, :func:`load_module` (verified, with located errors; MLIR text or
  bytecode), and write them as bytecode: :func:`module_bytecode`;
- run the reference semantics: :func:`run_function`, and :func:`run_function_ranks` for graphs with
  collectives (every rank at once);
- compile: :func:`compile` (JIT), :func:`compile_library` (ahead of time: a shared library or object with a C
  header, as graphfuse-compile writes it) and :func:`load_library` (call such a library from Python);
- transform graphs: :func:`run_pipeline` with mlir-opt pipeline text mixing
  graphfuse passes and upstream MLIR passes;
- bring dialects of your own: :func:`register_irdl_dialects` (IRDL definitions, loaded into every context);
- define fusion passes: :func:`register_replacement` (a pattern and its
  replacement, both written with the builder), :func:`unregister_replacement`.

Every user-facing failure raises :class:`GraphfuseError`, whose
``diagnostics`` carry ``file:line:col`` locations.
"""

from importlib import import_module as _import_module
from importlib import metadata as _metadata
from typing import TYPE_CHECKING

# The built-in pass table first: any pass lookup, at import or later, finds every pass.
from graphfuse import builtin_passes  # noqa: F401
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError

#: public name -> the module defining it, imported on first use: a tool that only runs graph passes does not
#: pay for the code generator's imports (linalg's op definitions, numpy, the runtime), a third of its start-up.
_LAZY = {
    "BuildError": "graphfuse.dialect.builder",
    "FunctionBuilder": "graphfuse.dialect.builder",
    "GraphBuilder": "graphfuse.dialect.builder",
    "ModuleBuilder": "graphfuse.dialect.builder",
    "Tensor": "graphfuse.dialect.builder",
    "all_ops": "graphfuse.dialect.catalog",
    "make_context": "graphfuse.dialect.context",
    "register_irdl_dialects": "graphfuse.dialect.context",
    "run_function": "graphfuse.dialect.interpreter",
    "run_function_ranks": "graphfuse.dialect.interpreter",
    "load_module": "graphfuse.dialect.parsing",
    "module_bytecode": "graphfuse.dialect.parsing",
    "parse_module": "graphfuse.dialect.parsing",
    "compile_library": "graphfuse.lowering.aot",
    "Executable": "graphfuse.lowering.compiler",
    "compile": "graphfuse.lowering.compiler",
    "CompileOptions": "graphfuse.lowering.options",
    "resolve_options": "graphfuse.lowering.options",
    "Library": "graphfuse.lowering.library",
    "load_library": "graphfuse.lowering.library",
    "Match": "graphfuse.pipelines.fusion.user_patterns",
    "register_replacement": "graphfuse.pipelines.fusion.user_patterns",
    "unregister_replacement": "graphfuse.pipelines.fusion.user_patterns",
    "all_passes": "graphfuse.pipelines.registry",
    "Instrumentation": "graphfuse.pipelines.runner",
    "Pipeline": "graphfuse.pipelines.runner",
    "PipelineError": "graphfuse.pipelines.runner",
    "PipelineFailure": "graphfuse.pipelines.runner",
    "run_pipeline": "graphfuse.pipelines.runner",
}

if TYPE_CHECKING:
    from graphfuse.dialect.builder import BuildError, FunctionBuilder, GraphBuilder, ModuleBuilder, Tensor
    from graphfuse.dialect.catalog import all_ops
    from graphfuse.dialect.context import make_context, register_irdl_dialects
    from graphfuse.dialect.interpreter import run_function, run_function_ranks
    from graphfuse.dialect.parsing import load_module, module_bytecode, parse_module
    from graphfuse.lowering.aot import compile_library
    from graphfuse.lowering.compiler import Executable, compile
    from graphfuse.lowering.library import Library, load_library
    from graphfuse.pipelines.fusion.user_patterns import Match, register_replacement, unregister_replacement
    from graphfuse.pipelines.registry import all_passes
    from graphfuse.pipelines.runner import Instrumentation, Pipeline, PipelineError, PipelineFailure, run_pipeline


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphfuse' has no attribute {name!r}")
    value = getattr(_import_module(module), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


try:
    __version__ = _metadata.version("graphfuse")
except _metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "BuildError",
    "CompileOptions",
    "Diagnostic",
    "Executable",
    "FunctionBuilder",
    "GraphBuilder",
    "GraphfuseError",
    "Instrumentation",
    "Library",
    "Match",
    "ModuleBuilder",
    "Pipeline",
    "PipelineError",
    "PipelineFailure",
    "Tensor",
    "__version__",
    "all_ops",
    "all_passes",
    "compile",
    "compile_library",
    "load_library",
    "load_module",
    "make_context",
    "module_bytecode",
    "parse_module",
    "register_irdl_dialects",
    "register_replacement",
    "resolve_options",
    "run_function",
    "run_function_ranks",
    "run_pipeline",
    "unregister_replacement",
]
