# ruff: noqa: F821  (lit injects config and lit_config)
"""lit configuration: FileCheck tests of every stage, run through graphfuse-opt and upstream mlir-opt."""

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import lit.formats
import mlir

config.name = "graphfuse"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py", ".cfg", ".json", ".test"]
config.excludes = ["lit.cfg.py", "python", "Inputs", "Output", "__pycache__"]
config.test_source_root = os.path.dirname(__file__)

repo = Path(__file__).resolve().parent.parent
site = Path(next(iter(mlir.__path__))).parent
mlir_bin = site / "mlir" / "bin"
llvm_bin = site / "llvm" / "bin"
python_bin = Path(sys.executable).parent

# Tools come from the project's virtual environment, never from the machine.
# graphfuse-opt (venv), mlir-opt (mlir wheel), FileCheck and not (llvm wheel) are found on PATH.
config.environment["PATH"] = os.pathsep.join(
    [str(python_bin), str(mlir_bin), str(llvm_bin), config.environment.get("PATH", "")]
)
for var in ("MS_DEV_GRAPH_KERNEL_FLAGS", "FUSION_SWITCH_FILE", "GLOG_v", "GRAPHFUSE_DEBUG"):
    config.environment.pop(var, None)

TOOLS = (("graphfuse-opt", python_bin), ("graphfuse-run", python_bin), ("graphfuse-import", python_bin),
         ("graphfuse-bisect", python_bin), ("mlir-opt", mlir_bin),
         ("FileCheck", llvm_bin), ("not", llvm_bin))
for tool, where in TOOLS:
    if shutil.which(tool, path=str(where)) is None:
        lit_config.fatal(f"{tool} is missing from the environment; run `make test`")

# Optional front ends: tests needing them say `REQUIRES: onnx` / `REQUIRES: torch`.
for module in ("onnx", "torch"):
    if importlib.util.find_spec(module) is not None:
        config.available_features.add(module)

config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%graph_irdl", str(repo / "dialect" / "graph.irdl.mlir")))
config.substitutions.append(("%npu_irdl", str(repo / "dialect" / "npu.irdl.mlir")))
