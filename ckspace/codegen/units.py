"""How a selection is cut into compile units by default (emit, and the Python API's Space.emit).

The number of units: enough for units of at most DEFAULT_CHUNK_SIZE kernels (memory grows with them) and at most
the expected cost of as many average kernels of the selection, but at least MIN_UNITS (when there are as many
kernels), so that `build -j N` has work for up to MIN_UNITS jobs. Where the cuts go: the selection stays in the
order emit writes it in (neighbouring kernels share template instantiations) and is cut into consecutive runs whose
largest expected compile cost (templates/compile-cost.toml) is as small as it can be. Kernel costs differ by a
factor of three or more (a mem-pipeline bwd_weight kernel with a 256x256 tile against a small compv1 forward one),
so units of equal counts would leave one job compiling long after the others are done.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Mapping, Sequence, TypeVar

DEFAULT_CHUNK_SIZE = 25  # = ckspace.codegen.emit.DEFAULT_CHUNK_SIZE (tests/test_emit.py checks)
MIN_UNITS = 16  # the default chunk size leaves at least this many units (when there are as many kernels): -j 16
VARIANT_ORDER = {"forward": 0, "forward_depthwise": 1, "bwd_data": 2, "bwd_weight": 3}  # emit writes kernels so

K = TypeVar("K", bound=Mapping[str, object])  # a kernel's fields: emit's template contexts keep their type


def emit_order(configs: Sequence[K]) -> list[K]:
    """The kernels in the order emit writes them: directions kept together (VARIANT_ORDER), then by name."""
    return sorted(configs, key=lambda c: (VARIANT_ORDER.get(str(c["variant"]), len(VARIANT_ORDER)), str(c["name"])))


def code_fields(fields: Mapping[str, object]) -> tuple[str, ...]:
    """The fields (of constraints' FieldDefs) that change a kernel's C++: all but those marked `code = false`."""
    return tuple(name for name, f in fields.items() if getattr(f, "code", True))


def cpp_groups(configs: Sequence[Mapping[str, object]], fields: Mapping[str, object]) -> dict[str, list[str]]:
    """The kernels grouped by their C++, in the order given: the first of each group (its lead) -> the names that
    share its C++, the lead first. Kernels differ in C++ when they differ in a field that changes it (code_fields);
    the pads do not (CK's launcher overrides them)."""
    keep = code_fields(fields)
    lead: dict[tuple, str] = {}
    groups: dict[str, list[str]] = {}
    for c in configs:
        name = str(c["name"])
        first = lead.setdefault(tuple(str(c.get(f)) for f in keep), name)
        groups.setdefault(first, []).append(name)
    return groups


def with_sharers(units: Sequence[Sequence[str]], groups: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Units of lead kernels, each lead followed by the kernels that share its C++ (compiled once, with it)."""
    return [[n for lead in unit for n in groups.get(lead, (lead,))] for unit in units]


def unit_count(kernels: int) -> int:
    return min(kernels, max(-(-kernels // DEFAULT_CHUNK_SIZE), MIN_UNITS))


def kernel_costs(configs: Sequence[Mapping[str, object]], arch: str) -> list[float]:
    """Expected seconds of one core per kernel (templates/compile-cost.toml)."""
    from .compilecost import model

    cost = model()
    return [cost.kernel(c, arch) for c in configs]


def balanced_units(configs: Sequence[Mapping[str, object]], arch: str) -> list[list[str]]:
    """The default compile units of `configs` for `arch`: consecutive runs of emit's order, each of at most
    DEFAULT_CHUNK_SIZE kernels and at most the expected cost of as many average kernels, at least unit_count(len)
    of them, cut where the dearest run is cheapest."""
    configs = emit_order(configs)
    names = [str(c["name"]) for c in configs]
    costs = kernel_costs(configs, arch)
    count = unit_count(len(names))
    if costs:
        # A unit also holds at most the cost of DEFAULT_CHUNK_SIZE average kernels: dear kernels share a unit with
        # fewer others. On gfx950's full set that is 648 units instead of 562, and the dearest unit costs 414 s
        # instead of 800 s, for 86 more fixed costs of about 6 s.
        budget = DEFAULT_CHUNK_SIZE * sum(costs) / len(costs)
        count = max(count, _runs([0.0, *accumulate(costs)], budget, DEFAULT_CHUNK_SIZE))
    return [names[a:b] for a, b in cut(costs, count, DEFAULT_CHUNK_SIZE)]


def unit_seconds(configs: Sequence[Mapping[str, object]], arch: str, units: Sequence[Sequence[str]]) -> list[float]:
    """The expected seconds of one core of each unit."""
    from .compilecost import model

    by_name = dict(zip((str(c["name"]) for c in configs), kernel_costs(configs, arch)))
    fixed = model().unit
    return [fixed + sum(by_name[n] for n in unit) for unit in units]


def cut(costs: Sequence[float], count: int, cap: int) -> list[tuple[int, int]]:
    """`count` consecutive runs (start, end) covering costs, each of 1..cap items, with the least possible largest
    sum (the fixed cost per run is the same for every run, so it does not move the cuts). Needs
    len(costs) / cap <= count <= len(costs)."""
    n = len(costs)
    if count <= 0 or n == 0:
        return []
    prefix = [0.0, *accumulate(costs)]
    lo = max(max(costs), prefix[-1] / count)  # no run can cost less than its dearest kernel or the mean
    hi = prefix[-1]
    if _runs(prefix, hi, cap) > count:  # only the cap binds: any limit will do
        hi = float("inf")
    else:
        for _ in range(100):  # bisect the limit on a run's cost; the greedy cut tells whether it fits in `count`
            if hi - lo <= 1e-9 * max(hi, 1.0):
                break
            mid = (lo + hi) / 2
            if _runs(prefix, mid, cap) <= count:
                hi = mid
            else:
                lo = mid
    runs = _greedy(prefix, hi, cap)
    while len(runs) < count:  # fewer runs than asked: split the dearest that can be split, where it halves best
        i = max((k for k, (a, b) in enumerate(runs) if b - a > 1),
                key=lambda k: (prefix[runs[k][1]] - prefix[runs[k][0]], -k))
        a, b = runs[i]
        m = min(range(a + 1, b), key=lambda j: max(prefix[j] - prefix[a], prefix[b] - prefix[j]))
        runs[i:i + 1] = [(a, m), (m, b)]
    return runs


def _next_end(prefix: list[float], start: int, limit: float, cap: int) -> int:
    last = min(start + cap, len(prefix) - 1)  # a run ends at most `cap` kernels on, and at the selection's end
    end = bisect_right(prefix, prefix[start] + limit * (1 + 1e-12), start + 1, last + 1) - 1
    return max(end, start + 1)  # a run holds at least one kernel, whatever it costs


def _runs(prefix: list[float], limit: float, cap: int) -> int:
    count, start, n = 0, 0, len(prefix) - 1
    while start < n:
        start = _next_end(prefix, start, limit, cap)
        count += 1
    return count


def _greedy(prefix: list[float], limit: float, cap: int) -> list[tuple[int, int]]:
    runs, start, n = [], 0, len(prefix) - 1
    while start < n:
        end = _next_end(prefix, start, limit, cap)
        runs.append((start, end))
        start = end
    return runs
