"""Selecting a kernel set by an objective: a set cover with side constraints, solved with CP-SAT.

Every coverage item of the objective (ckspace.select.coverage) must be covered by a chosen kernel; the objective is the
number of kernels (or, with a previous selection to stay close to, the churn first and the size second). Before the
solver sees it, the problem is reduced in plain Python:

- kernels that cover nothing are dropped, and of kernels that cover exactly the same items only the first by name is
  kept (a previous selection's kernels are always kept as candidates);
- the kernel-item graph splits into independent components (with a per-stratum scope, at least one per stratum),
  each solved as its own CP-SAT model; a global size bound that the per-component optima break is then enforced by
  one joint model;
- a greedy cover is the solver's hint and the fallback should the budget end before any solution is found.

Determinism: kernels and items are numbered in name order, the solver runs with a fixed seed, `workers` (1 by
default: a deterministic search), and a deterministic-time budget (`solver.deterministic_time`, shared between
components in proportion to their size and carried over), so the same rules and objective give the same set. The
wall-clock `time_limit` is only a safety net; if it ever stops the search first the result says so
(`stopped_by: time_limit`) and is then not guaranteed to be reproducible.
"""

from __future__ import annotations

import heapq
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Container, Iterable, Mapping, Sequence, cast

from .. import cache
from .coverage import ItemIndex
from ..errors import CkspaceError, DataError, UsageError
from .objectives import Objective

# A set is selected from an enumerated universe; the open space (curation off) is far too large for that.
UNIVERSE_LIMIT = 500_000
# The types json.loads gives a JSON scalar: a cached stat is one of these.
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


@dataclass
class Selection:
    """A selected kernel set: configs sorted by name, and what the solver proved about it."""

    configs: list[dict[str, object]]
    stats: dict[str, object] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [str(c["name"]) for c in self.configs]


from ..lines import MAX_NAMES, read_lines, read_names  # noqa: E402,F401  (their home is the input layer)


def universe(space, objective: Objective) -> list[dict[str, object]]:
    """The kernels of `full` within the objective's strata, sorted by name."""
    try:
        if "ck-curation" not in space.families:  # possibly the open space: count before listing anything
            total = sum(space.count(variant=objective.variant, ndim=objective.ndim, dtype=objective.dtype,
                                    where=objective.where).values())
            if total > UNIVERSE_LIMIT:
                raise UsageError(f"selecting a set needs an enumerable space: {total:,} kernels under these rules "
                                 f"(more than {UNIVERSE_LIMIT:,}; narrow the objective's strata or switch curation on)")
        rows = []
        for cfg in space.enumerate(variant=objective.variant, ndim=objective.ndim, dtype=objective.dtype,
                                   where=objective.where):
            rows.append(cfg)
            if len(rows) > UNIVERSE_LIMIT:
                raise UsageError(f"selecting a set needs an enumerable space: more than {UNIVERSE_LIMIT:,} kernels "
                                 "under these rules (narrow the objective's strata or switch curation on)")
    except UsageError as exc:
        if "enumerable" in str(exc):
            raise
        raise DataError(f"objective {objective.path}: strata: {exc}") from None
    except CkspaceError as exc:
        if objective.where:
            raise DataError(f"objective {objective.path}: strata.where: {exc}") from None
        raise
    rows.sort(key=lambda c: str(c["name"]))
    return rows


def _solver_version() -> str:
    """OR-Tools' installed version, as importlib.metadata gives it: read from the name of its dist-info directory
    on sys.path, which costs a directory listing where importing importlib.metadata costs 12 ms (explain of one
    name asks for the key of a selection it only looks up)."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        found = sorted(n for n in names if n.startswith(_DIST_INFO[0]) and n.endswith(_DIST_INFO[1]))
        eggs = any(n.lower().startswith("ortools") and n.endswith(".egg-info") for n in names)
        if len(found) == 1 and not eggs:
            return found[0][len(_DIST_INFO[0]):-len(_DIST_INFO[1])]
        if found or eggs:
            break  # several, or another kind of install: the one importlib.metadata picks
    try:
        from importlib.metadata import version

        return version("ortools")
    except Exception:  # pragma: no cover
        return "unknown"


_DIST_INFO = ("ortools-", ".dist-info")


def cache_key(data_digest: str, arch: str, families: Iterable[str], objective: Objective,
              stable_digest: str | None = None) -> str:
    """The cache key of a selection: everything it depends on (rules, arch, families, objective, previous list,
    solver version)."""
    options = {
        "arch": arch, "families": sorted(families), "objective": objective.digest,
        "stable_from": stable_digest, "ortools": _solver_version(),
    }
    return cache.key("select", data_digest, options)


def cached_names(data_digest: str, arch: str, families: Iterable[str], objective: Objective) -> list[str] | None:
    """The names of a selection made earlier (no `--stable-from`), straight from the cache; None if there is none.
    Needs no enumeration and no solver."""
    hit = cache.load("select", cache_key(data_digest, arch, families, objective), _is_selection)
    return None if hit is None else list(hit["names"])


def _is_selection(payload: object, universe_names: Container[str] | None = None) -> bool:
    """Whether `payload` is what select() stores: {"names": [str...] sorted and unique, "stats": {...}} with stats
    as selection_summary and emit read them; with `universe_names`, every name must be one of them."""
    if type(payload) is not dict or payload.keys() != {"names", "stats"}:
        return False
    names, stats = payload["names"], payload["stats"]
    if type(names) is not list or not all(type(n) is str for n in names) or names != sorted(set(names)):
        return False
    if universe_names is not None and not all(n in universe_names for n in names):
        return False
    return _is_selection_stats(stats, len(names))


def _is_selection_stats(stats: object, size: int) -> bool:
    """The stats select() writes: JSON scalars under string keys, `size` the number of names, `stable` None or a
    mapping of scalars (selection_summary reads into it)."""
    if type(stats) is not dict or type(stats.get("size")) is not int or stats["size"] != size:
        return False
    stable = stats.get("stable")
    if stable is not None and not (type(stable) is dict and _scalars_only(stable)):
        return False
    return _scalars_only({k: v for k, v in stats.items() if k != "stable"})


def _scalars_only(mapping: dict) -> bool:
    return all(type(k) is str for k in mapping) and all(type(v) in _JSON_SCALARS for v in mapping.values())


def select(space, objective: Objective, stable_from: str | Path | None = None,
           configs: Sequence[Mapping[str, object]] | None = None) -> Selection:
    """Select the kernels of `space` that meet `objective` (cached like enumerate)."""
    started = time.perf_counter()
    prev_names: list[str] | None = None
    prev_digest = None
    if stable_from is not None:
        prev_names = read_names(stable_from, "--stable-from")
        import hashlib

        prev_digest = hashlib.sha256("\n".join(prev_names).encode()).hexdigest()
    rows = list(configs) if configs is not None else universe(space, objective)
    digest = cache_key(space.data.digest, space.arch, space.families, objective, prev_digest)
    if space.use_cache and configs is None:
        by_name = {str(c["name"]): c for c in rows}
        hit = cache.load("select", digest, lambda payload: _is_selection(payload, by_name))
        if hit is not None:
            stats = dict(hit["stats"])
            stats["cached"] = True
            stats["total_seconds"] = round(time.perf_counter() - started, 3)
            # configs is None here, so rows (and by_name's values) are universe()'s dicts.
            return Selection(cast("list[dict[str, object]]", [by_name[n] for n in hit["names"]]), stats)
    t_items = time.perf_counter()
    index = ItemIndex(objective, rows)
    prev: set[int] | None = None
    gone: list[str] = []
    if prev_names is not None:
        prev = set()
        for n in dict.fromkeys(prev_names):
            k = index.index.get(n)
            if k is None:
                gone.append(n)
            else:
                prev.add(k)
    t_solve = time.perf_counter()
    chosen, stats = solve_cover(index, objective, prev)
    names = sorted(str(rows[k]["name"]) for k in chosen)
    stats.update({
        "set": objective.name, "arch": space.arch, "objective": objective.label(), "universe": len(rows),
        "items": len(index.items), "seed": objective.seed, "workers": objective.workers,
        "index_seconds": round(t_solve - t_items, 3), "solve_seconds": round(time.perf_counter() - t_solve, 3),
        "cached": False,
    })
    if prev is not None and prev_names is not None:
        kept = len(prev & set(chosen))
        removed = len(set(dict.fromkeys(prev_names))) - kept
        added = len(chosen) - kept
        stats["stable"] = {
            "previous": len(set(prev_names)), "kept": kept, "added": added, "removed": removed,
            "not_in_full": len(gone), "churn": added + removed,
            "churn_bound": int(stats.pop("churn_bound")) + len(gone),
        }
    else:
        stats.pop("churn_bound", None)
        stats["stable"] = None
    if space.use_cache and configs is None and stats.get("stopped_by") != "time_limit":
        cache.store("select", digest, {"names": names, "stats": stats})
    stats["total_seconds"] = round(time.perf_counter() - started, 3)
    by_name = {str(c["name"]): c for c in rows}
    return Selection([dict(by_name[n]) for n in names], stats)


# -- the set cover ---------------------------------------------------------------------------------------------------


def _components(cands: list[int], of_kernel: Sequence[Sequence[int]]) -> list[list[int]]:
    """Candidate kernels grouped by connected component of the kernel-item graph (kernels in index order)."""
    parent: dict[int, int] = {}

    def find(a: int) -> int:
        while parent.get(a, a) != a:
            parent[a] = parent.get(parent[a], parent[a])
            a = parent[a]
        return a

    owner: dict[int, int] = {}
    for k in cands:
        parent.setdefault(k, k)
        for i in of_kernel[k]:
            j = owner.setdefault(i, k)
            if j != k:
                a, b = find(j), find(k)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for k in cands:
        groups.setdefault(find(k), []).append(k)
    return [groups[r] for r in sorted(groups)]


def _greedy(kernels: list[int], of_kernel: Sequence[Sequence[int]], start: set[int]) -> set[int]:
    """Greedy set cover of every item of `kernels`, starting from `start`; ties go to the lowest index."""
    chosen = set(start)
    covered: set[int] = set()
    for k in chosen:
        covered.update(of_kernel[k])
    heap = [(-len(of_kernel[k]), k) for k in kernels if k not in chosen]
    heapq.heapify(heap)
    while heap:
        neg, k = heapq.heappop(heap)
        gain = sum(1 for i in of_kernel[k] if i not in covered)
        if gain == 0:
            continue
        if gain < -neg:
            heapq.heappush(heap, (-gain, k))  # lazy update: re-insert with its current gain
            continue
        chosen.add(k)
        covered.update(of_kernel[k])
    return chosen


@dataclass
class _Part:
    kernels: list[int]
    chosen: set[int]
    bound: float
    status: str
    det_time: float = 0.0
    stopped_by: str | None = None


def solve_cover(index: ItemIndex, objective: Objective, prev: set[int] | None = None) -> tuple[list[int], dict]:
    """The chosen kernel indices and solver statistics (size, lower bound, status, gap, ...)."""
    of_kernel = index.of_kernel
    n = len(of_kernel)
    prev = set(prev) if prev is not None else None
    stable = prev is not None
    # Candidates: kernels covering something, one per distinct item set (previous kernels always stay candidates).
    seen: dict[tuple[int, ...], int] = {}
    cands: list[int] = []
    spare: list[int] = []
    if stable:
        for k in sorted(prev):  # type: ignore[arg-type]
            seen.setdefault(tuple(sorted(of_kernel[k])), k)
    for k in range(n):
        if stable and k in prev:  # type: ignore[operator]
            cands.append(k)
            continue
        sig = tuple(sorted(of_kernel[k]))
        if not sig or sig in seen:
            spare.append(k)
            continue
        seen[sig] = k
        cands.append(k)
    min_k = min(objective.min_kernels, n)
    if len(cands) < min_k:  # too few distinct kernels for the minimum size: allow the duplicates back
        cands = sorted(cands + spare[: min_k - len(cands)])
    cands.sort()

    max_k = objective.max_kernels
    comps = _components(cands, of_kernel)
    budget = objective.deterministic_time
    deadline = time.perf_counter() + objective.time_limit
    parts: list[_Part] = []
    left = budget
    for i, comp in enumerate(comps):
        rest = sum(len(c) for c in comps[i:])
        share = left * len(comp) / rest  # unused budget carries over to the components after this one
        part = _solve_part(comp, of_kernel, prev, objective, share, deadline, None, None)
        left = max(left - part.det_time, 0.0)
        parts.append(part)
    size = sum(len(p.chosen) for p in parts)
    separate_bound = sum(p.bound for p in parts)
    joint = False
    if (size < min_k or (max_k is not None and size > max_k)) and cands:
        joint = True
        part = _solve_part(cands, of_kernel, prev, objective, max(left, budget * 0.25), deadline, min_k, max_k)
        parts = [part]
    chosen = sorted(k for p in parts for k in p.chosen)
    if max_k is not None and len(chosen) > max_k:
        need = math.ceil(separate_bound - 1e-6) if prev is None else max_k + 1
        raise DataError(f"objective {objective.path}: size.max_kernels = {max_k} is too small: covering every item "
                        f"needs at least {max(need, max_k + 1)} kernels")
    _verify(index, chosen)

    statuses = {p.status for p in parts}
    status = "optimal" if statuses == {"optimal"} else ("feasible" if "unknown" not in statuses else "greedy")
    stopped = sorted({p.stopped_by for p in parts if p.stopped_by})
    stats: dict[str, object] = {
        "size": len(chosen), "status": status, "components": len(comps), "candidates": len(cands),
        "joint": joint, "deterministic_time": round(sum(p.det_time for p in parts), 3),
        "stopped_by": stopped[-1] if stopped else None,
    }
    if stable:
        w = n + 1
        bound = sum(p.bound for p in parts)
        churn_bound = max(math.floor((bound + w * len(prev & set(cands)) + 1e-6) / w), 0)  # type: ignore[operator]
        stats["churn_bound"] = churn_bound
        stats["lower_bound"] = None
        stats["gap"] = None
    else:
        lb = max(math.ceil(sum(p.bound for p in parts) - 1e-6), 0)
        if min_k:
            lb = max(lb, min_k)
        lb = min(lb, len(chosen))
        stats["lower_bound"] = lb
        gap = (len(chosen) - lb) / len(chosen) if chosen else 0.0
        stats["gap"] = f"{100 * gap:.2f}%"
        if lb == len(chosen):
            stats["status"] = "optimal"
    return chosen, stats


def _solve_part(kernels: list[int], of_kernel: Sequence[Sequence[int]], prev: set[int] | None,
                objective: Objective, det_budget: float, deadline: float,
                min_k: int | None, max_k: int | None) -> _Part:
    from ..solve.cpsat import LeanModel, new_solver, solve_stoppably

    start = set(k for k in kernels if prev is not None and k in prev)
    greedy = _greedy(kernels, of_kernel, start)
    if min_k and len(greedy) < min_k:
        greedy |= set([k for k in kernels if k not in greedy][: min_k - len(greedy)])
    model = LeanModel()  # the snake_case API, as every CP-SAT model of ckspace
    pos = {k: j for j, k in enumerate(kernels)}
    x = [model.new_bool_var(f"k{k}") for k in kernels]
    items: dict[int, list[int]] = {}
    for k in kernels:
        for i in of_kernel[k]:
            items.setdefault(i, []).append(pos[k])
    for i in sorted(items):
        model.add_bool_or([x[j] for j in items[i]])
    if min_k or max_k is not None:
        model.add_linear_constraint(sum(x), min_k or 0, max_k if max_k is not None else len(kernels))
    if prev is None:
        if objective.minimize:
            model.minimize(sum(x))
    else:
        # Churn first, size second: an added kernel costs w + 1, a kept previous one 1 - w (dropping it costs w).
        w = len(of_kernel) + 1
        size_w = 1 if objective.minimize else 0
        model.minimize(sum((size_w - w if k in prev else size_w + w) * x[pos[k]] for k in kernels))
    for k in kernels:
        model.add_hint(x[pos[k]], k in greedy)

    solver = new_solver(workers=objective.workers, seed=objective.seed, linearization_level=2,
                        max_deterministic_time=max(det_budget, 0.05),
                        max_time_in_seconds=max(deadline - time.perf_counter(), 0.5))
    p = solver.parameters
    t0 = time.perf_counter()
    status = solve_stoppably(solver, model)
    wall = time.perf_counter() - t0
    det = solver.response_proto.deterministic_time
    name = solver.status_name(status)
    if name == "INFEASIBLE":
        return _Part(kernels, greedy, math.inf, "infeasible", det)
    stopped = None
    if name != "OPTIMAL":
        stopped = "time_limit" if wall >= p.max_time_in_seconds * 0.98 else "deterministic_time"
    if name in ("OPTIMAL", "FEASIBLE"):
        chosen = {k for k in kernels if solver.boolean_value(x[pos[k]])}
        has_obj = objective.minimize or prev is not None
        bound = solver.best_objective_bound if has_obj else 0.0
        if prev is None and not objective.minimize:
            bound = 0.0
        return _Part(kernels, chosen, bound, "optimal" if name == "OPTIMAL" else "feasible", det, stopped)
    bound = solver.best_objective_bound if (objective.minimize or prev is not None) else 0.0
    if not math.isfinite(bound):
        bound = 0.0
    return _Part(kernels, greedy, bound, "unknown", det, stopped)


def _verify(index: ItemIndex, chosen: Sequence[int]) -> None:
    covered = index.covered(chosen)
    if len(covered) != len(index.items):  # pragma: no cover - a bug, never bad input
        missing = [index.items[i] for i in range(len(index.items)) if i not in covered][:3]
        raise AssertionError(f"selection leaves items uncovered: {missing}")
