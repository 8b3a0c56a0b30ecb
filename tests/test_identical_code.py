"""Which fields change the C++: emitted and diffed, for every CK API revision's templates.

fields.toml marks a field `code = false` when the C++ does not read it (pad_m/n/k: CK's launcher gives the traits
GroupedConvTraitsType::FixedGemmParams::kPadM/N/K, always true). The test is the emitter itself: two kernels that
differ in one field are rendered under one name; a field marked `code = false` never changes the text, and every
other field changes it for at least one kernel family where it applies.
"""

from __future__ import annotations

import functools
import re

import pytest

from ckspace.codegen.ckapi import revisions
from ckspace.codegen.emit import _block_per_cu_fn, kernel_context, template_env
from ckspace.rules.names import parse_name
from ckspace.space import Space

# One kernel per family where a field can matter: fwd, bwd_data, bwd_weight (plain, two-stage, stream-K) and
# depthwise. The values are changed one field at a time; the kernels need not be valid (the templates do not check).
BASES = (
    "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16",
    "grouped_conv_bwd_data_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_4x4x1_32x32x16",
    "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_4x4x1_32x32x16",
    "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_4x4x1_32x32x16_2stage",
    "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_intrawave_16x16x16_1x1x1_16x16x16_vec1_1_1_streamk_tree",
    "grouped_conv_fwd_depthwise_bf16_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8",
)
# Fields the name grammar ties to another (a 3D layout follows ndim; depthwise is 2D only): changed with it.
SKIP = {"variant", "layout"}

SPACE = Space(arch="gfx950")
FIELDS = SPACE.data.fields
REVISIONS = sorted(revisions()[1])


@functools.lru_cache(maxsize=None)
def _env(rev: str):
    return template_env(rev)


BLOCK_PER_CU = _block_per_cu_fn(SPACE)


# CK's generator declares the name's pad flags in the kernel's Config (and ckspace's emitter writes what CK's does,
# tests/test_emit.py's golden files), but nothing reads them: the traits take FixedGemmParams::kPadM/N/K. Those
# three declarations are dropped before comparing; test_the_pad_members_are_never_read proves them dead.
PAD_MEMBER = re.compile(r"^\s*static constexpr bool kPad[MNK] = (true|false);\n", re.M)


def _render(rev: str, cfg: dict) -> str:
    """The kernel's header and dispatcher wrapper (where the revision has one), under the name K, less the dead
    declarations of the pad flags."""
    return PAD_MEMBER.sub("", _rendered(rev, cfg))


def _rendered(rev: str, cfg: dict) -> str:
    env = _env(rev)
    names = env.list_templates()
    template = "kernel_depthwise.hpp.j2" if cfg["variant"] == "forward_depthwise" else "kernel_gemm.hpp.j2"
    if template not in names:
        return ""  # this revision has no such kernel family (2025.11: no depthwise)
    k = kernel_context({**cfg, "name": "K"}, "gfx950", BLOCK_PER_CU)
    text = env.get_template(template).render(k=k)
    if "dispatcher_wrapper.hpp.j2" in names:
        text += env.get_template("dispatcher_wrapper.hpp.j2").render(k=k, rel_path="K.hpp")
    return text


def _changes(field: str) -> list[tuple[str, str]]:
    """(revision, base) pairs whose C++ changes when `field` takes another of its values. Kernels that cannot exist
    are compared too: the question is what the templates read."""
    out = []
    for rev in REVISIONS:
        for base in BASES:
            cfg = parse_name(base)
            cfg.pop("kind", None)
            if field not in cfg:
                continue
            before = _render(rev, cfg)
            if any(v != cfg[field] and _render(rev, {**cfg, field: v}) != before for v in FIELDS[field].values):
                out.append((rev, base))
    return out


@pytest.mark.parametrize("field", [f for f in FIELDS if f not in SKIP])
def test_a_field_changes_the_cpp_exactly_when_fields_toml_says_so(field) -> None:
    changed = _changes(field)
    if FIELDS[field].code:
        assert changed, f"{field} is marked as changing the C++, but no kernel's C++ changes with it"
    else:
        assert not changed, f"{field} is marked code = false, but the C++ of {changed[0]} changes with it"


@pytest.mark.parametrize("rev", REVISIONS)
def test_the_pad_members_are_never_read(rev) -> None:
    """Each emitted GEMM kernel declares kPadM/N/K once, and every other use of those names is the traits'
    GroupedConvTraitsType::FixedGemmParams::kPadX: the declarations are dead code, so the pads change no code."""
    for base in BASES[:5]:
        cfg = parse_name(base)
        cfg.pop("kind", None)
        text = _rendered(rev, {**cfg, "pad_m": False, "pad_n": True, "pad_k": False})
        assert len(PAD_MEMBER.findall(text)) == 3, base
        uses = re.findall(r"[\w:]*\bkPad[MNK]\b", PAD_MEMBER.sub("", text))
        assert uses and all(u.startswith("GroupedConvTraitsType::FixedGemmParams::kPad") for u in uses), (base, uses)


def test_the_pad_fields_are_the_ones_that_do_not_change_the_cpp() -> None:
    """The list is CK's: its launcher passes FixedGemmParams::kPadM/N/K, so the pads are the name only."""
    assert sorted(f for f, d in FIELDS.items() if not d.code) == ["pad_k", "pad_m", "pad_n"]


def _keys(text: str) -> set[str]:
    """The JSON keys a field's `ck_json` names: "streamk_enabled, streamk_reduction_strategy", "layout (header)"."""
    return {part.split(" (")[0].strip() for part in text.split(", ") if part.split(" (")[0].strip()} if text else set()


def test_every_key_of_cks_json_configs_is_one_fields_and_back() -> None:
    """fields.toml's ck_json against the keys CK's loader reads (ckspace.rules.ckconfig keeps CK's lists): every
    key but `id` belongs to a field, and every field's key is one CK reads."""
    from ckspace.rules import ckconfig

    read = set(ckconfig.HEADER) | set(ckconfig.GEMM_REQUIRED) | set(ckconfig.GEMM_WORDS) | set(
        ckconfig.GEMM_OPTIONAL) | set(ckconfig.DEPTHWISE_REQUIRED)
    named: dict[str, str] = {}
    for name, field in FIELDS.items():
        for key in _keys(field.ck_json):
            assert key in read, f"{name}: ck_json {key!r} is not a key CK's loader reads"
            named[key] = name
    assert read - set(named) == {"instances"}, sorted(read - set(named))
    assert {f for f, d in FIELDS.items() if not d.ck_json} == {"pad_m", "pad_n", "pad_k"}  # CK's JSON: no pads
    assert all(d.cpp for d in FIELDS.values())


def test_explain_names_the_other_names_of_the_same_cpp() -> None:
    """A GEMM kernel's name carries three pad flags that the C++ ignores: 2**3 - 1 other names, listed in JSON."""
    from ckspace.rules.names import format_name

    name = BASES[0] + "_pad010"
    exp = Space(arch="gfx950", rules="-ck-curation").explain(name).to_json()
    same = [n for n in exp["notes"] if n["kind"] == "same-cpp"]
    assert len(same) == 1 and "7 other names" in same[0]["text"] and "pad_m, pad_n, pad_k" in same[0]["text"]
    cfg = parse_name(name)
    expected = sorted(format_name({**cfg, "pad_m": m, "pad_n": n, "pad_k": k})
                      for m in (False, True) for n in (False, True) for k in (False, True)
                      if (m, n, k) != (False, True, False))
    assert expected[0] in same[0]["text"]
    dw = Space(arch="gfx950").explain(BASES[-1]).to_json()
    assert not [n for n in dw["notes"] if n["kind"] == "same-cpp"]  # a depthwise kernel has no such field


def test_emit_compiles_one_instantiation_per_cpp(tmp_path) -> None:
    """emit puts kernels that share a C++ into one unit: the first is included and instantiated, the others' entry
    points call its launcher, and the registration registers each name with that launcher."""
    import json

    names = [BASES[0] + s for s in ("_pad000", "_pad010", "")] + [BASES[1]]
    space = Space(arch="gfx950", rules="-ck-curation")
    configs = [{**parse_name(n), "name": n} for n in names]
    for c in configs:
        c.pop("kind", None)
    result = space.emit(configs, tmp_path / "out", revision="2026.06")
    assert len(result.units) == 2 and len(result.expected_seconds) == 2
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())["kernels"]
    lead = min(names[:3])  # emit's order is by name within a direction
    assert {n: manifest[n].get("same_cpp_as") for n in names} == {
        **{n: (None if n == lead else lead) for n in names[:3]}, names[3]: None}
    unit = (tmp_path / "out" / manifest[names[0]]["unit"]).read_text()
    assert re.findall(r'#include "\.\./(\w+)\.hpp"', unit) == [lead]
    assert all(f"{n}_launch(" in unit for n in names[:3]) and unit.count(f"::{lead}_Launcher::launch") == 3
    registration = (tmp_path / "out" / "register_fwd_chunk_0.cpp").read_text()
    assert set(re.findall(r"make_conv_fwd_run_fn<ns_(\w+)::", registration)) == {lead}


@pytest.mark.compile
def test_kernels_that_share_a_unit_answer_as_their_lead(tmp_path, monkeypatch) -> None:
    """Compiled (host side, CK API 2025.11 headers): the pad variants' entry points build against the lead's
    launcher and say what it says for every problem."""
    from ckspace.rules.problem import random_problem
    import random

    from test_build import _toolchain

    _toolchain(monkeypatch)
    names = [BASES[0] + s for s in ("", "_pad000", "_pad101")]
    space = Space(arch="gfx950", ck_api="2025.11", toolchain="registry", rules="-ck-curation")
    configs = [{**parse_name(n), "name": n} for n in names]
    lib = space.host_check(configs, tmp_path, revision="2025.11", jobs=2)
    rng = random.Random(5)
    answers = set()
    for _ in range(60):
        p = random_problem(rng, 2)
        said = {lib.supports(i, p) for i in range(len(names))}
        assert len(said) == 1, p.text()
        answers |= said
    assert answers == {True, False}  # problems it runs and problems it refuses
