"""A DAG whose nodes are merged into clusters without ever forming a cycle.

Clustering decides op by op whether two groups may become one kernel.  The
question is not local: two groups may be joined by no op outside them and
still depend on each other through a third group (A -> b1 in B, b2 in B -> A).
Once every group is outlined as one call, that is a cycle, and the block has a
use before its definition.  So the legality check has to look at the graph of
groups, not of ops.

:class:`ClusterDag` holds that graph.  Every node starts as one op; merging
two nodes is legal when no path leads from one to the other through a third
node (the classic edge contraction of XLA's and MindSpore's fusion passes).
A topological rank per node, kept valid on every merge by the dynamic
topological sort of Pearce and Kelly, bounds each reachability search to the
nodes ranked between the two, so the searches stay short on the graphs
clustering sees (it merges along edges in program order).
"""

from __future__ import annotations


class ClusterDag:
    """Nodes ``0..n-1`` (ops in program order) with edges, merged by :meth:`try_merge`."""

    def __init__(self, successors: list[list[int]]):
        count = len(successors)
        # Program order is a topological order of the op graph: each op's rank starts as its position.
        self.rank: list[int] = list(range(count))
        self.out: list[set[int]] = [set(s) for s in successors]
        self.inp: list[set[int]] = [set() for _ in range(count)]
        for node, targets in enumerate(self.out):
            targets.discard(node)
            for target in targets:
                self.inp[target].add(node)
        #: node -> the node it was merged into (union-find parent; a root is its own parent)
        self._parent: list[int] = list(range(count))

    def find(self, node: int) -> int:
        """The node that ``node`` has been merged into (itself when it was never merged)."""
        root = node
        while self._parent[root] != root:
            root = self._parent[root]
        while self._parent[node] != root:
            self._parent[node], node = root, self._parent[node]
        return root

    def reaches(self, source: int, target: int, skip_edge: bool = False) -> bool:
        """True when a path leads from ``source`` to ``target`` (with ``skip_edge``, not by their direct edge).

        Both are roots.  A path only climbs in rank, so its inner nodes rank
        strictly between the two.  The search grows the smaller of two sets,
        the nodes reached from ``source`` and the nodes reaching ``target``,
        and stops when they meet or one of them cannot grow: it costs about
        the smaller of the two neighbourhoods.
        """
        low, high = self.rank[source], self.rank[target]
        if source == target or low > high:
            return False
        if not skip_edge and target in self.out[source]:
            return True
        forward = {n for n in self.out[source] if low < self.rank[n] < high}
        backward = {n for n in self.inp[target] if low < self.rank[n] < high}
        if not forward.isdisjoint(backward):
            return True
        forward_frontier, backward_frontier = list(forward), list(backward)
        while forward_frontier and backward_frontier:
            if len(forward_frontier) <= len(backward_frontier):
                forward_frontier = self._grow(forward_frontier, forward, self.out, low, high)
                if any(n in backward for n in forward_frontier):
                    return True
            else:
                backward_frontier = self._grow(backward_frontier, backward, self.inp, low, high)
                if any(n in forward for n in backward_frontier):
                    return True
        return False

    def _grow(self, frontier: list[int], seen: set[int], edges: list[set[int]], low: int, high: int) -> list[int]:
        """Add to ``seen`` the neighbours of ``frontier`` ranked strictly inside (low, high); the new ones."""
        layer: list[int] = []
        for node in frontier:
            for n in edges[node]:
                if n not in seen and low < self.rank[n] < high:
                    seen.add(n)
                    layer.append(n)
        return layer

    def can_merge(self, first: int, second: int) -> bool:
        """True when the clusters of ``first`` and ``second`` may become one: no path between them leaves them.

        A direct edge is fine; any longer path runs through a third cluster,
        which would then be both before and after the merged one.
        """
        a, b = self.find(first), self.find(second)
        return a == b or not (self.reaches(a, b, skip_edge=True) or self.reaches(b, a, skip_edge=True))

    def independent(self, first: int, second: int) -> bool:
        """True when no path at all, direct or not, leads from either cluster to the other."""
        a, b = self.find(first), self.find(second)
        return a != b and not (self.reaches(a, b) or self.reaches(b, a))

    def try_merge(self, first: int, second: int) -> bool:
        """Merge the clusters of ``first`` and ``second`` when :meth:`can_merge` allows it; True if merged."""
        if not self.can_merge(first, second):
            return False
        self.merge(first, second)
        return True

    def merge(self, first: int, second: int) -> None:
        """Merge the clusters of ``first`` and ``second``; the caller has checked :meth:`can_merge`."""
        a, b = self.find(first), self.find(second)
        if a == b:
            return
        if self.rank[a] > self.rank[b]:
            a, b = b, a
        # ``b`` goes into ``a``, the earlier one: its successors rank above ``a`` already; its
        # predecessors may not, and inserting those edges restores the order.
        self._parent[b] = a
        self.out[a].discard(b)
        self.inp[a].discard(b)
        late_predecessors: list[int] = []
        for succ in self.out[b]:
            self.inp[succ].discard(b)
            if succ != a:
                self.out[a].add(succ)
                self.inp[succ].add(a)
        for pred in self.inp[b]:
            self.out[pred].discard(b)
            if pred != a:
                if a not in self.out[pred]:
                    late_predecessors.append(pred)
                self.out[pred].add(a)
                self.inp[a].add(pred)
        self.out[b] = set()
        self.inp[b] = set()
        for pred in late_predecessors:
            if self.rank[pred] > self.rank[a]:
                self._reorder(pred, a)

    def _reorder(self, tail: int, head: int) -> None:
        """Restore the topological ranks after the edge ``tail -> head`` with rank[tail] > rank[head].

        Pearce-Kelly: the nodes reachable from ``head`` below rank[tail] and
        the nodes reaching ``tail`` above rank[head] swap into the ranks they
        hold together, ancestors first.  (No cycle: :meth:`can_merge` was checked.)
        """
        upper, lower = self.rank[tail], self.rank[head]
        forward = self._collect(head, self.out, lambda r: r < upper)
        backward = self._collect(tail, self.inp, lambda r: r > lower)
        forward.sort(key=self.rank.__getitem__)
        backward.sort(key=self.rank.__getitem__)
        ranks = sorted(self.rank[n] for n in backward + forward)
        for node, rank in zip(backward + forward, ranks, strict=True):
            self.rank[node] = rank

    def _collect(self, start: int, edges: list[set[int]], in_window) -> list[int]:
        seen = {start}
        stack = [start]
        while stack:
            node = stack.pop()
            for n in edges[node]:
                if n not in seen and in_window(self.rank[n]):
                    seen.add(n)
                    stack.append(n)
        return list(seen)
