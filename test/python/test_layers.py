"""The layers import downwards only: dialect <- pipelines <- lowering <- the graphfuse API <- tools.

The check reads every ``import`` of the source tree, those inside functions
too (a lazy import is still a dependency), and fails on any that reaches a
higher layer. The pipelines a layer writes as text name only passes of that
layer or below (a pass name is a dependency too, resolved at run time). It
also checks the pass table: built-in passes are found by name without
importing them, and none registers itself.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from graphfuse.builtin_passes import BUILTIN_PASSES
from graphfuse.lowering.codegen.cpu.pipeline import cpu_pipeline_text
from graphfuse.lowering.compiler import FOLD_EMPTY_PIPELINE, LOWERING_PIPELINE
from graphfuse.lowering.graph_pipelines import graph_pipeline
from graphfuse.pipelines.fusion.base import FusionPass
from graphfuse.pipelines.fusion.graph_fusion import fusion_passes
from graphfuse.pipelines.opt_levels import OPT_LEVELS
from graphfuse.pipelines.pass_base import canonical_pass_name
from graphfuse.pipelines.pipeline_parser import NestedPipeline, PassElement, parse_pipeline
from graphfuse.pipelines.registry import lookup_pass

REPO = Path(__file__).resolve().parents[2]

#: Package folder -> its layer (higher may import lower).  ``graphfuse/`` holds the public API and front ends.
LAYERS = {"dialect": 0, "pipelines": 1, "lowering": 2, "graphfuse": 3, "tools": 4}
#: graphfuse.<name> -> the folder that holds it
FOLDER_OF_PACKAGE = {"dialect": "dialect", "pipelines": "pipelines", "lowering": "lowering", "tools": "tools"}


def _layer_of_module(module: str) -> tuple[str, int] | None:
    """(folder, layer) of a ``graphfuse...`` module name; None for other packages."""
    parts = module.split(".")
    if parts[0] != "graphfuse":
        return None
    folder = FOLDER_OF_PACKAGE.get(parts[1], "graphfuse") if len(parts) > 1 else "graphfuse"
    return folder, LAYERS[folder]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in a file, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            if node.module == "graphfuse":  # from graphfuse import x: x is graphfuse.x
                found += [(node.lineno, f"graphfuse.{alias.name}") for alias in node.names]
    return found


def upward_imports(root: Path) -> list[str]:
    """Every import from a lower layer into a higher one under ``root``, as ``file:line: a -> b``."""
    problems = []
    for folder, layer in LAYERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            for line, module in _imports(path):
                target = _layer_of_module(module)
                if target is not None and target[1] > layer:
                    problems.append(f"{path.relative_to(root)}:{line}: {folder} imports {module} ({target[0]})")
    return problems


def test_no_layer_imports_a_higher_one() -> None:
    assert upward_imports(REPO) == []


def test_the_check_sees_a_reverse_import(tmp_path: Path) -> None:
    for folder in LAYERS:
        (tmp_path / folder).mkdir()
    (tmp_path / "dialect" / "ok.py").write_text("from graphfuse.dialect import types\n")
    (tmp_path / "pipelines" / "lazy.py").write_text("def f():\n    from graphfuse.lowering import compiler\n")
    (tmp_path / "lowering" / "api.py").write_text("import graphfuse.tools.fuzz\nfrom graphfuse import compile\n")
    assert upward_imports(tmp_path) == [
        "pipelines/lazy.py:2: pipelines imports graphfuse.lowering (lowering)",
        "lowering/api.py:1: lowering imports graphfuse.tools.fuzz (tools)",
        "lowering/api.py:2: lowering imports graphfuse (graphfuse)",
        "lowering/api.py:2: lowering imports graphfuse.compile (graphfuse)",
    ]


def _pass_names(element: NestedPipeline | PassElement) -> list[str]:
    if isinstance(element, PassElement):
        return [element.name]
    return [name for inner in element.elements for name in _pass_names(inner)]


def higher_passes(text: str, folder: str) -> list[str]:
    """The passes of ``text``, a pipeline written in ``folder``'s layer, that a higher layer defines; passes
    graphfuse does not register (upstream MLIR's) sit below every layer."""
    problems = []
    for name in _pass_names(parse_pipeline(text)):
        cls = lookup_pass(name)
        target = _layer_of_module(cls.__module__) if cls is not None else None
        if target is not None and target[1] > LAYERS[folder]:
            problems.append(f"{folder} names {name} ({cls.__module__}, {target[0]})")
    return problems


#: The pipelines each layer writes as text: (what, the folder of the module that writes it, the text).
PIPELINE_TEXTS = [
    *((f"graph_pipeline({level}, {backend!r}, {kernels})", _layer_of_module(graph_pipeline.__module__)[0],
       graph_pipeline(level, backend, kernels))
      for level in OPT_LEVELS for backend in ("cpu", "npu") for kernels in (True, False)),
    ("LOWERING_PIPELINE", "lowering", LOWERING_PIPELINE),
    ("FOLD_EMPTY_PIPELINE", "lowering", FOLD_EMPTY_PIPELINE),
    ("cpu_pipeline_text", _layer_of_module(cpu_pipeline_text.__module__)[0], cpu_pipeline_text("forward", 2, 1 << 20)),
]


@pytest.mark.parametrize(("what", "folder", "text"), PIPELINE_TEXTS, ids=[p[0] for p in PIPELINE_TEXTS])
def test_no_pipeline_names_a_pass_of_a_higher_layer(what: str, folder: str, text: str) -> None:
    assert higher_passes(text, folder) == []


def test_the_pipeline_check_sees_a_higher_pass() -> None:
    """A graph pipeline (the pipelines layer) naming a CPU code-generator pass (the lowering layer) is flagged;
    the same text written in the lowering layer, and upstream passes anywhere, are not."""
    text = "builtin.module(graph-dce,block-contractions,canonicalize)"
    assert higher_passes(text, "pipelines") == [
        "pipelines names block-contractions (graphfuse.lowering.codegen.cpu.block_contractions, lowering)"]
    assert higher_passes(text, "lowering") == []


@pytest.mark.parametrize("name", sorted(BUILTIN_PASSES))
def test_every_table_entry_loads_its_pass(name: str) -> None:
    cls = BUILTIN_PASSES[name]()
    assert canonical_pass_name(cls.name) == canonical_pass_name(name)


def test_listing_pass_names_imports_no_pass() -> None:
    script = (
        "import sys, graphfuse\n"
        "from graphfuse.pipelines.registry import pass_names\n"
        "before = set(sys.modules)\n"
        "names = pass_names()\n"
        "assert set(sys.modules) == before, sorted(set(sys.modules) - before)\n"
        "assert 'graph-kernel-cluster' in names and 'npu-buffer-assign' in names, names\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_no_builtin_pass_registers_itself() -> None:
    for folder in ("pipelines", "lowering"):
        for path in (REPO / folder).rglob("*.py"):
            if path.name == "registry.py":
                continue
            assert "@register_pass" not in path.read_text(), f"{path}: built-in passes belong in the pass table"


def test_fusion_priorities_are_distinct() -> None:
    builtin = [cls for cls in fusion_passes() if issubclass(cls, FusionPass) and cls.priority < 1000]
    priorities = [cls.priority for cls in builtin]
    assert len(set(priorities)) == len(priorities)
    assert [cls.name for cls in builtin][:3] == ["shape_reshape", "shape_reshape_2", "split_concat_fusion"]
