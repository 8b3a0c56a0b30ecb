"""CK's own subset procedures over its `full` list: `full-tests` (spec 5) and `tiny` (spec 6).

Both are deterministic picks over CK's generation order (no seed): every fifth config per category plus a
(pipeline, scheduler) fix-up, then the first config of each (category, ndim) group. They are CK's sets, reproduced
as CK computes them; ckspace's own coverage-driven `tests` and `tiny` selections live in selection.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import UsageError
from .ckorder import DEPTHWISE, ck_sorted

if TYPE_CHECKING:  # pragma: no cover
    from ..solve.kernels import KernelSpace

Config = Mapping[str, Any]
PROCEDURES = ("ck-full-tests", "ck-tiny")
EVERY = 5  # full-tests keeps ranks 4, 9, 14, ... of each category
TINY_MIN = 10  # tiny fills round-robin up to this many when there are fewer groups


def category(config: Config) -> str:
    """The category of spec 5, step 1: the first rule that matches, with the config's dtype (fp16 without one).

    Variant and ndim are not part of it, so `regular` mixes forward, bwd_data and bwd_weight, and a merged-groups
    two-stage config is `merged_groups`."""
    dt = config.get("dtype") or "fp16"
    if config["variant"] == DEPTHWISE:
        kind = "depthwise"
    elif config["streamk"] != "none":
        kind = "streamk"
    elif config["split_image"]:
        kind = "split_image"
    elif int(config["num_groups_to_merge"]) > 1:
        kind = "merged_groups"
    elif config["two_stage"]:
        kind = "two_stage"
    elif config["explicit_gemm"]:
        kind = "explicit_gemm"
    else:
        kind = "regular"
    return f"{kind}:{dt}"


def ck_full_tests(configs: Sequence[Config]) -> list[Any]:
    """CK's `full-tests` (spec 5) of `configs`, which must be `full` in CK's generation order.

    Per category, the members of rank 4, 9, 14, ... (the first one if it has fewer than five); then, per (variant,
    dtype) of the GEMM configs, the first config of each (pipeline, scheduler) pair that the pick missed. The result
    keeps the input order."""
    members: dict[str, list[int]] = {}
    for index, config in enumerate(configs):
        members.setdefault(category(config), []).append(index)
    picked: set[int] = set()
    for indices in members.values():
        if len(indices) < EVERY:
            picked.add(indices[0])
        else:
            picked.update(indices[EVERY - 1::EVERY])

    def pair(config: Config) -> tuple[Any, ...]:
        return (config["variant"], config.get("dtype") or "fp16", config["pipeline"], config["scheduler"])

    gemm = [i for i, c in enumerate(configs) if c["variant"] != DEPTHWISE]
    covered = {pair(configs[i]) for i in gemm if i in picked}
    for index in gemm:
        if pair(configs[index]) not in covered:
            covered.add(pair(configs[index]))
            picked.add(index)
    return [configs[i] for i in sorted(picked)]


def ck_tiny(full_tests: Sequence[Config]) -> list[Any]:
    """CK's `tiny` (spec 6) of a `full-tests` list: the first config of each (category, ndim) group, groups in order
    of first appearance; with fewer than ten groups, the 2nd of each group, then the 3rd, ... up to ten."""
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
    configs = _ck_ordered(space)
    full_tests = ck_full_tests(configs)
    return full_tests if which == "ck-full-tests" else ck_tiny(full_tests)


Members = tuple[frozenset[str], "frozenset[str] | None"]


def members_of(space: "KernelSpace", variant: str | None, dtype: str) -> Members:
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
    group). `explain` of one forward kernel reads a tenth of full this way."""
    if space.catalog.name != "full":
        raise UsageError(f"CK's procedures are subsets of the full catalog, not of {space.catalog.name}")
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


def _members(space: "KernelSpace", dtype: str, variants: list[str] | None, whole: bool) -> Members | None:
    configs = ck_sorted(list(space.enumerate(variant=variants, dtype=dtype)), space.data, space.arch)
    if not whole:
        sizes: dict[str, int] = {}
        for config in configs:
            k = category(config)
            sizes[k] = sizes.get(k, 0) + 1
        if any(n < EVERY for n in sizes.values()):
            return None
    full_tests = ck_full_tests(configs)
    groups = {(category(c), int(c["ndim"])) for c in full_tests}
    tiny = frozenset(str(c["name"]) for c in ck_tiny(full_tests)) if len(groups) >= TINY_MIN else None
    return frozenset(str(c["name"]) for c in full_tests), tiny


_ORDERED: list[tuple[object, list[dict[str, Any]]]] = []  # the last space's full set in CK's order


def _ck_ordered(space: "KernelSpace") -> list[dict[str, Any]]:
    """The space's full set in CK's generation order, once per space: full-tests and tiny (and explain, which asks
    for both) start from the same list."""
    for known, configs in _ORDERED:
        if known is space:
            return configs
    configs = ck_sorted(list(space.enumerate()), space.data, space.arch)
    _ORDERED[:] = [(space, configs)]
    return configs


def known_full(space: "KernelSpace") -> list[dict[str, Any]] | None:
    """The space's full set if a procedure listed it in this process (in CK's order), else None."""
    return next((configs for known, configs in _ORDERED if known is space), None)
