"""Factoring a stratum's fields into a join tree (a tree decomposition of the variable-interaction graph).

Connected components are independent, but in CK's curated space one component holds almost every field: the
curated tables link everything through the tile. Inside a component, fields are still *conditionally* independent:
given the tile and the features, the vector widths do not care about the pipeline, and so on. A tree decomposition
captures exactly that: bags of fields such that

* every constraint's scope lies inside some bag (so a bag can check it on its own), and
* the bags holding any one field form a connected subtree (running intersection),

which makes the solutions of the whole component the join of the bags' local solutions, joined on the fields each
bag shares with its parent (its separator). Counting becomes message passing (sum over separator values of
products of child counts) and enumeration a nested loop, both without a solver model over every field at once.

The decomposition comes from a greedy elimination order. networkx has the same heuristics, but its tie-breaking
follows set iteration order, which varies with string hashing between runs; this module breaks ties by field
order, so the same stratum always gets the same tree (and configs() the same order).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..memo import memo


@dataclass
class TreeNode:
    """One node of a join tree: its fields (in stratum field order), its parent bag and its children."""

    fields: tuple[str, ...]
    parent: int | None = None
    children: list[int] = field(default_factory=list)

    def separator(self, bags: Sequence["TreeNode"]) -> tuple[str, ...]:
        """The fields this bag shares with its parent (empty for a root)."""
        if self.parent is None:
            return ()
        up = set(bags[self.parent].fields)
        return tuple(f for f in self.fields if f in up)


@dataclass
class JoinTree:
    """A forest of bags. `roots` index the bags without a parent, one per connected component."""

    bags: list[TreeNode]
    roots: list[int]

    def postorder(self) -> list[int]:
        """Every bag after all of its children (the order for bottom-up passes)."""
        return postorder([b.children for b in self.bags], self.roots)


def postorder(children: Sequence[Sequence[int]], roots: Sequence[int]) -> list[int]:
    """Every node of a forest after all of its children: the one order of every bottom-up pass (counts, messages)."""
    out: list[int] = []
    for root in roots:
        preorder, stack = [], [root]
        while stack:
            i = stack.pop()
            preorder.append(i)
            stack.extend(reversed(children[i]))
        out.extend(reversed(preorder))
    return out


def interaction_graph(fields: Sequence[str], scopes: Sequence[frozenset[str]]) -> dict[str, set[str]]:
    """Fields are adjacent when some constraint reads both."""
    adj: dict[str, set[str]] = {f: set() for f in fields}
    for scope in scopes:
        for a, b in itertools.combinations(sorted(scope), 2):
            adj[a].add(b)
            adj[b].add(a)
    return adj


@dataclass
class SizeModel:
    """An estimate of log2(number of local solutions) of a bag, for the elimination heuristic (planning only).

    A bag's fields multiply their (effective) domain sizes, except that
    * fields covered by an unconditional table constraint inside the bag count as that table's row count, and
    * a field that other fields of the bag determine (a hidden term or class, a derived field) counts as one value.
    Without this a bag holding tile_m, tile_k and tile_m * tile_k looks 231 times larger than it is.
    """

    weight: Mapping[str, float]  # log2 of each field's effective domain size
    tables: Sequence[tuple[frozenset[str], float]] = ()  # (fields of a table constraint, log2 of its rows)
    determined: Mapping[str, frozenset[str]] = field(default_factory=dict)  # field -> fields that fix its value
    _cache: dict[frozenset[str], float] = field(default_factory=dict, repr=False)

    def signature(self) -> tuple:
        """Everything the estimates depend on, as a hashable value."""
        # In the given order: the greedy cover breaks ties by table order, so equal signatures mean equal trees.
        return (tuple(self.weight.items()), tuple((tuple(sorted(c)), r) for c, r in self.tables),
                tuple((k, tuple(sorted(v))) for k, v in self.determined.items()))

    def __call__(self, bag: frozenset[str]) -> float:
        hit = self._cache.get(bag)
        if hit is not None:
            return hit
        free = {f for f in bag if not (f in self.determined and self.determined[f] <= bag)}
        covered: set[str] = set()
        total = 0.0
        # Greedy cover by the tables that save the most (deterministic order: saving, then table index).
        usable = [(sum(self.weight[f] for f in cols & free) - rows, i, cols, rows)
                  for i, (cols, rows) in enumerate(self.tables) if cols <= bag]
        for saving, _, cols, rows in sorted(usable, key=lambda u: (-u[0], u[1])):
            if saving <= 0 or cols & covered:
                continue
            covered |= cols
            total += rows
        total += sum(self.weight[f] for f in free - covered)
        self._cache[bag] = total
        return total


def elimination_order(fields: Sequence[str], adj: Mapping[str, set[str]], size: SizeModel,
                      message_first: bool = False,
                      keep: frozenset[str] = frozenset()) -> list[tuple[str, frozenset[str]]]:
    """Greedy elimination: repeatedly remove the field whose neighbourhood clique is the smallest bag.

    Bag sizes come from `size`; fill-in edges break ties, then field order (determinism). With `message_first`
    the size of the neighbourhood without the field (the table left after summing the field out) comes first:
    that is what variable elimination stores, while a join tree stores whole bags. The fields of `keep` are never
    eliminated (they stay in the graph, so the fields around them still see them as neighbours).
    Returns (field, clique) pairs, the clique being the field with its neighbours at elimination time.
    """
    graph = {f: set(adj[f]) for f in fields}
    rank = {f: i for i, f in enumerate(fields)}

    def key_of(f: str) -> tuple:
        nb = graph[f]
        cost = size(frozenset(nb | {f}))
        fill = sum(1 for a, b in itertools.combinations(nb, 2) if b not in graph[a])
        return (round(size(frozenset(nb)), 6) if message_first else 0.0, round(cost, 6), fill, rank[f])

    # A field's key reads its neighbours and the edges among them, so eliminating v changes only the keys of v's
    # neighbours and of their neighbours: those are computed again, the others kept (the keys end in the field's
    # rank, so the smallest is one field, as in a scan in field order).
    keys = {f: key_of(f) for f in graph if f not in keep}
    out = []
    while keys:
        v = min(keys, key=keys.__getitem__)
        del keys[v]
        nb = graph.pop(v)
        for a in nb:
            graph[a].discard(v)
            graph[a].update(n for n in nb if n != a)
        changed = set(nb)
        for a in nb:
            changed |= graph[a]
        for f in changed:
            if f in graph and f not in keep:
                keys[f] = key_of(f)
        out.append((v, frozenset(nb | {v})))
    return out


_TREES: dict[tuple, JoinTree] = memo("solve.jointree.trees", {})


def join_tree(fields: Sequence[str], scopes: Sequence[frozenset[str]], size: SizeModel) -> JoinTree:
    """A join tree of `fields` such that every scope lies inside a bag (fields of no scope get their own bag).

    Strata often have the same graph and size estimates (fp16 and bf16 always do), so trees are cached.
    """
    key = (tuple(fields), tuple(sorted(set(tuple(sorted(s)) for s in scopes))), size.signature())
    hit = _TREES.get(key)
    if hit is None:
        hit = _TREES[key] = _join_tree(fields, scopes, size)
        if len(_TREES) > 512:
            _TREES.pop(next(iter(_TREES)))
    return JoinTree([TreeNode(b.fields, b.parent, list(b.children)) for b in hit.bags], list(hit.roots))


def _join_tree(fields: Sequence[str], scopes: Sequence[frozenset[str]], size: SizeModel) -> JoinTree:
    rank = {f: i for i, f in enumerate(fields)}
    order = elimination_order(fields, interaction_graph(fields, scopes), size)
    pos = {v: i for i, (v, _) in enumerate(order)}
    # The clique of v hangs under the clique of its earliest-eliminated later neighbour: that clique holds all of
    # v's other later neighbours (they were made adjacent to it), which is the running-intersection property.
    parent: dict[str, str | None] = {}
    for v, clique in order:
        later = [n for n in clique if n != v]
        parent[v] = min(later, key=pos.__getitem__) if later else None
    cliques = {v: set(c) for v, c in order}
    # Keep only maximal bags: when one end of a tree edge is contained in the other, contract the edge into the
    # larger bag (this keeps both properties). In a tree built this way only a parent can be inside its child.
    alive = [v for v, _ in order]
    changed = True
    while changed:
        changed = False
        for v in list(alive):
            p = parent[v]
            if v not in alive or p is None:
                continue
            if cliques[v] <= cliques[p]:
                keep, drop = p, v
            elif cliques[p] <= cliques[v]:
                keep, drop = v, p
                parent[v] = parent[p]
            else:
                continue
            for w in alive:
                if w != keep and parent[w] == drop:
                    parent[w] = keep
            alive.remove(drop)
            changed = True
    names = sorted(alive, key=lambda v: pos[v])
    index = {v: i for i, v in enumerate(reversed(names))}  # roots first: index order is a topological order
    bags = [TreeNode(tuple(sorted(cliques[v], key=rank.__getitem__))) for v in reversed(names)]
    roots = []
    for v in reversed(names):
        i = index[v]
        p = parent[v]
        if p is None:
            roots.append(i)
        else:
            bags[i].parent = index[p]
            bags[index[p]].children.append(i)
    for b in bags:
        b.children.sort()
    roots.sort(key=lambda i: min(rank[f] for f in bags[i].fields))
    return JoinTree(bags, roots)
