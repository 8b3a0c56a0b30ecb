"""`ckspace explain`: rejection reasons, minimal reasons, nearest valid kernels, the must-work cases, JSON, batch.

The oracle is the plain-Python checker (ckspace.rules.check) and the enumerated `full` set; the nearest kernels come from
the solver (ckspace.explain.neighbours) and are checked against both, and their minimality against a brute force over
every one- and two-field change of the asked name.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckspace.errors import KernelNameError
from ckspace.rules.check import breaks, is_valid
from ckspace.cli import main
from ckspace.explain.render import name_diff
from ckspace.explain.explainer import Explainer
from ckspace.explain.result import SCHEMA_VERSION, Explanation
from ckspace.rules.model import kind_of_variant
from ckspace.rules.names import format_name, parse_name
from conftest import full_set

ROOT = Path(__file__).resolve().parent.parent
VALID = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8"
TILE_96 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8"
WAVE_8X2 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_8x2x1_16x16x32_vec8_8_8"
WAVE_4X4 = "grouped_conv_fwd_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_4x4x1_16x16x32_vec8_8_8"
WAVE_4X4X2 = "grouped_conv_fwd_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_4x4x2_16x16x32_vec8_8_8"  # 2048 threads
KNOWN_ISSUE = "grouped_conv_bwd_weight_fp16_nhwgc_2d_compv1_cshuffle_interwave_16x32x64_1x2x1_16x16x32_vec1_1_1"
ARCHFILTER_ONLY = "grouped_conv_fwd_fp16_nhwgc_2d_compv1_cshuffle_intrawave_64x64x8_2x1x1_32x32x8_vec1_1_8"
# CK's gfx90a `full` has it (warp-tile fallback 4x64 with k 32), ckspace does not: arch.warp-tile (spec 11.3).
GFX90A_CK_ONLY = "grouped_conv_bwd_data_bf16_nhwgc_2d_compv1_cshuffle_intrawave_16x64x32_4x1x1_4x64x32_vec1_8_4"
# Every GEMM of CK's gfx1201 `full` uses 16x16x32, which gfx1201 lacks (spec 11.2).
GFX1201_CK_ONLY = "grouped_conv_bwd_data_bf16_nhwgc_2d_compv1_cshuffle_intrawave_128x128x32_1x8x1_16x16x32_vec8_8_8"

_EXPLAINERS: dict[tuple[str, str | None], Explainer] = {}


def explainer(arch: str = "gfx950", rules: str | None = None) -> Explainer:
    key = (arch, rules)
    if key not in _EXPLAINERS:
        _EXPLAINERS[key] = Explainer(arch, rules)
    return _EXPLAINERS[key]


def cli(*args: str, stdin: str = "") -> tuple[int, str, str]:
    """Run the CLI in-process (stdin: what `explain -` reads); returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ckspace", *args], input=stdin, capture_output=True, text=True,
                          env=os.environ.copy(), timeout=300)


def config_of(kernel: dict) -> dict:
    return {k: v for k, v in kernel.items() if k != "name"}


def sample(arch: str, pred: Callable[[dict], bool], k: int, seed: int = 0) -> list[dict]:
    pool = [config_of(c) for c in full_set(arch) if pred(c)]
    return random.Random(seed).sample(pool, min(k, len(pool)))


# -- one field changed, a known rule breaks --------------------------------------------------------------------------
def _gemm(c: dict) -> bool:
    return c["variant"] != "forward_depthwise"


def _dw(c: dict) -> bool:
    return c["variant"] == "forward_depthwise"


# (label, arch, which kernels, the change, the rule that must reject it). Each change breaks its rule by
# construction (by arithmetic here, not by the checker).
MUTATIONS: list[tuple[str, str, Callable[[dict], bool], Callable[[dict], dict], str]] = [
    ("epilogue", "gfx950", _gemm, lambda c: {**c, "epilogue": "default"}, "ck.epilogue"),
    ("vec-a fp32", "gfx950", lambda c: _gemm(c) and c["dtype"] == "fp32", lambda c: {**c, "vec_a": 16}, "ck.vec-a-width"),
    ("tile_m +16", "gfx950",
     lambda c: _gemm(c) and c["tile_m"] <= 240 and (c["tile_m"] + 16) % (c["wave_m"] * c["warp_tile_m"]) != 0,
     lambda c: {**c, "tile_m": c["tile_m"] + 16}, "arch.tile-m-divisible"),
    ("pad_n", "gfx950", _gemm, lambda c: {**c, "pad_n": False}, "ck.pads"),
    ("wave groups", "gfx950", _gemm, lambda c: {**c, "num_wave_groups": 2}, "ck.wave-groups"),
    ("warp_tile_k x2", "gfx950", lambda c: _gemm(c) and c["warp_tile_k"] <= 32,
     lambda c: {**c, "warp_tile_k": c["warp_tile_k"] * 2}, "ck.warp-tile-k"),
    ("backward compv5", "gfx950", lambda c: c["variant"] in ("bwd_data", "bwd_weight"),
     lambda c: {**c, "pipeline": "compv5"}, "ck.backward-compv5"),
    ("forward stream-K", "gfx950", lambda c: c["variant"] == "forward", lambda c: {**c, "streamk": "tree"},
     "pipeline.streamk-variant"),
    ("gfx950 wave on gfx942", "gfx942", _gemm, lambda c: {**c, "wave_m": 4, "wave_n": 4, "wave_k": 1}, "ck.wave-layout"),
    ("32 waves", "gfx950", _gemm, lambda c: {**c, "wave_m": 4, "wave_n": 4, "wave_k": 2}, "arch.workgroup-size"),
    ("tile_n 300", "gfx950", _gemm, lambda c: {**c, "tile_n": 300}, "model.domain-tile_n"),
    ("dtype fp8", "gfx950", _gemm, lambda c: {**c, "dtype": "fp8"}, "model.domain-dtype"),
    ("even filter", "gfx950", _dw, lambda c: {**c, "filter_size": c["filter_size"] + 1}, "pipeline.dw-odd-filter"),
    ("depthwise 3d", "gfx950", _dw, lambda c: {**c, "ndim": 3}, "pipeline.dw-2d"),
]


@pytest.mark.parametrize("label,arch,pred,change,rule", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_one_field_changed_is_rejected_with_the_rule(label, arch, pred, change, rule) -> None:
    ex = explainer(arch)
    kernels = sample(arch, pred, 4, seed=len(label))
    assert kernels, label
    for cfg in kernels:
        name = format_name(change(cfg))
        exp = ex.explain(name, neighbours=0)
        assert not exp.valid, name
        assert rule in {r.rule for r in exp.rejecting}, (name, [r.rule for r in exp.rejecting])
        assert_minimal_reasons(ex, exp)


def assert_minimal_reasons(ex: Explainer, exp: Explanation) -> None:
    """Each reported rule is broken in its own right: a change of only the fields it mentions silences it."""
    rules = {r.id: r for r in (*ex.model.derived_rules, *ex.data.rules)}
    for reason in exp.reasons:
        if reason.rule.startswith("model.domain-"):
            (field,) = reason.fields
            assert reason.fix is not None and reason.fix[field] in ex.data.fields[field].values
            continue
        rule = rules[reason.rule]
        assert breaks(rule, exp.config, ex.model), reason.rule
        if reason.fix is None:  # a fix never changes variant, ndim or dtype: only such a rule may have none
            assert rule.fields & {"variant", "ndim", "dtype"}, (exp.name, reason.rule)
            continue
        assert not set(reason.fix) & {"variant", "ndim", "dtype"}, (reason.rule, reason.fix)
        assert set(reason.fix) <= rule.fields, (reason.rule, reason.fix)
        assert not breaks(rule, {**exp.config, **reason.fix}, ex.model), (exp.name, reason.rule, reason.fix)


def _own_field_search(ex: Explainer, rule, cfg: dict, limit: int = 20_000) -> bool | None:
    """Independent of the solver: some assignment of only the rule's fields silences it (None: too many to try)."""
    fields = sorted(f for f in rule.fields if f in ex.data.fields)
    domains = [ex.data.fields[f].values for f in fields]
    size = 1
    for d in domains:
        size *= len(d)
    if size > limit:
        return None
    return any(not breaks(rule, {**cfg, **dict(zip(fields, combo))}, ex.model) for combo in itertools.product(*domains))


def test_minimal_reasons_by_brute_force() -> None:
    """On a few rejected names, every reported rule with a small field product is silenced by its own fields alone,
    found by trying every assignment of them with the plain check (no solver)."""
    ex = explainer("gfx950")
    rules = {r.id: r for r in (*ex.model.derived_rules, *ex.data.rules)}
    tried = 0
    for name in (TILE_96, WAVE_8X2, GFX90A_CK_ONLY,
                 "grouped_conv_fwd_fp32_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x8_vec16_4_8"):
        exp = ex.explain(name, neighbours=0, fixes=False)
        assert not exp.valid
        for reason in exp.reasons:
            rule = rules.get(reason.rule)
            if rule is None:
                continue
            found = _own_field_search(ex, rule, exp.config)
            if found is not None:
                tried += 1
                assert found, (name, reason.rule)
    assert tried >= 4


# -- nearest valid kernels -------------------------------------------------------------------------------------------
NAME_FIELDS_SKIP = {"variant", "ndim", "dtype", "layout"}


def brute_force_min_changes(ex: Explainer, cfg: dict, upto: int = 2) -> int:
    """The fewest changed name fields (within the stratum) of a valid kernel, found by trying every change of one,
    then two fields with the plain check; upto + 1 when none of that size exists."""
    kind = kind_of_variant(cfg["variant"])
    fields = [f for f in ex.model.fields(kind) if f.name not in NAME_FIELDS_SKIP]
    for size in range(1, upto + 1):
        for group in itertools.combinations(fields, size):
            options = [[v for v in f.values if v != cfg.get(f.name) or type(v) is not type(cfg.get(f.name))]
                       for f in group]
            for combo in itertools.product(*options):
                trial = {**cfg, **{f.name: v for f, v in zip(group, combo)}}
                if is_valid(ex.model, trial):
                    return size
    return upto + 1


def neighbour_config(name: str) -> dict:
    return {k: v for k, v in parse_name(name).items() if k != "kind"}


def check_neighbours(ex: Explainer, exp: Explanation, members: set[str] | None) -> None:
    assert exp.neighbours, exp.search
    counts = []
    for nb in exp.neighbours:
        cfg = neighbour_config(nb.name)
        assert is_valid(ex.model, cfg), nb.name
        if members is not None:
            assert nb.name in members, nb.name
        differing = [k for k in cfg if k in exp.config
                     and (cfg[k] != exp.config[k] or type(cfg[k]) is not type(exp.config[k]))]
        assert sorted(differing) == sorted(c.field for c in nb.changes), nb
        assert nb.optimal
        counts.append(len(nb.changes))
    assert counts == sorted(counts)
    assert len({nb.name for nb in exp.neighbours}) == len(exp.neighbours)


@pytest.mark.parametrize("arch,name", [
    ("gfx950", TILE_96), ("gfx942", WAVE_8X2), ("gfx90a", GFX90A_CK_ONLY),
    ("gfx950", "grouped_conv_bwd_weight_fp32_nhwgc_2d_compv3_cshuffle_intrawave_64x64x32_2x2x1_32x32x4_vec4_4_4_streamk_tree"),
    ("gfx950", "grouped_conv_fwd_depthwise_fp16_ngchw_2d_16x16_f4_s1x1_p1x1_nb1_sub2x2_vec2_2"),
])
def test_neighbours_are_in_full_and_minimal(arch: str, name: str) -> None:
    ex = explainer(arch)
    exp = ex.explain(name, neighbours=3, fixes=False)
    assert not exp.valid
    members = {k["name"] for k in full_set(arch)}
    check_neighbours(ex, exp, members)
    assert exp.search["scope"] == "stratum"
    best = brute_force_min_changes(ex, exp.config)
    first = len(exp.neighbours[0].changes)
    assert (first == best) if best <= 2 else (first >= 3), (name, best, first)


def test_neighbours_in_the_open_space() -> None:
    ex = explainer("gfx942", "-ck-curation")
    exp = ex.explain(WAVE_4X4X2, neighbours=3, fixes=False)
    assert not exp.valid and [r.rule for r in exp.rejecting] == ["arch.workgroup-size"]
    check_neighbours(ex, exp, None)  # the open space is far too large to enumerate: the plain check is the oracle
    assert len(exp.neighbours[0].changes) == brute_force_min_changes(ex, exp.config, upto=1) == 1


def test_neighbours_widen_when_the_stratum_is_empty_or_unmodelled() -> None:
    exp = explainer("gfx1201").explain(GFX1201_CK_ONLY, neighbours=3, fixes=False)
    assert exp.neighbours == [] and exp.search["scope"] == "none"
    assert "no bwd_data kernel" in str(exp.search["text"])
    fp8 = explainer("gfx950").explain(TILE_96.replace("fp16", "fp8"), neighbours=2, fixes=False)
    assert fp8.search["scope"] == "widened" and fp8.neighbours
    members = {k["name"] for k in full_set("gfx950")}
    for nb in fp8.neighbours:
        assert any(c.field == "dtype" for c in nb.changes)
        assert nb.name in members


def test_neighbours_are_deterministic() -> None:
    a = Explainer("gfx950").explain(TILE_96, neighbours=3)
    b = Explainer("gfx950").explain(TILE_96, neighbours=3)
    assert a.to_json() == b.to_json()


# -- the cases that must work ----------------------------------------------------------------------------------------
def test_gfx950_only_wave_layout_asked_for_gfx942() -> None:
    # 8x2x1 and 4x4x1 are in CK's wave-layout table of gfx950 only, but a table is curation: gfx942's hardware runs a
    # workgroup of 16 waves as well, so both layouts are in gfx942's open space, and only CK's curation leaves them out.
    for name in (WAVE_8X2, WAVE_4X4):
        assert explainer("gfx950", "-ck-curation").explain(name, neighbours=0).valid
        assert explainer("gfx942", "-ck-curation").explain(name, neighbours=0).valid
    exp = explainer("gfx942").explain(WAVE_8X2, neighbours=0)
    assert {r.rule for r in exp.rejecting} == {"ck.wave-layout", "ck.wave-warp"}
    assert exp.rejecting_families() == ["ck-curation"]
    assert any(n.kind == "curation-only" for n in exp.notes)
    code, out, _ = cli("explain", WAVE_8X2, "--arch", "gfx942", "--neighbours", "1")
    assert code == 1 and "ck.wave-layout" in out and "WARP_SUPPORTED_COMBINATIONS" in out
    assert "only CK's curation leaves it out" in out
    # 32 waves of 64 lanes are more than a workgroup holds, a fact; of 32 lanes (gfx1250, which has the bf16
    # 16x16x32 warp GEMM) they are 1024 threads, which it holds.
    exp = explainer("gfx950", "-ck-curation").explain(WAVE_4X4X2, neighbours=0)
    assert [r.rule for r in exp.rejecting] == ["arch.workgroup-size"] and exp.valid_on == ["gfx1250"]


@pytest.mark.parametrize("arch,name", [("gfx90a", GFX90A_CK_ONLY), ("gfx1201", GFX1201_CK_ONLY)])
def test_kernel_ck_generates_but_ckspace_rejects(arch: str, name: str) -> None:
    from reference.ck_full import full_configs

    assert name in {format_name(c) for c in full_configs(arch)}  # CK generates it
    exp = explainer(arch).explain(name, neighbours=0)
    assert not exp.valid
    assert exp.rejecting_families() == ["arch"]
    assert "arch.warp-tile" in {r.rule for r in exp.rejecting}
    policy = [n for n in exp.notes if n.kind == "hardware-policy"]
    assert policy and "arch.warp-tile" in policy[0].text and "hardware facts win" in policy[0].text
    code, out, _ = cli("explain", name, "--arch", arch, "--neighbours", "0")
    assert code == 1 and "arch.warp-tile" in out and "is no bf16 warp GEMM with matrix instructions" in out
    # CK Tile builds the gfx1201 one, but its MFMA warp GEMM is compiled out there: the message says so
    assert "so the kernel would compile to code without matrix instructions" in " ".join(out.split())


def test_every_kernel_ckspace_drops_on_gfx90a_breaks_a_hardware_fact() -> None:
    from reference.ck_full import full_configs

    ours = {k["name"] for k in full_set("gfx90a")}
    dropped = [c for c in full_configs("gfx90a") if format_name(c) not in ours]
    ex = explainer("gfx90a")
    for cfg in random.Random(3).sample(dropped, 40):
        exp = ex.explain(format_name(cfg), neighbours=0, fixes=False)
        assert exp.rejecting_families() == ["arch"], exp.name


def test_rejected_only_by_an_optional_family() -> None:
    exp = explainer("gfx950", "+ck-known-issues").explain(KNOWN_ISSUE, neighbours=1)
    assert not exp.valid and exp.rejecting_families() == ["ck-known-issues"]
    note = next(n for n in exp.notes if n.kind == "optional-only")
    assert "ck-known-issues" in note.text and "--rules -ck-known-issues" in note.text
    assert "valid with the default rules" in note.text
    assert exp.sets["full"] is True
    assert exp.neighbours and exp.neighbours[0].name in {k["name"] for k in full_set("gfx950", "+ck-known-issues")}
    # With the default rules it is valid, with a warning about the known issue.
    code, out, _ = cli("explain", KNOWN_ISSUE)
    assert code == 0 and "warning" in out and "known issue" in out and "--rules +ck-known-issues" in out
    code, out, _ = cli("explain", ARCHFILTER_ONLY, "--rules", "+ck-archfilter", "--neighbours", "1")
    assert code == 1 and "rejected only by the optional family ck-archfilter" in out and "--rules -ck-archfilter" in out


# -- a valid kernel --------------------------------------------------------------------------------------------------
def test_valid_kernel_text_and_derived_panel() -> None:
    code, out, err = cli("explain", VALID)
    assert code == 0 and not err
    assert "✓ valid" in out and "gfx950" in out and "full ✓" in out
    # LDS: the A and B tiles (128·64·2 bytes each); the epilogue's shuffle tile: a 16x16 warp tile holds 4 elements
    # per lane, vec_c 8 takes 2 of them along M: (16·2·2) x (16·2) fp16 = 4096 bytes
    for word in ("block_per_cu", "lds_bytes", "threads", "a_per_thread", "b_per_thread", "64 * 2 * 2 * 1 = 256",
                 "((128 * 64 * 2 + 15) // 16 + (128 * 64 * 2 + 15) // 16) * 16 = 32768", "64 * 32 * 2 = 4096",
                 "max(32768, 0, 4096) * 1 = 32768"):
        assert word in out, word
    exp = explainer().explain(VALID)
    assert exp.neighbours is None and exp.reasons == []
    derived = {d.field: d.value for d in exp.derived}
    assert derived["threads"] == 256 and derived["lds_bytes"] == 32768 and "warp_tile_k" not in derived  # a free field
    assert derived["a_per_thread"] == 32 and derived["b_per_thread"] == 32 and derived["block_per_cu"] == 2


def test_valid_kernel_needs_no_solver() -> None:
    code = ("import sys\nfrom ckspace.cli import main\nrc = main(['explain', %r])\n"
            "print(rc, any(m.startswith('ortools') for m in sys.modules))" % VALID)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "0 False", proc.stdout + proc.stderr


def test_rejected_kernel_text() -> None:
    code, out, _ = cli("explain", TILE_96)
    assert code == 1
    assert "✗ rejected" in out
    assert "tile_m 96 is not a multiple of wave_m·warp_tile_m = 64" in out
    assert "source: CK Tile: ck_tile/ops/gemm/block/block_universal_gemm_as_bs_cr.hpp:61-68" in out
    assert out.index("arch ·") < out.index("ck-curation ·")  # grouped by family, in the data's order
    assert "nearest valid kernels" in out and "1 change: tile_m 96 →" in out
    assert out.count("\n  1. ") == 1 and "\n  3. " in out


def test_name_diff_marks_changed_parts() -> None:
    parts = name_diff(TILE_96, VALID)
    changed = "".join(t for t, c in parts if c)
    assert "".join(t for t, _ in parts) == VALID
    assert "128" in changed and "16" in changed and "_" not in changed


# -- the sets that contain it ----------------------------------------------------------------------------------------
def ck_lists(name: str) -> dict[str, bool]:
    """Membership in CK's shipped lists, from the independent reading of the JSON files (a 3D kernel of full is
    named nhwgc, CK's files name it ndhwgc: one kernel)."""
    try:
        from reference import ck_configs
    except ImportError:  # pragma: no cover
        from tests.reference import ck_configs  # type: ignore[no-redef]
    spelt = name.replace("_nhwgc_3d_", "_ndhwgc_3d_")
    return {cat: any(spelt in ck_configs.names(p) for p in ck_configs.files(part))
            for cat, part in (("ck-profiler", "profiler"), ("ck-tests", "tests"))}


def ck_subsets(name: str, arch: str = "gfx950") -> dict[str, bool]:
    """Membership in CK's full-tests and tiny, from the independent re-implementation of CK's procedures."""
    import selection_oracle as O

    full_tests, tiny = O.ck_lists(arch)
    return {"ck-full-tests": name in full_tests, "ck-tiny": name in tiny}


def test_set_membership_comes_from_the_cached_selection(tmp_path, monkeypatch) -> None:
    from ckspace.select import selection
    from ckspace.select.sets import selected_names
    from ckspace.solve.kernels import KernelSpace

    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path))
    exp = Explainer("gfx950").explain(VALID)
    # neither name is in CK's shipped configs (tests/reference/ck_configs.py reads none of them)
    assert exp.sets == {"full": True, "ck-default": False, "ck-rdna": False, "ck-profiler": False, "ck-tests": False,
                        **ck_subsets(VALID), "tests": None, "tiny": None}  # nothing selected on this machine yet
    assert Explainer("gfx950").explain(TILE_96, neighbours=0, fixes=False).sets == {
        "full": False, "ck-default": False, "ck-rdna": False, "ck-profiler": False, "ck-tests": False, "tests": False,
        "tiny": False, "ck-full-tests": False, "ck-tiny": False}  # the sets are subsets of full
    code, out, _ = cli("enumerate", "--arch", "gfx950", "--set", "tiny", "--format", "names")
    tiny = out.split()
    assert code == 0 and len(tiny) == 22  # README: tiny has 22 kernels on gfx950
    # From now on membership is read from the cache that enumerate filled: explain must not solve anything.
    monkeypatch.setattr(selection, "solve_cover", lambda *a, **k: pytest.fail("explain re-solved a selection"))
    ex = Explainer("gfx950")
    outside = next(k["name"] for k in full_set("gfx950") if k["name"] not in set(tiny))
    assert ex.explain(outside).sets == {"full": True, "ck-default": False, "ck-rdna": False, **ck_lists(outside),
                                        "tests": None, "tiny": False, **ck_subsets(outside)}
    for name in tiny[::5]:
        assert ex.explain(name).sets == {"full": True, "ck-default": False, "ck-rdna": False, **ck_lists(name),
                                         "tests": None, "tiny": True, **ck_subsets(name)}, name
    code, out, _ = cli("explain", tiny[0], "--format", "json")
    assert code == 0 and json.loads(out)["sets"]["tiny"] is True
    # --select-sets selects a missing set (and caches it): the same set as enumerate's, selected again from scratch.
    monkeypatch.undo()
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path / "other"))
    ex = Explainer("gfx950")
    assert selected_names(ex.data, "gfx950", ex.default_families, "tiny") is None
    assert selected_names(ex.data, "gfx950", ex.default_families, "tiny",
                          lambda: KernelSpace(arch="gfx950")) == frozenset(tiny)


# -- CK API revisions ------------------------------------------------------------------------------------------------
EXPLICIT_GEMM = ("grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec4_4_4"
                 "_explicit_gemm")


# The newest CK's own fact (ck-api-2026.06, on by default): the A tile's K side of 32 at X1 = 12 elements per access
# (12 per thread < vec_a 16) takes X0 = min(64, 32 // 12) = 2 threads, and 2 · 12 = 24 does not cover 32: the newest
# pattern static_asserts that its passes cover the side; CK Tile 2025.11 has no such assert (8 such kernels of the
# audit built with it). The second breaks it with 96 elements at 1 per access (64 threads, 96 % 64 != 0), which
# 2025.11 cannot load in one pass either (ck-api-2025.11.a-load-threads).
NEWEST_ONLY = ("grouped_conv_fwd_bf16_nhwgc_2d_basic_v1_default_interwave_192x192x32_4x2x1_16x16x32_vec16_4_4_wg4_gm4"
               "_filter1x1_pad0_pad011")
NEITHER = "grouped_conv_bwd_data_bf16_nhwgc_2d_compv1_cshuffle_intrawave_128x32x96_4x1x1_32x32x16_vec1_1_1"


def test_a_fact_of_the_default_revision_says_which_older_revision_builds_the_kernel() -> None:
    threads, x, y, vec_a = 4 * 2 * 64, 32, 192, 16
    x1 = min(vec_a, x * y // threads)
    x0 = min(64, x // x1)
    assert (x1, x0, x % (x0 * x1)) == (12, 2, 8)  # the arithmetic the note rests on, by hand
    code, out, _ = cli("explain", NEWEST_ONLY, "--rules", "-ck-curation", "--neighbours", "0")
    assert code == 1 and "ck-api-2026.06.a-load-cover" in out
    assert ("rejected only by the CK API revision family ck-api-2026.06: CK API 2026.06 (the default) cannot build "
            "it; CK API 2025.11 builds it: valid with --ck-api 2025.11") in out
    assert cli("explain", NEWEST_ONLY, "--rules", "-ck-curation", "--ck-api", "2025.11")[0] == 0
    code, out, _ = cli("explain", NEITHER, "--rules", "-ck-curation", "--neighbours", "0")
    assert code == 1 and "CK API 2026.06 (the default) cannot build it; CK API 2025.11 cannot build it either" in out
    code, out, _ = cli("explain", NEITHER, "--rules", "-ck-curation", "--ck-api", "2025.11", "--neighbours", "0")
    assert code == 1 and "ck-api-2025.11.a-load-threads" in out and "--ck-api 2026.06 applies the family" in out


def test_ck_api_revision() -> None:
    code, out, _ = cli("explain", EXPLICIT_GEMM, "--ck-api", "2025.11", "--neighbours", "2")
    assert code == 1 and "explicit_gemm needs CK API 2026.06" in out and "ck-api-2025.11.explicit-gemm" in out
    assert "rejected only by the CK API revision family ck-api-2025.11" in out and "--ck-api 2026.06" in out
    code, out, _ = cli("explain", EXPLICIT_GEMM, "--ck-api", "2025.11", "--format", "json")
    data = json.loads(out)
    assert data["rules"][-1] == "ck-api-2025.11" and data["rejected_by"] == ["ck-api-2025.11"]
    # the enabled one; switched-off families (toolchain-clang22 on this bf16 kernel with vec_c 2) are listed too
    (violation,) = [v for v in data["violations"] if v["enabled"]]
    assert violation["fix"] == {"explicit_gemm": False}
    members = {k["name"] for k in full_set("gfx950", "+ck-api-2025.11")}
    assert data["neighbours"] and all(n["name"] in members for n in data["neighbours"])
    assert EXPLICIT_GEMM not in members
    # Without --ck-api (the newest revision) it is valid; the note says which revision cannot build it.
    code, out, _ = cli("explain", EXPLICIT_GEMM)
    assert code == 0 and "CK API 2025.11 cannot build it" in out
    assert cli("explain", EXPLICIT_GEMM, "--ck-api", "2026.06")[0] == 0
    code, out, _ = cli("explain", EXPLICIT_GEMM, "--ck-api", "2025.11", "--rules", "-ck-curation", "--neighbours", "0")
    assert code == 1 and "rules arch, pipeline, names, ck-api-2025.11" in out
    code, _, err = cli("explain", EXPLICIT_GEMM, "--ck-api", "1999.01")
    assert code == 2 and "unknown CK API revision" in err and err.count("\n") == 1


# -- malformed names -------------------------------------------------------------------------------------------------
def test_malformed_name_points_at_the_part() -> None:
    code, out, err = cli("explain", "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x12x_2x2x1_16x16x32")
    assert code == 2 and not out
    assert err.count("\n") == 1 and err.startswith("ckspace: error:")
    assert "tile: expected MxNxK, three integers" in err
    code, _, err = cli("explain", VALID.upper())
    assert code == 2 and "did you mean" in err and VALID in err


@pytest.mark.parametrize("typo,right", [("cshufle", "cshuffle"), ("intrawav", "intrawave"), ("cshuffel", "cshuffle")])
def test_misspelt_word_gets_the_obvious_reading(typo: str, right: str) -> None:
    code, _, err = cli("explain", VALID.replace(f"_{right}_", f"_{typo}_"))
    assert code == 2 and err.count("\n") == 1 and f"(got '{typo}')" in err and f"did you mean '{VALID}'?" in err


def test_no_suggestion_when_no_reading_is_obvious() -> None:
    code, _, err = cli("explain", VALID.replace("_cshuffle_", "_zzz_"))
    assert code == 2 and "did you mean" not in err
    code, _, err = cli("explain", VALID.replace("128x128x64", "128x12x"))
    assert code == 2 and "tile: expected MxNxK, three integers (got '128x12x')" in err and "did you mean" not in err


def test_out_of_domain_word_is_a_typo_when_near_a_value_else_a_domain_verdict() -> None:
    # near a value (difflib ratio >= 0.8): a malformed name with the corrected one as its suggestion (issue 14)
    with pytest.raises(KernelNameError) as exc:
        explainer().explain(VALID.replace("compv3", "wavlet"), neighbours=0)
    assert exc.value.part == "pipeline" and exc.value.suggestion == VALID.replace("compv3", "wavelet")
    # near none: the model explains it as outside the field's domain
    exp = explainer().explain(VALID.replace("_fp16_", "_fp64_"), neighbours=0)
    assert not exp.valid and "model.domain-dtype" in {r.rule for r in exp.reasons}


def test_usage_errors() -> None:
    for args in (["explain"], ["explain", VALID, "--arch", "gfx1"], ["explain", VALID, "--rules", "+nope"],
                 ["explain", VALID, "--neighbours", "-1"], ["explain", VALID, "--format", "yaml"]):
        code, out, err = cli(*args)
        assert code == 2 and err.startswith("ckspace: error:") and err.count("\n") == 1, (args, err)


# -- JSON ------------------------------------------------------------------------------------------------------------
def documented_keys() -> dict[str, set[str]]:
    """The keys each table of docs/explain-json.md documents, per section."""
    text = (ROOT / "docs" / "explain-json.md").read_text()
    out: dict[str, set[str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            continue
        m = re.match(r"\|([^|]*)\|", line)
        if m and section and not set(m.group(1).strip()) <= set("-") and m.group(1).strip() != "key":
            out.setdefault(section, set()).update(re.findall(r"`([a-z_]+)`", m.group(1)))
    return out


def test_json_follows_the_documented_schema() -> None:
    docs = documented_keys()
    code, out, _ = cli("explain", TILE_96, "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["schema_version"] == SCHEMA_VERSION == 1
    assert set(data) == docs["Result object"]
    assert data["status"] == "rejected" and data["arch"] == "gfx950" and data["kind"] == "gemm"
    assert data["fields"]["tile_m"] == 96 and data["sets"] == {"full": False, "ck-default": False, "ck-rdna": False, "ck-profiler": False, "ck-tests": False, "tests": False, "tiny": False, "ck-full-tests": False, "ck-tiny": False}
    for v in data["violations"]:
        assert set(v) == docs["violation"]
        assert isinstance(v["enabled"], bool) and isinstance(v["fields"], list)
    for d in data["derived"]:
        assert set(d) == docs["derived"]
    for n in data["neighbours"]:
        assert set(n) == docs["neighbour"] and n["changed"] == len(n["changes"])
        assert all(set(c) == {"field", "from", "to"} for c in n["changes"])
    for note in data["notes"]:
        assert set(note) == docs["note"]
    assert data["rejected_by"] == ["arch", "ck-curation"]
    code, out, _ = cli("explain", VALID, "--format", "json")
    valid = json.loads(out)
    assert code == 0 and valid["status"] == "valid" and valid["violations"] == [] and valid["neighbours"] is None


def test_json_batch_follows_the_documented_schema() -> None:
    docs = documented_keys()
    code, out, err = cli("explain", "-", "--format", "json", stdin=f"{VALID}\n\n{TILE_96}\nnot_a_name\n")
    assert code == 2 and err.count("\n") == 1 and "line 4" in err
    data = json.loads(out)
    assert set(data) == docs["Batch object"]
    assert data["summary"] == {"names": 3, "valid": 1, "rejected": 1, "malformed": 1,
                               "rejected_by_family": {"arch": 1, "ck-curation": 1}, "known_issue_warnings": 0}
    statuses = [r["status"] for r in data["results"]]
    assert statuses == ["valid", "rejected", "malformed"]
    assert data["results"][1]["neighbours"] is None  # batch without --verbose: no search
    bad = data["results"][2]
    assert bad["line"] == 4 and set(bad["error"]) == {"message", "part", "expected", "got", "suggestion"}


# -- batch -----------------------------------------------------------------------------------------------------------
def test_batch_exit_codes_and_summary() -> None:
    code, out, err = cli("explain", "-", stdin=f"{VALID}\n{KNOWN_ISSUE}\n")
    assert code == 0 and not err
    assert "2 names on gfx950" in out and "valid" in out and "known issues" in out
    code, out, _ = cli("explain", "-", stdin=f"{VALID}\n{TILE_96}\n{WAVE_8X2}\n")
    assert code == 1
    assert re.search(r"rejected\s+│?\s*2", out) and "by arch" in out and "by ck-curation" in out
    code, out, err = cli("explain", "-", stdin=f"{VALID}\n{TILE_96}\ngrouped_conv_fwd\n")
    assert code == 2 and "line 3" in err and "malformed" in out
    code, out, _ = cli("explain", "-", "--verbose", "--neighbours", "1", stdin=f"{TILE_96}\n{VALID}\n")
    assert code == 1 and "tile_m 96 is not a multiple" in out and "✓ valid" in out and "nearest valid kernels" in out
    code, out, _ = cli("explain", "-", stdin="")
    assert code == 0 and "0 names" in out


def test_batch_in_a_subprocess() -> None:
    names = [k["name"] for k in random.Random(5).sample(full_set("gfx950"), 20)]
    mutated = [format_name({**config_of(k), "epilogue": "default"})
               for k in random.Random(6).sample([k for k in full_set("gfx950") if _gemm(k)], 10)]
    proc = run("explain", "-", "--format", "json", stdin="\n".join(names + mutated) + "\n")
    assert proc.returncode == 1, proc.stderr
    summary = json.loads(proc.stdout)["summary"]
    assert summary["valid"] == 20 and summary["rejected"] == 10 and summary["rejected_by_family"] == {"ck-curation": 10}


def test_subprocess_single_names() -> None:
    ok = run("explain", VALID)
    assert ok.returncode == 0 and "✓ valid" in ok.stdout and not ok.stderr
    bad = run("explain", "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x12x_2x2x1_16x16x32")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    open_space = run("explain", WAVE_4X4X2, "--arch", "gfx942", "--rules", "-ck-curation", "--format", "json")
    assert open_space.returncode == 1 and json.loads(open_space.stdout)["rules"] == ["arch", "pipeline", "names",
                                                                                            "ck-api-2026.06"]


# -- fuzzing: no input crashes or prints a traceback -----------------------------------------------------------------
def assert_clean(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2)
    assert "Traceback" not in out + err
    if code == 2:
        assert err.startswith("ckspace: error:") and err.count("\n") == 1, err
    suggested = re.search(r"did you mean '([^']*)'\?$", err.strip())
    if suggested:  # a suggestion is a well-formed name, never a guess that fails again
        parse_name(suggested.group(1))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120))
def test_fuzz_any_text(text: str) -> None:
    assert_clean(*cli("explain", text, "--neighbours", "0"))


TOKENS = ["fwd", "bwd", "data", "weight", "depthwise", "fp16", "bf16", "fp32", "fp8", "nhwgc", "ngchw", "2d", "3d",
          "compv3", "compv4", "mem", "wavelet", "basic", "async", "v1", "cshuffle", "default", "intrawave", "interwave",
          "128x128x64", "96x300x8", "0x0x0", "2x2x1", "8x8x8", "16x16x32", "4x64x32", "vec8", "vec16", "1", "0", "8",
          "wg2", "gm4", "dsb", "2stage", "filter3x3", "explicit", "gemm", "streamk", "tree", "persistent", "large",
          "tensor", "pad010", "14x28", "f3", "s2x2", "p1x1", "nb1", "sub2x4", "999999999999999999", ""]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=22), st.sampled_from(["gfx950", "gfx90a", "gfx1201"]),
       st.sampled_from([None, "-ck-curation", "+ck-archfilter,+ck-known-issues"]), st.sampled_from(["0", "1"]))
def test_fuzz_name_like_input(tokens: list[str], arch: str, rules: str | None, neighbours: str) -> None:
    name = "grouped_conv_" + "_".join(tokens)
    args = ["explain", name, "--arch", arch, "--neighbours", neighbours] + (["--rules", rules] if rules else [])
    assert_clean(*cli(*args))
    assert_clean(*cli(*args, "--format", "json"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_one_token_of_a_real_name(data: st.DataObject) -> None:
    kernel = data.draw(st.sampled_from([k["name"] for k in full_set("gfx950")[::97]]))
    tokens = kernel.split("_")
    i = data.draw(st.integers(0, len(tokens) - 1))
    tokens[i] = data.draw(st.sampled_from(TOKENS) | st.text(alphabet="abcx0123456789", max_size=8))
    assert_clean(*cli("explain", "_".join(tokens), "--neighbours", "1"))


def test_batch_of_bytes_in_a_subprocess() -> None:
    proc = subprocess.run([sys.executable, "-m", "ckspace", "explain", "-"], input=b"\xff\xfe\x00junk\n" + VALID.encode() + b"\n",
                          capture_output=True, timeout=120)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert proc.stderr.decode().startswith("ckspace: error: line 1:")


def test_fuzz_batch_of_junk() -> None:
    junk = "\n".join(["", "   ", "x", VALID, "_" * 50, "grouped_conv_fwd_fp16_nhwgc_2d", "\x00", "é", TILE_96]) + "\n"
    code, out, err = cli("explain", "-", stdin=junk)
    assert code == 2 and "Traceback" not in out + err
    assert all(line.startswith("ckspace: error: line ") for line in err.strip().splitlines())


def test_batch_lists_the_rejected_and_warned_names_with_their_first_reason() -> None:
    code, out, _ = cli("explain", "-", stdin=f"{VALID}\n{TILE_96}\n{KNOWN_ISSUE}\n")
    assert code == 1
    listed = out[out.index("rejected:"):]
    assert f"  {TILE_96}: arch." in listed and "tile_m 96" in listed and VALID not in listed
    assert f"  {KNOWN_ISSUE}: " in out[out.index("known issues (warning):"):]


def test_batch_finds_names_in_log_and_csv_lines_and_skips_comments() -> None:
    log = (f"# a comment line\n\n"
           f"FAILED: obj/gfx950/u.o (kernel {VALID}) after 12s\n"
           f"name,tflops\n"
           f'"{TILE_96}",1.5\n'
           f"[2/9] {VALID} {WAVE_8X2}\n")
    code, out, err = cli("explain", "-", "--format", "json", stdin=log)
    data = json.loads(out)
    assert [r["name"] for r in data["results"]] == [VALID, TILE_96, VALID, WAVE_8X2]
    assert data["summary"]["malformed"] == 0 and code == 1 and not err


@pytest.mark.slow
@pytest.mark.parametrize("typo, part, fixed", [
    ("f16", "dtype", None),  # as near bf16 as fp16: both are named, no single suggestion
    ("compv33", "pipeline", "compv3"),
    ("nhwcg", "layout", "nhwgc"),
])
def test_a_token_near_a_real_value_is_a_typo_not_a_cascade(typo: str, part: str, fixed: str | None) -> None:
    good = {"dtype": "fp16", "pipeline": "compv3", "layout": "nhwgc"}[part]
    name = VALID.replace(f"_{good}_", f"_{typo}_", 1)
    code, out, err = cli("explain", name)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert f"{part}: expected" in err and f"(got '{typo}')" in err
    if fixed is None:
        assert "near: fp16 or bf16" in err
    else:
        assert f"did you mean '{VALID}'" in err
    # a word near no value (fp64) is explained by the model as outside the field's domain
    code, out, _ = cli("explain", VALID.replace("_fp16_", "_fp64_"))
    assert code == 1 and "model" in out


def test_explain_timings_split_the_run_and_leave_the_answer_alone(tmp_path):
    """--timings (issue 15: a profile of each run) prints one stderr line with the phases; stdout is unchanged."""
    import os
    import subprocess

    env = {**os.environ, "CKSPACE_CACHE_DIR": str(tmp_path / "cache")}
    name = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8"
    runs = [subprocess.run([sys.executable, "-m", "ckspace", "explain", name, "--arch", "gfx950", *extra],
                           capture_output=True, text=True, env=env) for extra in ([], ["--timings"])]
    assert [r.returncode for r in runs] == [1, 1] and runs[0].stdout == runs[1].stdout
    line = runs[1].stderr.strip()
    assert line.startswith("timings: model ") and "rules " in line and "neighbours " in line and "total " in line
    assert "\n" not in line and runs[0].stderr == ""
