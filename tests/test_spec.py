"""The Spec: a space described once, as the command line and Python both describe it, and resolved before any work.

Oracles: the families a CK API revision and a compiler add are written out by hand (the rule files' family names);
a trait config's filter is the seed example's allow-list; a user's CK configs are the fixture files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ckspace import Space
from ckspace.errors import CkspaceError, UsageError
from ckspace.spec import CK_CONFIG, Spec

FIXTURES = Path(__file__).parent / "fixtures"


def test_the_api_takes_ck_api_and_toolchain_as_the_command_line_does() -> None:
    by_words = Space(arch="gfx942", ck_api="2025.11", toolchain="registry")
    by_families = Space(arch="gfx942", rules="+ck-api-2025.11,-ck-api-2026.06,+toolchain-clang22")
    assert by_words.families == by_families.families
    assert {"ck-api-2025.11", "toolchain-clang22"} <= set(by_words.families)
    assert by_words.spec.toolchain_family == "toolchain-clang22"
    # `none` switches no compiler family on; the newest API has no family of its own
    assert Space(arch="gfx942", toolchain="none", ck_api="2026.06").families == Space(arch="gfx942").families


def test_a_spec_and_keywords_build_the_same_space() -> None:
    spec = Spec(arch="gfx942", rules="-ck-curation", ck_api="2025.11", toolchain="clang22")
    a = Space.from_spec(spec)
    b = Space(arch="gfx942", rules="-ck-curation", ck_api="2025.11", toolchain="clang22")
    assert a.families == b.families and a.catalog.name == b.catalog.name == "full"
    assert a.spec.spec == spec  # the words it was built from travel with it


def test_selections_name_their_catalog_through_over() -> None:
    r = Spec(arch="gfx942", set_name="tests", over="ck-default").resolve()
    assert (r.catalog, r.set_name) == ("ck-default", "tests")
    assert Space.from_spec(Spec(arch="gfx942", set_name="tests", over="ck-default")).catalog.name == "ck-default"
    # as a keyword, `catalog` is a catalog: a selection is no catalog
    with pytest.raises(UsageError, match="unknown catalog 'tests'"):
        Space(arch="gfx942", catalog="tests")


@pytest.mark.parametrize("spec, message", [
    (Spec(set_name="tests", over="nope"), "unknown --over 'nope'; choices: full, "),
    (Spec(set_name="nope"), "unknown set 'nope'; choices: "),
    (Spec(set_name="ck-default", over="full"), "--over applies to --set tests and --set tiny only"),
    (Spec(toolchain="gcc"), "unknown --toolchain 'gcc'; choices: auto, registry, none, clang22"),
    (Spec(ck_include="/usr/include"), "--ck-include is read only with --ck-api auto"),
    (Spec(ck_config=str(FIXTURES / "ck-configs"), over="ck-default"), "--ck-config is the catalog: give it or --over"),
    (Spec(ck_config=str(FIXTURES / "ck-configs"), set_name="ck-default"), "give it or --set ck-default, not both"),
])
def test_a_wrong_value_is_one_error_before_any_model(spec: Spec, message: str) -> None:
    with pytest.raises(CkspaceError) as caught:
        spec.resolve()
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_users_ck_configs_are_the_catalog() -> None:
    path = FIXTURES / "ck-configs"
    r = Spec(arch="gfx942", ck_config=str(path)).resolve()
    assert r.set_name == CK_CONFIG and not isinstance(r.catalog, str) and r.catalog.user
    assert Spec(arch="gfx942", set_name="tiny", ck_config=str(path)).resolve().set_name == "tiny"  # selected over it


def test_a_trait_config_narrows_the_filters(tmp_path: Path) -> None:
    doc = {"variant": "forward", "trait_config": {"data_type": {"values": ["bf16"]},
                                                  "ndim_spatial": {"values": [2]}}}
    path = tmp_path / "trait.json"
    path.write_text(json.dumps(doc))
    r = Spec(arch="gfx950", trait_config=str(path), where="tile_m >= 128").resolve()
    assert r.where is not None and "dtype == 'bf16'" in r.where and r.where.endswith("and (tile_m >= 128)")
    assert (r.variant, r.ndim, r.dtype) == (["forward"], ["2"], ["bf16"])  # as the command line gives them
    # the filters select what the allow-list says (the oracle: each kernel's own fields)
    space = Space.from_spec(Spec(arch="gfx950", trait_config=str(path)))
    picked = space.select(**space.spec.filters)
    assert picked and all((c["variant"], c["ndim"], c["dtype"]) == ("forward", 2, "bf16") for c in picked)
    # a filter given keeps its value
    assert Spec(arch="gfx950", trait_config=str(path), dtype=["fp16"]).resolve().dtype == ["fp16"]


def test_docstring_examples_run() -> None:
    import doctest

    import ckspace.emitted
    import ckspace.spec

    for module in (ckspace.spec, ckspace.emitted):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted >= 3 and result.failed == 0, module.__name__
