"""Every rule of constraints/rules/*.toml carries example kernel names, and the examples do what they claim.

Each rule entry has `reject` (a name the rule rejects), `accept` (a name it accepts, with its `when` holding) and,
when the examples need another arch than gfx950, `arch`. The checks here run on the plain-Python checker
(`ckspace.rules.check`) with the rules a rule is meant to be used with: the default families plus the rule's own family
(an optional family is an addition to the default set, never to another optional one: `ck-api-2025.11` is not
meant to judge `ck-archfilter`'s examples). So a reject example also shows which other rules it breaks in that
setting: most are built to break their rule and nothing else, and the few that cannot are listed below with the
other rules. An accept example must pass every rule of that setting.
"""

from __future__ import annotations

import functools
import sys

import pytest

from ckspace.rules import expr as E
from ckspace.rules.check import breaks, domain_violations, is_valid, violations
from ckspace.rules.data import Rule, load
from ckspace.rules.model import Model, resolve_families
from ckspace.rules.names import format_name, parse_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


DATA = load()
RULES: list[Rule] = list(DATA.rules)
RULE_IDS = [r.id for r in RULES]

# Reject examples that cannot break their rule alone, with the other rules they break (all families). Mostly a
# curation table or an ArchFilter test that holds for every curated config and so fires along with the rule.
ALSO_BROKEN: dict[str, set[str]] = {
    # CK Tile's tile loads (rules/pipeline.toml): their near misses are off CK's curated tiles or vectors.
    "pipeline.a-load-vector": {"ck.vec-a-per-thread", "ck.vec-b-per-thread", "ck.pipeline", "ck.tile", "ck.vector",
                               "ck.warp-tile-k", "ck.wave-warp"},
    "pipeline.b-load-vector": {"ck.vec-a-per-thread", "ck.vec-b-per-thread", "ck.pipeline", "ck.tile", "ck.vector",
                               "ck.warp-tile-k", "ck.wave-warp"},
    "pipeline.a-load-wavefront": {"pipeline.b-load-wavefront", "ck.pipeline", "ck.tile", "ck.vector", "ck.wave-warp"},
    "pipeline.b-load-wavefront": {"pipeline.a-load-wavefront", "ck.pipeline", "ck.tile", "ck.vector", "ck.wave-warp"},
    "pipeline.a-load-rows": {"ck.vec-a-per-thread", "ck.vector"},
    "pipeline.b-load-rows": {"ck.vec-b-per-thread", "ck.vector"},
    "ck-api-2025.11.a-load-threads": {"ck.vector"},
    "ck-api-2026.06.a-load-cover": {"ck.pipeline", "ck.tile", "ck.vector", "ck.wave-warp"},
    "ck-api-2026.06.b-load-cover": {"ck.pipeline", "ck.tile", "ck.vector", "ck.wave-warp"},
    "ck-api-2025.11.b-load-threads": {"ck.vector"},
    # CK Tile 2025.11's pipelines in the grouped convolution kernels: CK's curation never pairs them so.
    "ck-api-2025.11.compv2": {"ck.pipeline"},
    "ck-api-2025.11.comp-async": {"ck.pipeline", "ck.dsb-only-compv4"},
    # the C store: cshuffle-wavefront is the first part of cshuffle-store; wave groups beyond the waves are off
    # CK's tables
    "ck-api-2025.11.cshuffle-wavefront": {"ck-api-2025.11.cshuffle-store"},
    "ck-api-2025.11.cshuffle-store": {"ck.pipeline", "ck.tile", "ck.vector", "ck.warp-tile-k", "ck.wave-groups",
                                      "ck.wave-warp"},
    "pipeline.compv5-ping-pong": {"ck.pipeline", "ck.wave-warp"},
    "pipeline.warp-tile-k-fits": {"ck.pipeline", "ck.tile-k-divisible", "ck.vector", "ck.warp-tile-k", "ck.wave-warp"},
    "ck-api-2025.11.transpose-wave-groups-a": {"ck.pipeline", "ck.tile", "ck.vector", "ck.wave-groups", "ck.wave-warp"},
    "ck-api-2025.11.transpose-wave-groups-b": {"ck.pipeline", "ck.tile", "ck.vector", "ck.wave-groups", "ck.wave-warp"},
    "ck-api-2025.11.dsb-pipeline": {"ck.dsb-only-compv4"},
    "ck-api-2025.11.bwd-data-dsb": {"ck.pipeline", "ck.tile", "ck.vector", "ck.wave-warp"},
    # CK's curated wave/warp pairs use only the layouts of CK's table for the arch (at most 16 waves).
    "arch.workgroup-size": {"ck.wave-layout", "ck.wave-warp"},
    "ck.wave-layout": {"ck.wave-warp"},
    # Curated pairs divide the tile.
    "arch.tile-m-divisible": {"ck.wave-warp"},
    "arch.tile-n-divisible": {"ck.wave-warp"},
    "ck.tile-k-divisible": {"ck.wave-warp"},
    # Only a wave layout outside CK's table for the arch leaves a curated tile's A / B share uneven.
    # (and the uneven share leaves the compv1 load's wavefront uncovered: the tile loads of rules/pipeline.toml)
    "ck.a-tile-threads": {"ck.wave-layout", "ck.wave-warp", "pipeline.a-load-wavefront"},
    "ck.b-tile-threads": {"ck.wave-layout", "ck.wave-warp", "pipeline.b-load-wavefront"},
    # Every curated vector triple passes the vector gate.
    "ck.vec-a-width": {"ck.vector"},
    "ck.vec-b-width": {"ck.vector"},
    "ck.vec-c-width": {"ck.vector"},
    "ck.vec-a-per-thread": {"ck.vector", "pipeline.a-load-rows"},
    "ck.vec-b-per-thread": {"ck.vector", "pipeline.b-load-rows"},
    # Out of the field domain (tile_n 8): nothing in the domain breaks it.
    "arch.vec-c-tile-n": {"ck.tile", "ck.wave-warp", "ck.vector", "ck.pipeline"},
    # No curated config exceeds even 64 KiB; a double buffer on compv3 does (gfx942).
    "arch.lds-capacity": {"ck.dsb-only-compv4"},
    "ck-api-2025.11.lds-c-tile": {"ck.pipeline", "ck.tile", "ck.vector", "ck.warp-tile-k", "ck.wave-warp"},
    "ck-api-2025.11.compv5-load-transpose": {"ck.backward-compv5", "ck.pipeline"},
    "ck-api-2025.11.lds-epilogue": {"ck.feature", "ck.pipeline", "ck.warp-tile-k", "ck.wave-layout", "ck.wave-warp"},
    # wave_k·warp_tile_k > tile_k implies tile_k is no multiple of it.
    "ck.wmma-k-per-block": {"ck.tile-k-divisible"},
    # Wave32 archs have 16x16 warp tiles only; a 32-wide one's derived k (16) is below 32.
    "ck.wmma-warp-tile-m": {"arch.warp-tile", "ck.wave-warp", "ck.wmma-warp-tile-k"},
    # Stream-K's legacy warp_tile_k is at most 16 (gfx1201).
    "ck.wmma-streamk": {"ck.wmma-warp-tile-k"},
    # Out of the field domain (tile_n / tile_m 8): nothing in the domain breaks them.
    "ck-archfilter.tile-n": {"ck.tile", "ck.wave-warp", "ck.vector", "ck.pipeline"},
    "ck-archfilter.tile-m": {"ck.tile", "ck.wave-warp", "ck.vector", "ck.pipeline"},
    # waves × warp tile beyond the tile: the tile is no multiple of it either.
    "ck-archfilter.warp-fits": {"arch.tile-m-divisible", "ck-archfilter.tile-divisible", "ck.wave-warp"},
    # ArchFilter's trait list is a subset of the pipelines' one; interwave compv3 is never curated.
    "ck-archfilter.trait": {"pipeline.scheduler", "ck.pipeline"},
    "ck-archfilter.tile-divisible": {"arch.tile-m-divisible", "ck.wave-warp"},
    # CK's pipeline table has rows only for the feature tiles.
    "ck.feature": {"ck.pipeline"},
    # The interwave blacklist is never curated.
    "pipeline.scheduler": {"ck.pipeline"},
    "ck.backward-compv5": {"ck.pipeline"},
    # Stream-K and two-stage are curated for bwd_weight only.
    "pipeline.streamk-variant": {"ck.feature", "ck.pipeline"},
    "names.two-stage-variant": {"ck.feature", "ck.pipeline"},
    # dsb is curated only with compv4, which is dsb-capable.
    "pipeline.dsb-capable": {"ck.dsb-only-compv4"},
    # All 20 curated depthwise configs pass the depthwise kernel's checks.
    "pipeline.dw-odd-filter": {"ck.depthwise"},
    "pipeline.dw-sub-tile": {"ck.depthwise"},
    "pipeline.dw-stride-w": {"ck.depthwise"},
    # pad_w 0 is same padding only for filter 1, which is not curated.
    "pipeline.dw-pad-w": {"ck.depthwise-pad"},
    # More than 64 sub-tiles make tile_per_wave 0, and nbatch % 0 == nbatch (total semantics).
    "pipeline.dw-subtiles": {"ck.depthwise", "pipeline.dw-nbatch"},
    "pipeline.dw-nbatch": {"ck.depthwise"},
    "pipeline.dw-input-vector": {"ck.depthwise"},
    "pipeline.dw-lds-row": {"ck.depthwise"},
    "pipeline.dw-lds": {"ck.depthwise"},
}

# Rules that no config inside the field domains (fields.toml) breaks: their reject example leaves the domain.
OUT_OF_DOMAIN = {
    "arch.vec-c-tile-n": "tile_n is a multiple of 16 and vec_c at most 16",
    "ck-archfilter.tile-n": "tile_n is a multiple of 16 from 16",
    "ck-archfilter.tile-m": "tile_m is a multiple of 16 from 16",
}

# Rules that no kernel name breaks. The name grammar accepts _persistent only right after _streamk_{tree|linear},
# so persistent without stream-K has no name; test_unnamed_reject checks the rule on a config instead.
NO_REJECT_NAME = {"pipeline.streamk-persistent"}

# Accept examples whose `when` does not hold (the example cannot exercise the condition). None so far.
WHEN_EXEMPT: dict[str, str] = {}

# Accept examples that are not valid kernels of their arch (default families), with the rules they break.
# gfx1201 has no valid GEMM kernel at all (spec 11.2), so its examples cannot be valid.
ACCEPT_NOT_VALID: dict[str, set[str]] = {
    "pipeline.compv5-ping-pong": {"ck.pipeline"},  # CK's full curates no compv5 kernel
    "ck-api-2025.11.lds-c-tile": {"ck.pipeline"},
    "ck-api-2025.11.compv5-load-transpose": {"ck.backward-compv5", "ck.pipeline", "ck.warp-tile-k", "ck.wave-warp"},
    # CK's full curates no wave groups (and no vector 1 with them)
    "ck-api-2025.11.transpose-wave-groups-a": {"ck.pipeline", "ck.tile", "ck.vector", "ck.wave-groups", "ck.wave-warp"},
    "ck-api-2025.11.transpose-wave-groups-b": {"ck.pipeline", "ck.vector", "ck.wave-groups"},
    "ck.wmma-warp-tile-k": {"arch.warp-tile"},
    "ck.wmma-streamk": {"ck.wmma-warp-tile-k"},
}


@functools.lru_cache(maxsize=None)
def model(arch: str, families: str = "full") -> Model:
    return Model(DATA, arch, resolve_families(DATA, families))


def families_of(r: Rule) -> str:
    """The setting a rule is judged in: the default families, plus the rule's own when it is optional; a rule of
    another catalog (ck-default, ck-rdna) is judged in that catalog: the facts plus its families."""
    if DATA.families[r.family].default:
        return "full"
    catalog = next((c for c in DATA.catalogs.values() if r.family in c.families), None)
    if catalog is not None:
        facts = [f for f, fam in DATA.families.items() if fam.default and f != "model"
                 and not any(f in c.families for c in DATA.catalogs.values())]
        return ",".join([*facts, *catalog.families])
    if r.family.startswith("ck-api-"):  # a revision's own family, as --ck-api switches it: the other revisions' off
        others = [f for f in DATA.families if f.startswith("ck-api-") and f != r.family and DATA.families[f].default]
        return ",".join(["full", f"+{r.family}", *(f"-{f}" for f in others)])
    return f"full,+{r.family}"


def rule_model(r: Rule) -> Model:
    return model(r.example_arch, families_of(r))


def rule(rid: str) -> Rule:
    return next(r for r in RULES if r.id == rid)


def config(name: str) -> dict[str, object]:
    fields = parse_name(name)
    assert format_name(fields) == name, f"{name} is not canonical"
    return fields


def violated(r: Rule, name: str) -> set[str]:
    """The rules `name` breaks in `r`'s setting (families_of)."""
    return {v.id for v in violations(rule_model(r), config(name))}


def when_holds(r: Rule, name: str) -> bool:
    m = rule_model(r)
    return bool(E.evaluate(r.when, config(name), m.resolve))


# ---- the rule files ---------------------------------------------------------------------------------------------
def test_rule_ids_unique():
    raw = []
    for path in sorted((DATA.root / "rules").glob("*.toml")):
        with path.open("rb") as fh:
            raw += [spec.get("id") for spec in tomllib.load(fh).get("rule", [])]
    assert len(raw) == len(set(raw)), sorted({i for i in raw if raw.count(i) > 1})
    assert sorted(raw) == sorted(RULE_IDS)


def test_exemption_lists_name_real_rules():
    for listed in (ALSO_BROKEN, OUT_OF_DOMAIN, NO_REJECT_NAME, WHEN_EXEMPT, ACCEPT_NOT_VALID):
        assert set(listed) <= set(RULE_IDS), set(listed) - set(RULE_IDS)
    for rid, others in ALSO_BROKEN.items():
        assert rid not in others
        assert others <= set(RULE_IDS), others - set(RULE_IDS)


@pytest.mark.parametrize("rid", RULE_IDS)
def test_rule_text(rid):
    r = rule(rid)
    for key in ("message", "rationale", "source"):
        assert getattr(r, key).strip(), f"{rid}: empty {key}"
    assert r.example_arch in DATA.archs, f"{rid}: unknown example arch {r.example_arch}"


@pytest.mark.parametrize("rid", RULE_IDS)
def test_has_examples(rid):
    r = rule(rid)
    assert r.accept, f"{rid}: no accept example"
    if rid in NO_REJECT_NAME:
        assert not r.reject, f"{rid}: has a reject example now; drop it from NO_REJECT_NAME"
    else:
        assert r.reject, f"{rid}: no reject example"


# ---- reject examples --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rid", RULE_IDS)
def test_reject_breaks_rule(rid):
    r = rule(rid)
    m = rule_model(r)
    for name in r.reject:
        fields = config(name)
        assert r.applies_to(str(fields["kind"])), f"{rid}: {name} is of the other kernel family"
        assert breaks(r, fields, m), f"{rid}: {name} does not break it on {r.example_arch}"


@pytest.mark.parametrize("rid", RULE_IDS)
def test_reject_breaks_only_listed_rules(rid):
    r = rule(rid)
    expected = {rid} | ALSO_BROKEN.get(rid, set())
    for name in r.reject:
        got = violated(r, name)
        assert rid in got, f"{rid}: {name} breaks {sorted(got)} on {r.example_arch} ({families_of(r)})"
        assert got == expected, (
            f"{rid}: {name} breaks {sorted(got)} on {r.example_arch} ({families_of(r)}), expected {sorted(expected)}"
        )


@pytest.mark.parametrize("rid", RULE_IDS)
def test_reject_in_domain(rid):
    r = rule(rid)
    m = rule_model(r)
    for name in r.reject:
        problems = domain_violations(m, config(name))
        if rid in OUT_OF_DOMAIN:
            assert problems, f"{rid}: {name} is inside the domain now; drop it from OUT_OF_DOMAIN"
        else:
            assert not problems, f"{rid}: {name}: {problems}"


@pytest.mark.parametrize("rid", RULE_IDS)
def test_reject_messages_render(rid):
    r = rule(rid)
    for name in r.reject:
        found = violations(rule_model(r), config(name))
        mine = [v for v in found if v.id == rid]
        assert mine, f"{rid}: {name} does not break it"
        for v in found:
            assert "?" not in v.message, f"{v.id}: message for {name} does not render: {v.message}"
            assert "{" not in v.message and "}" not in v.message, f"{v.id}: unrendered message: {v.message}"


def test_unnamed_reject():
    """pipeline.streamk-persistent has no reject name: check it on the accept example with stream-K turned off."""
    (rid,) = NO_REJECT_NAME
    r = rule(rid)
    m = rule_model(r)
    for name in r.accept:
        fields = {**config(name), "streamk": "none"}
        assert fields["streamk_persistent"]
        assert breaks(r, fields, m)
        assert rid in {v.id for v in violations(m, fields)}


# ---- accept examples --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rid", RULE_IDS)
def test_accept_passes_rule(rid):
    r = rule(rid)
    m = rule_model(r)
    for name in r.accept:
        fields = config(name)
        assert r.applies_to(str(fields["kind"])), f"{rid}: {name} is of the other kernel family"
        assert not domain_violations(m, fields), f"{rid}: {name}: {domain_violations(m, fields)}"
        assert not breaks(r, fields, m), f"{rid}: {name} breaks it on {r.example_arch}"
        assert rid not in violated(r, name)


@pytest.mark.parametrize("rid", RULE_IDS)
def test_accept_exercises_when(rid):
    r = rule(rid)
    for name in r.accept:
        if rid in WHEN_EXEMPT:
            continue
        assert when_holds(r, name), f"{rid}: the accept example {name} does not meet `when`"


@pytest.mark.parametrize("rid", RULE_IDS)
def test_accept_is_valid_kernel(rid):
    r = rule(rid)
    m = rule_model(r)
    for name in r.accept:
        fields = config(name)
        if rid in ACCEPT_NOT_VALID:
            got = {v.id for v in violations(m, fields)}
            assert got == ACCEPT_NOT_VALID[rid], f"{rid}: {name} breaks {sorted(got)}"
        else:
            assert is_valid(m, fields), f"{rid}: {name} is not valid on {r.example_arch}: " + ", ".join(
                v.id for v in violations(m, fields)
            )
