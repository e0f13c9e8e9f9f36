"""The CPU code generator: tensor-level linalg IR to the LLVM dialect, one named pass per module.

:func:`~graphfuse.lowering.codegen.cpu.pipeline.cpu_pipeline_text` gives the whole pipeline as text (graphfuse's
passes between upstream bufferization and LLVM conversion); ``graphfuse-opt --print-cpu-pipeline`` prints it, and
the runtime runs it before handing the module to the JIT.  The passes pass their decisions to each other, and to
the runtime, as attributes of the entry function (:mod:`~graphfuse.lowering.codegen.cpu.entry`), so any step can be
replayed from its input text.  :mod:`~graphfuse.lowering.codegen.cpu.registry` names the passes without importing
them.
"""
