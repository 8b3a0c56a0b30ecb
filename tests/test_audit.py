"""`ckspace verify --audit`: the near misses of a fact rule, the plan file and its sections, the report's arithmetic
and the command's usage errors.

The near misses are checked with the plain-Python rule check (ckspace.rules.check), not with the solver that drew
them; the report's figures are counted by hand from the verdicts given.
"""

from __future__ import annotations

import json

import pytest

from ckspace import Space
from ckspace.cli import main
from ckspace.codegen import audit as A
from ckspace.codegen.ckapi import combine_rules
from ckspace.codegen.verify import KernelResult, VerifyResult
from ckspace.rules.check import broken_rules
from ckspace.select import audit as P


def _open(arch: str = "gfx942") -> Space:
    return Space(arch=arch, rules=combine_rules("-ck-curation", "2025.11"), use_cache=False)


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["arch.tile-m-divisible", "arch.lds-capacity", "ck-api-2025.11.dsb-pipeline",
                                  "pipeline.b-load-vector", "arch.warp-tile"])
def test_near_misses_break_their_rule_and_no_other(rule):
    space = _open()
    from ckspace.select.sample import sample_space

    # one stratum (forward 2D fp16) keeps the count's factoring to a second or two
    picked, total = sample_space(space.breaking(rule), 6, seed=3, variant="forward", ndim=2, dtype="fp16")
    assert total > 6 and len(picked) == 6
    for cfg in picked:
        cfg = dict(cfg)
        enabled = [r.id for r in broken_rules(space.model, cfg, space.families)]
        assert enabled == [rule], (cfg["name"], enabled)
        assert space.parse(cfg["name"])["pipeline"] == cfg["pipeline"]  # a name that reads back


def test_a_rule_of_the_other_kernel_family_has_no_gemm_near_miss():
    # the depthwise rules cannot be broken by a GEMM kernel, and CK API 2025.11 has no depthwise kernel at all
    from ckspace.select.sample import sample_space

    _, total = sample_space(_open().breaking("pipeline.dw-lds"), 3, seed=0)
    assert total == 0


def test_breaking_refuses_a_rule_that_is_off_or_built_in():
    from ckspace.errors import UsageError

    with pytest.raises(UsageError, match="not enabled"):
        _open().breaking("ck.tile")
    with pytest.raises(UsageError, match="built in"):
        _open().breaking("model.derived-layout")


@pytest.mark.slow
def test_the_plan_is_reproducible_and_reads_back_from_its_text():
    space = _open()
    rules = [r for r in P.fact_rules(space) if r.id in ("arch.tile-m-divisible", "pipeline.dw-lds")]
    one = {"variant": ["forward", "bwd_data"], "ndim": 2, "dtype": "fp16"}  # two strata: seconds, not a minute
    plan = P.draw(space, 4, 2, seed=5, stratify="variant,pipeline", rules=rules, filters=one)
    again = P.draw(space, 4, 2, seed=5, stratify="variant,pipeline", rules=rules, filters=one)
    assert plan.text() == again.text()
    kinds = [(s.kind, s.detail) for s in plan.sections]
    assert kinds == [("uniform", ""), ("stratified", "variant,pipeline"), ("near-miss", "arch.tile-m-divisible"),
                     ("near-miss", "pipeline.dw-lds")]
    assert [len(s.names) for s in plan.sections] == [4, 4, 2, 0]
    assert "no kernel breaks it alone" in plan.sections[3].note
    read = P.parse(plan.text().splitlines(), "plan")
    assert [(s.kind, s.detail, s.names) for s in read.sections] == [(s.kind, s.detail, s.names) for s in plan.sections]
    # each draw in a random order of its own, so that a budget's prefix of it is a uniform draw too: the names are
    # the sample's (sorted there), and not in its order
    from ckspace.select.sample import sample_space

    drawn, _ = sample_space(space, 4, 5, **one)
    assert sorted(plan.sections[0].names) == sorted(str(c["name"]) for c in drawn)
    assert plan.sections[0].names != sorted(plan.sections[0].names)
    # no near misses asked for: no near-miss section, not even an empty one
    bare = P.draw(space, 2, 0, seed=5, stratify="", rules=rules, filters=one)
    assert [(s.kind, len(s.names)) for s in bare.sections] == [("uniform", 2)]
    # every uniform and stratified kernel is one the facts accept (the plain-Python check)
    for name in plan.sections[0].names + plan.sections[1].names:
        assert space.check(name) == [], name


def test_a_plain_names_file_is_classed_by_the_rules_each_kernel_breaks():
    space = _open()
    valid = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
    compv2 = "grouped_conv_fwd_fp16_nhwgc_2d_compv2_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
    twice = "grouped_conv_fwd_fp16_nhwgc_2d_compv2_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8_dsb"
    assert P.parse([valid, compv2], "f") is None  # no section header: a plain names file
    configs = {n: {**space.parse(n), "name": n} for n in (valid, compv2, twice)}
    plan = P.classify(space, [valid, compv2, twice], configs)
    assert [(s.kind, s.detail, s.names) for s in plan.sections] == [
        ("listed", "accepted", [valid]), ("near-miss", "ck-api-2025.11.compv2", [compv2])]


def test_a_section_header_that_is_not_one_is_an_error():
    from ckspace.errors import DataError

    with pytest.raises(DataError, match=r"plan:2: not an audit section"):
        P.parse(["# audit: uniform", "# audit: near-miss", "x"], "plan")
    with pytest.raises(DataError, match=r"plan: 1 name\(s\) before the first '# audit:' section \(k0\)"):
        P.parse(["k0", "# audit: uniform", "k1"], "plan")


def test_interleaving_takes_each_section_in_turn():
    plan = P.AuditPlan([P.Section("uniform", "", ["a", "b", "c"]), P.Section("near-miss", "r", ["x", "a"]),
                        P.Section("near-miss", "s", ["y"])])
    assert P.interleaved(plan) == ["a", "x", "y", "b", "c"]


def _result(verdicts: dict[str, str]) -> VerifyResult:
    return VerifyResult("gfx942", "test", [KernelResult(n, s, "error: boom 12" if s == "failed" else "")
                                           for n, s in verdicts.items()])


def test_the_report_counts_precision_near_miss_failures_and_the_confusion_matrix():
    space = _open()
    good = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
    good2 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8"
    good3 = "grouped_conv_fwd_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
    miss = "grouped_conv_fwd_fp16_nhwgc_2d_compv2_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
    miss2 = "grouped_conv_fwd_bf16_nhwgc_2d_compv2_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
    plan = P.AuditPlan([P.Section("uniform", "", [good, good2, good3]),
                        P.Section("near-miss", "ck-api-2025.11.compv2", [miss, miss2])])
    result = _result({good: "ok", good2: "failed", good3: "not-run", miss: "failed", miss2: "ok"})
    configs = {n: {**space.parse(n), "name": n} for n in (good, good2, good3, miss, miss2)}
    rep = A.report(space, plan, result, configs)
    uniform, near = rep.sections
    assert (uniform.kernels, uniform.compiled, uniform.built, uniform.failed, uniform.not_run) == (3, 2, 1, 1, 1)
    assert uniform.share == 0.5 and uniform.meets is False
    assert uniform.errors == [("error: boom N", 1, good2)]
    assert (near.compiled, near.failed, near.share, near.built_examples) == (2, 1, 0.5, [miss2])
    assert rep.confusion == {"accepted": {"built": 1, "failed": 1}, "rejected": {"built": 1, "failed": 1}}
    assert not rep.complete and not rep.met
    assert rep.misses == ["uniform precision 50.0% < 99% (1 of 2)",
                          "near misses of ck-api-2025.11.compv2 fail 50.0% < 95% (1 of 2)"]
    text = A.text(rep, "2025.11")
    assert "incomplete" in text and "below target: uniform precision 50.0%" in text
    assert "| `ck-api-2025.11.compv2` | 2 | 1 | 50.0% |" in A.markdown(rep)
    json.dumps(rep.to_json())  # plain data
    # all built with matrix instructions, all near misses failed: the targets hold
    rep = A.report(space, plan, _result({good: "ok", good2: "ok", good3: "ok", miss: "failed", miss2: "no-matrix"}),
                   configs)
    assert rep.complete and rep.met and rep.misses == []


@pytest.mark.parametrize("argv, message", [
    (["--near-misses", "3"], "--near-misses goes with --audit"),
    (["--format", "markdown"], "--format markdown goes with --audit"),
    (["--audit", "--all"], "--audit draws its kernels itself"),
    (["--audit", "--set", "ck-default"], "--audit measures the facts on the open space"),
    (["--audit", "--near-misses", "-1"], "--near-misses must be at least 0"),
    (["--audit", "--names", "x.txt", "--near-misses", "3"], "--audit --names compiles the plan in the file"),
])
def test_audit_usage_errors_are_one_line(tmp_path, capsys, argv, message):
    code = main(["verify", "--arch", "gfx942", "-o", str(tmp_path / "v"), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err


@pytest.mark.slow
def test_write_plan_then_audit_it_where_nothing_is_compiled_in_time(tmp_path, capsys):
    plan_file = tmp_path / "plan.txt"
    base = ["verify", "--arch", "gfx942", "--audit", "--ck-api", "2025.11", "--toolchain", "none"]
    assert main([*base, "--sample", "2", "--near-misses", "1", "--stratify", "none", "--variant", "forward",
                 "--ndim", "2", "--dtype", "fp16", "--write-plan", str(plan_file)]) == 0
    text = plan_file.read_text()
    assert text.count("# audit: uniform") == 1 and "# audit: stratified" not in text
    assert "# audit: near-miss arch.lds-capacity" in text
    capsys.readouterr()
    # a budget spent before the first compile: every kernel not run, the audit incomplete, exit 1
    code = main([*base, "--names", str(plan_file), "--budget", "0.001", "-o", str(tmp_path / "v"), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and not out["audit"]["complete"] and not out["audit"]["met"]
    sections = {(s["kind"], s["detail"]): s for s in out["audit"]["sections"]}
    assert sections[("uniform", None)]["kernels"] == 2 and sections[("uniform", None)]["compiled"] == 0
    not_run = sum(s["not_run"] for s in out["audit"]["sections"])
    unexpressible = sum(s["unexpressible"] for s in out["audit"]["sections"])
    assert not_run + unexpressible == sum(s["kernels"] for s in out["audit"]["sections"])
    assert unexpressible >= 1  # e.g. the near miss of ck-api-2025.11.explicit-gemm: never compiled


def test_the_plan_keeps_its_sections_notes_and_populations():
    text = ("# audit: uniform\n#   drawn from 1,234 kernel(s)\nk1\n# audit: near-miss r.x\n"
            "#   no kernel breaks it alone: the other rules imply it\n")
    plan = P.parse(text.splitlines(), "plan")
    assert [(s.kind, s.population, s.note, s.names) for s in plan.sections] == [
        ("uniform", 1234, "", ["k1"]), ("near-miss", None, "no kernel breaks it alone: the other rules imply it", [])]
    assert P.parse(plan.text().splitlines(), "again").sections == plan.sections
