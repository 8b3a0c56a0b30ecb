"""CK's own subset procedures over its `full` list: `full-tests` and `tiny` (CK's grouped_config_rules_full_tests.py
_select_test_configs and _select_tiny_configs).

Both are deterministic picks over CK's generation order (no seed): every fifth config per category plus a
(pipeline, scheduler) fix-up, then the first config of each (category, ndim) group. They are CK's sets, reproduced
as CK computes them; ckspace's own coverage-driven `tests` and `tiny` selections live in selection.py.
"""

from __future__ import annotations

import itertools
import operator
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

from ..memo import memo
from ..errors import UsageError
from .ckorder import DEPTHWISE, CkOrder

if TYPE_CHECKING:  # pragma: no cover
    from ..solve.kernels import KernelSpace

Config = Mapping[str, Any]
PROCEDURES = ("ck-full-tests", "ck-tiny")
EVERY = 5  # full-tests keeps ranks 4, 9, 14, ... of each category
TINY_MIN = 10  # tiny fills round-robin up to this many when there are fewer groups


def category(config: Config) -> str:
    """The category of CK's _classify_config: the first rule that matches, with the config's dtype (fp16 without one).

    Variant and ndim are not part of it, so `regular` mixes forward, bwd_data and bwd_weight, and a merged-groups
    two-stage config is `merged_groups`."""
    if config["variant"] == DEPTHWISE:
        return f"depthwise:{config.get('dtype') or 'fp16'}"
    return _gemm_category(config.get("dtype"), *(config[f] for f in _CATEGORY_FIELDS))


_CATEGORY_FIELDS = ("streamk", "split_image", "num_groups_to_merge", "two_stage", "explicit_gemm")


def _gemm_category(dtype: Any, streamk: Any, split_image: Any, groups: Any, two_stage: Any, explicit_gemm: Any) -> str:
    """category() of a GEMM config from its values of _CATEGORY_FIELDS."""
    if streamk != "none":
        kind = "streamk"
    elif split_image:
        kind = "split_image"
    elif int(groups) > 1:
        kind = "merged_groups"
    elif two_stage:
        kind = "two_stage"
    elif explicit_gemm:
        kind = "explicit_gemm"
    else:
        kind = "regular"
    return f"{kind}:{dtype or 'fp16'}"


# What full-tests reads of a config: its category and, for a GEMM config, its (variant, dtype, pipeline, scheduler)
# pair (None for depthwise, which the fix-up skips).
Facts = tuple[str, "tuple[Any, ...] | None"]


def _facts(config: Config) -> Facts:
    if config["variant"] == DEPTHWISE:
        return category(config), None
    return category(config), (config["variant"], config.get("dtype") or "fp16", config["pipeline"], config["scheduler"])


def ck_full_tests(configs: Sequence[Config]) -> list[Any]:
    """CK's `full-tests` (_select_test_configs) of `configs`, which must be `full` in CK's generation order.

    Per category, the members of rank 4, 9, 14, ... (the first one if it has fewer than five); then, per (variant,
    dtype) of the GEMM configs, the first config of each (pipeline, scheduler) pair that the pick missed. The result
    keeps the input order."""
    return [configs[i] for i in _full_tests_picks([_facts(c) for c in configs])]


def _full_tests_picks(facts: Sequence[Facts]) -> list[int]:
    """The indices ck_full_tests keeps, ascending, from each config's facts in CK's generation order."""
    picked = _ranked(facts)
    covered = _covered(facts, picked)
    for index, (_, pair) in enumerate(facts):
        if pair is not None and pair not in covered:
            covered.add(pair)
            picked.add(index)
    return sorted(picked)


def _ranked(facts: Sequence[Facts]) -> set[int]:
    """The every-fifth pick: per category, the indices of rank 4, 9, 14, ... (the first if it has fewer than five)."""
    members: dict[str, list[int]] = {}
    for index, (kind, _) in enumerate(facts):
        members.setdefault(kind, []).append(index)
    picked: set[int] = set()
    for indices in members.values():
        if len(indices) < EVERY:
            picked.add(indices[0])
        else:
            picked.update(indices[EVERY - 1::EVERY])
    return picked


def _covered(facts: Sequence[Facts], picked: set[int]) -> set[tuple[Any, ...]]:
    """The (variant, dtype, pipeline, scheduler) pairs of the picked GEMM configs."""
    return {pair for i, (_, pair) in enumerate(facts) if pair is not None and i in picked}


def ck_tiny(full_tests: Sequence[Config]) -> list[Any]:
    """CK's `tiny` (_select_tiny_configs) of a `full-tests` list: the first config of each (category, ndim) group,
    groups in order of first appearance; with fewer than ten groups, the 2nd of each group, then the 3rd, ... up to
    ten."""
    groups: dict[tuple[str, int], list[Config]] = {}
    for config in full_tests:
        groups.setdefault((category(config), int(config["ndim"])), []).append(config)
    result = [members[0] for members in groups.values()]
    depth = 1
    while len(result) < TINY_MIN and any(len(members) > depth for members in groups.values()):
        result += [members[depth] for members in groups.values() if len(members) > depth][: TINY_MIN - len(result)]
        depth += 1
    return result


def ck_subset(space: "KernelSpace", which: str) -> list[dict[str, Any]]:
    """CK's `full-tests` ("ck-full-tests") or `tiny` ("ck-tiny") of a space over the `full` catalog, computed over
    the space's `full` in CK's generation order; the configs come back in that order."""
    if which not in PROCEDURES:
        raise UsageError(f"unknown CK procedure {which!r}; choices: {', '.join(PROCEDURES)}")
    if space.catalog.name != "full":
        raise UsageError(f"CK's {which} is a subset of the full catalog, not of {space.catalog.name}")
    full_tests = _ck_full_tests_of(space)
    return list(full_tests) if which == "ck-full-tests" else ck_tiny(full_tests)


Members = tuple[frozenset[str], "frozenset[str] | None"]


def members_of(space: "KernelSpace", variant: str | None, dtype: str, ndim: int | None = None) -> Members:
    """The names of CK's full-tests and of CK's tiny among the kernels of (`variant`, `dtype`) (None: every
    variant), computed from as little of `full` as decides full-tests; the tiny part is None when that little does
    not decide tiny (ask again with `variant` None, the whole dtype; if that does not either, tiny's fill-up needs
    every dtype: ck_subset).

    Both procedures decide within one dtype: a category and a (variant, dtype, pipeline, scheduler) pair name it,
    and restricting CK's order to a subset keeps the subset's order. Within the dtype, a kernel's every-fifth rank
    reads only the kernels before it, and the pair fix-up only its own variant's kernels; so the dtype's kernels
    up to the end of the variant's place in CK's order (its GEMM loops of every ndim; the depthwise loops sit after
    `depthwise_after`'s) decide them. Two things read further, and fall back to the whole dtype: a category with
    fewer than five kernels there (CK takes its first kernel only when the whole category is that small); and tiny
    is left undecided while those kernels' (category, ndim) groups are fewer than ten (CK's fill-up counts every
    group). `explain` of one forward kernel reads a tenth of full this way.

    With `ndim`, the variant's kernels of the ndims after it are left out first (a twentieth of full for a 2D
    forward kernel): the ranks there are the same, and the pair fix-up is decided where every pair of the variant
    that occurs there is already picked by rank (a later ndim's pick could cover a pair that is not); where not,
    as without `ndim`."""
    if space.catalog.name != "full":
        raise UsageError(f"CK's procedures are subsets of the full catalog, not of {space.catalog.name}")
    if variant is not None and ndim is not None:
        got = _members_through_ndim(space, variant, ndim, dtype)
        if got is not None:
            return got
    prefix = _variants_through(space, variant) if variant is not None else None
    if prefix is not None:
        got = _members(space, dtype, prefix, whole=False)
        if got is not None:
            return got
    got = _members(space, dtype, None, whole=True)
    assert got is not None
    return got


def _variants_through(space: "KernelSpace", variant: str) -> list[str] | None:
    """The variants whose kernels come before the end of `variant`'s place in CK's order; None: every variant."""
    order = space.data.ck_raw.get("order", {})
    variants, after = list(order.get("variants", ())), order.get("depthwise_after")
    if after not in variants or (variant != DEPTHWISE and variant not in variants):
        return None  # CkOrder reports such data when the whole dtype is sorted
    end = variants.index(after) if variant == DEPTHWISE else variants.index(variant)
    out = variants[:end + 1]
    if variant == DEPTHWISE or variants.index(after) < end:
        out.append(DEPTHWISE)
    return None if len(out) == len(variants) + 1 else out


def _members_through_ndim(space: "KernelSpace", variant: str, ndim: int, dtype: str) -> Members | None:
    """members_of from the dtype's kernels up to the end of (`variant`, `ndim`) in CK's order; None where they do
    not decide full-tests."""
    order = space.data.ck_raw.get("order", {})
    variants, after = list(order.get("variants", ())), order.get("depthwise_after")
    ndims = [int(n) for n in order.get("ndims", ())]
    if variant not in variants or after not in variants or int(ndim) not in ndims:
        return None  # depthwise (its loops span every ndim), or data CkOrder reports when the dtype is sorted
    through = ndims[:ndims.index(int(ndim)) + 1]
    if through == ndims:
        return None  # the whole variant: members_of's next step
    earlier = variants[:variants.index(variant)]
    if variants.index(after) < variants.index(variant):
        earlier.append(DEPTHWISE)
    ordered = _in_ck_order(space, earlier, dtype, also=([variant], through)) if earlier else \
        _in_ck_order(space, [variant], dtype, ndims=through)
    facts = [f for _, _, f in ordered]
    if _small_category(facts):
        return None
    covered = _covered(facts, _ranked(facts))
    if any(pair is not None and pair[0] == variant and pair not in covered for _, pair in facts):
        return None  # a pair of the variant not picked by rank here: a later ndim's pick may cover it
    return _decided(ordered)


def _members(space: "KernelSpace", dtype: str, variants: list[str] | None, whole: bool) -> Members | None:
    ordered = _in_ck_order(space, variants, dtype)
    if not whole and _small_category([f for _, _, f in ordered]):
        return None
    return _decided(ordered)


def _small_category(facts: Sequence[Facts]) -> bool:
    """Whether a category has fewer than five kernels here (CK picks the first only where the whole one is that
    small)."""
    sizes: dict[str, int] = {}
    for kind, _ in facts:
        sizes[kind] = sizes.get(kind, 0) + 1
    return any(n < EVERY for n in sizes.values())


def _decided(ordered: "Ordered") -> Members:
    """full-tests of kernels in CK's order that decide it, and tiny where their groups are ten or more."""
    full_tests = _picked_configs(ordered)
    groups = {(category(c), int(c["ndim"])) for c in full_tests}
    tiny = frozenset(str(c["name"]) for c in ck_tiny(full_tests)) if len(groups) >= TINY_MIN else None
    return frozenset(str(c["name"]) for c in full_tests), tiny


# A kernel as a procedure reads it: its layout (the column names), its row of values and its full-tests facts.
Ordered = list[tuple[tuple[str, ...], tuple, Facts]]
# the last space's full-tests, in CK's order
_FULL_TESTS: list[tuple[object, list[dict[str, Any]]]] = memo("select.ckprocedures.full_tests", [])


def _ck_full_tests_of(space: "KernelSpace") -> list[dict[str, Any]]:
    """The space's full-tests, once per space: full-tests and tiny (and explain, which asks for both) start from
    the same list."""
    for known, configs in _FULL_TESTS:
        if known is space:
            return configs
    configs = _picked_configs(_in_ck_order(space, None, None))
    _FULL_TESTS[:] = [(space, configs)]
    return configs


def _picked_configs(ordered: Ordered) -> list[dict[str, Any]]:
    """ck_full_tests of kernels in CK's order, as configs: a dict only for each kernel it keeps."""
    picks = _full_tests_picks([facts for _, _, facts in ordered])
    return [dict(zip(ordered[i][0], ordered[i][1])) for i in picks]


def _in_ck_order(space: "KernelSpace", variants: list[str] | None, dtype: str | None, ndims: list[int] | None = None,
                 also: tuple[list[str], list[int]] | None = None) -> Ordered:
    """The kernels of the space's `full` (of `variants`, `ndims` and `dtype`; None: all; `also`: and those of these
    variants and ndims of the dtype) in CK's generation order, as rows: the sort keys and the facts are read by
    column index, with no dict per kernel (a kernel the fast lookups do not place is keyed as a dict, which
    reports one that has no place)."""
    order = CkOrder(space.data, space.arch)
    keyed: list[tuple[Any, tuple[str, ...], tuple, Facts]] = []
    # A part of full (explain of one name) is not kept in the cache: the members it decides are (sets.py).
    whole = variants is None and dtype is None and ndims is None and also is None
    listings = [space.rows(variant=variants, ndim=ndims, dtype=dtype, keep=whole)]
    if also is not None:
        listings.append(space.rows(variant=also[0], ndim=also[1], dtype=dtype, keep=False))
    for keys, rows in _runs(itertools.chain(*listings)):
        keyed += zip(order.row_keys(keys, rows), itertools.repeat(keys), rows, _row_facts(keys, rows))
    keyed.sort(key=_FIRST)  # stable: kernels of equal keys keep the listing's order, as ck_sorted does
    return [entry[1:] for entry in keyed]


def _runs(rows: Iterable[tuple[tuple[str, ...], tuple]]) -> Iterator[tuple[tuple[str, ...], list[tuple]]]:
    """(keys, row) pairs as runs of one layout, in order (a stratum's rows share one keys tuple)."""
    for keys, run in itertools.groupby(rows, key=_FIRST):
        yield keys, [row for _, row in run]


def _row_facts(keys: tuple[str, ...], rows: list[tuple]) -> list[Facts]:
    """_facts of each row of one layout, read by column index (a layout without a column it reads: as dicts)."""
    at = {k: i for i, k in enumerate(keys)}
    if not all(k in at for k in ("variant", "pipeline", "scheduler", *_CATEGORY_FIELDS)):
        return [_facts(dict(zip(keys, row))) for row in rows]
    variant, dtype = at["variant"], at.get("dtype")
    gemm_fields = operator.itemgetter(*(at[k] for k in _CATEGORY_FIELDS))
    pipeline, scheduler = at["pipeline"], at["scheduler"]
    out: list[Facts] = []
    for row in rows:
        dt = row[dtype] if dtype is not None else None
        if row[variant] == DEPTHWISE:
            out.append((f"depthwise:{dt or 'fp16'}", None))
        else:
            out.append((_gemm_category(dt, *gemm_fields(row)),
                        (row[variant], dt or "fp16", row[pipeline], row[scheduler])))
    return out


_FIRST = operator.itemgetter(0)
