"""`ckspace problems` (issue 27, item 3): the chosen problems are checked against the independent re-implementation of
CK's IsSupportedArgument (tests/reference/ck_support.py): every kernel listed for a problem runs it, every kernel of
the set runs one or provably runs none, and the coverage claimed is real."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ckspace.space import Space
from reference import ck_support as R
from test_support import plain

ROOT = Path(__file__).resolve().parent.parent


def _filter_class(p) -> str:
    return "1x1" if set(p.filter) == {1} else "3x3" if set(p.filter) == {3} else "other"


@pytest.fixture(scope="module")
def tiny():
    space = Space(arch="gfx942", ck_api="2025.11")
    return space, space.select("tiny"), space.problems("tiny")


def test_every_kernel_runs_a_chosen_problem_and_each_listed_kernel_really_runs_it(tiny):
    space, kernels, result = tiny
    by_name = {k["name"]: k for k in kernels}
    exercised = set()
    for c in result.problems:
        assert c.flops <= 50_000_000 and c.bytes <= 4 * 1024 * 1024
        ran = {n for n, k in by_name.items() if R.supported(k, plain(c.problem), "2025.11", "gfx942")}
        assert set(c.kernels) == ran, c.problem.text()  # exactly the set's kernels that run it
        exercised |= ran
    assert exercised == set(by_name) and result.kernels_run == result.kernels == len(by_name)
    assert not result.unrunnable and result.optimal and result.gap == 0


def test_the_coverage_it_claims_is_real(tiny):
    space, kernels, result = tiny
    by_name = {k["name"]: k for k in kernels}
    reached: dict[str, set[str]] = {}
    for c in result.problems:
        for n in c.kernels:
            k = by_name[n]
            reached.setdefault(f"{k['variant']} {k['ndim']}d {k['dtype']}", set()).add(_filter_class(c.problem))
    for stratum, feats in result.coverage.items():
        assert set(feats["filter"]) == reached[stratum], stratum
    assert result.items_covered == result.items


def test_kernels_that_no_problem_can_run_are_named_with_the_rules_that_stop_them():
    """Under CK API 2025.11 a forward filter3x3 kernel needs C == 1 (support.filter3x3) and C a multiple of vec_a
    and vec_b: with either vector above 1 no problem runs it. The tests set has such kernels."""
    space = Space(arch="gfx942", ck_api="2025.11")
    kernels = space.select("tests", variant="forward", ndim=2, dtype="bf16")
    result = space.problems("tests", variant="forward", ndim=2, dtype="bf16")
    impossible = {k["name"] for k in kernels
                  if k["specialization"] == "filter3x3" and (k["vec_a"] > 1 or k["vec_b"] > 1)}
    assert impossible and set(result.unrunnable) == impossible
    for why in result.unrunnable.values():
        assert "support.filter3x3" in why and {"support.forward-c-vector-a", "support.c-vector-b"} & set(why)
    assert result.kernels_run == len(kernels) - len(impossible)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True, cwd=ROOT)


def test_formats_are_deterministic_and_ckprofiler_lines_are_well_formed(tmp_path):
    base = ["problems", "--arch", "gfx942", "--ck-api", "2025.11", "--set", "tiny"]
    first = _cli(*base, "--format", "json")
    assert first.returncode == 0, first.stderr
    assert _cli(*base, "--format", "json").stdout == first.stdout
    doc = json.loads(first.stdout)
    assert doc["optimal"] and doc["kernels_run"] == doc["kernels"]
    lines = _cli(*base, "--format", "ckprofiler").stdout.splitlines()
    assert lines
    for line in lines:
        words = line.split()
        op = words[1]
        # data type, layout, (forward: index type,) verification, initialization, log, timing; then NDimSpatial
        control = 7 if op == "grouped_conv_fwd" else 6
        ndim = int(words[2 + control])
        extra = 0 if op == "grouped_conv_fwd" else 1  # backward ends with split-K
        assert ndim in (2, 3) and len(words) == 2 + control + 1 + 4 + 6 * ndim + extra, line
    out = tmp_path / "problems.csv"
    r = _cli(*base, "--format", "csv", "-o", str(out))
    assert r.returncode == 0 and out.read_text().splitlines()[0].startswith("problem,ndim,k_batch")
    assert len(out.read_text().splitlines()) == len(doc["problems"]) + 1


@pytest.mark.parametrize("args, message", [
    (["--time-limit", "0"], "--time-limit must be between"),
    (["--set", "nosuch"], "nosuch"),
    (["--format", "xml"], "invalid choice"),
])
def test_bad_options_are_one_line(args, message):
    r = _cli("problems", "--arch", "gfx942", *args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_cmake_lists_each_variant_and_dtype_its_kernels_and_problems(tiny):
    import re

    space, kernels, result = tiny
    text = result.cmake()
    lists = {m.group(1): m.group(2).split("\n") for m in re.finditer(r"set\((\w+)\n(.*?\n)\)", text, re.S)}
    lists = {k: [w.strip().strip('"') for w in v if w.strip()] for k, v in lists.items()}
    for k in kernels:
        key = f"CKSPACE_{k['variant'].upper()}_{k['dtype'].upper()}"
        assert k["name"] in lists[f"{key}_KERNELS"]
    for c in result.problems:
        words = " ".join(c.problem.text().split(" k_batch=")[0].split()) + f" {c.problem.k_batch}"
        for variant, dtype in c.runs:
            assert words in lists[f"CKSPACE_{variant.upper()}_{dtype.upper()}_PROBLEMS"]


def test_the_cli_table_shows_every_feature():
    from ckspace.cli import problems as cli
    from ckspace.select import problems

    assert cli.FEATURES == problems.FEATURES
