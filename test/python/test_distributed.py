"""graphfuse.distributed: a rank's graph compiled and run with its collectives through torch.distributed (gloo).

The multi-process tests start 2 ranks with torchrun, as a user does (2 processes on the 2-core CI machine).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphfuse import GraphfuseError, parse_module
from graphfuse.lowering.partition import CollectiveStep, ComputeStage, split_at_collectives

torch = pytest.importorskip("torch", reason="graphfuse.distributed needs the torch extra (pip install '.[torch]')")
dist = pytest.importorskip("torch.distributed")
from graphfuse import distributed  # noqa: E402  (after the torch check)

REPO = Path(__file__).resolve().parents[2]
#: The PyTorch front end's converters exercised here, under torchrun (test_frontend_torch.py counts them covered).
DISTRIBUTED_OPS = frozenset({
    "_c10d_functional.all_reduce.default", "_c10d_functional.all_gather_into_tensor.default",
    "_c10d_functional.reduce_scatter_tensor.default", "_c10d_functional.wait_tensor.default",
})
TORCHRUN = Path(sys.executable).with_name("torchrun")


def _torchrun(script: Path, *args: str, timeout: int = 600, ranks: int = 2) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MASTER_", "RANK", "WORLD_SIZE", "LOCAL_"))}
    env["OMP_NUM_THREADS"] = "1"
    return subprocess.run([str(TORCHRUN), "--standalone", f"--nproc-per-node={ranks}", str(script), *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


def test_each_collective_matches_the_reference_over_two_processes() -> None:
    """Every collective against the reference (f32, f16), and a model written with torch.distributed's functional
    collectives imported by the PyTorch front end against PyTorch."""
    done = _torchrun(Path(__file__).parent / "torchrun" / "collectives.py")
    lines = [line for line in done.stdout.splitlines() if line.startswith("rank ")]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert len(lines) == 34 and all(line.endswith(" ok") for line in lines), lines


def test_the_tensor_parallel_llama_example_matches_one_process() -> None:
    """The issue's acceptance: 2 ranks, max relative error <= 1e-5 against the single-process result."""
    pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    done = _torchrun(REPO / "examples" / "tensor_parallel_llama.py", "--seq", "32", "--hidden", "128", "--heads",
                     "4", "--ffn", "256", "--repeat", "3", "--check", "1e-5")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "max relative error against the single-process graph: fused" in done.stdout
    assert "collectives per call: 2 matmul_all_reduce (fused), 2 matmul then all_reduce (unfused)" in done.stdout


def test_the_example_says_which_sizes_do_not_divide_among_the_ranks() -> None:
    pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    done = _torchrun(REPO / "examples" / "tensor_parallel_llama.py", "--heads", "4", "--ffn", "256", ranks=3)
    assert done.returncode != 0
    assert "tensor_parallel_llama: error: --heads 4 and --ffn 256 do not divide among 3 ranks" in done.stderr
    assert "[rank" not in done.stderr, done.stderr[-3000:]  # no rank's traceback (torchrun's own summary follows)


ROW_PARALLEL = """func.func @f(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
  %e = "graph.exp"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %m = "graph.matmul"(%e, %w) : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %r = "graph.all_reduce"(%m) {group = "tp", group_size = 2 : i64} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %t = "graph.tanh"(%r) : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %t : tensor<8x6xf32>
}
"""


def test_stages_are_cut_at_the_collectives() -> None:
    module = parse_module(ROW_PARALLEL)
    stages = split_at_collectives(module, "f")
    assert [type(s) for s in stages] == [ComputeStage, CollectiveStep, ComputeStage]
    first, collective, last = stages
    assert len(first.inputs) == 2 and len(first.outputs) == 1 and '"graph.matmul"' in first.text
    assert collective.op.name == "graph.all_reduce" and first.outputs[0] == collective.op.operands[0]
    assert last.inputs == (collective.op.results[0],) and '"graph.tanh"' in last.text


@pytest.fixture
def one_rank_group(tmp_path: Path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_errors_before_anything_runs(one_rank_group: None) -> None:
    module = parse_module(ROW_PARALLEL)
    with pytest.raises(GraphfuseError, match=r"runs over group 'tp', which graphfuse\.distributed\.compile"):
        distributed.compile(module)
    with pytest.raises(GraphfuseError, match="expects group 'tp' of 2 ranks, but it has 1"):
        distributed.compile(module, groups={"tp": dist.group.WORLD})
    one = parse_module(ROW_PARALLEL.replace("group_size = 2", "group_size = 1"))
    with pytest.raises(GraphfuseError, match=r"groups\['tp'\] must be a torch\.distributed process group \(or "
                                             r"'world'\), not int"):
        distributed.compile(one, groups={"tp": 2})
    with pytest.raises(GraphfuseError, match="groups must map group names to process groups, not list"):
        distributed.compile(one, groups=["tp"])
    assert distributed.compile(one, groups={"tp": "world"}).collectives == 1  # the default group by its name
    executable = distributed.compile(one, groups={"tp": dist.group.WORLD})
    x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    (got,) = executable(x, w)
    np.testing.assert_allclose(got, np.tanh(np.exp(x) @ w), rtol=1e-5, atol=1e-6)
    wrong_shape = r"@f: argument 1: expected shape \(4, 6\) \(tensor<4x6xf32>\), got \(6, 4\)"
    with pytest.raises(GraphfuseError, match=wrong_shape):
        executable(x, w.T)
    for timeout in (0, -1.0, float("nan"), float("inf"), "30", True):
        with pytest.raises(GraphfuseError, match=r"timeout must be a positive number of seconds \(or None"):
            distributed.compile(one, groups={"tp": "world"}, timeout=timeout)
    with pytest.raises(GraphfuseError, match="check_ranks must be True or False, got 'yes'"):
        distributed.compile(one, groups={"tp": "world"}, check_ranks="yes")
    unchecked = distributed.compile(one, groups={"tp": "world"}, timeout=None, check_ranks=False)
    np.testing.assert_array_equal(unchecked(x, w)[0], got)


def test_ranks_that_disagree_or_do_not_arrive_get_an_error_on_every_rank() -> None:
    """Dynamic sizes, dtypes or the next collective that differ: the same error on both ranks, naming each rank's
    collective, and the group still works after it; a rank that does not arrive: an error after the time limit
    naming where the others are (nowhere, or at a collective of another group)."""
    done = _torchrun(Path(__file__).parent / "torchrun" / "disagreeing_ranks.py", timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if line.startswith("rank "))
    disagree = "error: graphfuse.distributed: the ranks of group 'world' disagree on what they run: "
    for rank in (0, 1):
        assert lines[f"rank {rank} agree"] == "ran: [(3, 8)]", lines
        assert lines[f"rank {rank} after"] == "ran: [(2, 8)]", lines
        assert lines[f"rank {rank} sizes"] == disagree + ("rank 0 calls @f with dynamic sizes: argument 0 4x8; rank 1 "
                                                          "calls @f with dynamic sizes: argument 0 6x8"), lines
        assert lines[f"rank {rank} dtypes"] == disagree + (
            "rank 0 runs graph.all_reduce {group_size = 2, reduction = sum} on tensor<?x8xf32> (collective 1 of 1 "
            "in @f); rank 1 runs graph.all_reduce {group_size = 2, reduction = sum} on tensor<?x8xf16> "
            "(collective 1 of 1 in @f)"), lines
        assert lines[f"rank {rank} sequence"].endswith(
            "; rank 1 runs graph.all_gather {axis = 0, group_size = 2} on tensor<4x8xf32> (collective 1 of 1 in "
            "@g)"), lines
    late = lines["rank 0 late"]
    assert late.startswith("error: graphfuse.distributed: rank 0 timed out after 1 s waiting for 'graph.all_reduce' "
                           "(collective 1 of 1 in @f, group 'world'): rank 1 did not reach it (it waits at no "
                           "collective"), late
    assert late.endswith("[after 3 s]"), late  # the limit, then the time given to the others' notes
    assert lines["rank 0 apart"].startswith("error: graphfuse.distributed: rank 0 timed out after 2 s waiting for "
                                            "'graph.all_reduce' (collective 1 of 1 in @f, group 'world'): rank 1 "
                                            "waits at 'graph.all_reduce' (collective 1 of 1 in @f, group 'tp')")
    assert "rank 0 waits at 'graph.all_reduce' (collective 1 of 1 in @f, group 'world')" in lines["rank 1 apart"]


def test_without_an_initialized_process_group() -> None:
    if dist.is_initialized():
        pytest.skip("a process group is initialized in this process")
    with pytest.raises(GraphfuseError, match=r"torch\.distributed is not initialized: start the ranks with torchrun"):
        distributed.compile(parse_module(ROW_PARALLEL))
