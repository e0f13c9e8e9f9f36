"""Outputs are written whole or not at all, and never over an input.

Each tool runs in a child process whose file-size limit (``ulimit -f``) makes
the write fail part-way, or writes to ``/dev/full``; the previous output file
must survive byte for byte, nothing half-written may be left beside it, and
the tool says why in one ``error:`` line with exit code 1.
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from graphfuse import GraphfuseError, compile_library
from graphfuse.dialect.files import atomic_output, check_distinct_files, write_file

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "test" / "BadInput" / "Inputs" / "model.mlir"
BIN = Path(sys.executable).parent
OLD = b"the previous output\n"
#: smaller than every output below, larger than nothing
FILE_SIZE_LIMIT = 64


def _run(argv: list[str], limit: int | None = None) -> subprocess.CompletedProcess:
    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=300,
                          preexec_fn=limit_file_size if limit is not None else None)


def _assert_one_error(result: subprocess.CompletedProcess, tool: str, text: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert f"{tool}: error: " in result.stderr and text in result.stderr, result.stderr


@pytest.mark.parametrize("argv", [
    ["graphfuse-opt", str(MODEL), "--graph-fusion", "-o", "{out}.mlir"],
    ["graphfuse-opt", str(MODEL), "--emit-bytecode", "-o", "{out}.mlirbc"],
    ["graphfuse-run", str(MODEL), "--output={out}.npz"],
    ["graphfuse-compile", str(MODEL), "-o", "{out}.ll"],
    ["graphfuse-compile", str(MODEL), "-o", "{out}.s"],
    ["graphfuse-compile", str(MODEL), "-o", "{out}.o"],
    ["graphfuse-compile", str(MODEL), "-o", "{out}.so"],
], ids=["opt-text", "opt-bytecode", "run-npz", "compile-llvm-ir", "compile-asm", "compile-obj", "compile-shared"])
def test_a_failed_write_leaves_the_previous_output(argv: list[str], tmp_path: Path) -> None:
    argv = [a.replace("{out}", str(tmp_path / "out")) for a in argv]
    output = Path(next(a for a in argv if str(tmp_path) in a).removeprefix("--output="))
    output.write_bytes(OLD)
    result = _run(argv, limit=FILE_SIZE_LIMIT)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "error: " in result.stderr, result.stderr
    assert output.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == [output.name], "a temporary file was left behind"
    # and without the limit the same command replaces it
    assert _run(argv).returncode == 0
    assert output.read_bytes() != OLD


def test_a_failed_header_leaves_library_and_header_as_they_were(tmp_path: Path) -> None:
    library, header = tmp_path / "libq.so", tmp_path / "q.h"
    library.write_bytes(OLD)
    header.write_bytes(OLD)
    result = _run(["graphfuse-compile", str(MODEL), "-o", str(library), "--header", str(header)],
                  limit=FILE_SIZE_LIMIT)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert library.read_bytes() == OLD and header.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["libq.so", "q.h"]


@pytest.mark.parametrize(("argv", "what"), [
    (["graphfuse-opt", str(MODEL), "-o", "/dev/full"], "output file '/dev/full'"),
    (["graphfuse-compile", str(MODEL), "--emit=llvm-ir", "-o", "/dev/full"], "output file '/dev/full'"),
    (["graphfuse-compile", str(MODEL), "-o", "{tmp}/libq.so", "--header", "/dev/full"], "C header '/dev/full'"),
    (["graphfuse-run", str(MODEL), "--output=/dev/full"], "output file '/dev/full'"),
], ids=["opt", "compile-llvm-ir", "compile-header", "run"])
def test_a_full_device_is_an_error_line(argv: list[str], what: str, tmp_path: Path) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    _assert_one_error(_run(argv), argv[0], f"could not write {what}: No space left on device")
    assert not (tmp_path / "libq.so").exists(), "the library was written although its header was not"


@pytest.mark.parametrize(("argv", "message"), [
    (["graphfuse-compile", "{model}", "-o", "{model}"],
     "output file '{model}' is the same file as the input file '{model}'"),
    (["graphfuse-compile", "{model}", "-o", "{tmp}/libq.so", "--header", "{model}"],
     "C header '{model}' is the same file as the input file '{model}'"),
    (["graphfuse-compile", "{model}", "-o", "{tmp}/libq.so", "--header", "{tmp}/./libq.so"],
     "C header '{tmp}/./libq.so' is the same file as the output file '{tmp}/libq.so'"),
    (["graphfuse-run", "{model}", "--output={model}"],
     "output file '{model}' is the same file as the input file '{model}'"),
    (["graphfuse-opt", "{model}", "-o", "{tmp}/out.mlir", "--fusion-result={tmp}/out.mlir"],
     "fusion result file '{tmp}/out.mlir' is the same file as the output file '{tmp}/out.mlir'"),
    (["graphfuse-opt", "{model}", "--graph-fusion", "--fusion-result={model}"],
     "fusion result file '{model}' is the same file as the input file '{model}'"),
], ids=["compile-output", "compile-header", "compile-output-and-header", "run-output", "opt-two-outputs",
        "opt-report-over-input"])
def test_an_output_that_is_an_input_or_another_output_is_refused(argv: list[str], message: str,
                                                                   tmp_path: Path) -> None:
    model = tmp_path / "model.mlir"
    model.write_bytes(MODEL.read_bytes())

    def fill(text: str) -> str:
        return text.replace("{model}", str(model)).replace("{tmp}", str(tmp_path))

    _assert_one_error(_run([fill(a) for a in argv]), argv[0], fill(message) + ": refusing to overwrite it")
    assert model.read_bytes() == MODEL.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.mlir"]


def test_opt_may_rewrite_its_input_in_place(tmp_path: Path) -> None:
    """As with mlir-opt: the input is read whole before the output replaces it."""
    model = tmp_path / "model.mlir"
    model.write_bytes(MODEL.read_bytes())
    assert _run(["graphfuse-opt", str(model), "--graph-fusion", "-o", str(model)]).returncode == 0
    assert "func.func" in model.read_text()


def test_a_new_file_gets_the_umask_and_a_replaced_one_keeps_its_mode(tmp_path: Path) -> None:
    fresh, kept = tmp_path / "fresh.txt", tmp_path / "kept.txt"
    kept.write_text("old")
    kept.chmod(0o640)
    umask = os.umask(0o027)
    try:
        write_file(fresh, "new")
        write_file(kept, "new")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640 & ~0o027
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    assert kept.read_text() == "new"


def test_an_exception_inside_an_atomic_output_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(OLD)
    with pytest.raises(RuntimeError), atomic_output(target) as scratch:
        scratch.write_bytes(b"half")
        raise RuntimeError("the compiler failed")
    assert target.read_bytes() == OLD and sorted(tmp_path.iterdir()) == [target]


def test_write_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(GraphfuseError, match=r"could not write output file '.*/no/such/out': No such file"):
        write_file(tmp_path / "no" / "such" / "out", "x")
    with pytest.raises(GraphfuseError, match=r"could not write output file '.*': it is a directory"):
        write_file(tmp_path, "x")


def test_distinct_files_see_links_and_spellings(tmp_path: Path) -> None:
    source = tmp_path / "a.mlir"
    source.write_text("x")
    (tmp_path / "link.mlir").symlink_to(source)
    with pytest.raises(GraphfuseError, match="is the same file as the input"):
        check_distinct_files([("input", source)], [("output", tmp_path / "link.mlir")])
    with pytest.raises(GraphfuseError, match="is the same file as the output"):
        check_distinct_files([], [("output", tmp_path / "b.so"), ("header", tmp_path / "sub" / ".." / "b.so")])
    check_distinct_files([("input", source)], [("output", "-"), ("other", "/dev/null"), ("header", "/dev/null")])


def test_compile_library_writes_nothing_when_its_header_cannot_be_written(tmp_path: Path) -> None:
    with pytest.raises(GraphfuseError, match=r"could not write C header '.*/missing/q\.h': No such file"):
        compile_library(MODEL, tmp_path / "libq.so", header=tmp_path / "missing" / "q.h")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(GraphfuseError, match="the library and the C header cannot both go to standard output"):
        compile_library(MODEL, "-", header="-")
