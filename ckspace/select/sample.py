"""Uniform random samples of a kernel set, reproducible by seed, optionally stratified.

The population is the set sorted by kernel name, so a sample depends on the set and the seed only, never on the
order in which the solver produced the kernels. Without stratification every n-subset is equally likely
(`random.Random.sample`). With stratification the n draws are shared equally between the strata (the groups of
kernels that agree on the stratify dimensions): a stratum smaller than its share gives all of its kernels and the
rest is shared among the others; when n does not divide evenly, the strata that get one more are drawn at random.
Inside a stratum the draw is uniform, with a generator seeded by the seed and the stratum, so adding a stratum does
not change the draws of the others. Python's `random` is seeded with a string, which is stable across runs,
platforms and PYTHONHASHSEED.
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

from .coverage import natural_key
from ..errors import UsageError
from .objectives import DIMENSIONS, Dimension


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


def sample(configs: Sequence[Mapping[str, object]], n: int, seed: int | str,
           stratify: Sequence[Dimension] = ()) -> list[Mapping[str, object]]:
    """n kernels drawn uniformly (per stratum with `stratify`), returned sorted by name."""
    if n < 0:
        raise UsageError(f"-n must be >= 0, got {n}")
    population = sorted(configs, key=lambda c: str(c["name"]))
    if not stratify:
        rng = random.Random(f"ckspace-sample:{seed}")
        picked = rng.sample(range(len(population)), min(n, len(population)))
        return [population[i] for i in sorted(picked)]
    groups: dict[tuple[str, ...], list[Mapping[str, object]]] = {}
    for cfg in population:
        key = tuple((d.value(cfg) or "-") for d in stratify)
        groups.setdefault(key, []).append(cfg)
    keys = sorted(groups, key=lambda k: tuple(natural_key(v) for v in k))
    alloc = shares([len(groups[k]) for k in keys], n, random.Random(f"ckspace-sample:{seed}:shares"))
    out: list[Mapping[str, object]] = []
    for key, k in zip(keys, alloc):
        members = groups[key]
        rng = random.Random(f"ckspace-sample:{seed}:{'/'.join(key)}")
        out += [members[i] for i in rng.sample(range(len(members)), k)]
    return sorted(out, key=lambda c: str(c["name"]))
