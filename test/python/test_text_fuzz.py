"""Fuzzing the text front ends: the MLIR parser path, the pipeline parser, the flags and switch-file parsers.

Inputs are valid texts mutated by hypothesis (byte flips, token deletions and
duplications, truncations, attribute values and types spliced into ops) and
random text.  Every input must be accepted or rejected with a GraphfuseError;
MLIR input that is rejected must be rejected with a located error.

Anything that reaches MLIR's C++ (parsing and verifying modules, upstream
pipeline elements) runs in a worker subprocess: an abort kills the worker,
not pytest, and is reported as a failure that shows the input (hypothesis then
shrinks it, restarting the worker as needed).  The pipeline-string, flags and
switch-file parsers are pure Python and run in-process.

The run is derandomized and bounded for CI.  Run it long with more examples
(each target) and, optionally, another seed:

    GRAPHFUSE_FUZZ_EXAMPLES=20000 GRAPHFUSE_FUZZ_SEED=1 pytest test/python/test_text_fuzz.py

A crash found here becomes a named case of the bad-input corpus (test/BadInput/).
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.pipelines.fusion.switches import (
    GraphKernelFlags,
    SwitchFile,
    parse_graph_kernel_flags,
    parse_switch_file,
)
from graphfuse.pipelines.pipeline_parser import NestedPipeline, PipelineSyntaxError, parse_pipeline

REPO = Path(__file__).resolve().parents[2]
#: Seconds one input may take in the worker before it counts as a hang.
INPUT_TIMEOUT = 60


def _examples(default: int) -> int:
    return int(os.environ.get("GRAPHFUSE_FUZZ_EXAMPLES", default))


def fuzz_settings(default_examples: int) -> Callable:
    """Derandomized and bounded by default; GRAPHFUSE_FUZZ_EXAMPLES / GRAPHFUSE_FUZZ_SEED for long runs."""
    chosen_seed = os.environ.get("GRAPHFUSE_FUZZ_SEED")
    configured = settings(
        max_examples=_examples(default_examples),
        derandomize=chosen_seed is None,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )

    def apply(test: Callable) -> Callable:
        test = configured(test)
        return hypothesis_seed(int(chosen_seed))(test) if chosen_seed is not None else test

    return apply


# -- the worker subprocess -------------------------------------------------------------------------------

#: Reads one JSON request per line, answers one JSON line.  "mlir": parse and verify, print and parse again,
#: run the clean-up passes; "parse": parse and verify only; "pipeline": build the steps of a pipeline
#: (PassManager parses the upstream elements).
WORKER = r"""
import json, sys, traceback
import graphfuse
from graphfuse.pipelines.runner import build_steps

CLEANUP = "builtin.module(graph-canonicalize,graph-cse,graph-dce)"

def located(error):
    return all(d.location is not None for d in error.diagnostics if d.severity == "error")

def mlir(text):
    try:
        module = graphfuse.parse_module(text, "fuzz.mlir")
    except graphfuse.GraphfuseError as error:
        return {"outcome": "error", "located": located(error), "message": str(error)}
    printed = str(module)
    try:
        graphfuse.parse_module(printed, "printed.mlir")
    except graphfuse.GraphfuseError as error:
        return {"outcome": "exception", "message": "the printed module does not parse again: " + str(error)
                + "\n--- printed:\n" + printed}
    try:
        graphfuse.run_pipeline(module, CLEANUP)
    except graphfuse.GraphfuseError as error:
        return {"outcome": "ok", "pipeline_error": str(error)}
    return {"outcome": "ok"}

def parse(text):
    try:
        graphfuse.parse_module(text, "seed.mlir")
    except graphfuse.GraphfuseError as error:
        return {"outcome": "error", "located": located(error), "message": str(error)}
    return {"outcome": "ok"}

def pipeline(text):
    try:
        build_steps(text, graphfuse.make_context())
    except graphfuse.GraphfuseError as error:
        return {"outcome": "error", "located": True, "message": str(error)}
    return {"outcome": "ok"}

for line in sys.stdin:
    request = json.loads(line)
    try:
        answer = {"mlir": mlir, "parse": parse, "pipeline": pipeline}[request["mode"]](request["text"])
    except BaseException:
        answer = {"outcome": "exception", "message": traceback.format_exc()}
    print(json.dumps(answer), flush=True)
"""


class Worker:
    """A long-lived subprocess that parses inputs; restarted after it dies."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.stderr = tempfile.TemporaryFile()

    def _start(self) -> subprocess.Popen:
        self.stderr.seek(0)
        self.stderr.truncate()
        env = {k: v for k, v in os.environ.items() if k not in ("MS_DEV_GRAPH_KERNEL_FLAGS", "GRAPHFUSE_DEBUG")}
        return subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=self.stderr, cwd=REPO, env=env, text=True)

    def ask(self, mode: str, text: str) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        proc = self.proc
        try:
            proc.stdin.write(json.dumps({"mode": mode, "text": text}) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([proc.stdout], [], [], INPUT_TIMEOUT)
        line = proc.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        if not ready:
            proc.kill()
        code = proc.wait()
        self.stderr.seek(0)
        tail = self.stderr.read().decode(errors="replace")[-2000:]
        self.proc = None
        what = "hung" if not ready else f"died with exit code {code} (negative: a signal)"
        return {"outcome": "crash", "message": f"the worker {what}\n--- stderr:\n{tail}"}

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()


# -- seeds and mutations ---------------------------------------------------------------------------------------


def _functions(text: str) -> list[str]:
    """The top-level functions of a printed module, each as a module of its own."""
    return re.findall(r"^  func\.func .*?^  }$", text, flags=re.M | re.S)


def _chunks(path: Path) -> list[str]:
    chunks = re.split(r"^// -----$", path.read_text(), flags=re.M)
    return [c for c in chunks if "expected-" not in c and "func.func" in c and len(c) < 3000]


def mlir_seeds() -> list[str]:
    """Valid graphs: one per op of the catalog's examples, and the small graphs of the lit tests."""
    seeds = _functions((REPO / "test" / "Dialect" / "all-ops.mlir").read_text())
    paths = sorted((REPO / "test" / "Dialect").glob("roundtrip-*.mlir"))
    paths += sorted((REPO / "test" / "Fusion").glob("*/basic.mlir"))
    paths += sorted((REPO / "test" / "GraphKernel").glob("*/basic.mlir"))
    for path in paths:
        seeds.extend(_chunks(path))
    seeds.extend((REPO / "test" / "BadInput" / "Inputs" / name).read_text()
                 for name in ("model.mlir", "dynamic.mlir", "zero-size.mlir"))
    return seeds


MLIR_SEEDS = mlir_seeds()

_TOKEN = re.compile(r'\s+|"[^"\n]*"|[%@^#!]?[\w.$-]+|0x[0-9A-Fa-f]+|.', re.S)

ATTRIBUTE_VALUES = [
    "true", "false", "0 : i64", "-1 : i64", "1 : i32", "9223372036854775807 : i64", "-9223372036854775808 : i64",
    "array<i64>", "array<i64: 1, 0>", "array<i64: -5, 100>", "array<i32: 1>", "array<f32: 1.0>", '"none"', '"x"',
    '""', "1.0e-5 : f32", "0.0 : f32", "-1.0 : f64", "0x7FC00000 : f32", "0x7F800000 : f32",
    "dense<1.0> : tensor<2xf32>", "dense<[1, 2]> : tensor<2xi64>", "unit", "[]", "[1, 2]", "{}", "{a = 1}", "@f",
    "f32", "tensor<4xf32>",
    "affine_map<(d0) -> (d0)>", "#graph.x", "loc(unknown)", "1", "1.5", "-0.0 : bf16",
]
TYPES = [
    "tensor<0xf32>", "tensor<0x8xf32>", "tensor<?x8xf32>", "tensor<?x?xf32>", "tensor<*xf32>", "tensor<f32>",
    "tensor<100000000000x100000000000xf32>", "tensor<1000000x1000000xf32>", "tensor<4x8xi1>", "tensor<4xf64>",
    "tensor<4xcomplex<f32>>", "tensor<4xindex>", "tensor<4x8xbf16>", "tensor<4x8xf16>", "tensor<4x8xi8>",
    "tensor<1x1x1x1x1x1x1x1xf32>", "tensor<4xf32, \"enc\">", "tensor<4x8xui32>", "tensor<4x8xsi32>", "tensor<4xi4>",
    "f32", "i1", "index", "none", "memref<4xf32>", "vector<4xf32>", "tuple<>", "tensor<99999999999999999999xf32>",
    "tensor<-1xf32>", "tensor<4x8xf8E4M3FN>",
]


@st.composite
def mutated_text(draw: st.DrawFn, seeds: list[str], values: list[str], types: list[str]) -> str:
    """A seed with one to three mutations."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "delete", "duplicate", "truncate", "value", "type", "insert"]))
        tokens = _TOKEN.findall(text)
        if not tokens:
            break
        if kind == "flip":
            at = draw(st.integers(0, max(len(text) - 1, 0)))
            char = draw(st.characters(codec="utf-8") | st.sampled_from(list("{}()<>[]:,=%@\"'#x0?-")))
            text = text[:at] + char + text[at + 1:]
        elif kind in ("delete", "duplicate"):
            at = draw(st.integers(0, len(tokens) - 1))
            tokens[at] = "" if kind == "delete" else tokens[at] * 2
            text = "".join(tokens)
        elif kind == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        elif kind == "insert":
            at = draw(st.integers(0, len(tokens)))
            tokens.insert(at, draw(st.sampled_from([*values, *types, "{", "}", "(", ")", ",", "%0", "\n"])))
            text = "".join(tokens)
        elif kind == "value":
            # Replace the value of one `name = value` (in an attribute dictionary or pass options).
            spots = list(re.finditer(r"(\w+ = )([^,}]+)", text)) or list(re.finditer(r"(\w+=)([^ ,}]+)", text))
            if spots:
                spot = draw(st.sampled_from(spots))
                text = text[: spot.start(2)] + draw(st.sampled_from(values)) + text[spot.end(2):]
        else:
            spots = list(re.finditer(r"tensor<[^<>]*(?:<[^<>]*>[^<>]*)*>", text))
            if spots and types:
                spot = draw(st.sampled_from(spots))
                text = text[: spot.start()] + draw(st.sampled_from(types)) + text[spot.end():]
    return text


# -- (a) the MLIR text parser path (worker subprocess) ------------------------------------------------------------


def _check_mlir_answer(text: str, answer: dict) -> None:
    shown = f"\n--- input:\n{text!r}"
    assert answer["outcome"] in ("ok", "error"), f"{answer['outcome']}: {answer.get('message')}{shown}"
    if answer["outcome"] == "error":
        assert answer["located"], f"error without a location: {answer['message']}{shown}"
    assert "internal error" not in answer.get("pipeline_error", ""), f"{answer['pipeline_error']}{shown}"


def test_mlir_seeds_are_valid(worker: Worker):
    """The seeds parse and verify: mutations start from valid graphs."""
    assert len(MLIR_SEEDS) > 80
    for text in MLIR_SEEDS:
        answer = worker.ask("parse", text)
        assert answer["outcome"] == "ok", f"{answer}\n--- seed:\n{text}"


@fuzz_settings(200)
@given(text=mutated_text(MLIR_SEEDS, ATTRIBUTE_VALUES, TYPES))
def test_mlir_parser_mutations(worker: Worker, text: str):
    _check_mlir_answer(text, worker.ask("mlir", text))


@fuzz_settings(100)
@given(data=st.binary(max_size=200))
def test_mlir_parser_random_bytes(worker: Worker, data: bytes):
    text = data.decode("utf-8", errors="replace")
    _check_mlir_answer(text, worker.ask("mlir", text))


# -- (b) the pipeline-string parser -------------------------------------------------------------------------

PIPELINE_SEEDS = [
    "builtin.module(graph-canonicalize,graph-cse,canonicalize,graph-dce)",
    "builtin.module(graph-fusion{opt-level=2 disable-pass=add_layer_norm_fusion,matmul_elem_add_fusion})",
    "builtin.module(graph-kernel-fusion{enable-expand-ops=Square opt-level=3},canonicalize,graph-to-linalg)",
    "builtin.module(func.func(cse,canonicalize{max-iterations=3 region-simplify=disabled}),symbol-dce)",
    "graph-cse, func.func(graph-dce), inline{default-pipeline=canonicalize}",
    "builtin.module(canonicalize{test-convergence=true},func.func(graph-cse),graph-fusion{enable-pass=\"a,b\"})",
]
PIPELINE_VALUES = ["0", "3", "9", "-1", "abc", "true", "", "{a,b}", "(x)", "[1]", "\"q s\"", "'x", "a,,b",
                   "FlashAttentionFusionV1", "canonicalize", "func.func(cse)", "99999999999999999999999"]
PIPELINE_ALPHABET = "abcdefgmnopstu-_.{}()[]=,;\"' \t\n0123456789"


def pipeline_texts() -> st.SearchStrategy[str]:
    return mutated_text(PIPELINE_SEEDS, PIPELINE_VALUES, []) | st.text(PIPELINE_ALPHABET, max_size=60)


@fuzz_settings(600)
@given(text=pipeline_texts(), wrap_bare_list=st.booleans())
def test_pipeline_parser(text: str, wrap_bare_list: bool):
    """parse_pipeline returns a tree that prints and parses back to itself, or a located PipelineSyntaxError."""
    try:
        tree = parse_pipeline(text, default_anchor="builtin.module" if wrap_bare_list else None)
    except PipelineSyntaxError as error:
        assert 0 <= error.offset <= len(text)
        assert error.render().count("\n") == 2
        return
    assert isinstance(tree, NestedPipeline)
    assert parse_pipeline(tree.to_text()) == tree


@fuzz_settings(100)
@given(text=pipeline_texts())
def test_pipeline_steps(worker: Worker, text: str):
    """Building the steps (PassManager parses the upstream elements) accepts or raises PipelineError."""
    answer = worker.ask("pipeline", text)
    assert answer["outcome"] in ("ok", "error"), f"{answer['outcome']}: {answer.get('message')}\n--- {text!r}"


# -- (c) the flags and switch-file parsers ------------------------------------------------------------------------

FLAG_KEYS = ["opt_level", "composite_op_limit_size", "dump_as_text", "enable_debug_mode", "enable_expand_ops",
             "disable_expand_ops", "enable_cluster_ops_only", "enable_pass", "disable_pass", "bogus", ""]
FLAG_VALUES = ["", "0", "2", "9", "-1", "abc", "true", "off", "Softmax,GeLU", "add_layer_norm_fusion", ",", "1e3",
               "FlashAttentionFusionV1,nope", "\u00e9", "=", "--x"]


@st.composite
def flag_texts(draw: st.DrawFn) -> str:
    items = []
    for _ in range(draw(st.integers(0, 5))):
        dash = draw(st.sampled_from(["--", "-", "", "\u2013", "\u2014"]))
        key = draw(st.sampled_from(FLAG_KEYS) | st.text(max_size=6))
        sep = draw(st.sampled_from(["=", "", "=="]))
        items.append(dash + key + sep + draw(st.sampled_from(FLAG_VALUES) | st.text(max_size=6)))
    return draw(st.sampled_from([" ", "  ", "\t", "\n"])).join(items)


@fuzz_settings(300)
@given(text=flag_texts() | st.text(max_size=60), strict=st.booleans())
def test_graph_kernel_flags(text: str, strict: bool):
    """Warnings without --strict-flags (never an exception), a GraphfuseError with it."""
    try:
        flags = parse_graph_kernel_flags(text, strict)
    except GraphfuseError as error:
        assert strict, f"non-strict parsing raised {error}"
        assert str(error).startswith("error: graph kernel flags: ")
        return
    assert isinstance(flags, GraphKernelFlags)
    assert all(w.severity == "warning" for w in flags.warnings)
    if flags.opt_level is not None:
        assert 0 <= flags.opt_level <= 3


SWITCH_NAMES = ["ALL", "add_layer_norm_fusion", "FlashAttentionFusionV1", "ConvBatchnormFusionPass", "Nope", ""]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["on", "off", "ON", "of", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(SWITCH_NAMES), inner, max_size=3),
    max_leaves=8,
)
switch_documents = st.fixed_dictionaries({"Switch": st.dictionaries(
    st.sampled_from(["GraphFusion", "UBFusion", "Other"]),
    st.dictionaries(st.sampled_from(SWITCH_NAMES), st.sampled_from(["on", "off", "of"]) | json_values, max_size=4)
    | json_values,
    max_size=3,
)}) | json_values


@st.composite
def switch_texts(draw: st.DrawFn) -> str:
    text = json.dumps(draw(switch_documents), indent=draw(st.sampled_from([None, 2])))
    if draw(st.booleans()):  # damage it
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["", "}", "{", ",", "\"", ":", "\n", "x"])) + text[at + 1:]
    return text


@pytest.fixture(scope="module")
def switch_dir():
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


@fuzz_settings(300)
@given(text=switch_texts() | st.text(max_size=80))
def test_switch_file(switch_dir: Path, text: str):
    """A switch file is read, or rejected with an error located in the file."""
    path = switch_dir / "fusion_switch.cfg"
    path.write_text(text, encoding="utf-8")
    try:
        switches = parse_switch_file(path)
    except GraphfuseError as error:
        first = error.diagnostics[0]
        assert first.location is not None and first.location.file == str(path), str(error)
        return
    assert isinstance(switches, SwitchFile)
