"""ClusterDag: merges are legal exactly when the graph of clusters stays acyclic, and ranks stay topological.

Checked against a brute force on random DAGs: after each attempted merge the
contracted graph is searched for a cycle directly.
"""

from __future__ import annotations

import random

import pytest

from graphfuse.pipelines.graph_kernel.cluster_dag import ClusterDag


def _acyclic_after_merge(successors: list[list[int]], group_of: list[int], a: int, b: int) -> bool:
    """Whether the graph of groups stays acyclic when the groups of ``a`` and ``b`` become one."""
    merged = {group_of[a], group_of[b]}

    def group(node: int) -> int:
        return -1 if group_of[node] in merged else group_of[node]

    edges: dict[int, set[int]] = {}
    for u, targets in enumerate(successors):
        for v in targets:
            if group(u) != group(v):
                edges.setdefault(group(u), set()).add(group(v))
    state: dict[int, int] = {}  # 1: on the stack, 2: done

    def has_cycle(node: int) -> bool:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1 or (nxt not in state and has_cycle(nxt)):
                return True
        state[node] = 2
        return False

    return not any(has_cycle(g) for g in list(edges) if g not in state)


@pytest.mark.parametrize("seed", range(8))
def test_merges_match_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        n = rng.randint(2, 24)
        successors: list[list[int]] = [[] for _ in range(n)]
        for v in range(1, n):
            for u in rng.sample(range(v), min(v, rng.randint(0, 3))):
                successors[u].append(v)
        dag = ClusterDag(successors)
        group_of = list(range(n))
        for _ in range(30):
            a, b = rng.randrange(n), rng.randrange(n)
            if group_of[a] == group_of[b]:
                continue
            expected = _acyclic_after_merge(successors, group_of, a, b)
            assert dag.can_merge(a, b) == expected
            if expected:
                dag.merge(a, b)
                old = group_of[b]
                group_of = [group_of[a] if g == old else g for g in group_of]
            for u in range(n):
                assert dag.find(u) == dag.find(next(k for k in range(n) if group_of[k] == group_of[u]))
                if dag.find(u) == u:
                    assert all(dag.rank[u] < dag.rank[v] for v in dag.out[u])


def test_path_through_a_third_cluster_blocks_a_merge() -> None:
    # 0 -> 2 -> 3, 1 -> 3, 1 -> 4, 0 -> 4: clusters {1, 3} and {0}; 4 reads both.
    dag = ClusterDag([[2, 4], [3, 4], [3], [], []])
    dag.merge(1, 3)
    assert not dag.can_merge(0, 4)  # 0 -> 2 -> {1, 3} -> 4: the merged group would precede and follow {1, 3}
    assert dag.can_merge(1, 4)
    assert dag.independent(0, 1) is False
    assert dag.reaches(dag.find(0), dag.find(1))


def test_long_chain_merges_in_linear_time() -> None:
    n = 200_000
    dag = ClusterDag([[i + 1] if i + 1 < n else [] for i in range(n)])
    for i in range(1, n):
        assert dag.try_merge(0, i)
    assert dag.find(n - 1) == 0
