"""Uniform random samples of a kernel set, reproducible by seed, optionally stratified.

The population is the set sorted by kernel name, so a sample depends on the set and the seed only, never on the
order in which the solver produced the kernels. Without stratification every n-subset is equally likely
(`random.Random.sample`). With stratification the n draws are shared equally between the strata (the groups of
kernels that agree on the stratify dimensions): a stratum smaller than its share gives all of its kernels and the
rest is shared among the others; when n does not divide evenly, the strata that get one more are drawn at random.
Inside a stratum the draw is uniform, with a generator seeded by the seed and the stratum, so adding a stratum does
not change the draws of the others. Python's `random` is seeded with a string, which is stable across runs,
platforms and PYTHONHASHSEED.

A space without a catalog's curation (`--rules -ck-curation`: gfx950's has 14,697,913,428,048 kernels) is never
listed (`sample_space`): its kernels are numbered by the count's variable elimination (ckspace.solve.sampling),
n distinct ranks are drawn with the same `random.Random.sample` over range(count) (per stratum with
stratification, the same shares), and each rank is turned into its kernel. The draw is exactly uniform over the
n-subsets (of each stratum), without replacement and without rejection; a space of at most n kernels is returned
whole. The numbering is the elimination's, not the name order, so the kernels differ from those a listing of the
same space would give for the same seed (both uniform).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Mapping, Sequence, TypeVar

from .coverage import natural_key
from ..errors import UsageError
from .objectives import DIMENSIONS, Dimension

if TYPE_CHECKING:  # pragma: no cover
    from ..solve.kernels import KernelSpace

# A kernel config: sample() gives back the very mappings it was given (a dict stays a dict).
Config = TypeVar("Config", bound=Mapping[str, object])


def stratify_dimensions(spec: str | Sequence[str] | None, field_names: Sequence[str]) -> list[Dimension]:
    if not spec:
        return []
    names = [s.strip() for part in ([spec] if isinstance(spec, str) else spec) for s in part.split(",") if s.strip()]
    dims = []
    for name in names:
        if name in DIMENSIONS:
            dims.append(DIMENSIONS[name])
        elif name in field_names:
            dims.append(Dimension(name, (name,)))
        else:
            raise UsageError(f"unknown --stratify dimension {name!r}; choices: {', '.join(DIMENSIONS)} or a field name")
    return dims


def shares(sizes: Sequence[int], n: int, rng: random.Random) -> list[int]:
    """n split as equally as possible among groups of the given sizes, never more than a group has."""
    alloc = [0] * len(sizes)
    open_ = [i for i, s in enumerate(sizes) if s > 0]
    left = min(n, sum(sizes))
    while left > 0 and open_:
        each, extra = divmod(left, len(open_))
        lucky = set(rng.sample(open_, extra)) if extra else set()
        nxt = []
        for i in open_:
            want = each + (1 if i in lucky else 0)
            give = min(want, sizes[i] - alloc[i])
            alloc[i] += give
            left -= give
            if alloc[i] < sizes[i]:
                nxt.append(i)
        open_ = nxt
    return alloc


def sample(configs: Sequence[Config], n: int, seed: int | str,
           stratify: Sequence[Dimension] = ()) -> list[Config]:
    """n kernels drawn uniformly (per stratum with `stratify`), returned sorted by name."""
    if n < 0:
        raise UsageError(f"-n must be >= 0, got {n}")
    population = sorted(configs, key=lambda c: str(c["name"]))
    if not stratify:
        rng = random.Random(f"ckspace-sample:{seed}")
        picked = rng.sample(range(len(population)), min(n, len(population)))
        return [population[i] for i in sorted(picked)]
    groups: dict[tuple[str, ...], list[Config]] = {}
    for cfg in population:
        key = tuple((d.value(cfg) or "-") for d in stratify)
        groups.setdefault(key, []).append(cfg)
    keys = sorted(groups, key=lambda k: tuple(natural_key(v) for v in k))
    alloc = shares([len(groups[k]) for k in keys], n, random.Random(f"ckspace-sample:{seed}:shares"))
    out: list[Config] = []
    for key, k in zip(keys, alloc):
        members = groups[key]
        rng = random.Random(f"ckspace-sample:{seed}:{'/'.join(key)}")
        out += [members[i] for i in rng.sample(range(len(members)), k)]
    return sorted(out, key=lambda c: str(c["name"]))


def sample_space(space: "KernelSpace", n: int, seed: int | str, stratify: Sequence[Dimension] = (), *,
                 variant=None, ndim=None, dtype=None, where: str | None = None) -> tuple[list[dict[str, object]], int]:
    """n kernels drawn uniformly from the space (with enumerate's filters) without listing it, sorted by name, and
    the number of kernels of the space. Stratified as `sample` is: equal shares per group of the stratify
    dimensions (the same generators, seeded by the seed and the group), uniform inside each group."""
    from ..solve.sampling import SpaceSampler

    if n < 0:
        raise UsageError(f"-n must be >= 0, got {n}")
    keep = {f for d in stratify for f in d.fields}
    sampler = SpaceSampler(space, variant=variant, ndim=ndim, dtype=dtype, where=where, keep=keep)
    if not stratify:
        rng = random.Random(f"ckspace-sample:{seed}")
        ranks = _distinct(rng, sampler.total, n)
        picks = sampler.locate(list(range(len(sampler.parts))), ranks)
    else:
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, part in enumerate(sampler.parts):
            groups.setdefault(_group(space, sampler, part, stratify), []).append(i)
        keys = sorted(groups, key=lambda k: tuple(natural_key(v) for v in k))
        sizes = [sum(sampler.parts[i].count for i in groups[k]) for k in keys]
        alloc = shares(sizes, n, random.Random(f"ckspace-sample:{seed}:shares"))
        picks = []
        for key, size, k in zip(keys, sizes, alloc):
            rng = random.Random(f"ckspace-sample:{seed}:{'/'.join(key)}")
            picks += sampler.locate(groups[key], _distinct(rng, size, k))
    configs = sampler.configs(picks)
    if stratify:  # a dimension reads only its fields (kept, so fixed by the part): check it did
        for (p, _), cfg in zip(picks, configs):
            assert _group(space, sampler, sampler.parts[p], stratify) == tuple((d.value(cfg) or "-") for d in stratify)
    return sorted(configs, key=lambda c: str(c["name"])), sampler.total


def _distinct(rng: random.Random, total: int, k: int) -> list[int]:
    """min(k, total) distinct integers of range(total), uniform over the subsets: random.Random.sample, or for a
    range too long for len() the same set-based selection (a uniform draw, redrawn when already taken)."""
    k = min(k, total)
    if total < 2**62:
        return rng.sample(range(total), k)
    taken: set[int] = set()
    out: list[int] = []
    while len(out) < k:
        r = rng.randrange(total)
        if r not in taken:
            taken.add(r)
            out.append(r)
    return out


def _group(space: "KernelSpace", sampler, part, stratify: Sequence[Dimension]) -> tuple[str, ...]:
    """The stratify group of a part: its dimensions' values, read from a config of the part's stratum whose kept
    fields are the part's (the other fields of its kernel family hold placeholders that no dimension reads)."""
    st = sampler.strata[part.stratum][0]
    cfg = {**{f.name: f.values[0] for f in space.model.fields(st.kind)}, **part.config}
    return tuple((d.value(cfg) or "-") for d in stratify)


def sample_set(space: "KernelSpace", set_name: str, n: int, seed: int | str, stratify: Sequence[Dimension] = (), *,
               objective=None, stable_from=None, variant=None, ndim=None, dtype=None,
               where: str | None = None) -> tuple[list[dict[str, object]], int]:
    """n kernels of a set drawn uniformly (per group of the stratify dimensions), sorted by name, and the size of
    the set: a catalog without curation is sampled without listing it (sample_space), any other set is listed and
    sampled (sample)."""
    from .sets import check_set, is_selection, may_be_open, selected_configs

    check_set(set_name, space.data.catalogs)
    if not is_selection(set_name) and objective is None and stable_from is None:
        catalog = space.over(set_name)
        if may_be_open(catalog):
            return sample_space(catalog, n, seed, stratify, variant=variant, ndim=ndim, dtype=dtype, where=where)
    configs, _ = selected_configs(space, set_name, objective_path=objective, stable_from=stable_from,
                                  variant=variant, ndim=ndim, dtype=dtype, where=where)
    return sample(configs, n, seed, stratify), len(configs)
