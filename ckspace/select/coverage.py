"""Coverage items of an objective over a universe of kernels, and coverage reports of any subset.

An item is one thing an objective asks a set to contain: `(scope, goal, values)`, for instance
`(("forward", "2d", "fp16"), ("pipeline", "tile"), ("compv3", "128x128x32"))`. The items of an objective are
exactly those that occur in the universe (`full`, restricted to the objective's strata); a subset covers an item
when one of its kernels has it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from .objectives import Objective

Item = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # (scope values, goal dimensions, goal values)


def natural_key(text: str) -> tuple:
    """Sort "16x64" before "128x32": digit runs compare as numbers."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"\d+|\D+", text))


def item_key(item: Item) -> tuple:
    scope, goal, values = item
    return (tuple(natural_key(s) for s in scope), goal, tuple(natural_key(v) for v in values))


class ItemIndex:
    """The items of an objective over a universe of kernels (kernel i is `configs[i]`)."""

    def __init__(self, objective: Objective, configs: Sequence[Mapping[str, object]]):
        self.objective = objective
        self.configs = configs
        self.of_kernel: list[list[int]] = []
        self.items: list[Item] = []
        self.kernels_of: list[list[int]] = []
        used = objective.used
        value_fns = [objective.dimension(name).value for name in used]
        at = {name: j for j, name in enumerate(used)}
        scope_at = [at[s] for s in objective.scope]
        goals = [(g, [at[d] for d in g]) for g in objective.goals]
        ids: dict[tuple, int] = {}
        items, kernels_of = self.items, self.kernels_of
        for k, cfg in enumerate(configs):
            vals = [fn(cfg) for fn in value_fns]
            scope = tuple(vals[j] if vals[j] is not None else "-" for j in scope_at)
            mine = []
            for gi, (goal, where) in enumerate(goals):
                values = tuple([vals[j] for j in where])
                if None in values:
                    continue
                key = (scope, gi, values)
                i = ids.get(key)
                if i is None:
                    i = ids[key] = len(items)
                    items.append((scope, goal, values))  # type: ignore[arg-type]
                    kernels_of.append([])
                kernels_of[i].append(k)
                mine.append(i)
            self.of_kernel.append(mine)
        self.index = {str(cfg["name"]): k for k, cfg in enumerate(configs)}
        self._ids, self._value_fns, self._scope_at, self._goals = ids, value_fns, scope_at, goals

    def items_of(self, cfg: Mapping[str, object]) -> list[int]:
        """The items a kernel outside the universe covers: those it shares with the universe's kernels (CK's
        configs with the MFMA's own k cover full's tiles, waves, pipelines... but not full's warp tiles)."""
        vals = [fn(cfg) for fn in self._value_fns]
        scope = tuple(vals[j] if vals[j] is not None else "-" for j in self._scope_at)
        out = []
        for gi, (_, where) in enumerate(self._goals):
            i = self._ids.get((scope, gi, tuple([vals[j] for j in where])))
            if i is not None:
                out.append(i)
        return out

    def covered(self, chosen: Iterable[int]) -> set[int]:
        out: set[int] = set()
        for k in chosen:
            out.update(self.of_kernel[k])
        return out


@dataclass
class GoalCoverage:
    goal: tuple[str, ...]
    covered: int = 0
    total: int = 0
    uncovered: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)  # (scope, values)

    @property
    def label(self) -> str:
        return " x ".join(self.goal)


@dataclass
class ScopeCoverage:
    scope: tuple[str, ...]
    kernels: int = 0
    full: int = 0
    covered_1: int = 0
    total_1: int = 0
    covered_2: int = 0
    total_2: int = 0


@dataclass
class Report:
    arch: str
    objective: Objective
    source: str  # what was measured: "set tests", a file name, ...
    names_read: int
    in_universe: int
    universe_size: int
    duplicates: list[str]
    not_in_full: list[tuple[str, str]]  # (name, why)
    outside_strata: list[str]  # in full, but outside the objective's strata
    goals: list[GoalCoverage]
    scopes: list[ScopeCoverage]
    selection: dict[str, object] | None = None
    counted_outside: int = 0  # names not in full that are kernels of the open space: their shared items count

    @property
    def covered(self) -> int:
        return sum(g.covered for g in self.goals)

    @property
    def total(self) -> int:
        return sum(g.total for g in self.goals)

    def to_json(self) -> dict[str, object]:
        obj = self.objective
        return {
            "arch": self.arch,
            "source": self.source,
            "objective": {"name": obj.name, "path": str(obj.path), "scope": list(obj.scope)},
            "selection": self.selection,
            "names": {"read": self.names_read, "in_full": self.in_universe + len(self.outside_strata),
                      "outside_full_counted": self.counted_outside,
                      "in_objective_strata": self.in_universe, "duplicates": self.duplicates,
                      "not_in_full": [{"name": n, "why": w} for n, w in self.not_in_full],
                      "outside_strata": self.outside_strata},
            "universe": self.universe_size,
            "covered": self.covered,
            "total": self.total,
            "goals": [{
                "goal": list(g.goal), "covered": g.covered, "total": g.total,
                "uncovered": [{"scope": dict(zip(obj.scope, s)), "values": dict(zip(g.goal, v))} for s, v in g.uncovered],
            } for g in self.goals],
            "scopes": [{
                "scope": dict(zip(obj.scope, s.scope)), "kernels": s.kernels, "full": s.full,
                "values": {"covered": s.covered_1, "total": s.total_1},
                "pairs": {"covered": s.covered_2, "total": s.total_2},
            } for s in self.scopes],
        }

    def __str__(self) -> str:
        """The report `ckspace coverage` prints (print(space.coverage(...)) shows it)."""
        return self.text()

    def __rich__(self):
        """The report as `ckspace coverage` prints it, for rich: `rich.print(space.coverage(names))`."""
        from rich.text import Text

        return Text(self.text().rstrip("\n"))

    def text(self, max_items: int = 40, summary: bool = False) -> str:
        """The report as `ckspace coverage` prints it: per goal covered/total and up to `max_items` uncovered items
        (0: all of them); `summary`: the tables, and how many items are uncovered instead of the list."""
        return format_text(self, max_items, summary)

    def json(self) -> str:
        """to_json() as the text of `ckspace coverage --format json`."""
        return format_json(self)


def build_report(index: ItemIndex, arch: str, source: str, names: Sequence[str], full_names: Mapping[str, object],
                 explain=None, selection: dict[str, object] | None = None, real=None) -> Report:
    """Coverage of the kernels `names` (any list, duplicates and foreign names allowed) against `index`.

    `full_names` is every name of the arch's `full` set (the universe may be a part of it); `explain(name)` says
    why a name outside `full` is not in it; `real(name)` gives the config of a name outside `full` that is a kernel of
    the open space on the arch (None otherwise): its items count as covered.
    """
    obj = index.objective
    seen: set[str] = set()
    dups: list[str] = []
    chosen: list[int] = []
    missing: list[tuple[str, str]] = []
    outside: list[str] = []
    foreign: list[Mapping[str, object]] = []
    for name in names:
        if name in seen:
            dups.append(name)
            continue
        seen.add(name)
        k = index.index.get(name)
        if k is not None:
            chosen.append(k)
        elif name in full_names:
            outside.append(name)
        else:
            missing.append((name, explain(name) if explain else "not in full"))
            cfg = real(name) if real else None
            if cfg is not None:
                foreign.append(cfg)
    covered = index.covered(chosen)
    for cfg in foreign:
        covered.update(index.items_of(cfg))

    goals = {g: GoalCoverage(g) for g in obj.goals}
    scopes: dict[tuple[str, ...], ScopeCoverage] = {}
    order = sorted(range(len(index.items)), key=lambda i: item_key(index.items[i]))
    for i in order:
        scope, goal, values = index.items[i]
        gc = goals[goal]
        sc = scopes.setdefault(scope, ScopeCoverage(scope))
        gc.total += 1
        hit = i in covered
        if len(goal) == 1:
            sc.total_1 += 1
            sc.covered_1 += hit
        else:
            sc.total_2 += 1
            sc.covered_2 += hit
        if hit:
            gc.covered += 1
        else:
            gc.uncovered.append((scope, values))
    for k, cfg in enumerate(index.configs):
        scope = kernel_scope(obj, cfg)
        if scope in scopes:
            scopes[scope].full += 1
    for k in chosen:
        scope = kernel_scope(obj, index.configs[k])
        if scope in scopes:
            scopes[scope].kernels += 1
    return Report(arch, obj, source, len(names), len(chosen), len(index.configs), dups, missing, outside,
                  list(goals.values()), [scopes[s] for s in sorted(scopes, key=lambda s: tuple(map(natural_key, s)))],
                  selection, len(foreign))


def kernel_scope(obj: Objective, cfg: Mapping[str, object]) -> tuple[str, ...]:
    out = []
    for s in obj.scope:
        v = obj.dimension(s).value(cfg)
        out.append(v if v is not None else "-")
    return tuple(out)


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:5.1f}%" if b else "    -"


def format_text(report: Report, max_items: int = 40, summary: bool = False) -> str:
    obj = report.objective
    lines = []
    scope = ", ".join(obj.scope) if obj.scope else "the whole arch"
    lines.append(f"coverage of {report.source} on {report.arch} against objective {obj.label()} "
                 f"(coverage per {scope})")
    if report.selection:
        lines.append("selection: " + selection_summary(report.selection))
    in_full = report.in_universe + len(report.outside_strata)
    lines.append(f"names: {report.names_read} read, {in_full} in full"
                 + (f" ({len(report.outside_strata)} outside the objective's strata)" if report.outside_strata else "")
                 + f", {len(report.not_in_full)} not in full"
                 + (f" ({report.counted_outside} of them kernels of the open space: their items count)"
                    if report.counted_outside else "")
                 + (f", {len(report.duplicates)} duplicates" if report.duplicates else ""))
    lines.append(f"covered: {report.covered}/{report.total} items ({_pct(report.covered, report.total).strip()})")
    lines.append("")
    width = max([len(g.label) for g in report.goals] + [9])
    lines.append(f"{'dimension':<{width}}  {'covered':>8}  {'total':>7}  {'':>6}")
    for g in report.goals:
        if len(g.goal) == 1:
            lines.append(f"{g.label:<{width}}  {g.covered:>8}  {g.total:>7}  {_pct(g.covered, g.total)}")
    if any(len(g.goal) > 1 for g in report.goals):
        lines.append("")
        lines.append(f"{'pair':<{width}}  {'covered':>8}  {'total':>7}  {'':>6}")
        for g in report.goals:
            if len(g.goal) > 1:
                lines.append(f"{g.label:<{width}}  {g.covered:>8}  {g.total:>7}  {_pct(g.covered, g.total)}")
    if obj.scope:
        lines.append("")
        head = " ".join(obj.scope)
        sw = max([len(" ".join(s.scope)) for s in report.scopes] + [len(head)])
        lines.append(f"{head:<{sw}}  {'kernels':>7}  {'of full':>7}  {'values':>13}  {'':>6}  {'pairs':>13}  {'':>6}")
        for s in report.scopes:
            lines.append(f"{' '.join(s.scope):<{sw}}  {s.kernels:>7}  {s.full:>7}  "
                         f"{f'{s.covered_1}/{s.total_1}':>13}  {_pct(s.covered_1, s.total_1)}  "
                         f"{f'{s.covered_2}/{s.total_2}':>13}  {_pct(s.covered_2, s.total_2)}")
    missing = [g for g in report.goals if g.uncovered]
    if missing and summary:
        lines.append("")
        lines.append(f"uncovered: {sum(len(g.uncovered) for g in missing):,} items of {len(missing)} goals "
                     f"({', '.join(g.label for g in missing[:6])}{', ...' if len(missing) > 6 else ''}); --full lists "
                     f"them (40 per goal; --all every one)")
    elif missing:
        lines.append("")
        lines.append("uncovered:")
        for g in missing:
            shown = g.uncovered[:max_items] if max_items else g.uncovered
            lines.append(f"  {g.label} ({len(g.uncovered)}):")
            for scope_vals, values in shown:
                where = f"{' '.join(scope_vals)}: " if scope_vals else ""
                lines.append(f"    {where}{' x '.join(values)}")
            if len(shown) < len(g.uncovered):
                lines.append(f"    ... and {len(g.uncovered) - len(shown)} more (--format json lists all)")
    if report.not_in_full and summary:
        lines.append("")
        lines.append(f"not in full: {len(report.not_in_full):,} names; --full lists them, each with why")
    elif report.not_in_full:
        lines.append("")
        lines.append(f"not in full ({len(report.not_in_full)}):")
        for name, why in report.not_in_full:
            lines.append(f"  {name}: {why}")
    if report.outside_strata and summary:
        lines.append("")
        lines.append(f"in full but outside the objective's strata: {len(report.outside_strata):,} names; --full lists "
                     "them")
    elif report.outside_strata:
        lines.append("")
        lines.append(f"in full but outside the objective's strata ({len(report.outside_strata)}):")
        for name in report.outside_strata[:max_items] if max_items else report.outside_strata:
            lines.append(f"  {name}")
    return "\n".join(lines) + "\n"


def format_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=1) + "\n"


def selection_summary(stats: Mapping[str, object]) -> str:
    """One line: size, proven bound, optimality, time, stability."""
    size = stats.get("size")
    status = stats.get("status")
    bound = stats.get("lower_bound")
    text = f"{size} kernels, "
    if stats.get("stable"):
        st = stats["stable"]
        assert isinstance(st, Mapping)
        text += (f"stable from {st.get('previous')} names: kept {st.get('kept')}, added {st.get('added')}, "
                 f"removed {st.get('removed')} (churn {st.get('churn')}, proven minimum {st.get('churn_bound')}), ")
        text += "optimal" if status == "optimal" else f"{status}"
    elif status == "optimal":
        text += f"optimal (proven lower bound {bound})"
    else:
        gap = stats.get("gap")
        text += f"{status}: proven lower bound {bound}, gap {gap}"
    text += f"; {stats.get('items')} items over {stats.get('universe')} kernels"
    t = stats.get("solve_seconds")
    if isinstance(t, (int, float)):
        text += f", solved in {t:.2f} s"
    if stats.get("cached"):
        text += " (from cache)"
    return text
