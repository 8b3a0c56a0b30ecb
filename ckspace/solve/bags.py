"""One CP-SAT model per bag: build it from the bag's constraints, enumerate it, remember the rows.

A bag is a small set of fields with the constraints that lie inside it and implied projections of larger table
constraints. Its rows are its local solutions, as raw solver values (enum codes, 0/1, integers), sorted.
"""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from ..memo import memo
from ..rules.data import FieldDef
from .folded import Constraint

Row = tuple[int, ...]  # raw solver values of a bag's fields
Key = tuple[int, ...]  # raw values of some of them (a separator)

# Solutions of bag models already solved in this process, keyed by everything a model is built from (fields with
# their domains, folded and normalized constraints, implied projections, domain restrictions). fp16 and bf16 share
# CK's tables, and 2D and 3D differ only in the tile lists, so many bags of different strata are the very same
# CP-SAT model; solving it again would give the same rows. Bounded, least recently used first out.
_SOLVED: "OrderedDict[tuple, list[Row]]" = memo("solve.bags.solved", OrderedDict())
SOLVED_LIMIT = 2048
# models known to have more solutions than the limit stored
_TOO_LARGE: dict[tuple, int] = memo("solve.bags.too_large", {})
# Whether a bag is first offered to the plain-Python join (CP-SAT lists what it declines). Tests switch it off to
# compare the two; nothing else should.
USE_PYTHON = True


@dataclass
class Bag:
    """A bag: a CP-SAT model over `fields`, its place in the join tree, and after solving its local solutions."""

    fields: tuple[str, ...]
    constraints: list[Constraint]  # every constraint whose scope lies inside the bag
    implied: list[Constraint]  # projections of larger table constraints onto the bag (remove no solution)
    parent: int | None = None
    children: list[int] = field(default_factory=list)
    key: tuple[int, ...] = ()  # positions, in this bag, of the fields shared with the parent (the separator)
    parent_key: tuple[int, ...] = ()  # positions of the same fields in the parent
    own: tuple[int, ...] = ()  # positions of the fields no ancestor holds: this bag supplies their values
    rows: list[Row] | None = None
    solver_calls: int = 0


@dataclass
class Stats:
    """What CP-SAT did for a plan: searches run and the bag rows they listed (memo hits run none)."""

    models: int = 0  # CP-SAT searches run (whole bags, conditioned solves, attempts stopped at a limit)
    rows: int = 0  # bag rows those searches listed (an attempt stopped at a limit counts limit + 1)
    overflows: int = 0  # searches stopped at a limit
    listed: int = 0  # bags listed by the plain-Python join instead (ckspace.solve.pysearch)


_IMPORT_SECONDS = 0.0  # time spent importing the CP-SAT layer (OR-Tools) in this process


def cpsat_module():
    """The CP-SAT layer (ckspace.solve.cpsat), imported on first use: a run whose bags the plain-Python join lists
    never loads OR-Tools. The import's time is kept for --timings (import_seconds)."""
    global _IMPORT_SECONDS
    module = sys.modules.get("ckspace.solve.cpsat")
    if module is None:
        t0 = time.perf_counter()
        from . import cpsat as module  # noqa: PLW0621
        _IMPORT_SECONDS += time.perf_counter() - t0
    return module


def import_seconds() -> float:
    return _IMPORT_SECONDS


def message(rows: Iterable[Row], key: Sequence[int], kids: Sequence[tuple[Mapping[Key, int], Sequence[int]]]) -> dict[Key, int]:
    """A bag's message to its parent: per separator value (the row's `key` positions), the number of configs of the
    bag's subtree. A row weighs the product of its children's messages at the child separators (`kids`: a child's
    message and the positions of its separator in this bag); rows of weight 0 add nothing, and no key maps to 0."""
    msg: dict[Key, int] = {}
    for row in rows:
        w = 1
        for child_msg, positions in kids:
            w *= child_msg.get(tuple([row[j] for j in positions]), 0)
            if not w:
                break
        if w:
            k = tuple([row[j] for j in key])
            msg[k] = msg.get(k, 0) + w
    return msg


class TooLarge(Exception):
    """A bag has more local solutions than the caller allowed."""


def domain_rows(f: FieldDef) -> list[Row]:
    """A field no constraint reads: its whole domain, as raw values."""
    if f.type == "bool":
        return [(0,), (1,)]
    if f.type == "enum":
        return [(i,) for i in range(len(f.values))]
    return [(v,) for v in f.values]


def bag_model(fields: Mapping[str, FieldDef], fac: Bag, narrowed: Iterable[tuple[str, Sequence[int]]] = ()):
    """The bag's CP-SAT model: a variable per field (narrowed to the given raw values) and every constraint and
    implied table of the bag. Returns the model and its variables by field name."""
    cpsat = cpsat_module()
    Compiler, Domain, LeanModel, new_variable = cpsat.Compiler, cpsat.Domain, cpsat.LeanModel, cpsat.new_variable

    cp = LeanModel()
    variables = {name: new_variable(cp, fields[name]) for name in fac.fields}
    for name, values in narrowed:
        cp.add_linear_expression_in_domain(variables[name], Domain.from_values(list(values)))
    compiler = Compiler(cp, fields, variables)
    for c in (*fac.constraints, *fac.implied):
        when = compiler.lit_term(c.when)
        if when is False:
            continue
        compiler.post(c.require, [] if when is True else [when])
    return cp, variables


def solve_bag(fields: Mapping[str, FieldDef], fac: Bag, timings: dict[str, float] | None = None,
                 domains: Mapping[str, Iterable[int]] | None = None, limit: int | None = None,
                 stats: Stats | None = None) -> list[Row]:
    """All assignments of the bag's fields that satisfy its constraints (CP-SAT enumeration), sorted.

    `domains` narrows fields to the given raw values (implied by other factors); with `limit`, more solutions
    raise TooLarge. `timings` (if given) accumulates CPU seconds spent building models ("compile") and in CP-SAT
    ("solve"); `stats` (if given) counts the search and its rows.
    """
    if not fac.constraints and not fac.implied and not domains:
        assert len(fac.fields) == 1, fac.fields  # only an untouched field is a bag without constraints
        return domain_rows(fields[fac.fields[0]])
    narrowed = tuple((n, tuple(sorted(domains[n]))) for n in fac.fields if domains and n in domains)
    key = _model_key([fields[n] for n in fac.fields], fac.constraints, fac.implied, narrowed)
    hit = _SOLVED.get(key)
    if hit is not None:
        _SOLVED.move_to_end(key)
        return hit
    if limit is not None and _TOO_LARGE.get(key, -1) >= limit:
        raise TooLarge(fac.fields)
    rows = _listed_in_python(fields, fac, narrowed, limit, key, timings, stats)
    if rows is not None:
        return rows
    enumerate_all = cpsat_module().enumerate_all

    t0 = time.process_time()
    cp, variables = bag_model(fields, fac, narrowed)
    fac.solver_calls += 1
    t1 = time.process_time()
    if stats is not None:
        stats.models += 1
    try:
        rows = enumerate_all(cp, [variables[n] for n in fac.fields], limit)
    except OverflowError:
        assert limit is not None
        _TOO_LARGE[key] = limit
        if stats is not None:
            stats.rows += limit + 1
            stats.overflows += 1
        raise TooLarge(fac.fields) from None
    finally:
        if timings is not None:
            timings["compile"] = timings.get("compile", 0.0) + t1 - t0
            timings["solve"] = timings.get("solve", 0.0) + time.process_time() - t1
    if stats is not None:
        stats.rows += len(rows)
    return _remember(key, rows)


# A tabled bag's first search gives up past this many partial assignments (and goes to numpy): every bag of CK's
# full, ck-default and ck-tests on gfx950, gfx942 and gfx90a (154) is listed within it, and the open space's tabled
# bags that are not (8 on gfx950) cost 0.07 s in all this way (0.6 s with 20,000)
QUICK_VISITS = 2_000


def _listed_in_python(fields: Mapping[str, FieldDef], fac: Bag, narrowed: tuple, limit: int | None, key: tuple,
                      timings: dict[str, float] | None, stats: Stats | None) -> list[Row] | None:
    """The bag's rows by numpy (ckspace.solve.nplist: a large bag of arithmetic) or the plain-Python join
    (ckspace.solve.pysearch), or None where that is CP-SAT's job."""
    if not USE_PYTHON:
        return None
    from . import nplist, pysearch

    t0 = time.process_time()
    defs, constraints = [fields[n] for n in fac.fields], (*fac.constraints, *fac.implied)
    try:
        try:
            if not nplist.tabled(constraints):
                raise nplist.Unsupported("no table")
            # A tuple of fields in a table of rows (CK's curated tiles) prunes the search at once: a few thousand
            # visits list a catalog's bag in milliseconds, where numpy lists its product (20-160 ms a bag)
            rows = pysearch.rows(defs, constraints, dict(narrowed), limit, budget=QUICK_VISITS, per_row=0)
        except (nplist.Unsupported, pysearch.Unsupported):
            try:  # a large bag of plain arithmetic: numpy filters every assignment a field at a time
                rows = nplist.rows(defs, constraints, dict(narrowed), limit)
            except nplist.Unsupported:
                rows = pysearch.rows(defs, constraints, dict(narrowed), limit)
    except pysearch.Unsupported:
        return None
    except OverflowError:
        assert limit is not None
        _TOO_LARGE[key] = limit
        if stats is not None:  # counted as CP-SAT's stopped searches are
            stats.rows += limit + 1
            stats.overflows += 1
        raise TooLarge(fac.fields) from None
    finally:
        if timings is not None:
            timings["python"] = timings.get("python", 0.0) + time.process_time() - t0
    if stats is not None:
        stats.listed += 1
        stats.rows += len(rows)
    return _remember(key, rows)


def _remember(key: tuple, rows: list[Row]) -> list[Row]:
    """Keep a bag model's rows for the process (bounded, least recently used first out), whoever listed them."""
    _SOLVED[key] = rows
    if len(_SOLVED) > SOLVED_LIMIT:
        _SOLVED.popitem(last=False)
    return rows


def _model_key(defs: Sequence[FieldDef], constraints: Sequence[Constraint], implied: Sequence[Constraint],
               narrowed: tuple) -> tuple:
    return (tuple(defs), tuple((c.when, c.require) for c in constraints),
            tuple((c.when, c.require) for c in implied), narrowed)

