"""What graphfuse.distributed checks around each collective: that the ranks agree, and that none waits forever.

Ranks that disagree on a collective (its kind, its attributes, the shapes or
dtypes of its operands, or which collective comes next) make the transport
abort, compute garbage or hang.  So at the start of a call the ranks of each
group exchange a digest of what they will run over it (one 32-byte
``all_gather``, overlapping the compute before the group's first collective):
the collectives, their attributes, their operands' types, and the dynamic
sizes those depend on.  Where any digest differs, the ranks exchange the text
itself and every rank raises the same error, naming each rank's first
collective that differs.  Every wait is bounded by a time limit:
a rank that times out leaves a note in the job's key-value store saying where
it waits, and reads the notes of the others, so its error says where the
ranks that did not arrive are (waiting elsewhere, or not waiting at all).
"""

from __future__ import annotations

import datetime
import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphfuse.dialect.diagnostics import GraphfuseError

__all__ = ["DEFAULT_TIMEOUT", "Agreement", "CollectiveSite", "check_timeout", "finish_agreement", "start_agreement",
           "wait"]

#: Seconds a rank waits for the others at one collective before it gives up (``distributed.compile(timeout=)``).
DEFAULT_TIMEOUT = 30.0
#: Seconds a rank that timed out waits for the others' notes before it reports.
NOTE_GRACE = 2.0
_NOTE_KEY = "graphfuse.distributed/waiting/{rank}"


@dataclass(frozen=True)
class CollectiveSite:
    """One collective of a rank's graph, as errors name it."""

    op: str
    #: 1-based position among the graph's collectives, and their count
    index: int
    count: int
    entry: str
    group_name: str

    @property
    def position(self) -> str:
        return f"collective {self.index} of {self.count} in @{self.entry}"

    def __str__(self) -> str:
        return f"'{self.op}' ({self.position}, group '{self.group_name}')"


def check_timeout(timeout: Any) -> float | None:
    """``timeout`` as seconds (None: no limit), or an error saying what it must be."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise GraphfuseError(f"timeout must be a positive number of seconds (or None for no limit), got "
                             f"{timeout!r}")
    return float(timeout)


@dataclass
class Agreement:
    """What one rank runs over one group in a call, being compared with the other ranks (:func:`start_agreement`,
    then :func:`finish_agreement` before the group's first collective)."""

    #: the group's first collective in the call: what a timeout names
    site: CollectiveSite
    group: Any
    #: one line per collective (what runs, a tab, where it is in the graph), then the dynamic sizes it depends on
    lines: list[str]
    #: this rank's digest and everyone's (torch tensors, kept alive until the exchange is waited for)
    digest: Any
    gathered: list[Any]
    work: Any


def start_agreement(site: CollectiveSite, lines: list[str], group: Any, dist: Any, torch: Any) -> Agreement:
    """Start the exchange of a digest of ``lines`` (their parts before a tab) over ``group``, so it overlaps the
    compute before the group's first collective."""
    compared = "\n".join(line.partition("\t")[0] for line in lines).encode()
    mine = torch.tensor(list(hashlib.sha256(compared).digest()), dtype=torch.uint8)  # no Python reference
    gathered = [torch.empty_like(mine) for _ in range(dist.get_world_size(group))]
    return Agreement(site, group, lines, mine, gathered, dist.all_gather(gathered, mine, group=group, async_op=True))


def finish_agreement(agreement: Agreement, dist: Any, torch: Any, timeout: float | None) -> None:
    """Wait for the digests; where any differs, exchange the lines themselves and raise, on every rank alike, an
    error naming each rank's first collective that differs."""
    wait(agreement.work, agreement.site, agreement.group, dist, timeout)
    if all(bool((digest == agreement.gathered[0]).all()) for digest in agreement.gathered):
        return
    everyone = _gather_texts("\n".join(agreement.lines), agreement, dist, torch, timeout)
    ranks = _ranks(agreement.group, dist)
    per_rank = [text.split("\n") for text in everyone]
    first = next(k for k in range(max(map(len, per_rank)))
                 if len({lines[k].partition("\t")[0] if k < len(lines) else None for lines in per_rank}) > 1)
    described = "; ".join(f"rank {rank} {_describe(lines[first]) if first < len(lines) else 'runs nothing more'}"
                          for rank, lines in zip(ranks, per_rank, strict=True))
    raise GraphfuseError(f"graphfuse.distributed: the ranks of group '{agreement.site.group_name}' disagree on "
                         f"what they run: {described}")


def _ranks(group: Any, dist: Any) -> list[int]:
    """The global ranks of ``group`` (None: the default group)."""
    return dist.get_process_group_ranks(dist.group.WORLD if group is None else group)


def _describe(line: str) -> str:
    what, _, where = line.partition("\t")
    return f"runs {what} ({where})" if where else what


def _gather_texts(text: str, agreement: Agreement, dist: Any, torch: Any, timeout: float | None) -> list[str]:
    """Every rank's ``text``, gathered over the agreement's group (lengths first, then the padded texts)."""
    data = text.encode()
    size = torch.tensor([len(data)], dtype=torch.int64)
    sizes = [torch.empty_like(size) for _ in agreement.gathered]
    wait(dist.all_gather(sizes, size, group=agreement.group, async_op=True), agreement.site, agreement.group, dist,
         timeout)
    longest = max(int(s.item()) for s in sizes)
    mine = torch.tensor(np.frombuffer(data.ljust(longest, b"\0"), np.uint8))  # a copy: no Python reference
    texts = [torch.empty_like(mine) for _ in agreement.gathered]
    wait(dist.all_gather(texts, mine, group=agreement.group, async_op=True), agreement.site, agreement.group, dist,
         timeout)
    return [bytes(t.numpy()[:int(n.item())]).decode(errors="replace") for t, n in zip(texts, sizes, strict=True)]


def wait(work: Any, site: CollectiveSite, group: Any, dist: Any, timeout: float | None) -> None:
    """Wait for a collective started with ``async_op=True``: within ``timeout`` seconds, or an error naming this
    rank, the collective and where the others are."""
    try:
        if timeout is None:
            work.wait()
        else:
            work.wait(timeout=datetime.timedelta(seconds=timeout))
    except RuntimeError as error:
        rank = dist.get_rank()
        if "timed out" not in str(error).lower():
            raise GraphfuseError(f"graphfuse.distributed: rank {rank}: {site} failed: {error}") from None
        others = [r for r in _ranks(group, dist) if r != rank]
        raise GraphfuseError(f"graphfuse.distributed: rank {rank} timed out after {timeout:g} s waiting for {site}"
                             f": {_whereabouts(site, rank, others, dist)}; the group cannot be used after "
                             "this (timeout= of graphfuse.distributed.compile sets the limit)") from None


def _whereabouts(site: CollectiveSite, rank: int, others: list[int], dist: Any) -> str:
    """Where the other ranks of the group wait, from the notes they leave in the job's store when they time out
    (a rank that leaves none is still computing, has stopped, or runs something else)."""
    try:
        store = dist.distributed_c10d._get_default_store()
        store.set(_NOTE_KEY.format(rank=rank), str(site))
        deadline = time.monotonic() + NOTE_GRACE
        keys = {other: _NOTE_KEY.format(rank=other) for other in others}
        while not store.check(list(keys.values())) and time.monotonic() < deadline:
            time.sleep(0.05)
        notes = {other: store.get(key).decode() for other, key in keys.items() if store.check([key])}
    except (AttributeError, RuntimeError):  # a backend without a store, or a store that is gone
        return "where the other ranks are is unknown"
    parts = []
    for other in others:
        if other not in notes:
            parts.append(f"rank {other} did not reach it (it waits at no collective: still computing, stopped, "
                         "or running something else)")
        elif notes[other] == str(site):
            parts.append(f"rank {other} waits at the same collective")
        else:
            parts.append(f"rank {other} waits at {notes[other]}")
    return "; ".join(parts)
