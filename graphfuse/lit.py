"""graphfuse's tools and substitutions for a lit test suite of your own.

A downstream project's ``lit.cfg.py``::

    import lit.formats
    from graphfuse.lit import configure

    config.name = "my-project"
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = [".mlir"]
    config.test_source_root = os.path.dirname(__file__)
    configure(config, lit_config)

and its tests run ``graphfuse-opt``, ``graphfuse-run``, ``graphfuse-import``,
``graphfuse-bisect``, upstream ``mlir-opt``, ``FileCheck`` and ``not`` by
name, with ``%graph_irdl`` and ``%npu_irdl`` (the dialects' IRDL
definitions, for ``mlir-opt --irdl-file=%graph_irdl``), ``%schedules`` (the folder of the contraction
schedules' transform-dialect library, for ``transform-preload-library``) and ``%PYTHON``.
graphfuse's own suite (test/lit.cfg.py) is configured by this function.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import mlir

from graphfuse.dialect.context import GRAPH_IRDL_PATH, NPU_IRDL_PATH
from graphfuse.lowering.schedules.library import SCHEDULES_DIR

__all__ = ["TOOLS", "configure", "tool_directories"]

#: The tools a suite gets, each with the directory key it lives in (see :func:`tool_directories`).
TOOLS = (("graphfuse-opt", "python"), ("graphfuse-run", "python"), ("graphfuse-import", "python"),
         ("graphfuse-bisect", "python"), ("graphfuse-compile", "python"), ("graphfuse-cache", "python"),
         ("mlir-opt", "mlir"),
         ("FileCheck", "llvm"), ("not", "llvm"), ("llvm-nm", "llvm"))

#: Environment variables that change what graphfuse's tools do: a test sets them itself when it means to.
_ENVIRONMENT = ("MS_DEV_GRAPH_KERNEL_FLAGS", "FUSION_SWITCH_FILE", "GLOG_v", "GRAPHFUSE_DEBUG")


def tool_directories() -> dict[str, Path]:
    """Where the tools are: graphfuse's next to this Python (its environment's ``bin``), ``mlir-opt`` in
    the mlir wheel, ``FileCheck`` and ``not`` in the llvm wheel: the environment's, never the machine's."""
    site = Path(next(iter(mlir.__path__))).parent
    return {"python": Path(sys.executable).parent, "mlir": site / "mlir" / "bin", "llvm": site / "llvm" / "bin"}


def configure(config: Any, lit_config: Any) -> None:
    """Put graphfuse's tools first on the suite's ``PATH``, unset the variables that would change what they
    do (and turn the on-disk compile cache off), add the ``onnx`` / ``torch`` features when those front ends
    are installed (``REQUIRES: torch``), and add the substitutions ``%PYTHON``, ``%graph_irdl``, ``%npu_irdl``
    and ``%schedules``.  A missing tool is a fatal lit error naming it."""
    directories = tool_directories()
    config.environment["PATH"] = os.pathsep.join(
        [*(str(directories[key]) for key in ("python", "mlir", "llvm")), config.environment.get("PATH", "")])
    for variable in _ENVIRONMENT:
        config.environment.pop(variable, None)
    # Every test compiles what it checks; one that means to use the on-disk compile cache turns it on itself.
    config.environment["GRAPHFUSE_CACHE"] = "off"
    for tool, key in TOOLS:
        if shutil.which(tool, path=str(directories[key])) is None:
            lit_config.fatal(f"{tool} is missing from {directories[key]}; install graphfuse with its test extras")
    for module in ("onnx", "torch"):
        if importlib.util.find_spec(module) is not None:
            config.available_features.add(module)
    config.substitutions.append(("%PYTHON", sys.executable))
    config.substitutions.append(("%graph_irdl", str(GRAPH_IRDL_PATH)))
    config.substitutions.append(("%npu_irdl", str(NPU_IRDL_PATH)))
    config.substitutions.append(("%schedules", str(SCHEDULES_DIR)))
