"""CK tile-engine's JSON trait configs (seed 002's format) as a filter: --trait-config FILE.

The oracle is a plain-Python filter of the full set's names, read back with the name grammar: the trait config's
allow-list applied key by key, as tile-engine's README describes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckspace import Space
from ckspace.cli import main
from ckspace.rules import traitconfig
from ckspace.rules.data import load_fields
from ckspace.rules.names import parse_name

# seed 002 (tile-engine README, "JSON Config Format"), verbatim
SEED_EXAMPLE = {
    "variant": "forward",
    "trait_config": {
        "data_type": {"values": ["bf16"]},
        "pipeline": {"values": ["compv3", "compv4", "compv5"]},
        "wave_mode": {"values": ["intrawave", "interwave"]},
        "ndim_spatial": {"values": [2, 3]},
    },
}


@pytest.fixture(scope="module")
def full_names() -> list[str]:
    return sorted(c["name"] for c in Space(arch="gfx950").enumerate())


@pytest.fixture(scope="module")
def fields():
    return load_fields()


def _names(capsys, *args: str) -> list[str]:
    assert main(["enumerate", "--arch", "gfx950", "--format", "names", *args]) == 0
    return capsys.readouterr().out.split()


def _write(tmp_path: Path, doc: object, name: str = "trait.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_the_seed_example_selects_what_its_allow_list_says(tmp_path, capsys, full_names) -> None:
    got = _names(capsys, "--trait-config", _write(tmp_path, SEED_EXAMPLE))
    expected = []
    for name in full_names:
        c = parse_name(name)
        if (c["variant"] == "forward" and c["dtype"] == "bf16" and c["pipeline"] in ("compv3", "compv4", "compv5")
                and c["scheduler"] in ("intrawave", "interwave") and c["ndim"] in (2, 3)):
            expected.append(name)
    assert got == expected and len(expected) > 100
    # counts list only the strata the config pins (forward bf16, 2d and 3d)
    assert main(["enumerate", "--arch", "gfx950", "--count", "--format", "json", "--trait-config",
                 _write(tmp_path, SEED_EXAMPLE)]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts["total"] == len(expected)
    assert {(s["variant"], s["ndim"], s["dtype"]) for s in counts["strata"]} == {("forward", 2, "bf16"),
                                                                                  ("forward", 3, "bf16")}


def test_ck_key_names_ranges_and_the_dsb_suffix(tmp_path, capsys, full_names) -> None:
    doc = {"variant": ["forward", "bwd_data"],
           "tile_config": {"tile_n": {"min": 64, "max": 256, "step": 64}, "warp_m": [1, 2]},
           "trait_config": {"wave_mode": {"values": ["intrawave_dsb"]}, "vector_size_c": 8}}
    got = _names(capsys, "--trait-config", _write(tmp_path, doc), "--where", "tile_m <= 128")
    expected = []
    for name in full_names:
        c = parse_name(name)
        if (c["variant"] in ("forward", "bwd_data") and c["tile_n"] in (64, 128, 192, 256) and c["wave_m"] in (1, 2)
                and c["scheduler"] == "intrawave" and c["double_smem_buffer"] and c["vec_c"] == 8
                and c["tile_m"] <= 128):
            expected.append(name)
    assert got == expected and expected


def test_the_where_expression_of_a_config(fields) -> None:
    assert traitconfig.to_where(SEED_EXAMPLE, fields) == (
        "variant == 'forward' and dtype == 'bf16' and pipeline in ('compv3', 'compv4', 'compv5') and "
        "scheduler in ('intrawave', 'interwave') and ndim in (2, 3)")
    assert traitconfig.to_where({}, fields) is None
    assert traitconfig.to_where({"trait_config": {"double_smem_buffer": [True]}}, fields) == "double_smem_buffer == true"
    assert traitconfig.to_where({"trait_config": {"wave_mode": ["intrawave", "interwave_dsb"]}}, fields) == (
        "((scheduler == 'intrawave') or (scheduler == 'interwave' and double_smem_buffer))")


@pytest.mark.parametrize("doc, needle", [
    ({"variant": "fwdd"}, "variant 'fwdd' is not one of forward, fwd"),
    ({"trait_configs": {}}, "unknown key 'trait_configs'"),
    ({"trait_config": []}, "trait_config is a JSON object"),
    ({"trait_config": {"pipelines": {"values": ["compv3"]}}}, "trait_config.pipelines: unknown key"),
    ({"trait_config": {"pipeline": {"values": ["compv9"]}}}, '"compv9" is not a value of pipeline; values: "compv1"'),
    ({"trait_config": {"ndim_spatial": {"values": ["2d"]}}}, '"2d" is not a value of ndim; values: 2, 3'),
    ({"trait_config": {"ndim_spatial": {"values": [True]}}}, "true is not a value of ndim"),
    ({"trait_config": {"data_type": {"values": []}}}, "an empty list of values allows no kernel"),
    ({"trait_config": {"data_type": {"value": ["bf16"]}}}, 'give {"values": [...]}'),
    ({"tile_config": {"tile_m": {"min": 256, "max": 64}}}, "min <= max"),
    ({"trait_config": {"wave_mode": {"values": ["intrawave_si"]}}}, "the suffix _si (store immediate)"),
    ({"trait_config": {"wave_mode": {"values": ["intrawave_dsb_si"]}}}, "the suffix _si"),
    ({"trait_config": {"wave_mode": {"values": ["superwave"]}}}, '"superwave" is not a value of scheduler'),
    ({"trait_config": {"block_per_cu": [1]}}, "block_per_cu: unknown key"),  # derived: not a choice
    # a range is the field's values in it: one that holds none allows no kernel; a range of words is no range
    ({"tile_config": {"tile_m": {"min": 1, "max": 15}}}, "the range min 1, max 15, step 1 holds no value of tile_m"),
    ({"tile_config": {"tile_m": {"min": 17, "max": 10**12, "step": 10**11}}}, "holds no value of tile_m; values: 16"),
    ({"trait_config": {"pipeline": {"min": 0, "max": 10**9}}}, "a range {min, max, step} is for integer fields"),
    ({"trait_config": {"double_smem_buffer": {"min": 0, "max": 1}}}, "is for integer fields; double_smem_buffer"),
    ({"tile_config": {"tile_m": {"min": 0, "max": 10**9, "step": 0}}}, "step >= 1"),
    ([1, 2], "a trait config is a JSON object"),
])
def test_a_bad_trait_config_is_one_line_and_exit_2(tmp_path, capsys, doc, needle) -> None:
    assert main(["enumerate", "--arch", "gfx950", "--trait-config", _write(tmp_path, doc)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ckspace: error:") and needle in err[0], err


def test_a_range_is_the_fields_values_on_its_grid_never_listed(fields) -> None:
    """tile-engine's range(min, max + 1, step) as a filter: the field's values v with min <= v <= max on the grid
    (v - min divisible by step), however far the range reaches (a billion-wide range was listed element by element,
    a MemoryError)."""
    tile_m = list(fields["tile_m"].values)
    doc = {"tile_config": {"tile_m": {"min": 100, "max": 10**9, "step": 4}}}
    expected = [v for v in tile_m if v >= 100 and (v - 100) % 4 == 0]
    assert expected and len(expected) < len(tile_m)
    assert traitconfig.to_where(doc, fields) == "tile_m in (" + ", ".join(map(str, expected)) + ")"
    doc = {"tile_config": {"tile_m": {"min": -(10**18), "max": 10**18}}}
    assert traitconfig.to_where(doc, fields) == "tile_m in (" + ", ".join(map(str, tile_m)) + ")"
    doc = {"tile_config": {"tile_m": {"min": 16, "max": 10**30, "step": 10**29}}}
    assert traitconfig.to_where(doc, fields) == "tile_m == 16"
    # the strata a range of ndim pins (what --count lists) come from the same values
    doc = {"trait_config": {"ndim_spatial": {"min": 3, "max": 10**12}}}
    assert traitconfig.to_where(doc, fields) == "ndim == 3"
    assert traitconfig.strata_of(doc, fields) == {"ndim": ["3"]}


def test_odd_keys_and_deeply_nested_values_are_one_short_line(fields) -> None:
    nested: object = 1
    for _ in range(5000):  # deeper than repr or json.dumps go: the value is named by its kind
        nested = [nested]
    for doc, needle in [({"trait_config": {"a\nb": [1]}}, "trait_config.'a\\nb': unknown key"),
                        ({"trait_config": {"x" * 10_000: [1]}}, "unknown key"),
                        ({"variant": nested}, "variant a list is not one of"),
                        ({"trait_config": {"tile_m": nested}}, "a list is not a value of tile_m"),
                        ({"trait_config": {"pipeline": ["x" * 10_000]}}, "is not a value of pipeline")]:
        with pytest.raises(traitconfig.TraitConfigError) as caught:
            traitconfig.to_where(doc, fields)
        text = str(caught.value)
        assert "\n" not in text and needle in text and len(text) < 2000, text[:300]


def test_unreadable_and_malformed_files(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for path, needle in ((str(bad), "not JSON"), (str(tmp_path / "missing.json"), "cannot read"),
                         (str(tmp_path), "cannot read")):
        assert main(["sample", "--arch", "gfx950", "-n", "2", "--trait-config", path]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], err


def test_every_command_with_where_takes_it(tmp_path, capsys) -> None:
    path = _write(tmp_path, {"variant": "bwd_data", "trait_config": {"data_type": ["fp32"], "ndim_spatial": [2]}})
    assert main(["sample", "--arch", "gfx950", "-n", "5", "--trait-config", path]) == 0
    sampled = capsys.readouterr().out.split()
    assert len(sampled) == 5 and all(n.startswith("grouped_conv_bwd_data_fp32_nhwgc_2d_") for n in sampled)
    out = tmp_path / "emitted"
    assert main(["emit", "--arch", "gfx950", "--trait-config", path, "--where", "tile_m == 64", "-o", str(out)]) == 0
    capsys.readouterr()
    manifest = json.loads((out / "manifest.json").read_text())
    names = list(manifest["kernels"])
    assert names and all(n.startswith("grouped_conv_bwd_data_fp32_nhwgc_2d_") and "_64x" in n for n in names)


_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.sampled_from(
    ["bf16", "fp16", "compv3", "intrawave", "interwave_dsb", "intrawave_si", "forward", "2d", ""]))
_json_value = st.recursive(_json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["values", "min", "max", "step", "x"]), inner,
                                                 max_size=3)), max_leaves=8)
_keys = st.sampled_from(["data_type", "pipeline", "wave_mode", "ndim_spatial", "tile_m", "warp_m", "vector_size_a",
                         "double_smem_buffer", "variant", "nope", "block_per_cu"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.dictionaries(st.sampled_from(["variant", "trait_config", "tile_config", "other"]),
                           st.one_of(_json_value, st.dictionaries(_keys, _json_value, max_size=4)), max_size=3))
def test_fuzz_any_document_is_a_valid_filter_or_one_clean_error(doc, fields) -> None:
    space = _space()
    try:
        where = traitconfig.to_where(doc, fields)
    except traitconfig.TraitConfigError as exc:
        assert "\n" not in str(exc) and exc.exit_code == 2
        return
    if where is not None:
        space.parse_where(where)  # a config that reads is a filter the typechecker accepts


_SPACE: list[Space] = []


def _space() -> Space:
    if not _SPACE:
        _SPACE.append(Space(arch="gfx950"))
    return _SPACE[0]


# ---- written: enumerate --format trait-config --------------------------------------------------------------------
@pytest.mark.parametrize("set_name", ["tiny", "ck-default"])
def test_a_written_trait_config_selects_every_kernel_of_the_set_and_their_values_only(set_name, tmp_path) -> None:
    """Read back with --trait-config, each variant's file keeps every kernel of the set (a trait config is a
    product, so others too), and each key lists exactly the values the set's kernels of that variant use."""
    from ckspace.cli import main
    from ckspace.space import Space

    space = Space(arch="gfx950")
    kernels = space.select(set_name) if set_name == "tiny" else list(Space(arch="gfx950", catalog=set_name).enumerate())
    argv = ["enumerate", "--arch", "gfx950", "--set", set_name, "--format", "trait-config", "-o", str(tmp_path)]
    assert main(argv) == 0
    variants = sorted({str(k["variant"]) for k in kernels})
    assert sorted(p.stem for p in tmp_path.glob("*.json")) == variants
    for variant in variants:
        mine = [k for k in kernels if k["variant"] == variant]
        doc = json.loads((tmp_path / f"{variant}.json").read_text())
        assert doc["variant"] == variant
        keys = {**doc["trait_config"], **doc["tile_config"]}
        assert sorted(keys["data_type"]["values"]) == sorted({k["dtype"] for k in mine})
        if variant != "forward_depthwise":
            assert sorted(keys["tile_m"]["values"]) == sorted({k["tile_m"] for k in mine})
            assert sorted(keys["vector_size_c"]["values"]) == sorted({k["vec_c"] for k in mine})
            assert "pad_m" not in keys  # the C++ ignores the pads
        where = space.trait_filter(str(tmp_path / f"{variant}.json"))
        selected = {c["name"] for c in Space(arch="gfx950", catalog="full" if set_name == "tiny" else set_name)
                    .enumerate(where=where)}
        assert {k["name"] for k in mine} <= selected
