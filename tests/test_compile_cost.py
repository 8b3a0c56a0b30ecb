"""Issue 14: the default compile units are balanced by expected compile cost (templates/compile-cost.toml).

The oracles are independent of ckspace/codegen/compilecost.py and units.py: the coefficients are refitted here from
the measured units (scripts/data/compile-units-2025.11.csv) with numpy's least squares, a kernel's cost is
recomputed from the raw TOML, and the best cut is found by brute-force dynamic programming.
"""

from __future__ import annotations

import csv
import functools
import re
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace import Space
from ckspace.codegen import compilecost, units
from ckspace.errors import DataError
from ckspace.rules.data import load_fields

REPO = Path(__file__).resolve().parent.parent
COST_TOML = REPO / "templates" / "compile-cost.toml"
MEASURED = REPO / "scripts" / "data" / "compile-units-2025.11.csv"


def raw_cost(config, arch: str, raw: dict) -> float:
    """A kernel's expected seconds read straight from the TOML, as its comment states the formula."""
    k = raw["kernel"]
    seconds = k["base"].get(arch, k["base"]["default"])
    for name, by_value in k.get("value", {}).items():
        if name in config:
            seconds += by_value.get(str(config[name]), 0.0)
    for term in k.get("product", []):
        if all(f in config for f in term["fields"]):
            product = 1
            for f in term["fields"]:
                product *= config[f]
            seconds += term["seconds"] * product / term["per"]
    return seconds


@pytest.fixture(scope="module")
def raw():
    return tomllib.loads(COST_TOML.read_text())


@pytest.fixture(scope="module")
def measured():
    with open(MEASURED, newline="") as fh:
        rows = list(csv.DictReader(fh))
    spaces = {a: Space(arch=a) for a in {r["arch"] for r in rows}}
    return [(r["arch"], float(r["unit_seconds"]), [spaces[r["arch"]].parse(n) for n in r["kernels"].split()])
            for r in rows]


def test_the_shipped_coefficients_are_the_least_squares_fit_of_the_measurements(raw, measured):
    np = pytest.importorskip("numpy")
    archs = sorted({a for a, _, _ in measured})
    values = [(name, v) for name, by in raw["kernel"]["value"].items() for v in by]
    X, y = [], []
    for arch, seconds, configs in measured:
        row = [1.0] + [float(len(configs)) if arch == a else 0.0 for a in archs]
        row += [float(sum(str(c[name]) == v for c in configs)) for name, v in values]
        row += [sum(c["tile_m"] * c["tile_n"] for c in configs) / 16384]
        X.append(row)
        y.append(seconds)
    coef, *_ = np.linalg.lstsq(np.array(X), np.array(y), rcond=None)
    shipped = [raw["unit"], *(raw["kernel"]["base"][a] for a in archs),
               *(raw["kernel"]["value"][n][v] for n, v in values), raw["kernel"]["product"][0]["seconds"]]
    assert raw["kernel"]["product"][0]["fields"] == ["tile_m", "tile_n"] and raw["kernel"]["product"][0]["per"] == 16384
    assert shipped == pytest.approx([float(c) for c in coef], abs=0.02)
    assert raw["kernel"]["base"]["default"] == max(raw["kernel"]["base"][a] for a in archs)
    assert 5.0 <= raw["unit"] <= 8.0  # ../shared/toolchain/README.md: the headers alone, no kernel, take 6 s


def test_the_model_predicts_measured_units(raw, measured):
    """It explains most of the spread of the measured unit times (R^2 computed here), which is what it is for."""
    pred = [raw["unit"] + sum(raw_cost(c, a, raw) for c in cs) for a, _, cs in measured]
    y = [s for _, s, _ in measured]
    mean = sum(y) / len(y)
    r2 = 1 - sum((a - b) ** 2 for a, b in zip(y, pred)) / sum((a - mean) ** 2 for a in y)
    assert r2 >= 0.75, r2
    assert max(y) / min(y) > 3  # the spread is real: units of four kernels take 20 s to 2.4 min


@pytest.mark.parametrize("arch", ["gfx950", "gfx90a", "gfx1201"])
def test_kernel_costs_follow_the_toml(arch, raw):
    space = Space(arch=arch)
    configs = list(space.select("tiny")) + list(space.enumerate(where="pipeline == 'mem'"))[:50]
    model = compilecost.model()
    for c in configs:
        assert model.kernel(c, arch) == pytest.approx(raw_cost(c, arch, raw))
    assert model.unit == raw["unit"]


def best_max(costs, count, cap):
    """The least largest run sum over every cut of costs into `count` consecutive runs of 1..cap items."""
    n = len(costs)

    @functools.lru_cache(None)
    def best(i, k):
        if i == n:
            return 0.0 if k == 0 else float("inf")
        if k == 0:
            return float("inf")
        return min((max(sum(costs[i:j]), best(j, k - 1)) for j in range(i + 1, min(n, i + cap) + 1)),
                   default=float("inf"))

    return best(0, count)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_cut_is_the_best_consecutive_cut(data):
    n = data.draw(st.integers(1, 12))
    cap = data.draw(st.integers(1, 6))
    count = data.draw(st.integers(-(-n // cap), n))
    costs = data.draw(st.lists(st.floats(0.01, 100, allow_nan=False), min_size=n, max_size=n))
    runs = units.cut(costs, count, cap)
    assert len(runs) == count and runs[0][0] == 0 and runs[-1][1] == n
    assert all(a < b <= a + cap for a, b in runs) and all(runs[i][1] == runs[i + 1][0] for i in range(count - 1))
    assert max(sum(costs[a:b]) for a, b in runs) == pytest.approx(best_max(costs, count, cap), rel=1e-9)


@pytest.mark.parametrize("n", [0, 1, 7, 16, 22, 25, 30, 400, 401])
def test_default_units_keep_sixteen_jobs_busy_and_balance_cost(n, raw):
    """Issue 14: `build -j 2` on tiny ran one compile, because tiny was one unit. The default units: emit's order
    cut into consecutive runs of at most 25 kernels and the cost of 25 average ones, at least 16 when there are 16
    kernels; for small selections the dearest unit is as cheap as any cut into that many units makes it."""
    space = Space(arch="gfx942")
    pool = list(space.enumerate(variant="bwd_weight")) + list(space.enumerate(variant="forward", ndim=3))
    configs = pool[::max(1, len(pool) // max(n, 1))][:n]
    assert len(configs) == n
    order = sorted(configs, key=lambda c: ({"forward": 0, "bwd_data": 2, "bwd_weight": 3}[c["variant"]], c["name"]))
    got = units.balanced_units(configs, "gfx942")
    assert [x for u in got for x in u] == [c["name"] for c in order]
    assert len(got) >= min(n, max(16, -(-n // 25)))
    cost = {c["name"]: raw_cost(c, "gfx942", raw) for c in configs}
    if n:
        budget = 25 * sum(cost.values()) / n
        assert all(len(u) <= 25 and (len(u) == 1 or sum(cost[k] for k in u) <= budget * (1 + 1e-9)) for u in got)
    if 0 < n <= 30:
        dearest = max(sum(cost[k] for k in u) for u in got)
        assert dearest == pytest.approx(best_max([cost[c["name"]] for c in order], len(got), 25), rel=1e-9)


def test_cost_balancing_halves_the_dearest_unit_of_a_full_set(raw):
    """On gfx950's full set the units cut by count alone hold 25 kernels each and the dearest costs about twice the
    mean; cut by cost, the dearest is within 5% of 25 average kernels (figures from the TOML, computed here)."""
    space = Space(arch="gfx950")
    configs = list(space.enumerate())
    got = units.balanced_units(configs, "gfx950")
    cost = {c["name"]: raw_cost(c, "gfx950", raw) for c in configs}
    order = [c["name"] for c in units.emit_order(configs)]
    by_count = [order[i:i + 25] for i in range(0, len(order), 25)]
    dearest = lambda us: max(sum(cost[k] for k in u) for u in us)  # noqa: E731
    mean25 = 25 * sum(cost.values()) / len(cost)
    assert dearest(got) <= 1.05 * mean25 and dearest(got) < 0.6 * dearest(by_count)
    assert len(got) <= 1.2 * len(by_count)  # the fixed cost of the extra units is a few percent at most


@pytest.mark.parametrize("text, message", [
    ("unit = 6\n[kernel.base]\ngfx950 = 1\ndefault = 1\n", "measured"),
    ("measured = 'x'\nunit = 6\n[kernel.base]\ngfx950 = 1\n", "give a 'default' base"),
    ("measured = 'x'\nunit = -1\n[kernel.base]\ndefault = 1\n", "unit: expected a number"),
    ("measured = 'x'\nunit = 6\n[kernel.base]\ndefault = 1\n[kernel.value.pipelin]\nmem = 1\n",
     "unknown field 'pipelin'"),
    ("measured = 'x'\nunit = 6\n[kernel.base]\ndefault = 1\n[kernel.value.pipeline]\nmemm = 1\n",
     "pipeline has no value 'memm'"),
    ("measured = 'x'\nunit = 6\n[kernel.base]\ndefault = 1\n[[kernel.product]]\nfields = ['pipeline']\nper = 1\n"
     "seconds = 1\n", "pipeline is not an integer field"),
    ("measured = 'x'\nunit = 6\n[kernel.base]\ndefault = 'fast'\n", "kernel.base.default: expected a number"),
    ("measured = 'x'\nunit = 6\n[kernel.base\n", "compile-cost.toml"),
])
def test_a_broken_cost_file_is_one_line(tmp_path, text, message):
    path = tmp_path / "compile-cost.toml"
    path.write_text(text)
    with pytest.raises(DataError) as err:
        compilecost.read(path, load_fields())
    line = str(err.value)
    assert message in line and "\n" not in line and line.startswith(f"{tmp_path.name}/compile-cost.toml")


def test_emit_reports_the_expected_cost(tmp_path):
    import subprocess

    r = subprocess.run([sys.executable, "-m", "ckspace", "emit", "--arch", "gfx950", "--set", "tiny", "-o",
                        str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "16 compile units (expected about " in r.stdout and "core-minutes, the largest " in r.stdout, r.stdout


def test_the_fit_script_agrees_with_the_shipped_file():
    import subprocess

    r = subprocess.run([sys.executable, str(REPO / "scripts" / "fit_compile_cost.py")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    with open(MEASURED, newline="") as fh:
        units_measured = sum(1 for _ in csv.DictReader(fh))
    head = re.match(r"(\d+) units: R\^2 ([0-9.]+), 5-fold cross-validated R\^2 ([0-9.]+)", r.stdout)
    assert head and int(head[1]) == units_measured and float(head[3]) >= 0.75, r.stdout[:200]
