"""The bad-input corpus: every bad input gives a clear message and exit code 1, never a traceback or an abort.

Three kinds of cases, each run in a subprocess so that an abort of the MLIR
bindings (SIGABRT, SIGSEGV) is a failing test that names the input, not a dead
pytest:

- the files of test/BadInput/*.mlir, each carrying its command and expected
  stderr lines in header comments (see test/BadInput/README.md);
- :data:`COMMAND_CASES`: command lines of graphfuse-opt and graphfuse-run with
  bad flags, pipelines, switch files, flags, input and output files;
- :data:`API_CASES`: snippets calling the Python API (parse_module,
  run_pipeline, run_function, compile, Executable.__call__), which must raise
  GraphfuseError (or a documented subclass) with the expected message, or
  compute the right result (non-contiguous arrays, NaN/Inf, zero-size
  dimensions).  They run in one subprocess; when it dies, the case it was
  running is run again alone and reported with its signal.

docs/bad-input.md says what is covered and how to add a case.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "test" / "BadInput"
INPUTS = CORPUS / "Inputs"
BIN = Path(sys.executable).parent  # the virtual environment's graphfuse-opt, graphfuse-run
TIMEOUT = 180

#: How an error line must start: located (``file:line:col: error:``) or from the tool (``graphfuse-opt: error:``).
ERROR_LINE = re.compile(
    r"^(\S.*:\d+:\d+|graphfuse-opt|graphfuse-run|graphfuse-import|graphfuse-compile|graphfuse-bisect): error: ")


@dataclass(frozen=True)
class Case:
    """One command and what it must print.

    ``argv`` starts with a tool name; ``{inputs}`` and ``{tmp}`` are replaced
    by the corpus input folder and a fresh temporary folder.
    """

    name: str
    argv: tuple[str, ...]
    expect: tuple[str, ...] = ()  # whole stderr lines
    expect_re: tuple[str, ...] = ()  # regular expressions, each matching a whole stderr line
    exit_code: int = 1
    env: tuple[tuple[str, str], ...] = ()
    stdin: bytes | None = None
    xfail: str | None = None  # a known bug in a file this corpus does not own; strict: fails once fixed
    files: tuple[tuple[str, bytes], ...] = field(default=())  # files to create in {tmp} first
    npz: tuple[str, ...] = ()  # .npz files of NPZ_INPUTS to write in {tmp} first
    requires: str | None = None  # an optional module the case needs (skipped without it)


def _clean_env(extra: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MS_DEV_GRAPH_KERNEL_FLAGS", "GLOG_v", "GRAPHFUSE_DEBUG")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def run_case(case: Case, tmp: Path) -> subprocess.CompletedProcess:
    for name, content in case.files:
        (tmp / name).write_bytes(content)
    argv = [a.replace("{inputs}", str(INPUTS.relative_to(REPO))).replace("{tmp}", str(tmp)) for a in case.argv]
    argv[0] = str(BIN / argv[0])
    return subprocess.run(argv, input=case.stdin or b"", capture_output=True, cwd=REPO, env=_clean_env(case.env),
                          timeout=TIMEOUT)


def check_result(case: Case, result: subprocess.CompletedProcess) -> None:
    stderr = result.stderr.decode(errors="replace")
    shown = f"\n--- command: {shlex.join(map(str, result.args))}\n--- stderr:\n{stderr[-3000:]}"
    assert result.returncode >= 0, f"killed by signal {-result.returncode}{shown}"
    assert "Traceback" not in stderr, f"Python traceback{shown}"
    assert "internal error" not in stderr, f"internal error{shown}"
    assert result.returncode == case.exit_code, f"exit code {result.returncode}, expected {case.exit_code}{shown}"
    lines = stderr.splitlines()
    for line in case.expect:
        assert line in lines, f"missing stderr line: {line}{shown}"
    for pattern in case.expect_re:
        assert any(re.fullmatch(pattern, line) for line in lines), f"no stderr line matches: {pattern}{shown}"
    if case.exit_code == 1:
        assert any(ERROR_LINE.match(line) for line in lines), f"no 'error:' line{shown}"


def _param(case: Case):
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    if case.requires and importlib.util.find_spec(case.requires) is None:
        marks.append(pytest.mark.skip(reason=f"needs the optional module {case.requires}"))
    return pytest.param(case, id=case.name, marks=marks)


# -- test/BadInput/*.mlir ------------------------------------------------------------------------------

_HEADER = re.compile(r"^//\s*(COMMAND|EXIT|EXPECT|EXPECT-RE|XFAIL):\s?(.*)$")


def corpus_case(path: Path) -> Case:
    """The case a corpus file describes in its ``// COMMAND:``, ``// EXPECT:``... comment lines."""
    relative = str(path.relative_to(REPO))
    fields: dict[str, list[str]] = {"COMMAND": [], "EXIT": [], "EXPECT": [], "EXPECT-RE": [], "XFAIL": []}
    for line in path.read_text().splitlines():
        match = _HEADER.match(line)
        if match:
            fields[match.group(1)].append(match.group(2))
    command = fields["COMMAND"][0] if fields["COMMAND"] else "graphfuse-opt %s"
    return Case(
        path.stem,
        tuple(arg.replace("%s", relative) for arg in shlex.split(command)),
        expect=tuple(e.replace("%s", relative) for e in fields["EXPECT"]),
        expect_re=tuple(e.replace("%s", re.escape(relative)) for e in fields["EXPECT-RE"]),
        exit_code=int(fields["EXIT"][0]) if fields["EXIT"] else 1,
        xfail=fields["XFAIL"][0] if fields["XFAIL"] else None,
    )


CORPUS_FILES = sorted(CORPUS.glob("*.mlir"))


def test_corpus_files_have_expectations():
    """Every corpus file of an error says what it must print."""
    assert len(CORPUS_FILES) >= 15
    for path in CORPUS_FILES:
        case = corpus_case(path)
        assert case.expect or case.expect_re or case.exit_code == 0, f"{path.name} has no // EXPECT: line"


@pytest.mark.parametrize("case", [_param(corpus_case(p)) for p in CORPUS_FILES])
def test_corpus_file(case: Case, tmp_path: Path):
    check_result(case, run_case(case, tmp_path))


# -- command lines -----------------------------------------------------------------------------------------

MODEL = "{inputs}/model.mlir"
OPT = "graphfuse-opt"
#: Inputs nested deep enough to overflow MLIR's recursive parser (a segfault) or Python's recursion limit.
DEEP_ATTRIBUTE = ("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {a = " + "[" * 10000 + "]" * 10000
                  + "} {\n  return %x : tensor<4xf32>\n}\n").encode()
DEEP_REGIONS = ("func.func @f() {\n" + '"test.op"() ({\n' * 4000 + "}) : () -> ()\n" * 4000 + "return\n}\n").encode()
DEEP_PIPELINE = "builtin.module(" + "func.func(" * 5000 + "cse" + ")" * 5000 + ")"
DEEP_JSON = ('{"a": ' * 5000 + "1" + "}" * 5000).encode()
#: 30,000 attribute aliases each nesting the one before: one bracket deep per line, 30,000 deep as an attribute.
DEEP_ALIASES = ("#a0 = [1]\n" + "".join(f"#a{i} = [#a{i - 1}]\n" for i in range(1, 30000))
                + "func.func @f() attributes {x = #a29999} {\n  return\n}\n").encode()


def _crashing_bytecode() -> bytes:
    """A few bytes of a small module's bytecode changed so that MLIR's reader aborts (the first such mutation of
    a fixed random sequence; about one in twenty do)."""
    import random

    from graphfuse.dialect.parsing import _reader_crash, module_bytecode, parse_module

    text = 'func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {\n  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> ' \
           'tensor<4x8xf32>\n  %1 = "graph.add"(%0, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>\n  ' \
           'return %1 : tensor<4x8xf32>\n}\n'
    data = module_bytecode(parse_module(text, "m.mlir"))
    rng = random.Random(0)
    for _ in range(2000):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[rng.randrange(4, len(mutated))] = rng.randrange(256)
        if _reader_crash(bytes(mutated)) is not None:
            return bytes(mutated)
    raise AssertionError("no mutation crashes the reader: the guard may no longer be needed")
#: A function whose argument carries its name in a name location (as graphfuse-import --mlir-print-debuginfo writes).
NAMED_ARGUMENT = b'''func.func @f(%a: tensor<4x8xf32> loc("x"("m.onnx":0:1))) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
'''


def _onnx_model(initializer_dims: tuple[int, ...] | None = None) -> bytes:
    """A one-node ONNX model: Relu of a symbolic-shape input, or Add of a 4x4 input and an initializer of 6
    values declared with ``initializer_dims`` (b"" without onnx: the cases that use it are skipped)."""
    if importlib.util.find_spec("onnx") is None:
        return b""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    if initializer_dims is None:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    else:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])
        w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
        w.dims[:] = initializer_dims
        graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g", [x], [y], initializer=[w])
    return onnx.helper.make_model(graph).SerializeToString()
RUN = "graphfuse-run"
#: A graph with an argument of dynamic size, which graphfuse-run cannot make a random input for.
DYNAMIC_INPUT = (b'func.func @f(%a: tensor<?x8xf32>, %b: tensor<8x8xf32>) -> tensor<?x8xf32> {\n'
                 b'  %0 = "graph.exp"(%a) : (tensor<?x8xf32>) -> tensor<?x8xf32>\n'
                 b'  %1 = "graph.matmul"(%0, %b) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>\n'
                 b"  return %1 : tensor<?x8xf32>\n}\n")
#: Operands that do not broadcast: a verifier error.
UNBROADCASTABLE = (b'func.func @f(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {\n'
                   b'  %0 = "graph.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>\n'
                   b"  return %0 : tensor<4xf32>\n}\n")
PIPELINE_PREFIX = "graphfuse-opt: error: invalid pass pipeline"

COMMAND_CASES = [
    # Input files that are not MLIR text, or not files.
    Case("empty-file", (OPT, "{tmp}/empty.mlir"), files=(("empty.mlir", b""),),
         expect_re=(r".*empty\.mlir:1:1: error: empty input: expected a module or a list of operations",)),
    Case("empty-stdin", (OPT, "-"), stdin=b"",
         expect=("<stdin>:1:1: error: empty input: expected a module or a list of operations",)),
    Case("not-utf8", (OPT, "{tmp}/latin1.mlir"), files=(("latin1.mlir", "// caf\u00e9\n".encode("latin-1")),),
         expect_re=(r"graphfuse-opt: error: could not read input file '.*latin1\.mlir': "
                    r"neither UTF-8 text nor MLIR bytecode",)),
    Case("binary-garbage", (OPT, "-"), stdin=bytes(range(1, 32)) * 4,
         expect=("<stdin>:1:1: error: unexpected character",)),
    Case("missing-file", (OPT, "{tmp}/missing.mlir"),
         expect_re=(r"graphfuse-opt: error: could not open input file '.*missing\.mlir': no such file or directory",)),
    Case("directory-input", (OPT, "{tmp}"),
         expect_re=(r"graphfuse-opt: error: could not open input file '.*': it is a directory",)),
    Case("unwritable-output", (OPT, MODEL, "-o", "{tmp}/no/such/dir/out.mlir"),
         expect_re=(r"graphfuse-opt: error: could not write output file '.*out\.mlir': No such file or directory",)),
    Case("run-directory-input", (RUN, "{tmp}"),
         expect_re=(r"graphfuse-run: error: could not open input file '.*': it is a directory",)),
    # Standard input (-) for graphfuse-run, graphfuse-compile and graphfuse-bisect, as for graphfuse-opt: errors
    # name <stdin>, the runtime's too (it compiles text printed and parsed again).
    Case("run-stdin-verifier-error", (RUN, "-"), stdin=UNBROADCASTABLE,
         expect=("<stdin>:2:8: error: 'graph.add' operands tensor<4xf32> and tensor<3xf32> are not "
                 "broadcast-compatible",)),
    Case("run-stdin-dynamic-input", (RUN, "-"), stdin=DYNAMIC_INPUT,
         expect=("<stdin>:1:14: error: argument 0 of @f (tensor<?x8xf32>) has a dynamic shape: random inputs need "
                 "static ones; pass --inputs",)),
    Case("compile-stdin-verifier-error", ("graphfuse-compile", "-", "-o", "{tmp}/lib.o"), stdin=UNBROADCASTABLE,
         expect=("<stdin>:2:8: error: 'graph.add' operands tensor<4xf32> and tensor<3xf32> are not "
                 "broadcast-compatible",)),
    Case("compile-stdin-empty", ("graphfuse-compile", "-", "-o", "-"), stdin=b"",
         expect=("<stdin>:1:1: error: empty input: expected a module or a list of operations",)),
    Case("npz-empty-stream", (RUN, MODEL, "--inputs=/dev/null"),
         expect=("graphfuse-run: error: '/dev/null' is not a readable .npz file: No data left in file",)),
    Case("bisect-stdin-not-utf8", ("graphfuse-bisect", "-"), stdin="// caf\u00e9\n".encode("latin-1"),
         expect=("graphfuse-bisect: error: could not read input file '-': neither UTF-8 text nor MLIR bytecode",)),
    Case("bisect-stdin-bad-bytecode", ("graphfuse-bisect", "-"), stdin=b"ML\xefR" + bytes(8),
         expect_re=(r"graphfuse-bisect: error: could not read input file '-': invalid MLIR bytecode: .*",)),
    # Unknown flags and bad flag values of the tools.
    Case("opt-unknown-flag", (OPT, "--bogus", MODEL),
         expect=("graphfuse-opt: error: unknown command line argument '--bogus'; try 'graphfuse-opt --help'",)),
    Case("opt-bad-log-level", (OPT, "--log-level=loud", MODEL), expect_re=(r"graphfuse-opt: error: .*loud.*",)),
    Case("run-unknown-flag", (RUN, MODEL, "--bogus"),
         expect=("graphfuse-run: error: unrecognized arguments: --bogus",)),
    Case("run-bad-opt-level", (RUN, MODEL, "--opt-level=9"),
         expect_re=(r"graphfuse-run: error: argument --opt-level: invalid choice: '?9'? .*",)),
    Case("run-bad-seed", (RUN, MODEL, "--seed=abc"),
         expect=("graphfuse-run: error: argument --seed: invalid int value: 'abc'",)),
    Case("run-bad-repeat", (RUN, MODEL, "--repeat=0"), expect=("graphfuse-run: error: --repeat must be at least 1",)),
    Case("run-zero-threads", (RUN, MODEL, "--num-threads=0"),
         expect=("graphfuse-run: error: --num-threads must be a positive integer, got 0",)),
    Case("run-threads-past-32-bits", (RUN, MODEL, "--num-threads", "4294967297"),
         expect=("graphfuse-run: error: num_threads must be at most 4096, got 4294967297",)),
    Case("run-threads-environment-too-many", (RUN, MODEL), env=(("GRAPHFUSE_NUM_THREADS", "99999999999"),),
         expect=("graphfuse-run: error: GRAPHFUSE_NUM_THREADS must be at most 4096, got 99999999999",)),
    Case("reproducer-flag-not-a-bool", (OPT, "--run-reproducer", "{tmp}/r.mlir"),
         files=(("r.mlir", NAMED_ARGUMENT + b'{-#\n  external_resources: {\n    mlir_reproducer: {\n      pipeline: '
                 b'"builtin.module(canonicalize)",\n      disable_threading: 42\n    }\n  }\n#-}\n'),),
         expect=("graphfuse-opt: error: the reproducer's mlir_reproducer.disable_threading must be true or false, "
                 "got '42'",)),
    Case("reproducer-pipeline-not-a-string", (OPT, "--run-reproducer", "{tmp}/r.mlir"),
         files=(("r.mlir", NAMED_ARGUMENT + b'{-#\n  external_resources: {\n    mlir_reproducer: {\n      pipeline: 7'
                 b'\n    }\n  }\n#-}\n'),),
         expect=("graphfuse-opt: error: the reproducer's mlir_reproducer.pipeline must be a string",)),
    Case("compile-blank-cc", ("graphfuse-compile", MODEL, "-o", "{tmp}/libm.so"), env=(("CC", "  "),),
         expect=("graphfuse-compile: error: CC is blank: set it to a C compiler (or unset it for 'cc')",)),
    Case("run-threads-environment", (RUN, MODEL), env=(("GRAPHFUSE_NUM_THREADS", "two"),),
         expect=("graphfuse-run: error: GRAPHFUSE_NUM_THREADS must be a positive integer, got 'two'",)),
    Case("run-negative-seed", (RUN, MODEL, "--seed=-1"),
         expect=("graphfuse-run: error: --seed must be a non-negative integer, got -1",)),
    Case("run-rtol-nan", (RUN, MODEL, "--check", "--rtol=nan"),
         expect=("graphfuse-run: error: --rtol must be a non-negative finite number, got nan",)),
    Case("run-rtol-negative", (RUN, MODEL, "--check", "--rtol=-1"),
         expect=("graphfuse-run: error: --rtol must be a non-negative finite number, got -1",)),
    Case("run-atol-inf", (RUN, MODEL, "--check", "--atol=inf"),
         expect=("graphfuse-run: error: --atol must be a non-negative finite number, got inf",)),
    Case("run-entry-control-characters", (RUN, MODEL, "--entry=a\x1b[2Jb\x07"),
         expect=("graphfuse-run: error: no function named 'a\\x1b[2Jb\\x07' in the module (functions: forward)",)),
    Case("opt-control-characters", (OPT, "-"), stdin=b"func.func @f\x1b[2J() {\n  return\n}\n",
         expect=("<stdin>:1:13: error: unexpected character", "func.func @f\\x1b[2J() {")),
    # Pass pipelines: unknown passes, bad option values, malformed text.
    Case("unknown-pass-did-you-mean", (OPT, MODEL, "--pass-pipeline=builtin.module(graph-cses)"),
         expect=(f"{PIPELINE_PREFIX} 'builtin.module(graph-cses)': 'graph-cses' does not refer to a registered pass "
                 "or pass pipeline; did you mean 'graph-cse'?",)),
    Case("unknown-pass-flag", (OPT, MODEL, "--graph-fusoin"),
         expect=("graphfuse-opt: error: unknown command line argument '--graph-fusoin'; try 'graphfuse-opt --help'",)),
    Case("opt-level-out-of-range", (OPT, MODEL, "--pass-pipeline=builtin.module(graph-fusion{opt-level=9})"),
         expect=(f"{PIPELINE_PREFIX} 'builtin.module(graph-fusion{{opt-level=9}})': option 'opt-level' of pass "
                 "'graph-fusion': opt level must be an integer in [0, 3], got 9",)),
    Case("opt-level-not-int", (OPT, MODEL, "--pass-pipeline=builtin.module(graph-fusion{opt-level=abc})"),
         expect=(f"{PIPELINE_PREFIX} 'builtin.module(graph-fusion{{opt-level=abc}})': option 'opt-level' of pass "
                 "'graph-fusion' expects an integer, got 'abc'",)),
    Case("enable-unknown-fusion-pass",
         (OPT, MODEL, "--pass-pipeline=builtin.module(graph-fusion{enable-pass=Unknown})"),
         expect=(f"{PIPELINE_PREFIX} 'builtin.module(graph-fusion{{enable-pass=Unknown}})': pass 'graph-fusion' does "
                 "not know fusion pass 'Unknown'",)),
    Case("upstream-bad-option-value", (OPT, MODEL, "--pass-pipeline=builtin.module(canonicalize{max-iterations=abc})"),
         expect=(f"{PIPELINE_PREFIX} 'builtin.module(canonicalize{{max-iterations=abc}})': for the --max-iterations "
                 "option: 'abc' value invalid for long argument!; failed to add `canonicalize` with options "
                 "`max-iterations=abc`",)),
    Case("pipeline-unclosed-paren", (OPT, MODEL, "--pass-pipeline=builtin.module(graph-cse"),
         expect=(f"{PIPELINE_PREFIX}: 1:25: expected ')' to close 'builtin.module(' opened at 1:15",)),
    Case("pipeline-unclosed-brace", (OPT, MODEL, "--pass-pipeline=builtin.module(graph-fusion{opt-level=1)"),
         expect=(f"{PIPELINE_PREFIX}: 1:40: unbalanced ')' in the value of option 'opt-level'",)),
    Case("pipeline-empty", (OPT, MODEL, "--pass-pipeline="),
         expect=(f"{PIPELINE_PREFIX}: 1:1: empty pass pipeline",)),
    Case("pipeline-blank", (OPT, MODEL, "--pass-pipeline=  "),
         expect=(f"{PIPELINE_PREFIX}: 1:1: empty pass pipeline",)),
    Case("pipeline-deep-nesting", (OPT, MODEL, f"--pass-pipeline={DEEP_PIPELINE}"),
         expect=(f"{PIPELINE_PREFIX}: 1:2575: nesting deeper than 256",)),
    Case("run-pipeline-deep-nesting", (RUN, MODEL, f"--pass-pipeline={DEEP_PIPELINE}"),
         expect=("graphfuse-run: error: invalid pass pipeline: 1:2575: nesting deeper than 256",)),
    Case("pipeline-wrong-anchor", (OPT, MODEL, "--pass-pipeline=func.func(cse)"),
         expect=(f"{PIPELINE_PREFIX} 'func.func(cse)': the pipeline must be anchored on 'builtin.module', "
                 "not 'func.func'",)),
    # Fusion switch files (CANN fusion_switch.cfg).
    Case("switch-json-syntax", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={inputs}/switch-syntax.cfg"),
         expect_re=(r".*switch-syntax\.cfg:1:60: error: malformed JSON: Expecting property name enclosed in double "
                    r"quotes",)),
    Case("switch-json-truncated", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={inputs}/switch-truncated.cfg"),
         expect_re=(r".*switch-truncated\.cfg:6:1: error: malformed JSON: Expecting ',' delimiter",)),
    Case("switch-structure", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={inputs}/switch-structure.cfg"),
         expect_re=(r'.*switch-structure\.cfg:1:1: error: expected \{"Switch": \{"GraphFusion": \{\.\.\.\}, '
                    r'"UBFusion": \{\.\.\.\}\}\}',)),
    Case("switch-section-list", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={inputs}/switch-section-list.cfg"),
         expect_re=(r".*switch-section-list\.cfg:1:13: error: section 'GraphFusion' must be an object of pass "
                    r"switches",)),
    Case("switch-unknown-section", (OPT, MODEL, "--graph-fusion",
                                    "--fusion-switch-file={inputs}/switch-unknown-section.cfg"),
         expect_re=(r".*switch-unknown-section\.cfg:1:13: error: unknown section 'VectorFusion' \(expected "
                    r"GraphFusion or UBFusion\)",)),
    Case("switch-value", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={inputs}/switch-value.cfg"),
         expect_re=(r""".*switch-value\.cfg:1:29: error: switch 'add_layer_norm_fusion' must be "on" or "off", """
                    r'got "of"',)),
    Case("switch-unknown-pass-warns", (OPT, MODEL, "--graph-fusion",
                                       "--fusion-switch-file={inputs}/switch-unknown-pass.cfg"),
         exit_code=0,
         expect_re=(r".*switch-unknown-pass\.cfg:1:29: warning: unknown fusion pass 'NoSuchFusionPass' in section "
                    r"GraphFusion is ignored",)),
    Case("switch-legacy-syntax",
         (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={inputs}/switch-legacy-syntax.cfg"),
         expect_re=(r".*switch-legacy-syntax\.cfg:1:1: error: expected 'PassName:on' or 'PassName:off', got "
                    r"'add_layer_norm_fusion on'",)),
    Case("switch-not-utf8", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={inputs}/switch-not-utf8.cfg"),
         expect_re=(r"graphfuse-opt: error: could not read fusion switch file '.*switch-not-utf8\.cfg': .*",)),
    Case("switch-missing", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={tmp}/none.cfg"),
         expect_re=(r"graphfuse-opt: error: could not open fusion switch file '.*none\.cfg': no such file or "
                    r"directory",)),
    Case("switch-deep-nesting", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={inputs}/switch-deep-nesting.cfg"),
         expect_re=(r".*switch-deep-nesting\.cfg:1:267: error: nesting deeper than 256",)),
    Case("switch-dev-zero", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file=/dev/zero"),
         expect=("graphfuse-opt: error: fusion switch file '/dev/zero' is larger than 16 MiB (a switch file is a few "
                 "lines of JSON)",)),
    Case("switch-directory", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={tmp}"),
         expect_re=(r"graphfuse-opt: error: could not read fusion switch file '.*': it is a directory",)),
    Case("switch-bom", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={tmp}/bom.cfg"), exit_code=0,
         files=(("bom.cfg", b'\xef\xbb\xbf{"Switch": {"GraphFusion": {"NoSuchFusionPass": "on"}}}\n'),),
         expect_re=(r".*bom\.cfg:1:29: warning: unknown fusion pass 'NoSuchFusionPass' in section GraphFusion is "
                    r"ignored",)),
    Case("switch-duplicate-key", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={tmp}/dup.cfg"), exit_code=0,
         files=(("dup.cfg", b'{"Switch": {"GraphFusion": {\n  "ALL": "off",\n  "ALL": "on"}}}\n'),),
         expect_re=(r".*dup\.cfg:3:3: warning: duplicate key 'ALL' \(lines 2 and 3\): the last one is used",)),
    Case("switch-legacy-duplicate", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={tmp}/dup.cfg"), exit_code=0,
         files=(("dup.cfg", b"ALL:off\nadd_layer_norm_fusion:on\nALL:on\n"),),
         expect_re=(r".*dup\.cfg:3:1: warning: duplicate switch 'ALL' \(lines 1 and 3\): the last one is used",)),
    # Nesting deep enough to crash a recursive parser: an error before any parser runs.
    Case("deep-attribute", (OPT, "{tmp}/deep.mlir"), files=(("deep.mlir", DEEP_ATTRIBUTE),),
         expect_re=(r".*deep\.mlir:1:321: error: nesting deeper than 256",)),
    Case("deep-regions", (OPT, "--allow-unregistered-dialect", "{tmp}/deep.mlir"), files=(("deep.mlir", DEEP_REGIONS),),
         expect_re=(r".*deep\.mlir:129:14: error: nesting deeper than 256",)),
    Case("run-deep-regions", (RUN, "{tmp}/deep.mlir"), files=(("deep.mlir", DEEP_REGIONS),),
         expect_re=(r".*deep\.mlir:129:14: error: nesting deeper than 256",)),
    Case("deep-aliases", (OPT, "{tmp}/deep.mlir"), files=(("deep.mlir", DEEP_ALIASES),),
         expect_re=(r".*deep\.mlir:257:1: error: aliases chained nesting deeper than 256",)),
    Case("bytecode-that-aborts-the-reader", (OPT, "{tmp}/bad.mlirbc"), files=(("bad.mlirbc", _crashing_bytecode()),),
         expect_re=(r"graphfuse-opt: error: could not read input file '.*bad\.mlirbc': invalid MLIR bytecode: MLIR's "
                    r"reader fails on it \(SIG[A-Z]+\)",)),
    Case("npu-target-deep-nesting", (RUN, MODEL, "--target=npu", "--npu-target={tmp}/deep.json"),
         files=(("deep.json", DEEP_JSON),), expect_re=(r".*deep\.json:1:1537: error: nesting deeper than 256",)),
    Case("npu-target-dev-zero", (RUN, MODEL, "--target=npu", "--npu-target=/dev/zero"),
         expect=("graphfuse-run: error: NPU target file '/dev/zero' is larger than 1 MiB (a target description is a "
                 "few lines of JSON)",)),
    Case("npu-target-directory", (RUN, MODEL, "--target=npu", "--npu-target={tmp}/"),
         expect_re=(r"graphfuse-run: error: could not read NPU target file '.*/': it is a directory",)),
    # MS_DEV_GRAPH_KERNEL_FLAGS and --graph-kernel-flags: warnings, errors with --strict-flags.
    Case("flags-bad-opt-level-warns", (OPT, MODEL, "--graph-kernel-fusion"), exit_code=0,
         env=(("MS_DEV_GRAPH_KERNEL_FLAGS", "--opt_level=9"),),
         expect=("graphfuse-opt: warning: MS_DEV_GRAPH_KERNEL_FLAGS: flag '--opt_level' expects an integer in [0, 3], "
                 "got '9'",)),
    Case("flags-bad-opt-level-strict", (OPT, MODEL, "--strict-flags", "--graph-kernel-fusion"),
         env=(("MS_DEV_GRAPH_KERNEL_FLAGS", "--opt_level=abc"),),
         expect=("graphfuse-opt: error: MS_DEV_GRAPH_KERNEL_FLAGS: flag '--opt_level' expects an integer in [0, 3], "
                 "got 'abc'",)),
    Case("flags-unknown-key-strict", (OPT, MODEL, "--strict-flags", "--graph-kernel-flags=--bogus=1",
                                      "--graph-kernel-fusion"),
         expect_re=(r"graphfuse-opt: error: --graph-kernel-flags: unknown flag '--bogus' \(valid flags: .*\)",)),
    Case("flags-unknown-pass-warns", (OPT, MODEL, "--graph-kernel-flags=--disable_pass=NoSuchPass", "--graph-fusion"),
         exit_code=0,
         expect=("graphfuse-opt: warning: --graph-kernel-flags: flag '--disable_pass' names unknown pass "
                 "'NoSuchPass'",)),
    # graphfuse-run inputs and outputs (.npz).
    Case("npz-not-a-zip", (RUN, MODEL, "--inputs={inputs}/not-a-zip.npz"),
         expect_re=(r"graphfuse-run: error: '.*not-a-zip\.npz' is not a readable \.npz file: .*",)),
    Case("npz-missing", (RUN, MODEL, "--inputs={tmp}/none.npz"),
         expect_re=(r"graphfuse-run: error: could not open input file '.*none\.npz'",)),
    Case("npz-missing-keys", (RUN, MODEL, "--inputs={tmp}/one.npz"), npz=("one.npz",),
         expect_re=(r"graphfuse-run: error: '.*one\.npz' has no array for argument 0 \(named 'arg0' or 'arr_0'\); it "
                    r"holds x",)),
    Case("npz-file-order", (RUN, MODEL, "--inputs={tmp}/order.npz"), npz=("order.npz",),
         expect_re=(r"graphfuse-run: error: '.*order\.npz' has no array for argument 0 \(named 'arg0' or 'arr_0'\); it "
                    r"holds b, x",)),
    Case("npz-extra-array", (RUN, MODEL, "--inputs={tmp}/extra.npz"), npz=("extra.npz",), exit_code=0,
         expect_re=(r"graphfuse-run: warning: '.*extra\.npz': array\(s\) arg2, out0 match no argument of the function "
                    r"and are ignored .*",)),
    Case("npz-ambiguous", (RUN, MODEL, "--inputs={tmp}/ambiguous.npz"), npz=("ambiguous.npz",),
         expect_re=(r"graphfuse-run: error: '.*ambiguous\.npz' has 2 arrays for argument 0 \(arg0, arr_0\); keep "
                    r"one",)),
    Case("npz-positional", (RUN, MODEL, "--inputs={tmp}/positional.npz"), npz=("positional.npz",), exit_code=0),
    Case("npz-argument-names", (RUN, "{tmp}/named.mlir", "--inputs={tmp}/one.npz", "--check"), npz=("one.npz",),
         files=(("named.mlir", NAMED_ARGUMENT),), exit_code=0),
    Case("run-dynamic-random", (RUN, "{inputs}/dynamic.mlir"),
         expect_re=(r".*dynamic\.mlir:1:20: error: argument 0 of @forward \(tensor<\?x8xf32>\) has a dynamic shape: "
                    r"random inputs need static ones; pass --inputs",)),
    Case("run-dynamic-results", (RUN, "{inputs}/dynamic.mlir", "--inputs={tmp}/dynamic.npz", "--check", "--repeat=2"),
         npz=("dynamic.npz",), exit_code=0),
    Case("run-output-directory", (RUN, MODEL, "--output={tmp}"),
         expect_re=(r"graphfuse-run: error: could not write output file '.*': it is a directory",)),
    Case("run-output-device-full", (RUN, MODEL, "--output=/dev/full"),
         expect=("graphfuse-run: error: could not write output file '/dev/full': No space left on device",)),
    Case("npu-unsupported-lowering-op", (RUN, "test/BadInput/unsupported-lowering-op.mlir", "--target=npu"),
         expect_re=(r".*unsupported-lowering-op\.mlir:7:8: error: 'arith\.addf' is not supported by the lowering: "
                    r".*",)),
    Case("switch-control-characters", (OPT, MODEL, "--graph-fusion", "--fusion-switch-file={tmp}/esc.cfg"), exit_code=0,
         files=(("esc.cfg", b'{"Switch": {"GraphFusion": {"A\\u001b[31mB\\u0000": "on"}}}'),),
         expect_re=(r".*esc\.cfg:1:29: warning: unknown fusion pass 'A\\x1b\[31mB\\x00' in section GraphFusion is "
                    r"ignored",)),
    Case("npz-wrong-shape", (RUN, MODEL, "--inputs={tmp}/shape.npz"), npz=("shape.npz",),
         expect=("graphfuse-run: error: @forward: argument 0: expected shape (4, 8) (tensor<4x8xf32>), got (8, 4)",)),
    Case("npz-wrong-dtype", (RUN, MODEL, "--inputs={tmp}/dtype.npz"), npz=("dtype.npz",),
         expect=("graphfuse-run: error: @forward: argument 0: expected dtype float32 (tensor<4x8xf32>), got "
                 "float64",)),
    Case("run-unwritable-output", (RUN, MODEL, "--output={tmp}/no/such/dir/out.npz"),
         expect_re=(r"graphfuse-run: error: .*out\.npz.*",)),
    Case("zero-size-graph-passes", (OPT, "{inputs}/zero-size.mlir", "--graph-kernel-fusion", "--graph-fusion"),
         exit_code=0),
    # graphfuse-import (ONNX): files that are not models.
    Case("import-missing", ("graphfuse-import", "{tmp}/none.onnx"), requires="onnx",
         expect_re=(r"graphfuse-import: error: could not open '.*none\.onnx': no such file",)),
    Case("import-not-onnx", ("graphfuse-import", MODEL), requires="onnx",
         expect_re=(r"graphfuse-import: error: '.*model\.mlir' is not an ONNX model \(protobuf parse failed\)",)),
    Case("import-empty", ("graphfuse-import", "{tmp}/empty.onnx"), files=(("empty.onnx", b""),), requires="onnx",
         expect_re=(r"graphfuse-import: error: '.*empty\.onnx' is not an ONNX model \(it holds no graph\)",)),
    Case("import-directory", ("graphfuse-import", "{tmp}"), requires="onnx",
         expect_re=(r"graphfuse-import: error: could not read '.*': Is a directory",)),
    Case("import-bad-input-shape", ("graphfuse-import", "{tmp}/empty.onnx", "--input-shape=x"),
         files=(("empty.onnx", b""),), requires="onnx",
         expect=("graphfuse-import: error: --input-shape expects NAME=VALUE, got 'x'",)),
    Case("import-input-shape-too-large", ("graphfuse-import", "{tmp}/m.onnx", "--input-shape=x=99999999999999999999"),
         files=(("m.onnx", _onnx_model()),), requires="onnx",
         expect=("graphfuse-import: error: --input-shape x: sizes must be at most 2^63 - 1, got "
                 "'99999999999999999999'",)),
    Case("import-input-shape-overflow",
         ("graphfuse-import", "{tmp}/m.onnx", "--input-shape=x=9999999999999,99999999999"),
         files=(("m.onnx", _onnx_model()),), requires="onnx",
         expect_re=(r"graphfuse-import: error: .*m\.onnx: graph input 'x' of shape \[9999999999999, 99999999999\] "
                    r"would hold 3999999999959600000000004 bytes, more than a 64-bit size can count",)),
    Case("import-initializer-dims", ("graphfuse-import", "{tmp}/m.onnx"), files=(("m.onnx", _onnx_model((4, 4))),),
         requires="onnx",
         expect_re=(r"graphfuse-import: error: .*m\.onnx: initializer 'w' has dims \[4, 4\] \(16 values\) but holds 6 "
                    r"value\(s\)",)),
    Case("import-initializer-negative-dim", ("graphfuse-import", "{tmp}/m.onnx"),
         files=(("m.onnx", _onnx_model((-1, 6))),), requires="onnx",
         expect_re=(r"graphfuse-import: error: .*m\.onnx: initializer 'w' has a negative dimension: dims \[-1, 6\]",)),
]

#: .npz files the npz cases read, written at test time (numpy's format is not stable text).
NPZ_INPUTS = {
    "one.npz": {"x": np.zeros((4, 8), np.float32)},
    "order.npz": {"b": np.zeros(8, np.float32), "x": np.zeros((4, 8), np.float32)},
    "extra.npz": {"arg0": np.zeros((4, 8), np.float32), "arg1": np.zeros(8, np.float32),
                  "arg2": np.zeros(8, np.float32), "out0": np.zeros((4, 8), np.float32)},
    "ambiguous.npz": {"arg0": np.zeros((4, 8), np.float32), "arr_0": np.zeros((4, 8), np.float32),
                      "arg1": np.zeros(8, np.float32)},
    "positional.npz": {"arr_0": np.zeros((4, 8), np.float32), "arr_1": np.zeros(8, np.float32)},
    "dynamic.npz": {"arg0": np.ones((3, 8), np.float32), "arg1": np.ones((3, 8), np.float32)},
    "shape.npz": {"arg0": np.zeros((8, 4), np.float32), "arg1": np.zeros(8, np.float32)},
    "dtype.npz": {"arg0": np.zeros((4, 8), np.float64), "arg1": np.zeros(8, np.float32)},
}


@pytest.mark.parametrize("case", [_param(c) for c in COMMAND_CASES])
def test_command(case: Case, tmp_path: Path):
    for name in case.npz:
        np.savez(tmp_path / name, **NPZ_INPUTS[name])
    check_result(case, run_case(case, tmp_path))


# -- the Python API ------------------------------------------------------------------------------------------

#: Runs API snippets given as JSON on stdin, one after the other, and prints one JSON line per snippet.
#: "START <name>" lines say which snippet was running if the process dies.
API_HARNESS = r"""
import json, sys, traceback
import numpy as np
import graphfuse
from graphfuse import GraphfuseError

cases = json.load(sys.stdin)
for name, code in cases:
    print("START " + name, flush=True)
    record = {"name": name}
    try:
        exec(compile(code, "<" + name + ">", "exec"), {"np": np, "graphfuse": graphfuse, "INPUTS": sys.argv[1]})
        record["outcome"] = "ok"
    except GraphfuseError as error:
        record.update(outcome="error", type=type(error).__name__, message=str(error))
    except BaseException as error:
        record.update(outcome="exception", type=type(error).__name__, message=traceback.format_exc())
    print("RESULT " + json.dumps(record), flush=True)
"""

MODEL_TEXT = (INPUTS / "model.mlir").read_text()


@dataclass(frozen=True)
class ApiCase:
    """A snippet that must raise ``error`` (a GraphfuseError subclass name) with a message matching ``message``
    (a regex searched in the message), or, when ``error`` is None, run to the end (it asserts its own results)."""

    name: str
    code: str
    error: str | None = "GraphfuseError"
    message: str = ""
    xfail: str | None = None


_COMPILE = "exe = graphfuse.compile(INPUTS + '/model.mlir')\n"
_X = "x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)\nb = np.ones(8, np.float32)\n"

API_CASES = [
    ApiCase("irdl-not-a-path", "graphfuse.register_irdl_dialects(42)",
            message=r"^error: register_irdl_dialects takes a path or IRDL text, not int$"),
    ApiCase("irdl-not-utf8", "import tempfile, pathlib\n"
            "path = pathlib.Path(tempfile.mkdtemp()) / 'bad.irdl'\npath.write_bytes(b'\\xff\\xfe')\n"
            "graphfuse.register_irdl_dialects(path)",
            message=r"could not read IRDL file '.*bad\.irdl': it is not UTF-8 text"),
    # Call-time arguments of a compiled function.
    ApiCase("call-wrong-dtype", _COMPILE + _X + "exe(x.astype(np.float64), b)",
            message=r"^error: @forward: argument 0: expected dtype float32 \(tensor<4x8xf32>\), got float64$"),
    ApiCase("call-big-endian", _COMPILE + _X + "exe(x.astype('>f4'), b)",
            message=r"^error: @forward: argument 0: expected dtype float32 \(tensor<4x8xf32>\), got float32 in "
                    r"non-native byte order \(>f4\)$"),
    ApiCase("call-wrong-shape", _COMPILE + _X + "exe(x.T.copy(), b)",
            message=r"^error: @forward: argument 0: expected shape \(4, 8\) \(tensor<4x8xf32>\), got \(8, 4\)$"),
    ApiCase("call-wrong-count", _COMPILE + _X + "exe(x)",
            message=r"^error: @forward: expected 2 argument\(s\), got 1$"),
    ApiCase("call-not-an-array", _COMPILE + _X + "exe(x.tolist(), b)",
            message=r"argument 0: expected a numpy array \(tensor<4x8xf32>\), got list"),
    ApiCase("call-out-wrong-dtype", _COMPILE + _X + "exe(x, b, out=[np.empty((4, 8), np.float64)])",
            message=r"out\[0\]: expected dtype float32"),
    ApiCase("call-non-contiguous", _COMPILE + """
rng = np.random.default_rng(1)
transposed = rng.standard_normal((8, 4)).astype(np.float32).T         # Fortran order
strided = rng.standard_normal(16).astype(np.float32)[::2]            # stride 2
sliced = rng.standard_normal((4, 16)).astype(np.float32)[:, 3:11]    # row stride 16
for x, b in [(transposed, strided), (sliced, strided), (transposed[::-1], strided[::-1])]:
    assert not (x.flags.c_contiguous and b.flags.c_contiguous)
    (got,) = exe(x, b)
    (want,) = exe.reference(np.ascontiguousarray(x), np.ascontiguousarray(b))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
""", error=None),
    ApiCase("nan-inf-propagate", """
exe = graphfuse.compile('''
func.func @f(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "graph.add"(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = "graph.maximum"(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}''')
x = np.array([np.nan, np.inf, -np.inf, np.inf, 1, np.nan, 0, -0.0], np.float32)
y = np.array([1, 1, 1, -np.inf, np.nan, np.nan, -np.inf, 0], np.float32)
got = exe(x, y)
with np.errstate(invalid="ignore"):
    want = [x + y, np.maximum(x, y)]
for g, w in zip(got, want):
    np.testing.assert_array_equal(g, w)
""", error=None),
    ApiCase("debug-mode-names-kernel", """
exe = graphfuse.compile(INPUTS + '/model.mlir', graph_kernel_flags='--enable_debug_mode')
x = np.zeros((4, 8), np.float32); x[1, 2] = np.nan
exe(x, np.ones(8, np.float32))
""", message=r"^error: enable_debug_mode: @forward result 0: 1 NaN, 0 Inf; first produced by kernel "
             r"@\w+ output 0 \(its inputs already were not finite\)$"),
    ApiCase("debug-mode-overflow", """
exe = graphfuse.compile('''
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.mul"(%0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}''', graph_kernel_flags='--enable_debug_mode')
exe(np.full(4, 60.0, np.float32))
""", message=r"^error: enable_debug_mode: @f result 0: 0 NaN, 4 Inf; first produced by kernel @\w+ output 0 "
             r"from finite inputs$"),
    # Zero-size dimensions: the reference interpreter and graph passes follow numpy; compile folds the empty tensors
    # out of the graph first (graph-fold-empty-tensors) and refuses, located, what it cannot fold.
    ApiCase("zero-size-interpreter", """
module = graphfuse.load_module(INPUTS + '/zero-size.mlir')
x, b = np.zeros((0, 8), np.float32), np.arange(8, dtype=np.float32)
(want,) = [np.exp(x + b).sum(axis=0)]
(got,) = graphfuse.run_function(module, [x, b])
np.testing.assert_array_equal(got, want)
graphfuse.run_pipeline(module, 'builtin.module(graph-fusion,graph-kernel-fusion,outline-fused-ops)')
(fused,) = graphfuse.run_function(module, [x, b])
np.testing.assert_array_equal(fused, want)
""", error=None),
    ApiCase("zero-size-compile", """
exe = graphfuse.compile(INPUTS + '/zero-size.mlir')
x, b = np.zeros((0, 8), np.float32), np.arange(8, dtype=np.float32)
(got,) = exe(x, b)
np.testing.assert_array_equal(got, np.zeros(8, np.float32))
""", error=None),
    ApiCase("zero-size-unfoldable", """
b = graphfuse.GraphBuilder('f')
q, k, v = b.arg((1, 1, 4, 0)), b.arg((1, 1, 3, 0)), b.arg((1, 1, 3, 8))
b.ret(b.flash_attention(q, k, v, scale=1.0))
graphfuse.compile(b.module)
""", error="PipelineFailure",
            message=r"^.*:\d+:\d+: error: 'graph\.flash_attention' reads the empty tensor<1x1x4x0xf32> \(operand #0\) "
                    r"into the non-empty tensor<1x1x4x8xf32>, and graph-fold-empty-tensors has no fold for it"),
    # Huge shapes: an error up front, never an overflow or an attempt to allocate terabytes.
    ApiCase("huge-builder-compile", """
b = graphfuse.GraphBuilder('f')
x = b.arg((100000000000, 100000000000), 'f32')
b.ret(b.exp(x))
graphfuse.compile(b.module)
""", message=r"error: tensor type tensor<100000000000x100000000000xf32> has 10000000000000000000000 elements"),
    ApiCase("huge-compile-memory", """
b = graphfuse.GraphBuilder('f')
x = b.arg((1000000, 1000000), 'f32')
b.ret(b.exp(x))
graphfuse.compile(b.module)
""", message=r"^error: @f: its arguments and results need 7\.3 TiB of memory"),
    # Dynamic dimensions: the sizes of a call must agree before the compiled code runs.
    ApiCase("dynamic-ok", """
exe = graphfuse.compile(INPUTS + '/dynamic.mlir')
x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
(got,) = exe(x, x, out=[np.empty((3, 8), np.float32)])
np.testing.assert_array_equal(got, x + x)
""", error=None),
    ApiCase("dynamic-mismatch", """
exe = graphfuse.compile(INPUTS + '/dynamic.mlir')
exe(np.ones((3, 8), np.float32), np.ones((5, 8), np.float32), out=[np.empty((5, 8), np.float32)])
""", message=r"dynamic\.mlir:2:8: error: @forward called with inputs of shapes \(3, 8\), \(5, 8\): 'graph\.add' "
             r"operands tensor<3x8xf32> and tensor<5x8xf32> are not broadcast-compatible"),
    ApiCase("dynamic-broadcast", """
exe = graphfuse.compile(INPUTS + '/dynamic.mlir')
exe(np.ones((3, 8), np.float32), np.ones((1, 8), np.float32), out=[np.empty((3, 8), np.float32)])
""", message=r"operand #1 of 'graph\.add' \(tensor<\?x8xf32>\) has size 1 in its dynamic dimension 0, broadcast to 3"),
    ApiCase("dynamic-results-sized-by-the-call", """
exe = graphfuse.compile(INPUTS + '/dynamic.mlir')
x = np.ones((3, 8), np.float32)
(got,) = exe(x, x)
np.testing.assert_array_equal(got, x + x)
""", error=None),
    ApiCase("dynamic-out-too-big", """
exe = graphfuse.compile(INPUTS + '/dynamic.mlir')
exe(np.ones((3, 8), np.float32), np.ones((3, 8), np.float32), out=[np.empty((5, 8), np.float32)])
""", message=r"^error: @forward: out\[0\] has shape \(5, 8\), but for inputs of shapes \(3, 8\), \(3, 8\) result 0 has "
             r"shape \(3, 8\)$"),
    # Parsing and loading.
    ApiCase("parse-syntax-error",
            "graphfuse.parse_module('func.func @f(%a: tensor<4xf32>) {\\n  return %a : tensor<4\\n}')",
            message=r"^<string>:2:23: error: expected 'x' in dimension list$"),
    ApiCase("parse-bytes-not-utf8", "graphfuse.parse_module(b'\\xff\\xfe')", message=r"MLIR text must be UTF-8"),
    ApiCase("parse-deep-nesting",
            "graphfuse.parse_module('func.func @f() attributes {a = ' + '[' * 10000 + ']' * 10000 "
            "+ '} {\\n  return\\n}')",
            message=r"^<string>:1:287: error: nesting deeper than 256$"),
    ApiCase("pipeline-deep-nesting", "graphfuse.run_pipeline(graphfuse.parse_module(MODEL), "
            "'builtin.module(' + 'func.func(' * 5000 + 'cse' + ')' * 5000 + ')')",
            error="PipelineError", message=r"1:2575: nesting deeper than 256"),
    ApiCase("recursion-unverified", """
from mlir import ir
with graphfuse.make_context():
    module = ir.Module.parse('''
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}''')
graphfuse.run_function(module, [np.ones(4, np.float32)])
""", message=r"^-:3:8: error: recursive call: @f is called while it runs; graphfuse does not support recursion$"),
    ApiCase("recursion-parse", "graphfuse.parse_module('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\\n'"
            "'  %0 = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>\\n  return %0 : tensor<4xf32>\\n}')",
            message=r"^<string>:2:8: error: recursive call: @f calls itself; graphfuse does not support recursion"),
    ApiCase("compile-unsupported-op", "graphfuse.compile('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\\n'"
            "'  %0 = arith.addf %x, %x : tensor<4xf32>\\n  return %0 : tensor<4xf32>\\n}')",
            message=r"^<string>:2:8: error: 'arith\.addf' is not supported by the lowering"),
    ApiCase("builder-huge-dimension", "graphfuse.GraphBuilder('f').arg((10**20, 4), 'f32')", error="BuildError",
            message=r"argument shape \(100000000000000000000, 4\) has a size larger than 2\^63 - 1"),
    ApiCase("parse-not-text", "graphfuse.parse_module(None)",
            message=r"parse_module takes MLIR text \(str\), not NoneType"),
    ApiCase("load-missing", "graphfuse.load_module(INPUTS + '/none.mlir')",
            message=r"could not open input file '.*none\.mlir': no such file or directory"),
    ApiCase("load-directory", "graphfuse.load_module(INPUTS)",
            message=r"could not open input file '.*': it is a directory"),
    ApiCase("compile-directory", "graphfuse.compile(INPUTS)",
            message=r"could not open input file '.*': it is a directory"),
    # Pipelines, entries and options.
    ApiCase("pipeline-unknown-pass",
            "graphfuse.run_pipeline(graphfuse.parse_module(MODEL), 'builtin.module(graph-dcee)')",
            error="PipelineError", message=r"did you mean 'graph-dce'\?"),
    ApiCase("pipeline-bad-option", "graphfuse.run_pipeline(graphfuse.parse_module(MODEL), "
            "'builtin.module(graph-kernel-fusion{opt-level=abc})')",
            error="PipelineError", message=r"option 'opt-level' of pass 'graph-kernel-fusion' expects an integer"),
    ApiCase("pipeline-not-text", "graphfuse.run_pipeline(graphfuse.parse_module(MODEL), None)",
            error="PipelineError", message=r"a pass pipeline is text"),
    ApiCase("run-function-missing-entry", "graphfuse.run_function(graphfuse.parse_module(MODEL), [], 'nope')",
            message=r"no function named 'nope' in the module \(functions: forward\)"),
    ApiCase("run-function-wrong-dtype",
            _X + "graphfuse.run_function(graphfuse.parse_module(MODEL), [x.astype(np.int32), b])",
            message=r"input #0 is tensor<4x8xi32>"),
    ApiCase("compile-missing-entry", "graphfuse.compile(MODEL, entry='nope')",
            message=r"no function named 'nope' in the module"),
    ApiCase("compile-bad-opt-level", "graphfuse.compile(MODEL, opt_level=9)",
            message=r"opt level must be an integer in \[0, 3\], got 9"),
    ApiCase("compile-pipeline-and-level", "graphfuse.compile(MODEL, opt_level=1, pipeline='builtin.module(graph-cse)')",
            message=r"pass either pipeline= or opt_level=, not both"),
    ApiCase("builder-bad-dtype", "graphfuse.GraphBuilder('f').arg((4,), 'f99')", error="BuildError",
            message=r"argument element type 'f99' is not one of"),
    ApiCase("builder-broadcast", """
b = graphfuse.GraphBuilder('f')
b.add(b.arg((4, 8), 'f32'), b.arg((3,), 'f32'))
""", error="BuildError",
            message=r"'graph\.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible"),
]


def _run_api(cases: list[ApiCase]) -> subprocess.CompletedProcess:
    prelude = f"MODEL = {MODEL_TEXT!r}\n"
    payload = json.dumps([[c.name, prelude + c.code] for c in cases]).encode()
    return subprocess.run([sys.executable, "-c", API_HARNESS, str(INPUTS)], input=payload, capture_output=True,
                          cwd=REPO, env=_clean_env(), timeout=TIMEOUT * 2)


def _records(result: subprocess.CompletedProcess) -> dict[str, dict]:
    records = {}
    for line in result.stdout.decode(errors="replace").splitlines():
        if line.startswith("RESULT "):
            record = json.loads(line[len("RESULT "):])
            records[record["name"]] = record
    return records


@pytest.fixture(scope="module")
def api_results() -> dict[str, dict]:
    """Every API case run in one subprocess (compiled modules are cached across cases)."""
    return _records(_run_api(API_CASES))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True, reason=c.xfail)]
                                               if c.xfail else []) for c in API_CASES])
def test_api(case: ApiCase, api_results: dict[str, dict]):
    record = api_results.get(case.name)
    if record is None:
        # The shared process died at this case or before it: run it alone to see how it ends.
        alone = _run_api([case])
        record = _records(alone).get(case.name)
        if record is None:
            stderr = alone.stderr.decode(errors="replace")[-3000:]
            pytest.fail(f"{case.name} ended the process with exit code {alone.returncode} (negative: a signal)\n"
                        f"--- snippet:\n{case.code}\n--- stderr:\n{stderr}")
    if case.error is None:
        assert record["outcome"] == "ok", f"{case.name}: {record.get('type')}: {record.get('message')}"
        return
    assert record["outcome"] == "error", f"{case.name}: expected {case.error}, got {record}"
    assert record["type"] == case.error, f"{case.name}: raised {record['type']}, expected {case.error}"
    assert re.search(case.message, record["message"], re.M), (
        f"{case.name}: message does not match {case.message!r}:\n{record['message']}"
    )
