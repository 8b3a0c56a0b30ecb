"""Which kernels run a problem (issue 27): the support rules of constraints/support.toml against an independent
re-implementation of CK's IsSupportedArgument (tests/reference/ck_support.py), their examples, the filter they
become, explain --problem and the one-line errors. The host-compiled `_is_supported` of the emitted units is the
oracle of tests/test_support_host.py."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ckspace.errors import CkspaceError
from ckspace.rules import support as S
from ckspace.rules.data import load
from ckspace.rules.model import resolve_families, shared_model
from ckspace.rules.names import parse_name
from ckspace.rules.problem import parse_problem, random_problem
from ckspace.space import Space
from ckspace.spec import Spec
from reference import ck_support as R

ROOT = Path(__file__).resolve().parent.parent
REVISIONS = ("2025.11", "2026.06")


def plain(p) -> dict:
    """A parsed problem as the reference takes it (plain values)."""
    return {"ndim": p.ndim, "g": p.g, "n": p.n, "k": p.k, "c": p.c, "filter": list(p.filter), "input": list(p.input),
            "stride": list(p.stride), "dilation": list(p.dilation), "pad_left": list(p.pad_left),
            "pad_right": list(p.pad_right), "k_batch": p.k_batch}


def runs(config: dict, problem, revision: str, arch: str) -> bool:
    data = _data()
    model = shared_model(data, arch, resolve_families(data, None))
    return not S.verdicts(_rules(revision), problem, config, model.resolve)


_RULES: dict[str, list] = {}
_DATA: list = []


def _data():
    if not _DATA:
        _DATA.append(load(None))
    return _DATA[0]


def _rules(revision: str) -> list:
    if revision not in _RULES:
        _RULES[revision] = S.rules_for(_data(), revision)
    return _RULES[revision]


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_rule_rejects_and_accepts_its_examples(revision):
    data = load(None)
    rules = S.rules_for(data, revision)
    assert len({r.id for r in rules}) == len(rules)
    for rule in rules:
        for (kernel, problem, arch), breaks in ((rule.reject, True), (rule.accept, False)):
            model = shared_model(data, arch, resolve_families(data, None))
            found = S.verdicts([rule], parse_problem(problem), parse_name(kernel), model.resolve)
            assert bool(found) == breaks, (rule.id, kernel, problem)
            # and CK's condition, read independently, agrees with the example
            assert R.supported(parse_name(kernel), plain(parse_problem(problem)), revision, arch) or breaks


def test_each_rule_names_its_sources_and_revisions():
    for rule in S.load(load(None)):
        assert set(rule.ck_api) <= set(REVISIONS)
        assert ".hpp" in rule.source or ".j2" in rule.source
        if "2026.06" in rule.ck_api and "2025.11" not in rule.ck_api:
            assert "rocm-libraries" in rule.source
        if "2025.11" in rule.ck_api:
            assert "amd-aiter" in rule.source or "templates/2025.11" in rule.source


def _kernels(arch: str, ck_api: str | None, n: int, seed: int, catalog: str = "full") -> list[dict]:
    space = Space(arch=arch, ck_api=ck_api)
    pool = space.select(catalog)
    return random.Random(seed).sample(pool, min(n, len(pool)))


@pytest.mark.parametrize("arch, revision, catalog", [
    ("gfx942", "2025.11", "full"), ("gfx950", "2026.06", "full"), ("gfx1201", "2026.06", "ck-rdna"),
    ("gfx90a", "2026.06", "ck-profiler")])
def test_the_rules_say_what_ck_says_on_random_kernels_and_problems(arch, revision, catalog):
    """400 random problems (2D and 3D) on 120 random kernels of a catalog: the rules' verdict is the reference's,
    problem by problem."""
    kernels = _kernels(arch, revision if revision != "2026.06" else None, 120, seed=7, catalog=catalog)
    rng = random.Random(11)
    problems = [random_problem(rng, rng.choice((2, 2, 3))) for _ in range(400)]
    disagree = []
    ran = 0
    for i, p in enumerate(problems):
        for k in kernels[i % 7::7]:  # each problem meets about 17 kernels, each kernel about 57 problems
            ours = runs(k, p, revision, arch)
            ran += ours
            if ours != R.supported(k, plain(p), revision, arch):
                disagree.append((k["name"], p.text()))
    assert not disagree, disagree[:5]
    assert ran > 50  # the draw reaches kernels that run, not only refusals


def test_depthwise_kernels_and_problems():
    kernels = [k for k in _kernels("gfx950", None, 20_000, seed=1) if k["variant"] == "forward_depthwise"]
    assert kernels
    rng = random.Random(5)
    for k in kernels:
        for _ in range(40):
            f = k["filter_size"] if rng.random() < 0.7 else rng.choice((1, 3, 5))
            pad = (k["pad_h"], k["pad_w"]) if rng.random() < 0.7 else (0, 0)
            stride = (k["stride_h"], k["stride_w"]) if rng.random() < 0.8 else (1, 2)
            size = rng.choice((4, 8, 16, 32))
            text = (f"2 {rng.choice((1, 8, 32))} {rng.choice((1, 2, 8, 16))} {rng.choice((1, 1, 2))} "
                    f"{rng.choice((1, 1, 2))} {f} {f} {size + f} {size + f} {stride[0]} {stride[1]} "
                    f"{rng.choice((1, 1, 1, 2))} 1 {pad[0]} {pad[1]} {pad[0]} {rng.choice((0, pad[1]))}")
            p = parse_problem(text)
            assert runs(k, p, "2026.06", "gfx950") == R.supported(k, plain(p), "2026.06", "gfx950"), (k["name"], text)


@pytest.mark.parametrize("arch, ck_api, problem", [
    ("gfx942", "2025.11", "2 1 32 128 64 3 3 28 28 1 1 1 1 1 1 1 1"),
    ("gfx942", "2025.11", "2 8 4 64 64 3 3 14 14 2 2 1 1 1 1 1 1 k_batch=2"),
    ("gfx950", None, "2 32 8 1 1 3 3 8 8 1 1 1 1 1 1 1 1"),
    ("gfx950", None, "3 2 2 96 48 1 1 1 4 6 6 1 1 1 1 1 1 0 0 0 0 0 0 k_batch=4"),
])
def test_the_filter_lists_exactly_the_kernels_that_run_it(arch, ck_api, problem):
    """The folded condition (solved with the set's rules) keeps the kernels the plain verdicts accept."""
    revision = ck_api or "2026.06"
    space = Space.from_spec(Spec(arch=arch, ck_api=ck_api, problem=problem))
    kept = {c["name"] for c in space.enumerate(where=space.spec.where)}
    every = Space(arch=arch, ck_api=ck_api).select("full")
    p = parse_problem(problem)
    expected = {c["name"] for c in every if R.supported(c, plain(p), revision, arch)}
    assert kept == expected
    assert kept  # a problem some kernel runs


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True, input=stdin,
                          cwd=ROOT)


def test_explain_with_a_problem_lists_every_failed_condition_and_nearest_kernels_that_run_it():
    name = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8"
    r = _cli("explain", name, "--arch", "gfx942", "--ck-api", "2025.11", "--format", "json",
             "--problem", "2 1 4 36 60 3 3 14 14 1 1 1 1 1 1 1 1 k_batch=2")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "rejected" and doc["problem"]["runs"] is False and doc["problem"]["ck_api"] == "2025.11"
    broken = {v["rule"]: v["message"] for v in doc["violations"] if v["family"] == "support"}
    assert set(broken) == {"support.forward-no-split-k", "support.c-vector-b", "support.forward-c-vector-a",
                           "support.forward-k-vector-c"}
    assert "C 60 is not a multiple of vec_b 8" in broken["support.c-vector-b"]
    assert "K 36" in broken["support.forward-k-vector-c"]
    assert doc["notes"][0]["kind"] == "does-not-run"
    assert doc["neighbours"] == []  # no forward kernel runs k_batch 2
    r = _cli("explain", name, "--arch", "gfx942", "--ck-api", "2025.11", "--format", "json",
             "--problem", "2 1 4 36 60 3 3 14 14 1 1 1 1 1 1 1 1")
    doc = json.loads(r.stdout)
    assert doc["neighbours"], doc["neighbour_search"]
    p = parse_problem("2 1 4 36 60 3 3 14 14 1 1 1 1 1 1 1 1")
    for nb in doc["neighbours"]:
        assert R.supported(parse_name(nb["name"]), plain(p), "2025.11", "gfx942"), nb["name"]
    r = _cli("explain", name, "--arch", "gfx942", "--ck-api", "2025.11",
             "--problem", "2 1 4 64 64 3 3 14 14 1 1 1 1 1 1 1 1")
    assert r.returncode == 0 and "✓ runs it" in r.stdout, r.stdout


@pytest.mark.parametrize("args, message", [
    (["enumerate", "--arch", "gfx950", "--problem", "2 1 1 1 1 5 5 3 3 1 1 1 1 0 0 0 0"], "output length -1"),
    (["enumerate", "--arch", "gfx950", "--problem", "n=4"], "k= is missing"),
    (["sample", "--arch", "gfx950", "-n", "2", "--problem", ""], "needs a problem"),
    (["explain", "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8",
      "--problem", "2 1 2"], "a 2D problem is 17 integers"),
])
def test_a_bad_problem_is_one_line(args, message):
    r = _cli(*args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr


def test_enumerate_count_and_sample_take_a_problem():
    problem = "2 1 4 64 64 3 3 14 14 1 1 1 1 1 1 1 1"
    names = _cli("enumerate", "--arch", "gfx942", "--ck-api", "2025.11", "--problem", problem).stdout.split()
    count = _cli("enumerate", "--arch", "gfx942", "--ck-api", "2025.11", "--problem", problem, "--count",
                 "--format", "json")
    assert json.loads(count.stdout)["total"] == len(names) > 0
    sample = _cli("sample", "--arch", "gfx942", "--ck-api", "2025.11", "--problem", problem, "-n", "5")
    assert sample.returncode == 0 and set(sample.stdout.split()) <= set(names)
    cov = _cli("coverage", "--set", "full", "--arch", "gfx942", "--ck-api", "2025.11", "--problem", problem,
               "--format", "json")
    assert cov.returncode == 0, cov.stderr


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('require = "problem.c % vec_b == 0"', 'require = "problem.cc % vec_b == 0"'),
     "unknown problem quantity 'problem.cc'"),
    (lambda t: t.replace('id = "support.filter3x3"', 'id = "support.filter1x1-pad0"'), "defined twice"),
    (lambda t: t.replace('require = "problem.k_batch == 1"', 'require = "problem.k_batch"', 1), "support.toml"),
    (lambda t: t.replace('ck_api = ["2026.06"]', 'ck_api = "2026.06"', 1), "support.toml"),
])
def test_a_broken_support_file_is_one_line(tmp_path, edit, message):
    root = tmp_path / "constraints"
    shutil.copytree(ROOT / "constraints", root)
    path = root / "support.toml"
    path.write_text(edit(path.read_text()))
    with pytest.raises(CkspaceError) as err:
        S.load(load(root))
    assert message in str(err.value) and "\n" not in str(err.value)
    r = _cli("enumerate", "--arch", "gfx950", "--constraints", str(root), "--problem",
             "2 1 4 64 64 3 3 14 14 1 1 1 1 1 1 1 1")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_rules_shows_the_support_family_with_its_revisions():
    r = _cli("rules", "support", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rules = S.load(_data())
    assert len(doc["rules"]) == len(rules)
    assert sum("2025.11" in r.ck_api for r in rules) == 15 and sum("2026.06" in r.ck_api for r in rules) == 29
    assert {tuple(d["ck_api"]) for d in doc["rules"]} == {("2025.11",), ("2026.06",), ("2025.11", "2026.06")}
    assert all("--problem" in d["rejects"][0] for d in doc["rules"])
    assert "CK API:    2025.11, 2026.06" in _cli("rules", "support.c-vector-b").stdout


def test_a_filter_is_read_per_stratum():
    """`variant == 'forward_depthwise' or vec_a == 8` keeps the depthwise kernels (the filter holds for them
    outright), `vec_a == 8` alone does not (they have no vec_a)."""
    space = Space(arch="gfx950")
    every = space.select("full")
    both = {c["name"] for c in space.enumerate(where="variant == 'forward_depthwise' or vec_a == 8")}
    assert both == {c["name"] for c in every if c["variant"] == "forward_depthwise" or c.get("vec_a") == 8}
    gemm_only = {c["name"] for c in space.enumerate(where="vec_a == 8")}
    assert gemm_only == {c["name"] for c in every if c["variant"] != "forward_depthwise" and c["vec_a"] == 8}
    tests = space.select("tests", where="variant == 'forward_depthwise' or vec_a == 8")
    assert any(c["variant"] == "forward_depthwise" for c in tests)
