"""One options object per compile (lowering/options.py): resolved once from the arguments, graphfuse.context and
the environment, handed to every stage, and the compile cache's key with the module's text."""

from __future__ import annotations

import dataclasses
import os
import threading

import pytest

import graphfuse
from graphfuse import GraphfuseError
from graphfuse.lowering.compiler import clear_cache
from graphfuse.pipelines.context import reset_context, set_context
from graphfuse.pipelines.fusion.switches import FLAGS_VARIABLE

#: flags that turn fusion off
NO_FUSION = "--opt_level=0"


def _linear_gelu() -> graphfuse.GraphBuilder:
    b = graphfuse.GraphBuilder("f")
    x, w = b.arg((16, 32)), b.arg((32, 24))
    b.ret(b.gelu(b.matmul(x, w)))
    return b


def _fused(executable: graphfuse.Executable) -> bool:
    return executable.kernels > 0


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch):
    for variable in (FLAGS_VARIABLE, "FUSION_SWITCH_FILE", "GRAPHFUSE_NUM_THREADS", "GRAPHFUSE_STREAM_MIN_BYTES"):
        monkeypatch.delenv(variable, raising=False)
    reset_context()
    clear_cache()
    yield
    reset_context()
    clear_cache()


def test_options_are_frozen_values() -> None:
    """Equal arguments in equal surroundings give equal, hashable options; an option is not changed in place."""
    a = graphfuse.resolve_options(opt_level=1, num_threads=2)
    b = graphfuse.resolve_options(opt_level=1, num_threads=2)
    assert a == b and hash(a) == hash(b)
    assert a != graphfuse.resolve_options(opt_level=1, num_threads=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.threads = 3  # type: ignore[misc]


def test_switch_files_compare_by_content(tmp_path) -> None:
    """Two switch files of the same text are the same options; edited, the file is other options."""
    first, second = tmp_path / "a.cfg", tmp_path / "b.cfg"
    text = '{"Switch": {"GraphFusion": {"ALL": "on"}}}'
    first.write_text(text)
    second.write_text(text)
    a = graphfuse.resolve_options(fusion_switch_file=first)
    assert a == graphfuse.resolve_options(fusion_switch_file=second) and a.fusion_switch_file == str(first)
    second.write_text(text.replace('"on"', '"off"'))
    assert a != graphfuse.resolve_options(fusion_switch_file=second)


def test_switch_files_that_are_not_regular_files(tmp_path) -> None:
    """A device is refused by its size, not read without end; a pipe is read once, by the compile, which is then
    not cached (its bytes are not known beforehand)."""
    with pytest.raises(GraphfuseError, match=r"fusion switch file '/dev/zero' is larger than 16 MiB"):
        graphfuse.compile(_linear_gelu().module, fusion_switch_file="/dev/zero")
    fifo = tmp_path / "switches.cfg"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "w") as stream:
            stream.write('{"Switch": {"GraphFusion": {"ALL": "off"}, "UBFusion": {"ALL": "off"}}}')

    writer = threading.Thread(target=write)
    writer.start()
    options = graphfuse.resolve_options(fusion_switch_file=fifo, graph_kernel_flags=NO_FUSION)
    assert options.fusion_switch_content is None and not options.cacheable
    module = _linear_gelu().module
    first = graphfuse.compile(module, options=options)
    writer.join()
    assert not _fused(first)
    writer = threading.Thread(target=write)
    writer.start()
    assert graphfuse.compile(module, options=options) is not first  # compiled again: the pipe is read again
    writer.join()


def test_the_environment_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Flags, threads and streaming set after the options were resolved change nothing those options compile;
    resolved again, the options see them."""
    options = graphfuse.resolve_options()
    monkeypatch.setenv(FLAGS_VARIABLE, NO_FUSION)
    monkeypatch.setenv("GRAPHFUSE_NUM_THREADS", "1")
    monkeypatch.setenv("GRAPHFUSE_STREAM_MIN_BYTES", "off")
    assert _fused(graphfuse.compile(_linear_gelu().module, options=options))
    again = graphfuse.resolve_options()
    assert (again.environment_flags, again.threads, again.streaming) == (NO_FUSION, 1, None)
    assert not _fused(graphfuse.compile(_linear_gelu().module, options=again))
    assert not _fused(graphfuse.compile(_linear_gelu().module))  # resolved by compile itself, now


def test_graphfuse_context_is_read_once() -> None:
    """graphfuse.context's flags are part of the options when they are resolved."""
    before = graphfuse.resolve_options()
    set_context(graph_kernel_flags=NO_FUSION)
    after = graphfuse.resolve_options()
    assert after.graph_kernel_flags == NO_FUSION and before.graph_kernel_flags == ""
    assert _fused(graphfuse.compile(_linear_gelu().module, options=before))
    assert not _fused(graphfuse.compile(_linear_gelu().module, options=after))


def test_cache_keys_on_options_and_module_text() -> None:
    """The same module text with equal options is the same executable; other options or another module compile
    again."""
    module = _linear_gelu().module
    options = graphfuse.resolve_options(num_threads=1)
    first = graphfuse.compile(module, options=options)
    assert graphfuse.compile(module, options=graphfuse.resolve_options(num_threads=1)) is first
    assert graphfuse.compile(module, num_threads=1) is first  # the same options, resolved by compile
    assert graphfuse.compile(module, options=graphfuse.resolve_options(num_threads=2)) is not first
    assert graphfuse.compile(module, options=graphfuse.resolve_options(num_threads=1, fast_math=False)) is not first
    assert graphfuse.compile(_linear_gelu().module, options=options) is first  # built again: the same text
    other = graphfuse.GraphBuilder("f")
    other.ret(other.gelu(other.matmul(other.arg((16, 32)), other.arg((32, 25)))))
    assert graphfuse.compile(other.module, options=options) is not first


def test_options_or_separate_options_not_both() -> None:
    options = graphfuse.resolve_options()
    with pytest.raises(GraphfuseError, match="options= or the separate options, not both"):
        graphfuse.compile(_linear_gelu().module, options=options, opt_level=1)


@pytest.mark.parametrize(("arguments", "message"), [
    ({"opt_level": 7}, r"opt level must be an integer in \[0, 3\], got 7"),
    ({"pipeline": "builtin.module(graph-dce)", "opt_level": 1}, "either pipeline= or opt_level="),
    ({"num_threads": 0}, "num_threads must be a positive integer"),
    ({"jit_opt_level": 4}, "jit_opt_level must be 0..3"),
])
def test_bad_options_are_refused_when_resolved(arguments: dict, message: str) -> None:
    with pytest.raises(GraphfuseError, match=message):
        graphfuse.resolve_options(**arguments)


def test_backend_config_resolves_its_options() -> None:
    """The torch.compile backend's CompilerConfig gives the options an FX graph compiles with."""
    torch_backend = pytest.importorskip("graphfuse.frontends.torch_backend")
    config = torch_backend.CompilerConfig(opt_level=1, num_threads=1, fast_math=False)
    assert config.compile_options() == graphfuse.resolve_options(opt_level=1, num_threads=1, fast_math=False)
