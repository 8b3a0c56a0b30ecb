"""`ckspace sample`: uniform over the set (not over solver order), reproducible by seed, equal shares per stratum."""

from __future__ import annotations

import re

from collections import Counter

import pytest

import selection_oracle as O
from ckspace.cli import main
from ckspace.select.objectives import DIMENSIONS
from ckspace.select.sample import sample, shares

STRATA = [DIMENSIONS["variant"], DIMENSIONS["ndim"], DIMENSIONS["dtype"]]

# Upper 0.1% points of the chi-square distribution (a correct sampler fails one test in a thousand runs).
CHI2_999 = {9: 27.877, 19: 43.820, 21: 46.797}


def chi2(observed: list[int]) -> float:
    expected = sum(observed) / len(observed)
    return sum((o - expected) ** 2 / expected for o in observed)


def run(capsys, *argv: str) -> list[str]:
    assert main(list(argv)) == 0
    return capsys.readouterr().out.split()


def test_sample_is_reproducible_by_seed_and_a_subset_of_the_set(capsys) -> None:
    a = run(capsys, "sample", "-n", "20", "--seed", "7", "--arch", "gfx950")
    b = run(capsys, "sample", "-n", "20", "--seed", "7", "--arch", "gfx950")
    c = run(capsys, "sample", "-n", "20", "--seed", "8", "--arch", "gfx950")
    assert a == b and a != c and len(a) == len(set(a)) == 20 and a == sorted(a)
    assert set(a) <= {k["name"] for k in O.full()}
    t = run(capsys, "sample", "-n", "15", "--seed", "7", "--arch", "gfx950", "--set", "tests")
    assert len(t) == 15 and set(t) <= set(O.selected("tests").names)
    everything = run(capsys, "sample", "-n", "1000", "--seed", "1", "--arch", "gfx950", "--set", "tiny")
    assert everything == O.selected("tiny").names


def test_sample_does_not_depend_on_the_order_it_is_given() -> None:
    full = O.full()
    assert [k["name"] for k in sample(full, 30, 5)] == [k["name"] for k in sample(list(reversed(full)), 30, 5)]


def test_stratified_sample_gives_equal_shares(capsys) -> None:
    names = run(capsys, "sample", "-n", "42", "--seed", "3", "--arch", "gfx950", "--stratify", "variant,ndim,dtype")
    by_name = {k["name"]: k for k in O.full()}
    per = Counter((by_name[n]["variant"], by_name[n]["ndim"], by_name[n]["dtype"]) for n in names)
    assert len(per) == 21 and set(per.values()) == {2}
    # 50 over 21 strata: 2 or 3 each, the 8 extra draws spread over different strata.
    picked = sample(O.full(), 50, 11, STRATA)
    per = Counter((k["variant"], k["ndim"], k["dtype"]) for k in picked)
    assert len(picked) == 50 and set(per.values()) == {2, 3} and Counter(per.values())[3] == 8
    # A stratum smaller than its share gives all it has; the rest goes to the others.
    tiny = O.selected("tiny").configs
    sizes = Counter(k["variant"] for k in tiny)
    picked = sample(tiny, 12, 1, [DIMENSIONS["variant"]])
    got = Counter(k["variant"] for k in picked)
    assert len(picked) == 12
    for v, n in sizes.items():
        assert got[v] == min(n, 3) or (got[v] > 3 and got[v] <= n)
    assert sum(got.values()) == 12


def test_shares_fill_small_strata_first() -> None:
    import random

    assert shares([1, 10, 10], 9, random.Random(0)) == [1, 4, 4]
    assert sorted(shares([5, 5, 5], 4, random.Random(0))) == [1, 1, 2]
    assert shares([2, 0, 3], 10, random.Random(0)) == [2, 0, 3]


def test_sample_is_uniform_over_positions_not_biased_to_solver_order() -> None:
    """Over many seeds the picks spread evenly over the enumeration (solver) order: chi-square on 20 position bins,
    and the head of the order is not over-represented."""
    full = O.full()
    order = {k["name"]: i for i, k in enumerate(full)}  # the order enumerate (and the solver) produce
    bins = [0] * 20
    head = 0
    draws = 0
    for seed in range(600):
        for k in sample(full, 10, seed):
            pos = order[k["name"]]
            bins[pos * 20 // len(full)] += 1
            head += pos < len(full) // 20
            draws += 1
    assert chi2(bins) < CHI2_999[19], bins
    assert abs(head / draws - 0.05) < 0.015


def test_sample_frequencies_are_equal_per_kernel() -> None:
    """n=1 from the 22-kernel tiny set over 2,200 seeds: each kernel about 100 times (chi-square, 21 df)."""
    tiny = O.selected("tiny").configs
    counts = Counter(sample(tiny, 1, seed)[0]["name"] for seed in range(100 * len(tiny)))
    assert len(counts) == len(tiny)
    assert chi2([counts[k["name"]] for k in tiny]) < CHI2_999[len(tiny) - 1]


def test_stratified_draws_are_uniform_inside_a_stratum() -> None:
    """One kernel per stratum of bwd_data over 1,000 seeds: inside bwd_data 2d fp32 (84 kernels), 10 position bins."""
    population = [k for k in O.full() if k["variant"] == "bwd_data"]
    members = [k["name"] for k in population if (k["ndim"], k["dtype"]) == (2, "fp32")]
    where = {n: i for i, n in enumerate(members)}
    bins = [0] * 10
    for seed in range(1000):
        picked = sample(population, 6, seed, STRATA)
        assert len({(k["ndim"], k["dtype"]) for k in picked}) == 6
        for k in picked:
            if k["name"] in where:
                bins[where[k["name"]] * 10 // len(members)] += 1
    assert sum(bins) == 1000
    assert chi2(bins) < CHI2_999[9], bins


@pytest.mark.parametrize("argv, needle", [
    (["sample", "-n", "-1", "--arch", "gfx950"], "-n must be >= 0"),
    (["sample", "-n", "3", "--arch", "gfx950", "--stratify", "colour"], "unknown --stratify dimension 'colour'"),
    (["sample", "-n", "3", "--arch", "gfx950", "--objective", "tiny"], "apply to --set tests and --set tiny only"),
    (["sample", "-n", "3", "--arch", "gfx950", "--set", "huge"], "unknown set 'huge'"),
])
def test_sample_errors(capsys, argv: list[str], needle: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ckspace: error: ") and re.search(needle, err) and err.count("\n") == 1


def test_sample_formats_and_filters(capsys) -> None:
    import json

    out = run(capsys, "sample", "-n", "4", "--seed", "2", "--arch", "gfx950", "--set", "tests", "--variant", "bwd_data",
              "--format", "jsonl")
    rows = [json.loads(line) for line in out]
    assert len(rows) == 4 and all(r["variant"] == "bwd_data" for r in rows)
    assert {r["name"] for r in rows} <= set(O.selected("tests").names)


@pytest.mark.slow
def test_a_set_too_large_to_hold_is_refused_with_one_line_but_the_open_space_is_sampled(monkeypatch, capsys):
    # A selection (tests, tiny) needs its universe in memory: past the limit it stops with one line and exit 2
    # instead of being killed for memory. The open space itself (~10^13 kernels) is sampled without listing it
    # (ckspace.solve.sampling; tests/test_sampling.py).
    import ckspace.select.selection as selection
    from ckspace.cli import main

    monkeypatch.setattr(selection, "UNIVERSE_LIMIT", 1000)  # sets.bounded reads it when it is called
    assert main(["sample", "--arch", "gfx950", "--rules", "-ck-curation", "--set", "tiny", "-n", "3",
                 "--no-cache"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "more than 1,000" in err[0]
    assert main(["sample", "--arch", "gfx950", "--rules", "-ck-curation", "-n", "3", "--no-cache", "--variant",
                 "forward_depthwise"]) == 0
    assert len(capsys.readouterr().out.split()) == 3
    assert main(["sample", "--arch", "gfx950", "-n", "3", "--no-cache", "--variant", "bwd_data", "--ndim", "2",
                 "--dtype", "fp32"]) == 0  # 84 kernels: under the limit
