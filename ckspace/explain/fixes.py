"""The smallest fix of one rule: the change of its own fields (and no other) after which a kernel no longer breaks it.

This is what makes a reported rule a reason in its own right: fixing only what it mentions silences it. The measure
is ckspace.explain.measure's: the fewest changed fields, then meeting the rule's requirement rather than switching it
off (its `when`), then the smallest moves in domain steps. The problem fields (variant, ndim, dtype) are never
changed: a user needs a kernel for their convolution, and "variant bwd_data -> bwd_weight" fixes nothing for them.

The search is plain Python first: one changed field, then two, ..., each candidate checked by the rule's closures
(rules.check), the candidates of one size in the order of their moves. A rule's own fields are few (at most ten), so
one or two changes settle almost every rule in well under a millisecond, where one CP-SAT solve took 10-40 ms and
OR-Tools' import 70 ms (cold explain of a rejected name was over 0.3 s for it). Where more than MAX_TRIED
candidates would be needed, or a candidate cannot be evaluated, CP-SAT (explain.neighbours.solve_fix) answers with
the same weights. Among fixes of equal measure the first in the name's field order, then in domain order (the
smaller number) is kept: CP-SAT kept whichever it found first.
"""

from __future__ import annotations

import itertools
import math
from typing import Mapping, Sequence

from ..rules.check import breaks, closures
from ..rules.data import FieldDef, Rule
from ..rules.model import Model, kind_of_variant
from .measure import W_CHANGE, W_WHEN_OFF, distance, same

MAX_TRIED = 5_000  # candidates tried in Python (about 1-2 µs each) before CP-SAT is asked


class _Undecided(Exception):
    """The Python search cannot settle this rule (too many candidates, or one it cannot evaluate)."""


def own_fix(model: Model, cfg: Mapping[str, object], rule: Rule) -> dict[str, object] | None:
    """The smallest change of the rule's own fields (not the problem fields) that satisfies it, or None when no change
    of them does (or the rule cannot be evaluated for this config)."""
    free = own_fields(model, cfg, rule)
    try:
        found = search_fix(model, cfg, rule, free)
    except _Undecided:
        from .neighbours import solve_fix  # OR-Tools: only for the rare rule the search leaves

        found = solve_fix(model, cfg, rule, free)
    if found is None or breaks(rule, {**cfg, **found[1]}, model):  # both readers must agree, or nothing is shown
        return None
    return found[1]


def own_fields(model: Model, cfg: Mapping[str, object], rule: Rule) -> list[FieldDef]:
    """The fields a fix of the rule may change: those it reads, except variant/ndim/dtype, in the name's order."""
    free = [f for f in model.fields(kind_of_variant(str(cfg.get("variant")))) if f.name in rule.fields and not f.stratum]
    fields = model.data.fields
    free += [fields[name] for name in sorted(rule.fields - {f.name for f in free}) if name in fields
             and not fields[name].stratum]  # a field of the other kernel family (the rule reads it, CP-SAT decides)
    return free


def search_fix(model: Model, cfg: Mapping[str, object], rule: Rule, free: Sequence[FieldDef],
               limit: int = MAX_TRIED) -> tuple[int, dict[str, object]] | None:
    """The cheapest change of `free` after which `cfg` meets the rule, with its cost in the weights of
    explain.measure; None when no change of them does. Raises _Undecided past `limit` candidates or on a candidate the
    rule's closures cannot evaluate."""
    when, require = closures(rule, model)
    trial = dict(cfg)

    def outcome() -> int | None:  # 0: the requirement is met, 1: the rule no longer applies, None: still broken
        try:
            if not when(trial):
                return 1
            return 0 if require(trial) else None
        except Exception as exc:  # a value the closures cannot take: CP-SAT's reading decides
            raise _Undecided from exc

    # per field: every other value of its domain, nearest first (then in domain order)
    options: list[list[tuple[int, object]]] = []
    must: set[int] = set()  # fields whose asked value is not in their domain: every fix changes them
    for i, f in enumerate(free):
        asked = cfg.get(f.name)
        values: Sequence[object] = (False, True) if f.type == "bool" else f.values
        if not any(same(v, asked) for v in values):
            must.add(i)
        options.append(sorted(((distance(f, v, asked), v) for v in values if not same(v, asked)),
                              key=lambda dv: dv[0]))
    tried = 0
    for size in range(max(1, len(must)), len(free) + 1):
        groups = [g for g in itertools.combinations(range(len(free)), size) if must <= set(g)]
        total = sum(math.prod(len(options[i]) for i in g) for g in groups)
        if tried + total > limit:
            raise _Undecided
        tried += total
        candidates = []
        for order, g in enumerate(groups):
            for picks in itertools.product(*(options[i] for i in g)):
                candidates.append((sum(d for d, _ in picks), order, g, picks))
        candidates.sort(key=lambda c: (c[0], c[1]))  # stable: within a group, the product's (domain) order
        off: tuple[int, dict[str, object]] | None = None
        for moved, _, g, picks in candidates:
            for i, (_, value) in zip(g, picks):
                trial[free[i].name] = value
            result = outcome()
            for i in g:
                name = free[i].name
                if name in cfg:
                    trial[name] = cfg[name]
                else:
                    del trial[name]
            change = {free[i].name: value for i, (_, value) in zip(g, picks)}
            if result == 0:
                return size * W_CHANGE + moved, change
            if result == 1 and off is None:
                off = (size * W_CHANGE + W_WHEN_OFF + moved, change)
        if off is not None:
            return off
    return None

