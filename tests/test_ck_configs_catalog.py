"""CK's shipped configs as catalogs (ck-profiler, ck-tests) and a user's own JSON configs (--ck-config): the kernels
they list, checked against the facts of the arch, in every command that takes a set.

Expected values come from the independent reader tests/reference/ck_configs.py over the verbatim JSON fixtures.
"""

from __future__ import annotations

import collections
import functools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace import Space
from ckspace.cli import main
from ckspace.rules import ckconfig
from ckspace.rules.names import format_name, parse_name

try:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from reference import ck_configs
except ImportError:  # pragma: no cover
    from tests.reference import ck_configs  # type: ignore[no-redef]

USER = Path(__file__).resolve().parent / "fixtures" / "ck-configs-user"
SETS = {"ck-profiler": "profiler", "ck-tests": "tests"}


@functools.lru_cache(maxsize=None)
def reference(set_name: str) -> dict[str, tuple]:
    """name -> (variant, ndim, dtype, layout) of every kernel of a set's JSON files, first of each name."""
    out: dict[str, tuple] = {}
    for path in ck_configs.files(set_name):
        doc = json.loads(path.read_text())
        variant = "forward" if doc["variant"] == "forward" else doc["variant"]
        for name in ck_configs.names(path):
            out.setdefault(name, (variant, doc["ndim_spatial"], doc["datatype"], doc["layout"]))
    return out


@functools.lru_cache(maxsize=None)
def listed(catalog: str, arch: str) -> tuple[dict, ...]:
    return tuple(Space(arch=arch, catalog=catalog).enumerate())


@pytest.mark.parametrize("catalog", SETS)
@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_the_catalog_is_every_kernel_of_its_json_files(catalog, arch):
    want = reference(SETS[catalog])
    got = listed(catalog, arch)
    assert [c["name"] for c in got] == sorted(want)  # every one: none breaks a fact on gfx942 or gfx950
    by_group = collections.Counter((c["variant"], c["ndim"], c["dtype"], c["layout"]) for c in got)
    assert by_group == collections.Counter(want.values())


def test_the_readme_counts_per_variant_ndim_dtype_layout():
    # Every cell of the README's table, checked against the independent reading of the JSON files.
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme[readme.index("| variant | ndim | layout | profiler fp16"):].split("\n\n")[0].splitlines()[2:]
    prof = collections.Counter(reference("profiler").values())
    tests = collections.Counter(reference("tests").values())
    seen = 0
    for line in table:
        variant, ndim, layout, *counts = [c.strip() for c in line.strip("|").split("|")]
        for i, dtype in enumerate(("fp16", "bf16", "fp32")):
            key = (variant, int(ndim[0]), dtype, layout)
            assert int(counts[i]) == prof[key] and int(counts[3 + i]) == tests[key], key
            seen += 1
    assert seen == len(prof) == 21 and sum(prof.values()) == 2581 and sum(tests.values()) == 576


def test_names_print_back_and_configs_match_the_names():
    for c in listed("ck-profiler", "gfx950")[::7]:
        cfg = parse_name(c["name"])
        assert format_name(cfg) == c["name"]
        assert {k: v for k, v in c.items() if k != "name"} == {k: v for k, v in cfg.items() if k != "kind"}


def test_count_and_sample_and_explain_know_the_catalogs(capsys):
    assert main(["enumerate", "--arch", "gfx950", "--set", "ck-tests", "--count", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 576
    assert main(["sample", "--arch", "gfx942", "--set", "ck-profiler", "-n", "5", "--seed", "1"]) == 0
    names = capsys.readouterr().out.split()
    assert len(names) == 5 and set(names) <= set(reference("profiler"))
    name = sorted(reference("tests"))[0]
    assert main(["explain", name, "--format", "json"]) in (0, 1)
    sets = json.loads(capsys.readouterr().out)["sets"]
    assert sets["ck-profiler"] is True and sets["ck-tests"] is True


def test_explain_against_a_listed_catalog_says_not_listed_and_names_listed_neighbours(capsys):
    prof = set(reference("profiler"))
    name = next(n for n in sorted(listed_full_names()) if n not in prof and n.startswith("grouped_conv_fwd_fp16_nhwgc"))
    assert main(["explain", name, "--set", "ck-profiler", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [v["rule"] for v in out["violations"] if v["enabled"]] == ["ck-profiler.listed"]
    assert out["neighbours"] and all(nb["name"] in prof for nb in out["neighbours"])


def test_one_stratum_of_a_list_is_read_from_its_documents_alone():
    """explain reads only the documents whose header names the kernel's (variant, ndim, dtype)
    (listed.stratum_keys): each stratum's keys are the reference's kernels of that stratum, and a stratum the list
    lacks has none."""
    from ckspace.rules.data import load
    from ckspace.solve import listed as L

    data = load()
    strata = [(v, n, d) for v in ("forward", "forward_depthwise", "bwd_data", "bwd_weight") for n in (2, 3)
              for d in ("fp16", "bf16", "fp32")]
    for catalog, set_name in SETS.items():
        by_stratum = collections.defaultdict(set)
        for name, (variant, ndim, dtype, _layout) in reference(set_name).items():
            cfg = {k: v for k, v in parse_name(name).items() if k != "kind"}
            by_stratum[(variant, ndim, dtype)].add(L.canonical(cfg))
        for stratum in strata:
            assert L.stratum_keys(data, data.catalogs[catalog], *stratum) == by_stratum.get(stratum, set()), stratum
    user = ckconfig_catalog(str(USER))
    want = collections.defaultdict(set)
    for name in user_reference():
        cfg = {k: v for k, v in parse_name(name).items() if k != "kind"}
        want[(cfg["variant"], cfg["ndim"], cfg["dtype"])].add(L.canonical(cfg))
    for stratum in strata:
        assert L.stratum_keys(data, user, *stratum) == want.get(stratum, set()), stratum


def ckconfig_catalog(path: str):
    from ckspace.rules.data import Catalog

    return Catalog("ck-config", (), configs=path, user=True)


@functools.lru_cache(maxsize=None)
def listed_full_names() -> frozenset[str]:
    return frozenset(c["name"] for c in Space(arch="gfx950").enumerate(variant="forward", ndim=2, dtype="fp16"))


# -- a user's own configs -----------------------------------------------------------------------------------------
def user_reference() -> list[str]:
    return sorted(n for p in sorted(USER.rglob("*.json")) for n in ck_configs.names(p))


def test_a_users_config_directory_is_the_catalog_it_describes(capsys):
    assert main(["enumerate", "--arch", "gfx950", "--ck-config", str(USER)]) == 0
    captured = capsys.readouterr()
    breaker = "grouped_conv_bwd_weight_bf16_ndhwgc_3d_compv1_cshuffle_intrawave_64x64x32_1x1x1_32x32x64_vec8_8_8"
    assert captured.out.split() == [n for n in user_reference() if n != breaker]
    # the edited entry breaks a fact (no bf16 MFMA is 32x32x64): reported with the fact, not dropped silently
    assert breaker in captured.err and "arch.warp-tile" in captured.err and "instances[1]" in captured.err
    # an entry that leaves every optional key out gets CK's defaults; vectors 4/8/8 leave _vec out of the name
    assert "grouped_conv_fwd_fp16_nhwgc_2d_compv1_cshuffle_intrawave_64x64x32_2x1x1_32x32x8" in captured.out.split()


def test_a_users_config_file_works_in_sample_coverage_and_emit(tmp_path, capsys):
    one = str(USER / "forward" / "nhwgc_fp16.json")
    assert main(["sample", "--arch", "gfx942", "--ck-config", one, "-n", "2"]) == 0
    assert len(capsys.readouterr().out.split()) == 2
    assert main(["coverage", "--arch", "gfx942", "--ck-config", one, "--set", "full", "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["emit", "--arch", "gfx950", "--ck-config", one, "-o", str(tmp_path / "out")]) == 0
    assert "emitted 4 kernels" in capsys.readouterr().out


@pytest.mark.parametrize("edit, where, key", [
    (lambda d: d["instances"][2].pop("tile_m"), "instances[2]", "'tile_m'"),
    (lambda d: d["instances"][1].update(warp_tile_k="8"), "instances[1]", "'warp_tile_k'"),
    (lambda d: d["instances"][0].update(tile_mm=64), "instances[0]", "'tile_mm'"),
    (lambda d: d["instances"][3].update(double_smem_buffer=1), "instances[3]", "'double_smem_buffer'"),
    (lambda d: d["instances"][0].update(pipeline="comp-v3"), "instances[0]", "'pipeline'"),
    (lambda d: d.update(variant="backward"), "nhwgc_fp16.json", "'variant'"),
    (lambda d: d.pop("datatype"), "nhwgc_fp16.json", "'datatype'"),
])
def test_a_malformed_config_is_one_line_naming_file_entry_and_key(tmp_path, capsys, edit, where, key):
    doc = json.loads((USER / "forward" / "nhwgc_fp16.json").read_text())
    edit(doc)
    path = tmp_path / "nhwgc_fp16.json"
    path.write_text(json.dumps(doc))
    assert main(["enumerate", "--arch", "gfx950", "--ck-config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nhwgc_fp16.json" in err[0] and where in err[0] and key in err[0], err


@pytest.mark.parametrize("text", ["", "{", "[]", '{"variant": "forward"}', "\xff\xfe"])
def test_unreadable_json_is_one_line(tmp_path, capsys, text):
    path = tmp_path / "bad.json"
    path.write_bytes(text.encode("latin-1"))
    assert main(["enumerate", "--arch", "gfx950", "--ck-config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.json" in err[0]


def test_ck_config_and_another_set_is_a_usage_error(capsys):
    assert main(["enumerate", "--arch", "gfx950", "--ck-config", str(USER), "--set", "ck-default"]) == 2
    assert main(["enumerate", "--arch", "gfx950", "--ck-config", str(USER / "nope")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 300) | st.sampled_from(
    ["forward", "bwd_data", "fp16", "nhwgc", "compv3", "intrawave", "cshuffle", "x"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["variant", "ndim_spatial", "layout", "datatype", "instances", "id", "tile_m", "pipeline", "warp_k"]),
        inner, max_size=6), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_the_reader_never_fails_other_than_with_its_one_line_error(doc):
    try:
        ckconfig.entries_of(doc, "fuzz.json")
    except ckconfig.CkConfigError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("fuzz.json")


def test_coverage_of_a_listed_catalog_is_measured_against_full(capsys):
    # CK's tests kernels as a list of names against full's items: the ones full has (3D names respelt nhwgc) are in
    # full, the others are open-space kernels whose shared items count.
    full = {c["name"] for c in Space(arch="gfx950").enumerate()}
    ck_tests = sorted(reference("tests"))
    in_full = sum(1 for n in ck_tests if n.replace("_ndhwgc_", "_nhwgc_") in full)
    assert main(["coverage", "--arch", "gfx950", "--set", "ck-tests", "--format", "json"]) == 0
    names = json.loads(capsys.readouterr().out)["names"]
    assert names["read"] == 576 and names["in_full"] == in_full
    assert names["outside_full_counted"] == 576 - in_full


def test_the_stored_table_is_what_the_import_script_makes_of_the_json_files(tmp_path):
    # Regenerating from the verbatim fixtures gives the committed table byte for byte, and --check reads it back.
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("import_ck_configs", root / "scripts" / "import_ck_configs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "ck-configs.toml"
    assert module.main(["--out", str(out), "--check"]) == 0
    assert out.read_bytes() == (root / "constraints" / "catalogs" / "ck-configs.toml").read_bytes()


def test_explain_with_a_users_config(capsys):
    listed = "grouped_conv_fwd_fp16_nhwgc_2d_compv1_cshuffle_intrawave_64x64x32_2x1x1_32x32x8"
    assert main(["explain", listed, "--ck-config", str(USER), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["sets"]["ck-config"] is True
    other = listed.replace("64x64x32", "64x64x64")
    assert main(["explain", other, "--ck-config", str(USER), "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [v["rule"] for v in out["violations"] if v["enabled"]] == ["ck-config.listed"]
    assert [n["name"] for n in out["neighbours"]][0] == listed
