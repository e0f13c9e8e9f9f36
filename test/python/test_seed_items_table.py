"""docs/fusion-switches.md, "Every seed item": every row names a test that exists, with a known status.

A pytest row (``test/python/test_x.py::test_name`` or ``...::test_name[id]``) must name a file that defines
the function and, for an id, one that pytest collects (one ``pytest --collect-only`` over every file the table
names); a lit row must name a lit test file with a RUN: line.  The Appendix 1 and Appendix 2 tables must have
a row for every name of the repository's own copies of those appendices.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "fusion-switches.md"
SECTION = "## Every seed item"
HEADER = ["seed item", "graphfuse", "status", "test"]
STATUSES = {"works", "alias", "equivalent", "deviates", "accepted-unsupported", "rejected", "not-applicable",
            "missing"}
#: suffixes lit runs as tests (test/lit.cfg.py) that the table may name
LIT_SUFFIXES = {".mlir", ".test"}
_PYTEST = re.compile(r"^(test/python/test_\w+\.py)::(test_\w+)(?:\[(.+)\])?$")


@dataclass(frozen=True)
class Row:
    table: str
    item: str
    graphfuse: str
    status: str
    test: str


def _cells(line: str) -> list[str]:
    """A table line's cells; ``\\|`` is a pipe inside a cell (as GitHub's tables read it)."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [cell.replace("\\|", "|").strip() for cell in re.split(r"(?<!\\)\|", inner)]


def _rows() -> list[Row]:
    text = DOC.read_text()
    assert text.count(SECTION) == 1, f"docs/fusion-switches.md needs one '{SECTION}' section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows, table, header = [], "", None
    for line in section.splitlines():
        if line.startswith("### "):
            table, header = line.removeprefix("### ").strip(), None
        elif not line.startswith("|"):
            header = None
        elif header is None:
            header = _cells(line)
        elif header == HEADER and not set(line) <= set("|-: "):
            cells = _cells(line)
            assert len(cells) == 4, f"{table}: {line}"
            rows.append(Row(table, *cells[:3], cells[3].strip("`")))
    return rows


ROWS = _rows()


def _appendix_names(path: Path, name: str) -> list[str]:
    """The names of ``NAME = "...".split()`` in a test module (names only: every other word of APPENDIX_1 is
    its columns), read without importing the module."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            call = node.value
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            words = ast.literal_eval(call.func.value).split()
            return words[::2] if name == "APPENDIX_1" else words
    raise AssertionError(f"{path.name} has no {name}")


def _table(prefix: str) -> list[Row]:
    rows = [row for row in ROWS if row.table.startswith(prefix)]
    assert rows, f"no table titled '{prefix}...'"
    return rows


@pytest.fixture(scope="module")
def collected() -> set[str]:
    """Every test id pytest collects in the files the table names, from one collection run."""
    files = sorted({m.group(1) for row in ROWS if (m := _PYTEST.match(row.test))})
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return {line.strip() for line in result.stdout.splitlines() if "::" in line}


def test_the_tables_have_the_expected_size() -> None:
    assert len(ROWS) >= 250
    assert len({row.table for row in ROWS}) >= 9


def test_rows_are_unique_and_complete() -> None:
    seen = set()
    for row in ROWS:
        key = (row.table, row.item)
        assert key not in seen, f"duplicated row: {key}"
        seen.add(key)
        assert row.item and row.graphfuse and row.test, row


def test_every_status_is_in_the_vocabulary() -> None:
    assert {row.status for row in ROWS} <= STATUSES, {row.status for row in ROWS} - STATUSES


def test_every_pytest_row_names_a_collected_test(collected: set[str]) -> None:
    defined: dict[str, set[str]] = {}
    for row in ROWS:
        match = _PYTEST.match(row.test)
        if match is None:
            continue
        path, function, param = match.groups()
        assert (REPO / path).is_file(), row
        if path not in defined:
            tree = ast.parse((REPO / path).read_text())
            defined[path] = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert function in defined[path], f"{path} defines no {function} ({row.table}: {row.item})"
        if param is None:
            assert f"{path}::{function}" in collected or any(
                t.startswith(f"{path}::{function}[") for t in collected), row
        else:
            assert row.test in collected, f"pytest collects no {row.test} ({row.table}: {row.item})"


def test_every_lit_row_names_a_lit_test() -> None:
    for row in ROWS:
        if _PYTEST.match(row.test):
            continue
        path = REPO / row.test
        assert row.test.startswith("test/") and path.suffix in LIT_SUFFIXES, f"not a test reference: {row}"
        assert not {"Inputs", "Output"} & set(path.parts), f"lit does not run {row.test}"
        assert path.is_file(), row
        assert "RUN:" in path.read_text(), f"{row.test} has no RUN: line"


@pytest.mark.parametrize(("prefix", "module", "name"), [
    ("Appendix 1", "test_graph_kernel_expand.py", "APPENDIX_1"),
    ("Appendix 2", "test_graph_kernel_fusion.py", "APPENDIX_2"),
])
def test_every_appendix_name_has_a_row(prefix: str, module: str, name: str) -> None:
    names = _appendix_names(REPO / "test" / "python" / module, name)
    assert len(names) == {"APPENDIX_1": 83, "APPENDIX_2": 60}[name]
    items = [row.item.strip("`") for row in _table(prefix)]
    assert sorted(items) == sorted(names), set(items) ^ set(names)
