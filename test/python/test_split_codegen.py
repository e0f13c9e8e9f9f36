"""The split code generator: a large module compiled in pieces by LLVM's tools in parallel processes, linked and
loaded, gives the ExecutionEngine's results bit for bit.

The size threshold is lowered to 0 here so that small graphs take the split path; the tests then check that it
was taken (the function's ``split_library``), and compare with the same graph compiled by the engine.
"""

from __future__ import annotations

import gc
import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from compiled_graphs import DIVISION, DYNAMIC

import graphfuse
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering import compiler, runtime, split_codegen
from graphfuse.lowering.compile_cache import options_key
from graphfuse.lowering.host import CODEGEN_JOBS_VARIABLE, codegen_jobs
from graphfuse.lowering.options import resolve_options

LAYER = """func.func @layer(%x: tensor<37x96xf32>, %w: tensor<96x80xf32>, %b: tensor<80xf32>) -> tensor<37x80xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<37x96xf32>, tensor<96x80xf32>) -> tensor<37x80xf32>
  %1 = "graph.add"(%0, %b) : (tensor<37x80xf32>, tensor<80xf32>) -> tensor<37x80xf32>
  %2 = "graph.gelu"(%1) : (tensor<37x80xf32>) -> tensor<37x80xf32>
  %3 = "graph.softmax"(%2) {axis = -1 : i64} : (tensor<37x80xf32>) -> tensor<37x80xf32>
  %4 = "graph.exp"(%3) : (tensor<37x80xf32>) -> tensor<37x80xf32>
  %5 = "graph.reduce_max"(%4) {axes = array<i64: 1>, keep_dims = true} : (tensor<37x80xf32>) -> tensor<37x1xf32>
  %6 = "graph.sub"(%4, %5) : (tensor<37x80xf32>, tensor<37x1xf32>) -> tensor<37x80xf32>
  return %6 : tensor<37x80xf32>
}
"""



def _forget_compiled_code() -> None:
    compiler.clear_cache()
    runtime.clear_cache()


@pytest.fixture
def split_everything(monkeypatch: pytest.MonkeyPatch):
    """Every module split, across two jobs; no compiled code shared with other tests."""
    monkeypatch.setattr(split_codegen, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setenv(CODEGEN_JOBS_VARIABLE, "2")
    _forget_compiled_code()
    yield
    _forget_compiled_code()


def _engine_compile(text: str | Path, monkeypatch: pytest.MonkeyPatch, **options) -> graphfuse.Executable:
    """``text`` compiled by the ExecutionEngine alone (one job), not taken from this process's compiled code."""
    _forget_compiled_code()
    with monkeypatch.context() as patch:
        patch.setenv(CODEGEN_JOBS_VARIABLE, "1")
        executable = graphfuse.compile(text, **options)
    _forget_compiled_code()
    assert executable.function.split_library is None
    return executable


def _layer_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 96), np.float32)
    x[0, :3] = [np.nan, np.inf, -0.0]  # special values: NaN rows, an infinite row, a signed zero
    x[1, 5] = -np.inf
    return [x, rng.standard_normal((96, 80), np.float32) * 0.1, rng.standard_normal(80, np.float32)]


@pytest.mark.parametrize("threads", [1, 2])
def test_split_code_gives_the_engines_results_bit_for_bit(split_everything, monkeypatch: pytest.MonkeyPatch,
                                                         threads: int) -> None:
    inputs = _layer_inputs()
    split = graphfuse.compile(LAYER, num_threads=threads)
    library = split.function.split_library
    assert library is not None and library.pieces >= 2 and library.path.is_file()
    engine = _engine_compile(LAYER, monkeypatch, num_threads=threads)
    (got,), (want,) = split(*inputs), engine(*inputs)
    assert got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got, split.reference(*inputs)[0], rtol=1e-4, atol=1e-5)


def test_dynamic_shapes_and_bf16_through_the_split_code(split_everything, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    g = rng.standard_normal(48).astype(ml_dtypes.bfloat16)
    split = graphfuse.compile(DYNAMIC)
    assert split.function.split_library is not None
    engine = _engine_compile(DYNAMIC, monkeypatch)
    for rows in (0, 1, 17, 300):
        x = rng.standard_normal((rows, 48)).astype(ml_dtypes.bfloat16)
        (got,), (want,) = split(x, g), engine(x, g)
        assert got.shape == (rows, 48) and got.tobytes() == want.tobytes()


def test_run_time_checks_of_split_code_name_their_op(split_everything, tmp_path: Path) -> None:
    path = tmp_path / "divide.mlir"
    path.write_text(DIVISION)
    split = graphfuse.compile(path)
    assert split.function.split_library is not None
    a = np.arange(8, dtype=np.int32)
    with pytest.raises(Exception, match=rf"{path}:2:\d+: .*integer division by zero in graph.div"):
        split(a, np.array([1, 2, 3, 0, 5, 6, 7, 8], np.int32))
    np.testing.assert_array_equal(split(a, np.full(8, 2, np.int32))[0], a // 2)


def test_small_modules_and_one_job_stay_with_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    _forget_compiled_code()
    assert graphfuse.compile(DIVISION).function.split_library is None  # far below SPLIT_MIN_BYTES
    monkeypatch.setattr(split_codegen, "SPLIT_MIN_BYTES", 0)
    _forget_compiled_code()
    _engine_compile(DIVISION, monkeypatch)  # asserts the engine compiled it


def _weight_graph(weight: np.ndarray, dtype: str) -> str:
    rows, cols = weight.shape
    return f"""func.func @scale(%x: tensor<8x{rows}x{dtype}>) -> tensor<8x{cols}x{dtype}> {{
  %w = arith.constant dense<"0x{weight.tobytes().hex().upper()}"> : tensor<{rows}x{cols}x{dtype}>
  %0 = "graph.matmul"(%x, %w) : (tensor<8x{rows}x{dtype}>, tensor<{rows}x{cols}x{dtype}>) -> tensor<8x{cols}x{dtype}>
  return %0 : tensor<8x{cols}x{dtype}>
}}
"""


def test_large_constants_are_assembled_as_bytes(split_everything, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    weight = rng.standard_normal((64, 96), np.float32)  # 24 KB: detached, not spelled out in the LLVM IR
    text = _weight_graph(weight, "f32")
    x = rng.standard_normal((8, 64), np.float32)
    split = graphfuse.compile(text)
    assert split.function.split_library is not None
    engine = _engine_compile(text, monkeypatch)
    assert split(x)[0].tobytes() == engine(x)[0].tobytes()
    np.testing.assert_allclose(split(x)[0], x @ weight, rtol=1e-4, atol=1e-5)


def test_constants_kept_as_text_past_the_limit_stay_with_the_engine(split_everything,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((64, 32)).astype(ml_dtypes.bfloat16)  # bf16: not detached
    text = _weight_graph(weight, "bf16")
    x = rng.standard_normal((8, 64)).astype(ml_dtypes.bfloat16)
    split = graphfuse.compile(text)
    assert split.function.split_library is not None  # 4 KB of constant text: under the limit
    _forget_compiled_code()
    monkeypatch.setattr(split_codegen, "CONSTANT_LIMIT_BYTES", 1024)
    engine = graphfuse.compile(text)
    assert engine.function.split_library is None
    assert split(x)[0].tobytes() == engine(x)[0].tobytes()


def test_a_failing_tool_falls_back_to_the_engine_with_a_warning(split_everything, monkeypatch: pytest.MonkeyPatch,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    def failing(command: list[str], what: str, stdin: str | None = None, die_with_starter: bool = False) -> str:
        raise GraphfuseError(f"{what} failed (exit 1): out of memory")

    monkeypatch.setattr(split_codegen, "run_tool", failing)
    with caplog.at_level(logging.WARNING, logger="graphfuse"):
        executable = graphfuse.compile(LAYER)
    assert executable.function.split_library is None
    assert "split code generator failed, the ExecutionEngine compiles it" in caplog.text
    assert "out of memory" in caplog.text
    inputs = _layer_inputs()
    np.testing.assert_allclose(executable(*inputs)[0], executable.reference(*inputs)[0], rtol=1e-4, atol=1e-5)


def test_the_library_file_goes_with_its_last_user(split_everything) -> None:
    executable = graphfuse.compile(DIVISION)
    directory = executable.function.split_library.path.parent
    assert directory.is_dir() and [p.name for p in directory.iterdir()] == ["code.so"]  # pieces and objects gone
    del executable
    _forget_compiled_code()
    gc.collect()
    assert not directory.exists()


def test_the_compile_cache_keeps_split_code(split_everything, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHFUSE_CACHE", "1")
    monkeypatch.setenv("GRAPHFUSE_CACHE_DIR", str(tmp_path / "cache"))
    inputs = _layer_inputs()
    cold = graphfuse.compile(LAYER)
    assert cold.function.split_library is not None and not cold.from_cache
    (want,) = cold(*inputs)
    _forget_compiled_code()
    warm = graphfuse.compile(LAYER)
    assert warm.from_cache
    assert warm(*inputs)[0].tobytes() == want.tobytes()


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_job_count_is_an_error(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(CODEGEN_JOBS_VARIABLE, value)
    with pytest.raises(GraphfuseError, match=f"{CODEGEN_JOBS_VARIABLE} must be a positive integer, got '{value}'"):
        codegen_jobs()


def test_the_job_count_defaults_to_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CODEGEN_JOBS_VARIABLE, raising=False)
    assert codegen_jobs() >= 1
    monkeypatch.setenv(CODEGEN_JOBS_VARIABLE, " 3 ")
    assert codegen_jobs() == 3


def test_the_job_count_is_read_once_with_the_options_and_is_not_part_of_the_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CODEGEN_JOBS_VARIABLE, "3")
    three = resolve_options()
    monkeypatch.setenv(CODEGEN_JOBS_VARIABLE, "1")
    one = resolve_options()
    assert (three.codegen_jobs, one.codegen_jobs) == (3, 1)
    assert three == one and options_key(three) == options_key(one)  # the same code either way
    monkeypatch.setenv(CODEGEN_JOBS_VARIABLE, "zero")
    with pytest.raises(GraphfuseError, match=f"{CODEGEN_JOBS_VARIABLE} must be a positive integer"):
        resolve_options()


def _children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return children


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("setpriv") is None,
                    reason="the kernel's parent-death signal is Linux's, set by util-linux's setpriv")
def test_a_tool_does_not_outlive_a_killed_compile() -> None:
    """A compile killed by a timeout takes its tools with it, as a killed bench worker once left an ``opt``
    running for minutes.  The tool here is ``sleep``, started by run_tool from a thread with ``die_with_starter``,
    as the pieces are."""
    script = ("import threading; from graphfuse.lowering.linker import run_tool\n"
              "thread = threading.Thread(target=run_tool, args=(['sleep', '300'], 'sleep', None, True))\n"
              "thread.start(); thread.join()")
    compile_process = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 30
        while not (tools := _children_of(compile_process.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tools, "the tool never started"
        compile_process.kill()
        compile_process.wait()
        deadline = time.monotonic() + 10
        while Path(f"/proc/{tools[0]}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(f"/proc/{tools[0]}").exists(), "the tool outlived the process that started it"
    finally:
        compile_process.kill()


def test_no_python_runs_between_fork_and_exec_of_a_tool(monkeypatch) -> None:
    """The tools start without a ``preexec_fn``: Python code run in the forked child of a process whose other
    threads hold Python objects crashed the child (a finalizer of PyTorch's ran there), and may deadlock it.
    The parent-death signal is set by ``setpriv`` in the child instead, where it is installed."""
    from graphfuse.lowering import linker

    started: list[tuple[list[str], dict]] = []

    def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
        started.append((command, kwargs))
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(linker.subprocess, "run", run)
    linker.run_tool(["opt", "--version"], "opt", die_with_starter=True)
    linker.run_tool(["llc", "--version"], "llc")
    (with_signal, first), (plain, second) = started
    assert first.get("preexec_fn") is None and second.get("preexec_fn") is None
    assert with_signal[-2:] == ["opt", "--version"] and plain == ["llc", "--version"]
    if sys.platform.startswith("linux") and shutil.which("setpriv"):
        assert Path(with_signal[0]).name == "setpriv" and with_signal[1:4] == ["--pdeathsig", "KILL", "--"]
