"""Reference semantics of the collective ops: the ranks of a group, run as threads of one process.

A collective (``graph.all_reduce``, ``graph.all_gather``, ``graph.reduce_scatter``)
needs every rank's operand.  The reference interpreter runs one function per
rank, each on its own thread (:func:`run_ranks`); a collective's reference
hands its operand to the :class:`ReferenceGroup` of its ``group`` and gets all
ranks' operands back, in rank order, once every rank has reached it.  The
compiled form runs the same ops through ``torch.distributed``
(:mod:`graphfuse.distributed`).

Outside :func:`run_ranks` a collective over one rank is the identity; over
more it is an error naming what to call instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

__all__ = ["RankContext", "ReferenceGroup", "current_rank", "run_ranks"]

T = TypeVar("T")

#: Seconds a rank waits for the others at a collective before the run is declared hung (a graph that calls
#: collectives in a different order on different ranks).
_TIMEOUT = 120.0


class ReferenceGroup:
    """The ranks of one process group exchanging values through shared memory."""

    def __init__(self, size: int):
        self.size = size
        self._barrier = threading.Barrier(size, timeout=_TIMEOUT)
        self._slots: list[np.ndarray | None] = [None] * size

    def exchange(self, rank: int, value: np.ndarray) -> list[np.ndarray]:
        """Every rank's ``value``, in rank order (each rank calls this with its own)."""
        self._slots[rank] = value
        self._barrier.wait()
        values = [np.asarray(v) for v in self._slots]
        self._barrier.wait()  # nobody overwrites a slot before every rank has read them all
        return values

    def abort(self) -> None:
        self._barrier.abort()


@dataclass
class RankContext:
    """The rank a thread runs as, and the groups it belongs to (one group spanning all ranks: any name)."""

    rank: int
    size: int
    groups: dict[str, ReferenceGroup] = field(default_factory=dict)
    shared: ReferenceGroup | None = None

    def group(self, name: str) -> ReferenceGroup:
        assert self.shared is not None
        return self.groups.get(name, self.shared)


_LOCAL = threading.local()


def current_rank() -> RankContext | None:
    """The rank the calling thread runs as under :func:`run_ranks`, else None."""
    return getattr(_LOCAL, "rank", None)


def run_ranks(size: int, body: Callable[[int], T]) -> list[T]:
    """``body(rank)`` for every rank of a group of ``size``, each on its own thread; results in rank order.

    The first failure is raised (the other ranks, waiting at a collective, are released first).
    """
    if size < 1:
        raise ValueError(f"a group has at least one rank, got {size}")
    shared = ReferenceGroup(size)
    results: list[T | None] = [None] * size
    errors: list[tuple[int, BaseException]] = []

    def run(rank: int) -> None:
        _LOCAL.rank = RankContext(rank, size, shared=shared)
        try:
            results[rank] = body(rank)
        except threading.BrokenBarrierError as error:
            errors.append((rank, error))
        except BaseException as error:  # reported below, after every thread has stopped
            errors.append((rank, error))
            shared.abort()
        finally:
            _LOCAL.rank = None

    threads = [threading.Thread(target=run, args=(rank,), name=f"graphfuse-rank-{rank}") for rank in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        first = next((e for e in errors if not isinstance(e[1], threading.BrokenBarrierError)), errors[0])
        raise first[1]
    return list(results)  # type: ignore[arg-type]


def gathered(operand: np.ndarray, group: str, group_size: int) -> Sequence[np.ndarray] | None:
    """Every rank's ``operand`` for a collective over ``group``, or None when it runs on one rank alone.

    Raises ValueError (a message that reads after the op's name) when the group does not match the ranks the
    interpreter runs.
    """
    context = current_rank()
    if context is None:
        if group_size == 1:
            return None
        raise ValueError(f"runs over {group_size} ranks and needs every rank's value: run the graph with "
                         "graphfuse.run_function_ranks (the reference) or graphfuse.distributed (torch.distributed)")
    if context.size != group_size:
        raise ValueError(f"runs over group '{group}' of {group_size} ranks, but {context.size} ranks run")
    return context.group(group).exchange(context.rank, operand)
