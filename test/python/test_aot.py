"""Ahead-of-time compilation: graphfuse-compile's libraries, called from C and from Python, compute what the JIT
computes, bit for bit."""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import graphfuse
from graphfuse import GraphfuseError, compile_library, load_library
from graphfuse.lowering.linker import llvm_tool
from graphfuse.tools.models import MODELS, TRAINING_MODELS, model_inputs

#: A C program against two generated headers: the llama layer from a shared library (its parallel loops on two
#: threads), the MLP from an object file linked in.  It calls the layer once with its own workspace, then from
#: four threads at once with NULL workspaces (each call allocates its own), checks that every thread got the same
#: bytes, and writes the results for the test to compare with the JIT's.
C_PROGRAM = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"
#include "mlp.h"

#define THREADS 4

static float *llama_in;
static float *llama_out[THREADS];

static void *aligned(size_t bytes) {
  return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static int transfer(const char *directory, const char *name, void *data, size_t bytes, int writing) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", directory, name);
  FILE *file = fopen(path, writing ? "wb" : "rb");
  if (!file) return 1;
  size_t done = writing ? fwrite(data, 1, bytes, file) : fread(data, 1, bytes, file);
  fclose(file);
  return done != bytes;
}

static void *run_layer(void *slot) {
  intptr_t k = (intptr_t)slot;
  return (void *)(intptr_t)llama_llama_layer(llama_in, llama_out[k], NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const size_t in_bytes = LLAMA_LLAMA_LAYER_ARG0_ELEMENTS * sizeof(float);
  const size_t out_bytes = LLAMA_LLAMA_LAYER_OUT0_ELEMENTS * sizeof(float);
  llama_in = aligned(in_bytes);
  float *first = aligned(out_bytes);
  void *workspace = aligned(LLAMA_LLAMA_LAYER_WORKSPACE_BYTES);
  if (transfer(argv[1], "llama_in.bin", llama_in, in_bytes, 0)) return 3;
  if (llama_llama_layer(llama_in, first, workspace) != GRAPHFUSE_OK) return 4;
  pthread_t threads[THREADS];
  for (intptr_t k = 0; k < THREADS; ++k) {
    llama_out[k] = aligned(out_bytes);
    if (pthread_create(&threads[k], NULL, run_layer, (void *)k)) return 5;
  }
  for (int k = 0; k < THREADS; ++k) {
    void *status;
    pthread_join(threads[k], &status);
    if ((intptr_t)status != GRAPHFUSE_OK || memcmp(first, llama_out[k], out_bytes)) return 6;
  }
  float mlp_in[MLP_MLP_ARG0_ELEMENTS], *mlp_out = aligned(MLP_MLP_OUT0_ELEMENTS * sizeof(float));
  if (transfer(argv[1], "mlp_in.bin", mlp_in, sizeof mlp_in, 0)) return 3;
  if (mlp_mlp(mlp_in, mlp_out, NULL) != GRAPHFUSE_OK) return 4;
  if (transfer(argv[1], "llama_out.bin", first, out_bytes, 1)) return 7;
  if (transfer(argv[1], "mlp_out.bin", mlp_out, MLP_MLP_OUT0_ELEMENTS * sizeof(float), 1)) return 7;
  printf("%s\n%s\n", llama_metadata(), mlp_metadata());
  return 0;
}
"""


def _model_file(directory: Path, name: str) -> Path:
    path = directory / f"{name}.mlir"
    models = {**MODELS, **TRAINING_MODELS}
    path.write_text(str(models[name]().module))
    return path


def _same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def test_a_c_program_gets_the_jit_results_bit_for_bit(tmp_path: Path) -> None:
    cc = shutil.which("cc")
    assert cc is not None, "the C program test needs the system C compiler 'cc'"
    llama = _model_file(tmp_path, "llama_layer")
    subprocess.run([sys.executable, "-m", "graphfuse.tools.graphfuse_compile", str(llama),
                    "-o", str(tmp_path / "libllama.so"), "--header", str(tmp_path / "llama.h"), "--num-threads", "2"],
                   check=True)
    compile_library(_model_file(tmp_path, "mlp"), tmp_path / "mlp.o", header=tmp_path / "mlp.h")
    (tmp_path / "main.c").write_text(C_PROGRAM)
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-I", str(tmp_path),
                    str(tmp_path / "main.c"), str(tmp_path / "mlp.o"), f"-L{tmp_path}", "-lllama",
                    f"-Wl,-rpath,{tmp_path}", "-lm", "-o", str(tmp_path / "main")], check=True)
    llama_in, mlp_in = model_inputs("llama_layer")[0], model_inputs("mlp")[0]
    llama_in.tofile(tmp_path / "llama_in.bin")
    mlp_in.tofile(tmp_path / "mlp_in.bin")
    done = subprocess.run([str(tmp_path / "main"), str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, (done.returncode, done.stderr)
    (want_llama,) = graphfuse.compile(llama, num_threads=2)(llama_in)
    (want_mlp,) = graphfuse.compile(tmp_path / "mlp.mlir", num_threads=1)(mlp_in)
    got_llama = np.fromfile(tmp_path / "llama_out.bin", np.float32).reshape(want_llama.shape)
    got_mlp = np.fromfile(tmp_path / "mlp_out.bin", np.float32).reshape(want_mlp.shape)
    assert _same_bits(got_llama, want_llama)
    assert _same_bits(got_mlp, want_mlp)
    described = [json.loads(line) for line in done.stdout.splitlines()]
    assert [d["symbol"] for d in described] == ["llama_llama_layer", "mlp_mlp"]
    assert described[0]["threads"] == 2 and described[0]["inputs"][0]["shape"] == list(llama_in.shape)


@pytest.mark.parametrize("name", [*MODELS, *TRAINING_MODELS])
def test_load_library_runs_every_bundled_model_as_the_jit_does(tmp_path: Path, name: str) -> None:
    source = _model_file(tmp_path, name)
    compile_library(source, tmp_path / f"lib{name}.so")
    library = load_library(tmp_path / f"lib{name}.so")
    inputs = model_inputs(name)
    want = graphfuse.compile(source, num_threads=1)(*inputs)
    got = library(*inputs)
    assert len(got) == len(want)
    assert all(_same_bits(g, w) for g, w in zip(got, want, strict=True))
    assert [s.shape for s in library.inputs] == [a.shape for a in inputs]


DYNAMIC = """func.func @g(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = "graph.relu"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.maximum"(%x, %y) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<?x8xf32>
}
"""
BOOLEANS = """func.func @b(%x: tensor<6x8xf32>, %y: tensor<6x8xf32>, %m: tensor<6x8xi1>) -> tensor<6x8xi1> {
  %0 = "graph.greater"(%x, %y) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xi1>
  %1 = "graph.logical_and"(%0, %m) : (tensor<6x8xi1>, tensor<6x8xi1>) -> tensor<6x8xi1>
  return %1 : tensor<6x8xi1>
}
"""


def test_dynamic_dimensions_are_parameters(tmp_path: Path) -> None:
    (tmp_path / "g.mlir").write_text(DYNAMIC)
    compiled = compile_library(tmp_path / "g.mlir", tmp_path / "libg.so", header=tmp_path / "g.h")
    assert "int g_g(const float *arg0, int64_t arg0_dim0, const float *arg1, int64_t arg1_dim0, " \
           "float *out0, int64_t out0_dim0, float *out1, int64_t out1_dim0, void *workspace);" in compiled.header
    library = load_library(tmp_path / "libg.so")
    x, y = np.random.default_rng(1).standard_normal((2, 13, 8)).astype(np.float32)
    out = [np.empty((13, 8), np.float32), np.empty((13, 8), np.float32)]
    got = library(x, y, out=out)
    want = graphfuse.compile(tmp_path / "g.mlir")(x, y)
    assert got[0] is out[0] and all(_same_bits(g, w) for g, w in zip(got, want, strict=True))
    # without out=, the results are sized by the graph's shape inference on the inputs, as the JIT sizes them
    allocated = library(x, y)
    assert all(_same_bits(g, w) for g, w in zip(allocated, want, strict=True))
    with pytest.raises(GraphfuseError, match=r"argument 1: expected dtype float32"):
        library(x, y.astype(np.float64), out=out)


def test_dynamic_dimensions_are_checked_against_each_other_and_out(tmp_path: Path) -> None:
    """The entry point trusts its sizes: a 1-row operand beside a 1,000-row one, or a short out=, would be read or
    written out of bounds.  The loader checks them on the graph the metadata carries, as the JIT does."""
    (tmp_path / "g.mlir").write_text(DYNAMIC)
    compile_library(tmp_path / "g.mlir", tmp_path / "libg.so")
    library = load_library(tmp_path / "libg.so")
    assert "graph.maximum" in library.metadata["graph"] and library.metadata["source"] == "g.mlir"
    one, many = np.ones((1, 8), np.float32), np.ones((1000, 8), np.float32)
    with pytest.raises(GraphfuseError, match=r"^g\.mlir:3:8: error: @g: operand #0 of 'graph.maximum' .* size 1 "
                                             r"in its dynamic dimension 0, broadcast to 1000"):
        library(one, many)
    short = [np.empty((999, 8), np.float32), np.empty((1000, 8), np.float32)]
    with pytest.raises(GraphfuseError, match=r"out\[0\] has shape \(999, 8\), but .* result 0 has shape "
                                             r"\(1000, 8\)"):
        library(many, many, out=short)
    assert len(library(many, many)[1]) == 1000


def test_a_static_library_carries_no_graph(tmp_path: Path) -> None:
    compile_library(_model_file(tmp_path, "mlp"), tmp_path / "libmlp.so")
    assert "graph" not in load_library(tmp_path / "libmlp.so").metadata


def test_standard_output_takes_object_code_and_the_header(tmp_path: Path, capfdbinary: pytest.CaptureFixture) -> None:
    """``-`` as the output writes the library there, as graphfuse-opt writes bytecode; as the header, the header."""
    source = _model_file(tmp_path, "mlp")
    compile_library(source, "-", emit="shared", name="mlp")
    (tmp_path / "libmlp.so").write_bytes(capfdbinary.readouterr().out)
    assert load_library(tmp_path / "libmlp.so").metadata["symbol"] == "mlp_mlp"  # <name>_<entry>
    compile_library(source, tmp_path / "mlp.o", header="-")
    assert "#ifndef MLP_H_" in capfdbinary.readouterr().out.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["libmlp.so", "mlp.mlir", "mlp.o"]


def test_a_library_compiled_again_to_its_path_loads_anew(tmp_path: Path) -> None:
    """The dynamic loader returns the handle it has for a path: the second load must not run the first code."""
    (tmp_path / "a.mlir").write_text(DYNAMIC)
    (tmp_path / "b.mlir").write_text(DYNAMIC.replace("graph.relu", "graph.neg"))
    x = -np.ones((3, 8), np.float32)
    compile_library(tmp_path / "a.mlir", tmp_path / "libg.so")
    first = load_library(tmp_path / "libg.so")
    compile_library(tmp_path / "b.mlir", tmp_path / "libg.so")
    second = load_library(tmp_path / "libg.so")
    again = load_library(tmp_path / "libg.so")  # unchanged since: the same code
    assert _same_bits(first(x, x)[0], np.zeros((3, 8), np.float32))  # relu
    assert _same_bits(second(x, x)[0], np.ones((3, 8), np.float32))  # neg
    assert _same_bits(again(x, x)[0], np.ones((3, 8), np.float32))
    assert again._library is second._library  # its private copy is loaded once, not once per load
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.mlir", "b.mlir", "libg.so"]


@pytest.mark.parametrize("name", ["g_g\x00", "g\x00x", "1g", "g-g", "", "g g"])
def test_load_library_refuses_names_that_are_not_identifiers(tmp_path: Path, name: str) -> None:
    """A NUL would end the symbol early (``g_g\\x00`` + ``_metadata`` calls the entry point as the accessor)."""
    (tmp_path / "g.mlir").write_text(DYNAMIC)
    compile_library(tmp_path / "g.mlir", tmp_path / "libg.so")
    with pytest.raises(GraphfuseError, match="is not a C identifier"):
        load_library(tmp_path / "libg.so", name=name)


def test_an_entry_named_as_the_metadata_accessor_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.mlir").write_text(DYNAMIC.replace("@g", "@metadata"))
    with pytest.raises(GraphfuseError, match="the entry point m_metadata would be the metadata accessor's name"):
        compile_library(tmp_path / "m.mlir", tmp_path / "libm.so")
    assert not (tmp_path / "libm.so").exists()


def test_booleans_are_bytes(tmp_path: Path) -> None:
    (tmp_path / "b.mlir").write_text(BOOLEANS)
    compiled = compile_library(tmp_path / "b.mlir", tmp_path / "libb.so", header=tmp_path / "b.h")
    assert "int b_b(const float *arg0, const float *arg1, const bool *arg2, bool *out0, void *workspace);" \
        in compiled.header
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((2, 6, 8)).astype(np.float32)
    m = rng.random((6, 8)) < 0.5
    (got,) = load_library(tmp_path / "libb.so")(x, y, m)
    assert _same_bits(got, (x > y) & m)


EMPTY = """func.func @e(%x: tensor<0x8xf32>, %y: tensor<8xf32>) -> (tensor<0x8xf32>, tensor<8xf32>) {
  %0 = "graph.add"(%x, %y) : (tensor<0x8xf32>, tensor<8xf32>) -> tensor<0x8xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 0>} : (tensor<0x8xf32>) -> tensor<8xf32>
  %2 = "graph.add"(%1, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0, %2 : tensor<0x8xf32>, tensor<8xf32>
}
"""


def test_empty_arguments_and_results_are_buffers_of_no_bytes(tmp_path: Path) -> None:
    (tmp_path / "e.mlir").write_text(EMPTY)
    compile_library(tmp_path / "e.mlir", tmp_path / "libe.so")
    y = np.arange(8, dtype=np.float32)
    empty, total = load_library(tmp_path / "libe.so")(np.zeros((0, 8), np.float32), y)
    assert empty.shape == (0, 8) and _same_bits(total, y)  # the sum over no row is 0


STREAMED = """func.func @s(%x: tensor<64x1000xf32>) -> tensor<64x1000xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<64x1000xf32>) -> tensor<64x1000xf32>
  return %0 : tensor<64x1000xf32>
}
"""


def test_streamed_results_must_be_aligned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Non-temporal stores into a result need it 64-byte aligned: the C entry point refuses a misaligned one
    (GRAPHFUSE_MISALIGNED_RESULT), the Python loader passes an aligned stand-in."""
    monkeypatch.setenv("GRAPHFUSE_STREAM_MIN_BYTES", "0")  # every store that can stream does
    (tmp_path / "s.mlir").write_text(STREAMED)
    compiled = compile_library(tmp_path / "s.mlir", tmp_path / "libs.so")
    assert compiled.interface.streamed_stores > 0 and compiled.interface.result_alignment == 64
    library = load_library(tmp_path / "libs.so")
    x = np.random.default_rng(2).standard_normal((64, 1000)).astype(np.float32)
    want = graphfuse.compile(tmp_path / "s.mlir")(x)[0]
    misaligned = np.empty(64 * 1000 * 4 + 4, np.uint8)[4:].view(np.float32).reshape(64, 1000)
    assert misaligned.ctypes.data % 64
    assert _same_bits(library(x, out=[misaligned])[0], want)
    entry = ctypes.CDLL(str(tmp_path / "libs.so")).s_s
    status = entry(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(misaligned.ctypes.data), ctypes.c_void_p(None))
    assert status == 2


def test_concurrent_calls_from_python_threads(tmp_path: Path) -> None:
    source = _model_file(tmp_path, "transformer_block")
    compile_library(source, tmp_path / "libblock.so")
    library = load_library(tmp_path / "libblock.so")
    inputs = [np.random.default_rng(seed).standard_normal(library.inputs[0].shape).astype(np.float32)
              for seed in range(8)]
    want = [library(x)[0] for x in inputs]
    got: dict[int, np.ndarray] = {}

    def call(k: int) -> None:
        for _ in range(5):
            got[k] = library(inputs[k])[0]

    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(_same_bits(got[k], want[k]) for k in range(8))


def _symbols(path: Path, *flags: str) -> dict[str, str]:
    """Defined symbols of an object or library: name -> nm's type letter."""
    listed = subprocess.run([llvm_tool("llvm-nm"), "--defined-only", *flags, str(path)], capture_output=True,
                            text=True, check=True).stdout.split()
    return dict(zip(listed[2::3], listed[1::3], strict=True))


def test_two_libraries_share_no_symbols(tmp_path: Path) -> None:
    """A library exports only its entry point and metadata accessor; an object's other global symbols (its
    weights, hidden) carry its name: two graphs link into one program."""
    for name in ("mlp", "llama_layer"):
        compile_library(_model_file(tmp_path, name), tmp_path / f"{name}.o")
        external = _symbols(tmp_path / f"{name}.o", "--extern-only")
        assert {f"{name}_metadata", f"{name}_{name}"} <= set(external), external
        assert all(symbol.startswith(f"{name}_") for symbol in external), external
        weights = [s for s, kind in external.items() if kind == "R"]
        assert weights, external  # the weights went into the object as raw bytes
        compile_library(tmp_path / f"{name}.mlir", tmp_path / f"lib{name}.so")
        assert set(_symbols(tmp_path / f"lib{name}.so", "-D")) == {f"{name}_metadata", f"{name}_{name}"}
    # Both graphs' internal functions have the same names (@<graph>_part_0, ...): linked together they must not
    # clash.  Two copies of one graph under two names prove it (the same internal names in both).
    compile_library(tmp_path / "mlp.mlir", tmp_path / "other.o", name="other")
    subprocess.run([shutil.which("cc") or "cc", "-shared", "-o", str(tmp_path / "libboth.so"), str(tmp_path / "mlp.o"),
                    str(tmp_path / "other.o"), str(tmp_path / "llama_layer.o"), "-lm"], check=True)
    both = ctypes.CDLL(str(tmp_path / "libboth.so"))
    assert both.mlp_mlp and both.other_mlp and both.llama_layer_llama_layer
    x = model_inputs("mlp")[0]
    out = [np.empty((16, 64), np.float32) for _ in range(2)]
    for k, entry in enumerate((both.mlp_mlp, both.other_mlp)):
        assert entry(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(out[k].ctypes.data), ctypes.c_void_p(None)) == 0
    assert _same_bits(out[0], out[1])


def test_load_library_errors(tmp_path: Path) -> None:
    with pytest.raises(GraphfuseError, match="no such file"):
        load_library(tmp_path / "libnothing.so")
    with pytest.raises(GraphfuseError, match="a directory"):
        load_library(tmp_path)
    compile_library(_model_file(tmp_path, "mlp"), tmp_path / "libmlp.so")
    with pytest.raises(GraphfuseError, match="has no function other_metadata: not a graphfuse library"):
        load_library(tmp_path / "libmlp.so", name="other")
    (tmp_path / "libtext.so").write_text("not a library")
    with pytest.raises(GraphfuseError, match="could not load library"):
        load_library(tmp_path / "libtext.so")
    library = load_library(tmp_path / "libmlp.so")
    with pytest.raises(GraphfuseError, match="expected 1 argument"):
        library()
