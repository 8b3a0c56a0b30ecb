"""The facts against the compiler's verdicts of the device audit (scripts/data/audit-2026-11-27.json: ckspace verify
--audit, clang 22 and CK Tile 2025.11, five archs; each kernel's status and first error as verify gave them).

- No fact may reject a kernel that built with matrix instructions, but for the rules listed in BUILT_BUT_REJECTED
  with why.
- Every failure whose error is the one a fact transcribes is rejected by that fact.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from ckspace import Space
from ckspace.codegen.ckapi import combine_rules
from ckspace.codegen.verify import model_lds

DATA = Path(__file__).resolve().parent.parent / "scripts" / "data" / "audit-2026-11-27.json"
ARCHS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201")

# Facts that reject kernels the audit saw build, and why that is right.
BUILT_BUT_REJECTED = {
    # 2048 threads: it compiles, but LLVM caps the code object at 1024 and no launch runs it (verify's no-launch, which
    # the audit's verify did not have yet)
    "arch.workgroup-size",
    # a forward or bwd_data name with _2stage is the same C++ as without: a naming rule, not a compile limit
    "names.two-stage-variant",
}

# (pattern of the first error, the fact that transcribes it)
ERRORS = [
    (r"gemm_pipeline_ag_bg_cr_comp_async\.hpp:552", "ck-api-2025.11.comp-async"),
    (r"Ping Pong Warps, TileSize and Block Size", "pipeline.compv5-ping-pong"),
    (r"call to member function 'operator\(\)' is ambiguous", "ck-api-2025.11.compv2"),
    (r"backward_data_kernel\.hpp:927:\d+: error: no member named 'get_length'", "ck-api-2025.11.bwd-data-dsb"),
    (r"(forward_kernel\.hpp:944|backward_weight_kernel\.hpp:862):\d+: error: no matching member function",
     "ck-api-2025.11.dsb-pipeline"),
    # a block GEMM with no iteration along K (tile_k < warp_tile_k), M or N (a tile below wave·warp tile)
    (r"'0 < kThreadElementSpaceSize'", "pipeline.warp-tile-k-fits|arch.tile-m-divisible|arch.tile-n-divisible"),
    (r"load_tile_transpose\.hpp:212", "ck-api-2025.11.compv5-load-transpose"),
    (r"local memory \(\d+\) exceeds limit", "arch.lds-capacity|ck-api-2025.11.lds-c-tile|ck-api-2025.11.lds-epilogue"),
    (r"v2i16,ch = AMDGPUISD::BUFFER_ATOMIC_FADD", "toolchain-clang22.bf16-packed-atomic"),
]


@functools.lru_cache(maxsize=None)
def space(arch: str) -> Space:
    """The facts of the audit: the open space with CK API 2025.11 and clang 22 (`--toolchain registry`)."""
    return Space(arch=arch, rules=combine_rules("-ck-curation,+toolchain-clang22", "2025.11"))


def verdicts() -> list[tuple[str, str, dict]]:
    data = json.loads(DATA.read_text())
    out = []
    for rnd in data["rounds"].values():
        for arch, entry in rnd.items():
            out += [(arch, name, k) for name, k in entry["kernels"].items()]
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_no_fact_rejects_a_kernel_that_built(arch):
    built = [n for a, n, k in verdicts() if a == arch and k["status"] == "ok"]
    assert len(built) >= 10
    for name in built:
        broken = {v.rule for v in space(arch).check(name)}
        assert broken <= BUILT_BUT_REJECTED, (name, broken)


def test_each_transcribed_failure_is_rejected_by_its_fact():
    seen = {rule: 0 for _, rule in ERRORS}
    for arch, name, k in verdicts():
        if k["status"] != "failed":
            continue
        for pattern, rule in ERRORS:
            if re.search(pattern, k["error"]):
                seen[rule] += 1
                broken = {v.rule for v in space(arch).check(name)}
                assert broken & set(rule.split("|")), (arch, name, rule, broken)  # a|b: any of them
    assert all(seen.values()), seen  # every transcribed error occurs in the data


FACTS_WITH_TOOLCHAIN = combine_rules("-ck-curation,+toolchain-clang22", "2025.11")
SUMMARY = DATA.parent.parent.parent / "constraints" / "evidence" / "audit.json"
PRECISION_ROUNDS = ("6",)  # the rounds whose compiled draws are uniform draws of today's space (docs/audit.md)


@functools.lru_cache(maxsize=None)
def space_with_toolchain(arch: str) -> Space:
    return Space(arch=arch, rules=FACTS_WITH_TOOLCHAIN)


def test_the_summary_that_ckspace_rules_shows_is_current():
    """constraints/evidence/audit.json, recounted here from the raw verdicts and the facts of this checkout: a kernel
    counts with a verdict (a failure, or built with its ISA read); precision from the uniform and stratified draws of
    the precision rounds that the facts accept; a near miss of R breaks R and no other rule."""
    data = json.loads(DATA.read_text())
    summary = json.loads(SUMMARY.read_text())
    assert summary["precision_rounds"] == list(PRECISION_ROUNDS)
    verdict = ("ok", "failed", "no-matrix", "no-launch")
    archs: dict = {}
    near: dict = {}
    for label, rnd in data["rounds"].items():
        for arch, entry in rnd.items():
            a = archs.setdefault(arch, {"uniform": [0, 0], "stratified": [0, 0], "confusion": {}, "unread": 0,
                                        "lds": [0, 0]})
            broken_of = {}
            for name, k in entry["kernels"].items():
                broken = sorted({v.rule for v in space_with_toolchain(arch).check(name)})
                assert k["broken_now"] == broken, (arch, name)  # merge_audit.py --summary was run after the facts
                broken_of[name] = broken
                if k["status"] not in verdict:
                    continue
                if k["status"] == "ok" and "lds" not in k:
                    a["unread"] += 1
                    continue
                key = ("rejected" if broken else "accepted") + ("_built" if k["status"] == "ok" else "_failed")
                a["confusion"][key] = a["confusion"].get(key, 0) + 1
                if key == "accepted_built":
                    space = space_with_toolchain(arch)
                    a["lds"][0] += 1
                    a["lds"][1] += model_lds(space, space.parse(name)) == k["lds"]
                if len(broken) == 1:
                    n = near.setdefault((broken[0], arch), [0, 0])
                    n[0] += 1
                    n[1] += k["status"] != "ok"
            if label in PRECISION_ROUNDS:
                for section in entry["sections"]:
                    if section["kind"] in ("uniform", "stratified"):
                        for name in section["names"]:
                            k = entry["kernels"].get(name)
                            if k is not None and k["status"] in verdict and not broken_of[name]:
                                a[section["kind"]][0] += 1
                                a[section["kind"]][1] += k["status"] == "ok"
    for arch, a in archs.items():
        s = summary["archs"][arch]
        assert [s["uniform"]["compiled"], s["uniform"]["built"]] == a["uniform"]
        assert [s["stratified"]["compiled"], s["stratified"]["built"]] == a["stratified"]
        assert {k: v for k, v in s["confusion"].items() if v} == a["confusion"]
        assert s.get("compiled_isa_unread", 0) == a["unread"]
        assert [s["lds"]["accepted_built"], s["lds"]["model_equal"]] == a["lds"]
    assert {(r, arch): [c["compiled"], c["failed"]] for r, per in summary["rules"].items() for arch, c in per.items()} \
        == near
    assert set(summary["archs"]) == set(ARCHS)


def test_every_accepted_draw_built():
    """The audit's figure: no kernel the facts accept failed, in any round (with its verdict)."""
    summary = json.loads(SUMMARY.read_text())
    for arch, s in summary["archs"].items():
        assert s["confusion"]["accepted_failed"] == 0, arch
        assert s["uniform"]["built"] == s["uniform"]["compiled"] >= 24, arch  # round 6: 24-60 per arch (docs/audit.md)


def test_the_model_lds_is_the_code_objects():
    """The model's lds_bytes of this checkout equals the group segment of every kernel the facts accept that built
    (its code object's descriptor, recorded by the device runs): the LDS capacity facts read an exact figure."""
    summary = json.loads(SUMMARY.read_text())
    for arch, s in summary["archs"].items():
        assert s["lds"]["model_equal"] == s["lds"]["accepted_built"] > 100, arch
