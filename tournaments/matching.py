"""Maximum matching in a general graph (Edmonds' blossom algorithm), for pairing look-ahead.

The Swiss league asks one question many times: "can the players still unpaired all be paired
with someone they have not met?" That is whether a graph (players, and an edge between two
who have not met) has a perfect matching. Trying every pairing is exponential; Edmonds'
algorithm answers in polynomial time (O(V·E) per augmentation here, a greedy start first so
that few augmentations remain), which bounds the league's pairing however the rounds went.

The form is the classic one (breadth-first search for an augmenting path from each free
vertex, shrinking odd cycles, "blossoms", into their base).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

FREE = -1


def maximum_matching(adjacent: Sequence[Sequence[int]]) -> list[int]:
    """A maximum matching of the graph ``adjacent`` (vertex → its neighbours, vertices
    ``0..n-1``, symmetric): ``mate[v]`` is v's partner or ``FREE`` (-1)."""
    n = len(adjacent)
    mate = [FREE] * n
    for v in range(n):  # a greedy start: most vertices are matched before any search
        if mate[v] == FREE:
            for u in adjacent[v]:
                if mate[u] == FREE:
                    mate[u], mate[v] = v, u
                    break
    for root in range(n):
        if mate[root] == FREE:
            _augment_from(root, adjacent, mate)
    return mate


def has_perfect_matching(adjacent: Sequence[Sequence[int]]) -> bool:
    """Whether every vertex can be matched (an empty graph can)."""
    return FREE not in maximum_matching(adjacent)


def _augment_from(root: int, adjacent: Sequence[Sequence[int]], mate: list[int]) -> None:
    """Look for an augmenting path from the free vertex ``root`` and flip it if found."""
    n = len(adjacent)
    parent = [FREE] * n
    base = list(range(n))
    used = [False] * n
    used[root] = True
    queue = deque([root])

    def lowest_common_base(a: int, b: int) -> int:
        seen = [False] * n
        while True:
            a = base[a]
            seen[a] = True
            if mate[a] == FREE:
                break
            a = parent[mate[a]]
        while True:
            b = base[b]
            if seen[b]:
                return b
            b = parent[mate[b]]

    def mark_path(v: int, stem: int, child: int, blossom: list[bool]) -> None:
        while base[v] != stem:
            blossom[base[v]] = blossom[base[mate[v]]] = True
            parent[v] = child
            child = mate[v]
            v = parent[mate[v]]

    while queue:
        v = queue.popleft()
        for to in adjacent[v]:
            if base[v] == base[to] or mate[v] == to:
                continue
            if to == root or (mate[to] != FREE and parent[mate[to]] != FREE):
                stem = lowest_common_base(v, to)
                blossom = [False] * n
                mark_path(v, stem, to, blossom)
                mark_path(to, stem, v, blossom)
                for i in range(n):
                    if blossom[base[i]]:
                        base[i] = stem
                        if not used[i]:
                            used[i] = True
                            queue.append(i)
            elif parent[to] == FREE:
                parent[to] = v
                if mate[to] == FREE:
                    # Flip the path root … v → to.
                    while to != FREE:
                        back = parent[to]
                        further = mate[back]
                        mate[to], mate[back] = back, to
                        to = further
                    return
                used[mate[to]] = True
                queue.append(mate[to])
