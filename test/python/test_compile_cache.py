"""The on-disk compile cache: a compile stored by one process is loaded by the next, bit for bit the same code.

Unit tests of the store (lowering/disk_cache.py): atomic entries, damaged entries never loaded, least recently
used eviction.  Then graphfuse.compile with the cache on (a directory per test): hits in a new process give the
cold compile's results bit for bit, run-time checks keep their locations, what changes the code misses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from compiled_graphs import DIVISION, DYNAMIC

import graphfuse
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering import compiler, runtime
from graphfuse.lowering.compile_cache import compile_key
from graphfuse.lowering.disk_cache import MANIFEST, DiskCache, default_cache, parse_size
from graphfuse.lowering.options import resolve_options

# --------------------------------------------------------------------------- the store


def _key(n: int) -> str:
    return f"{n:064x}"


def test_an_entry_is_stored_whole_and_read_back(tmp_path: Path) -> None:
    store = DiskCache(tmp_path)
    source = tmp_path / "source.bin"
    source.write_bytes(b"\x7fELF" + bytes(range(256)))
    entry = store.put(_key(1), {"code.so": source, "notes": b"hello"}, {"kind": "test"})
    assert entry is not None and entry.metadata == {"kind": "test"}
    got = store.get(_key(1))
    assert got is not None
    assert got.file("code.so").read_bytes() == source.read_bytes()
    assert got.file("notes").read_bytes() == b"hello"
    assert got.size == len(source.read_bytes()) + 5
    assert store.get(_key(2)) is None
    assert not [p for p in store.entries_dir.iterdir() if p.name.startswith(".")]  # no scratch directory left


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "remove a file", "garble the manifest"])
def test_a_damaged_entry_is_a_miss_and_is_removed(tmp_path: Path, damage: str) -> None:
    store = DiskCache(tmp_path)
    entry = store.put(_key(3), {"code.so": b"x" * 1000}, {})
    assert entry is not None
    code = entry.file("code.so")
    if damage == "flip a byte":
        data = bytearray(code.read_bytes())
        data[500] ^= 1
        code.write_bytes(bytes(data))
    elif damage == "truncate":
        code.write_bytes(code.read_bytes()[:10])
    elif damage == "remove a file":
        code.unlink()
    else:
        (entry.path / MANIFEST).write_text("{not json")
    assert store.get(_key(3)) is None
    assert not entry.path.exists()
    assert store.put(_key(3), {"code.so": b"y" * 10}, {}) is not None  # stored again afterwards
    assert store.get(_key(3)).file("code.so").read_bytes() == b"y" * 10


def test_the_same_key_stored_twice_keeps_the_first_entry(tmp_path: Path) -> None:
    store = DiskCache(tmp_path)
    store.put(_key(4), {"a": b"first"}, {})
    store.put(_key(4), {"a": b"second"}, {})
    assert store.get(_key(4)).file("a").read_bytes() == b"first"
    assert len(store.entries()) == 1


def test_least_recently_used_entries_go_first_when_over_the_limit(tmp_path: Path) -> None:
    roomy = DiskCache(tmp_path)
    for n in range(3):
        roomy.put(_key(10 + n), {"a": bytes(1000)}, {})
        os.utime(roomy.get(_key(10 + n)).path / MANIFEST, (1000.0 + n, 1000.0 + n))  # used in the order 10, 11, 12
    assert roomy.get(_key(10)) is not None  # used now: the most recent
    DiskCache(tmp_path, limit=2500).put(_key(20), {"a": bytes(1000)}, {})
    assert {entry.key for entry in roomy.entries()} == {_key(10), _key(20)}


def test_clear_removes_every_entry(tmp_path: Path) -> None:
    store = DiskCache(tmp_path)
    for n in range(3):
        store.put(_key(30 + n), {"a": b"z"}, {})
    assert store.clear() == 3
    assert store.entries() == []


def test_sizes_and_the_switches_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_size("4096", "x") == 4096
    assert parse_size("2G", "x") == 2 << 30
    assert parse_size("512 MiB", "x") == 512 << 20
    with pytest.raises(GraphfuseError, match="not a size"):
        parse_size("lots", "GRAPHFUSE_CACHE_SIZE")
    monkeypatch.setenv("GRAPHFUSE_CACHE", "1")
    monkeypatch.setenv("GRAPHFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("GRAPHFUSE_CACHE_SIZE", "1M")
    assert default_cache() == DiskCache(tmp_path, 1 << 20)
    monkeypatch.setenv("GRAPHFUSE_CACHE", "off")
    assert default_cache() is None


# --------------------------------------------------------------------------- graphfuse.compile with the cache on


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache on, in a directory of this test's; the in-process caches emptied before and after."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("GRAPHFUSE_CACHE", "1")
    monkeypatch.setenv("GRAPHFUSE_CACHE_DIR", str(directory))
    compiler.clear_cache()
    runtime.clear_cache()
    yield directory
    compiler.clear_cache()
    runtime.clear_cache()


def _as_if_in_a_new_process() -> None:
    """Forget this process's compiled code: the next compile finds only the disk."""
    compiler.clear_cache()
    runtime.clear_cache()


CHAIN = """func.func @chain(%x: tensor<33x70xf32>, %w: tensor<70xf32>) -> tensor<33x70xf32> {
  %0 = "graph.mul"(%x, %w) : (tensor<33x70xf32>, tensor<70xf32>) -> tensor<33x70xf32>
  %1 = "graph.tanh"(%0) : (tensor<33x70xf32>) -> tensor<33x70xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<33x70xf32>) -> tensor<33x70xf32>
  %3 = "graph.exp"(%2) : (tensor<33x70xf32>) -> tensor<33x70xf32>
  return %3 : tensor<33x70xf32>
}
"""



def test_a_second_compile_loads_the_stored_code_with_the_same_results(cache_dir: Path) -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((33, 70), np.float32), rng.standard_normal(70, np.float32)
    cold = graphfuse.compile(CHAIN)
    assert not cold.from_cache and "llvm" in cold.timings
    (want,) = cold(x, w)
    _as_if_in_a_new_process()
    warm = graphfuse.compile(CHAIN)
    assert warm.from_cache and set(warm.timings) == {"cache"}
    (got,) = warm(x, w)
    assert got.tobytes() == want.tobytes()
    assert warm.fused_graph == cold.fused_graph and warm.linalg == cold.linalg
    assert warm.kernels == cold.kernels and warm.fusion_result == cold.fusion_result
    assert "llvm.func" in warm.function.llvm_dialect_ir  # lowered again from the stored linalg on request
    np.testing.assert_array_equal(warm.reference(x, w)[0], cold.reference(x, w)[0])


def test_dynamic_shapes_and_bf16_from_the_cache(cache_dir: Path) -> None:
    rng = np.random.default_rng(1)
    g = rng.standard_normal(48).astype(ml_dtypes.bfloat16)
    inputs = [rng.standard_normal((rows, 48)).astype(ml_dtypes.bfloat16) for rows in (0, 1, 17, 300)]
    cold = graphfuse.compile(DYNAMIC)
    wants = [cold(x, g)[0] for x in inputs]
    _as_if_in_a_new_process()
    warm = graphfuse.compile(DYNAMIC)
    assert warm.from_cache
    for x, want in zip(inputs, wants, strict=True):
        (got,) = warm(x, g)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()


def test_run_time_checks_of_stored_code_name_their_op(cache_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "divide.mlir"
    path.write_text(DIVISION)
    a, b = np.arange(8, dtype=np.int32), np.array([1, 2, 3, 0, 5, 6, 7, 8], np.int32)
    graphfuse.compile(path)
    _as_if_in_a_new_process()
    warm = graphfuse.compile(path)
    assert warm.from_cache
    with pytest.raises(Exception, match=rf"{path}:2:\d+: .*integer division by zero in graph.div"):
        warm(a, b)
    (got,) = warm(a, np.full(8, 2, np.int32))
    np.testing.assert_array_equal(got, a // 2)


def test_what_changes_the_code_misses(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    graphfuse.compile(CHAIN)
    for other in ({"opt_level": 0}, {"fast_math": False}, {"jit_opt_level": 1}, {"num_threads": 3},
                  {"graph_kernel_flags": "--disable_pass=softmax_fusion"}):
        _as_if_in_a_new_process()
        assert not graphfuse.compile(CHAIN, **other).from_cache, other
        _as_if_in_a_new_process()
        assert graphfuse.compile(CHAIN, **other).from_cache, other  # and each is stored in turn
    _as_if_in_a_new_process()
    assert not graphfuse.compile(CHAIN.replace("graph.tanh", "graph.sigmoid")).from_cache
    _as_if_in_a_new_process()
    assert not graphfuse.compile(graphfuse.parse_module(CHAIN)).from_cache  # another name for the file: "<module>"
    options = resolve_options()
    key = compile_key(CHAIN, "<string>", None, options, False)
    assert key is not None
    assert compile_key(CHAIN, "<string>", "chain", options, False) != key
    assert compile_key(CHAIN, "<string>", None, options, True) is None  # debug mode runs launch by launch
    monkeypatch.setenv("GLOG_v", "1")
    from graphfuse.pipelines import log

    log.configure()
    try:
        assert compile_key(CHAIN, "<string>", None, options, False) is None  # the passes' log lines were asked for
    finally:
        monkeypatch.delenv("GLOG_v")
        log.configure()


def test_a_damaged_library_is_compiled_again(cache_dir: Path) -> None:
    x, w = np.ones((33, 70), np.float32), np.ones(70, np.float32)
    (want,) = graphfuse.compile(CHAIN)(x, w)
    (code,) = cache_dir.rglob("code.so")
    data = bytearray(code.read_bytes())
    data[len(data) // 2] ^= 0xFF
    code.write_bytes(bytes(data))
    _as_if_in_a_new_process()
    again = graphfuse.compile(CHAIN)
    assert not again.from_cache
    assert again(x, w)[0].tobytes() == want.tobytes()
    _as_if_in_a_new_process()
    assert graphfuse.compile(CHAIN).from_cache  # stored anew


def test_nothing_is_stored_when_off_or_without_a_linker(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", str(cache_dir / "no-such-compiler"))
    graphfuse.compile(CHAIN)
    assert not list(cache_dir.rglob("code.so"))
    monkeypatch.delenv("CC")
    monkeypatch.setenv("GRAPHFUSE_CACHE", "off")
    _as_if_in_a_new_process()
    graphfuse.compile(CHAIN)
    assert not list(cache_dir.rglob("code.so"))


def test_an_unwritable_cache_directory_still_compiles(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = cache_dir.parent / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("GRAPHFUSE_CACHE_DIR", str(blocker / "cache"))
    x, w = np.ones((33, 70), np.float32), np.ones(70, np.float32)
    assert graphfuse.compile(CHAIN)(x, w)[0].shape == (33, 70)


_PROCESS = textwrap.dedent("""
    import json, sys
    import numpy as np
    import graphfuse
    text = open(sys.argv[1]).read()
    executable = graphfuse.compile(text, num_threads=2)
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(shape, np.float32) for shape, _ in executable.inputs]
    (out,) = executable(*inputs)
    print(json.dumps({"from_cache": executable.from_cache, "bytes": out.tobytes().hex()}))
""")


def test_another_process_gets_the_same_bits(cache_dir: Path, tmp_path: Path) -> None:
    """Two processes: the first compiles (with two threads: the parallel runtime is loaded for the stored code
    too), the second loads it; the results are the same bytes."""
    rows, cols = 512, 1024  # large enough for the rows to be split across threads
    graph = tmp_path / "graph.mlir"
    graph.write_text(CHAIN.replace("33x70", f"{rows}x{cols}").replace("<70xf32>", f"<{cols}xf32>"))
    script = tmp_path / "run.py"
    script.write_text(_PROCESS)
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(script), str(graph)], capture_output=True, text=True,
                              env=os.environ.copy(), check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert [run["from_cache"] for run in runs] == [False, True]
    assert runs[0]["bytes"] == runs[1]["bytes"]


def test_graphfuse_compile_libraries_come_from_the_cache(cache_dir: Path, tmp_path: Path) -> None:
    """An ahead-of-time library and its header: the second compile copies the stored bytes, which load and run."""
    graph = tmp_path / "divide.mlir"
    graph.write_text(DIVISION)
    made = []
    for round_ in range(2):
        library, header = tmp_path / f"libdiv{round_}.so", tmp_path / f"div{round_}.h"
        made.append(graphfuse.compile_library(graph, library, header=header, name="div"))
        assert made[-1].from_cache == (round_ == 1)
    assert (tmp_path / "libdiv0.so").read_bytes() == (tmp_path / "libdiv1.so").read_bytes()
    assert (tmp_path / "div1.h").read_text() == (tmp_path / "div0.h").read_text().replace("DIV0_H", "DIV1_H")
    loaded = graphfuse.load_library(tmp_path / "libdiv1.so", name="div")
    a = np.arange(8, dtype=np.int32)
    np.testing.assert_array_equal(loaded(a, np.full(8, 3, np.int32))[0], a // 3)
    with pytest.raises(Exception, match=rf"{graph.name}:2:\d+: .*integer division by zero"):
        loaded(a, np.zeros(8, np.int32))
    other = graphfuse.compile_library(graph, tmp_path / "div.s", emit="asm", name="div")
    assert not other.from_cache  # another kind is another entry


def test_processes_storing_the_same_graph_at_once(cache_dir: Path, tmp_path: Path) -> None:
    """Three processes compile the same graph at the same time into one cache: each gets the right bits, one
    entry is kept, no scratch directory is left behind, and a fourth process loads it."""
    graph = tmp_path / "graph.mlir"
    graph.write_text(CHAIN)
    script = tmp_path / "run.py"
    script.write_text(_PROCESS)
    command = [sys.executable, str(script), str(graph)]
    running = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=os.environ.copy()) for _ in range(3)]
    runs = []
    for process in running:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
        runs.append(json.loads(out.strip().splitlines()[-1]))
    assert len({run["bytes"] for run in runs}) == 1
    entries = DiskCache(cache_dir).entries()
    assert len(entries) == 1
    assert not [p for p in DiskCache(cache_dir).entries_dir.iterdir() if p.name.startswith(".")]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=True)
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["from_cache"] and last["bytes"] == runs[0]["bytes"]


def test_a_cache_too_small_for_an_entry_keeps_nothing_and_compiles(cache_dir: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHFUSE_CACHE_SIZE", "1K")
    x, w = np.ones((33, 70), np.float32), np.ones(70, np.float32)
    (want,) = graphfuse.compile(CHAIN)(x, w)
    assert DiskCache(cache_dir).entries() == []
    _as_if_in_a_new_process()
    again = graphfuse.compile(CHAIN)
    assert not again.from_cache and again(x, w)[0].tobytes() == want.tobytes()
