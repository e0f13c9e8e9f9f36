"""Run by test_distributed.py under torchrun (2 ranks): ranks that disagree, or do not arrive, get an error naming
the ranks and the collective, on every rank, instead of garbage, an abort or a hang.  Prints one line per case
and rank: ``rank R <case>: <error>``."""

import sys
import time
from collections.abc import Callable

import numpy as np
import torch.distributed as dist
from mlir import ir

import graphfuse
from graphfuse import distributed

ALL_REDUCE = """func.func @f(%x: tensor<?x8xDT>) -> tensor<?x8xDT> {
  %r = "graph.all_reduce"(%x) {group = "GROUP", group_size = 2 : i64} : (tensor<?x8xDT>) -> tensor<?x8xDT>
  return %r : tensor<?x8xDT>
}
"""
ALL_GATHER = """func.func @g(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %r = "graph.all_gather"(%x) {group_size = 2 : i64} : (tensor<4x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
"""


def _graph(dtype: str = "f32", group: str = "world") -> ir.Module:
    return graphfuse.parse_module(ALL_REDUCE.replace("DT", dtype).replace("GROUP", group), "ranks.mlir")


def _outcome(run: Callable[[], list[np.ndarray]]) -> str:
    try:
        results = run()
    except graphfuse.GraphfuseError as error:
        return str(error)
    return f"ran: {[r.shape for r in results]}"


def main() -> int:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    tp = dist.new_group([0, 1])  # the same ranks as the world, another group
    lines = []

    # Agreeing ranks run (dynamic rows, the same on both).
    agreeing = distributed.compile(_graph())
    lines.append(("agree", _outcome(lambda: agreeing(np.ones((3, 8), np.float32)))))
    # Dynamic sizes that differ.
    lines.append(("sizes", _outcome(lambda: agreeing(np.ones((4 + 2 * rank, 8), np.float32)))))
    # Dtypes that differ.
    by_dtype = distributed.compile(_graph("f32" if rank == 0 else "f16"))
    x = np.ones((4, 8), np.float32 if rank == 0 else np.float16)
    lines.append(("dtypes", _outcome(lambda: by_dtype(x))))
    # Another collective next.
    other = distributed.compile(_graph() if rank == 0 else graphfuse.parse_module(ALL_GATHER, "gather.mlir"))
    lines.append(("sequence", _outcome(lambda: other(np.ones((4, 8), np.float32)))))
    # The group still works after those errors.
    lines.append(("after", _outcome(lambda: agreeing(np.ones((2, 8), np.float32)))))

    # Rank 1 arrives late: rank 0 gives up after its time limit.
    late = distributed.compile(_graph(), timeout=1.0)
    if rank == 0:
        start = time.monotonic()
        outcome = _outcome(lambda: late(np.ones((4, 8), np.float32)))
        lines.append(("late", f"{outcome} [after {time.monotonic() - start:.0f} s]"))
    # Both wait, each at a collective of another group: each names where the other waits.
    apart = distributed.compile(_graph(group="tp" if rank == 1 else "world"), groups={"tp": tp}, timeout=2.0)
    if rank == 1:
        time.sleep(4)  # past rank 0's time limit and the notes it waits for
    lines.append(("apart", _outcome(lambda: apart(np.ones((4, 8), np.float32)))))

    sys.stdout.write("".join(f"rank {rank} {case}: {text}\n" for case, text in lines))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
