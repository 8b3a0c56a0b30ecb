"""Sampling a space without listing it (ckspace.solve.sampling, ckspace.select.sample.sample_space).

The kernels of a space without curation are numbered by the count's variable elimination and n distinct ranks are
drawn. Checked here:

* unranking against brute force: every rank of random count-factor products (any values, counts past int64, kept
  fields, fields no factor reads) gives an assignment, each assignment exactly as many ranks as its weight;
* on real strata, every rank gives a kernel and the kernels of all ranks are exactly what enumerate lists (the same
  dicts), with and without kept (--stratify) fields;
* a chi-square test of the kernels' frequencies over many seeds (deterministic: fixed seeds, no flaky run);
* every kernel drawn from gfx950's open space is valid by the plain-Python rule checker, --where/--variant apply,
  --stratify shares, and the same seed gives the same kernels in two processes.
"""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace import Space
from ckspace.cli import main
from ckspace.rules.check import domain_verdicts, violations
from ckspace.select.objectives import DIMENSIONS
from ckspace.select.sample import sample_set, sample_space, stratify_dimensions
from ckspace.solve import count, sampling

ROOT = Path(__file__).resolve().parent.parent

# A few hundred kernels of the open space (two strata), small enough to list and to draw every kernel often.
SMALL = ("tile_m == 64 and tile_n == 64 and wave_m == 2 and wave_n == 2 and warp_tile_m == 16 and warp_tile_n == 16 "
         "and pipeline == 'mem' and vec_a == 1 and vec_b == 1 and vec_c == 1 and not split_image and not explicit_gemm "
         "and pad_m and pad_n and pad_k and num_wave_groups == 1 and num_groups_to_merge == 1 "
         "and scheduler == 'intrawave' and specialization == 'default'")
SMALL_KW = dict(variant="forward,bwd_data", ndim=2, dtype="fp32", where=SMALL)


@pytest.fixture(scope="module")
def open_space() -> Space:
    return Space(arch="gfx950", rules="-ck-curation")


# -- unranking against brute force ------------------------------------------------------------------------------

@st.composite
def problems(draw):
    """Random count factors over fields a..d, a kept subset of the fields, and fields no factor reads."""
    names = list("abcd"[:draw(st.integers(1, 4))])
    low = draw(st.sampled_from([0, -3, 10**15, None]))  # negative and large raw values; strings
    values = [low + v if low is not None else f"v{v}" for v in range(draw(st.integers(1, 3)))]
    factors = []
    for _ in range(draw(st.integers(1, 4))):
        fields = tuple(draw(st.permutations(names))[:draw(st.integers(1, len(names)))])
        rows = draw(st.lists(st.tuples(*[st.sampled_from(values)] * len(fields)), max_size=12, unique=True))
        counts = draw(st.lists(st.integers(1, 3), min_size=len(rows), max_size=len(rows)))
        factors.append((fields, dict(zip(rows, counts))))
    free = draw(st.lists(st.sampled_from(["u", "v"]), unique=True))  # read by no factor
    domains = {n: values for n in names} | {n: list(range(draw(st.integers(1, 3)))) for n in free}
    everything = names + free
    keep = draw(st.lists(st.sampled_from(everything), unique=True))
    order = draw(st.permutations([n for n in names if n not in keep]))
    return everything, factors, domains, keep, order


def weights(names, factors, domains) -> Counter:
    """Every assignment of the fields with its weight (the product of the factors' counts), by brute force."""
    out: Counter = Counter()
    for combo in itertools.product(*(domains[n] for n in names)):
        at = dict(zip(names, combo))
        w = 1
        for fields, table in factors:
            w *= table.get(tuple(at[f] for f in fields), 0)
        if w:
            out[combo] = w
    return out


@pytest.mark.parametrize("safe", [sampling.SAFE, 8], ids=["int64", "python-integers"])
@settings(max_examples=150, deadline=None)
@given(case=problems())
def test_every_rank_gives_an_assignment_as_often_as_its_weight(case, safe):
    names, factors, domains, keep, order = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sampling, "SAFE", safe)  # 8: Python integers and dict keys on every path
        elim = sampling.Eliminated(names, [count.CountFactor(f, dict(t)) for f, t in factors], order, domains, keep)
        expected = weights(names, factors, domains)
        assert elim.total == sum(expected.values())
        got: Counter = Counter()
        for t, (row, size) in enumerate(elim.top):
            raw = elim.unrank([(t, r) for r in range(size)])
            for i in range(size):
                combo = tuple(raw[n][i] for n in names)
                assert tuple(combo[names.index(k)] for k in keep) == row  # inside its top row
                got[combo] += 1
        assert got == expected


def test_unranking_refuses_a_rank_outside_its_row():
    elim = sampling.Eliminated(["a"], [count.CountFactor(("a",), {(1,): 1, (2,): 1})], ["a"], {"a": [1, 2]})
    assert elim.top == [((), 2)] and elim.unrank([(0, 1)])["a"] == [2]
    with pytest.raises(ValueError):
        elim.unrank([(0, 2)])


# -- real strata: ranks are kernels, one to one ---------------------------------------------------------------------

@pytest.mark.parametrize("keep", [(), ("epilogue",), ("tile_k", "double_smem_buffer")])
def test_the_ranks_of_a_space_are_its_kernels_one_to_one(open_space, keep):
    sampler = sampling.SpaceSampler(open_space, keep=keep, **SMALL_KW)
    listed = {c["name"]: c for c in open_space.enumerate(**SMALL_KW)}
    assert sampler.total == len(listed) == sum(open_space.count(**SMALL_KW).values()) > 100
    picks = sampler.locate(list(range(len(sampler.parts))), range(sampler.total))
    configs = sampler.configs(picks)
    assert len({c["name"] for c in configs}) == sampler.total
    for c in configs:
        assert c == listed[c["name"]] and list(c) == list(listed[c["name"]])  # same values, same keys in order
    for (p, _), c in zip(picks, configs):  # a part's kernels have its kept values
        assert all(c[k] == v for k, v in sampler.parts[p].config.items())


# -- uniformity ---------------------------------------------------------------------------------------------------

def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with df degrees of freedom: the regularized upper incomplete gamma Q(df/2, x/2)
    (series for P below a + 1, Lentz's continued fraction above), independent of the sampler and of scipy."""
    a, z = df / 2, x / 2
    if z <= 0:
        return 1.0
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1:
        term = total = 1 / a
        n = a
        while abs(term) > 1e-16 * abs(total):
            n += 1
            term *= z / n
            total += term
        return 1 - math.exp(log_front) * total
    tiny = 1e-300
    b = z + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return math.exp(log_front) * h


def test_the_chi_square_tail_matches_known_values():
    # Upper points of the chi-square distribution from tables (and scipy's chi2.sf where installed)
    assert abs(chi2_sf(27.877, 9) - 0.001) < 2e-6
    assert abs(chi2_sf(43.820, 19) - 0.001) < 2e-6
    assert abs(chi2_sf(3.841, 1) - 0.05) < 1e-4
    assert abs(chi2_sf(1000.0, 1000) - 0.4940) < 1e-3
    try:
        from scipy import stats
    except ImportError:
        return
    for x, df in ((10.0, 3), (500.0, 441), (900.0, 883), (70.0, 100)):
        assert abs(chi2_sf(x, df) - stats.chi2.sf(x, df)) < 1e-9


def chi2(observed: list[int]) -> float:
    expected = sum(observed) / len(observed)
    return sum((o - expected) ** 2 / expected for o in observed)


def test_every_kernel_is_drawn_equally_often(open_space):
    """40 kernels per seed over 221 seeds from the two strata of SMALL (884 kernels when written): each kernel about
    10 times. Chi-square against uniform, fixed seeds (deterministic); a draw without replacement only narrows the
    spread, so the test is conservative."""
    members = sorted(c["name"] for c in open_space.enumerate(**SMALL_KW))
    seen: Counter = Counter()
    for seed in range(221):
        picked, total = sample_space(open_space, 40, seed, **SMALL_KW)
        assert total == len(members) and len({c["name"] for c in picked}) == 40
        seen.update(c["name"] for c in picked)
    assert set(seen) <= set(members)
    stat = chi2([seen[n] for n in members])
    assert chi2_sf(stat, len(members) - 1) > 1e-3, stat
    # and not too even either (a sampler cycling through the kernels would be)
    assert chi2_sf(stat, len(members) - 1) < 1 - 1e-3, stat


def test_stratified_draws_are_uniform_inside_each_group(open_space):
    dims = stratify_dimensions("variant", [])
    members: dict[str, list[str]] = {}
    for c in open_space.enumerate(**SMALL_KW):
        members.setdefault(c["variant"], []).append(c["name"])
    seen: Counter = Counter()
    for seed in range(120):
        picked, _ = sample_space(open_space, 30, seed, dims, **SMALL_KW)
        assert Counter(c["variant"] for c in picked) == {"forward": 15, "bwd_data": 15}
        seen.update(c["name"] for c in picked)
    for names in members.values():
        stat = chi2([seen[n] for n in names])
        assert chi2_sf(stat, len(names) - 1) > 1e-3, stat


# -- the open space -------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_sample_of_the_open_space_is_valid_distinct_and_counted(open_space):
    picked, total = sample_space(open_space, 200, 11)
    assert total == sum(open_space.count().values()) > 10**12
    assert len({c["name"] for c in picked}) == 200 and [c["name"] for c in picked] == sorted(c["name"] for c in picked)
    checker = Space(arch="gfx950", rules="-ck-curation", use_cache=False)
    for c in picked:
        cfg = checker.parse(c["name"])  # the name says what the config says
        assert {k: cfg[k] for k in c if k != "name"} == {k: c[k] for k in c if k != "name"}
        assert domain_verdicts(checker.model, cfg) == [] and violations(checker.model, cfg) == [], c["name"]
    # each variant gets its share of the draws: within 5 standard deviations of n * (its kernels / all kernels)
    by_variant = Counter(c["variant"] for c in picked)
    sizes = Counter()
    for stratum, n in open_space.count().items():
        sizes[stratum.variant] += n
    for variant, size in sizes.items():
        p = size / total
        assert abs(by_variant[variant] - 200 * p) <= 5 * math.sqrt(200 * p * (1 - p)) + 1e-9, (variant, by_variant)


@pytest.mark.slow
def test_filters_apply_and_a_stratified_sample_shares_equally(open_space):
    where = "tile_m >= 128 and pipeline == 'compv3' and vec_c == 8"
    picked, total = sample_space(open_space, 50, 3, variant="forward,bwd_weight", where=where)
    assert total == sum(open_space.count(variant="forward,bwd_weight", where=where).values())
    assert len(picked) == 50
    for c in picked:
        assert c["variant"] in ("forward", "bwd_weight") and c["tile_m"] >= 128 and c["pipeline"] == "compv3"
        assert c["vec_c"] == 8 and violations(open_space.model, c) == []
    dims = [DIMENSIONS["variant"], DIMENSIONS["ndim"], DIMENSIONS["dtype"]]
    picked, _ = sample_space(open_space, 63, 3, dims, variant="forward,bwd_data,bwd_weight")
    per = Counter((c["variant"], c["ndim"], c["dtype"]) for c in picked)
    assert len(per) == 18 and set(per.values()) == {3, 4} and sum(per.values()) == 63
    narrow = dict(variant="bwd_data", ndim=2, dtype="fp16")
    picked, _ = sample_space(open_space, 40, 3, [DIMENSIONS["pipeline"], DIMENSIONS["epilogue"]], **narrow)
    per = Counter((c["pipeline"], c["epilogue"]) for c in picked)
    groups = {(p.config["pipeline"], p.config["epilogue"])
              for p in sampling.SpaceSampler(open_space, keep=("pipeline", "epilogue"), **narrow).parts}
    assert sum(per.values()) == 40 and max(per.values()) - min(per.values()) <= 1
    assert set(per) <= groups and len(per) == min(40, len(groups)) and len(groups) > 10


def test_a_small_space_is_returned_whole_and_n_zero_is_empty(open_space):
    everything = sorted(c["name"] for c in open_space.enumerate(**SMALL_KW))
    picked, total = sample_space(open_space, len(everything) + 5, 1, **SMALL_KW)
    assert [c["name"] for c in picked] == everything and total == len(everything)
    assert sample_space(open_space, 0, 1, **SMALL_KW) == ([], len(everything))
    nothing = sample_space(open_space, 5, 1, variant="bwd_data", where="tile_m == 16 and tile_m == 32")
    assert nothing == ([], 0)


def test_sample_set_routes_only_an_open_catalog_to_the_sampler(open_space, monkeypatch):
    calls = []
    real = sampling.SpaceSampler

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sampling, "SpaceSampler", spy)
    sample_set(open_space, "full", 3, 1, variant="bwd_data", ndim=2, dtype="fp32", where=SMALL)
    assert calls == [1]
    sample_set(Space(arch="gfx950"), "full", 3, 1, variant="bwd_data")  # CK's catalog: listed, as before
    assert calls == [1]


# -- reproducible across processes ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_same_seed_gives_the_same_kernels_in_two_processes(open_space, tmp_path):
    args = ["sample", "--arch", "gfx950", "--rules", "-ck-curation", "--variant", "bwd_data", "-n", "25", "--seed",
            "42", "--stratify", "ndim,dtype,pipeline", "--no-cache"]
    outs = []
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hashseed,
               "CKSPACE_CACHE_DIR": str(tmp_path / hashseed)}
        proc = subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True, env=env,
                              cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1] and len(outs[0].split()) == 25
    same = [c["name"] for c in open_space.sample(25, seed=42, stratify="ndim,dtype,pipeline", variant="bwd_data")]
    assert outs[0].split() == same
    other = [c["name"] for c in open_space.sample(25, seed=43, stratify="ndim,dtype,pipeline", variant="bwd_data")]
    assert other != same


def test_the_cli_samples_the_open_space(capsys):
    assert main(["sample", "--arch", "gfx950", "--rules", "-ck-curation", "-n", "5", "--seed", "1", "--variant",
                 "forward_depthwise", "--format", "jsonl"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5 and all('"variant":"forward_depthwise"' in line for line in out)
    assert main(["sample", "--arch", "gfx950", "--rules", "-ck-curation", "-n", "1000", "--variant", "bwd_data",
                 "--ndim", "2", "--dtype", "fp32", "--where", SMALL]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.split()) < 1000 and "fewer than -n 1,000: all of them are listed" in captured.err
