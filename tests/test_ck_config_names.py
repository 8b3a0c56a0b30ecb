"""CK's shipped profiler/tests kernel lists (its 42 dispatcher JSON configs, verbatim under tests/fixtures/ck-configs)
are kernels of the real kernel space: every name parses, prints back the same, and breaks no fact on gfx942 and
gfx950 (spec 12.6; issue "The real kernel space"). The names come from an independent reading of the JSON files
(tests/reference/ck_configs.py), not from ckspace.
"""

from __future__ import annotations

import functools

import pytest

from ckspace import Space
from ckspace.explain.explainer import Explainer
from ckspace.rules.names import format_name, parse_name

try:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from reference import ck_configs
except ImportError:  # pragma: no cover
    from tests.reference import ck_configs  # type: ignore[no-redef]

ARCHS = ("gfx942", "gfx950")


@functools.lru_cache(maxsize=None)
def all_names(set_name: str | None = None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for path in ck_configs.files(set_name) for n in ck_configs.names(path)))


def test_the_fixtures_are_the_42_files_with_their_kernel_counts():
    # Counted from the files by the independent reader: 42 files; the profiler lists 2,581 distinct kernels, the
    # tests 576, all of which are also profiler kernels (spec 12.6).
    assert len(ck_configs.files()) == 42
    assert len(all_names("profiler")) == 2581
    assert len(all_names("tests")) == 576
    assert set(all_names("tests")) <= set(all_names("profiler"))


def test_every_name_parses_and_prints_back_the_same():
    for name in all_names():
        assert format_name(parse_name(name)) == name


@pytest.mark.parametrize("arch", ARCHS)
def test_every_profiler_and_tests_kernel_is_in_the_open_space(arch):
    space = Space(arch=arch, rules="-ck-curation")
    broken = {n: [v.rule for v in space.check(n)] for n in all_names()}
    assert {n: r for n, r in broken.items() if r} == {}


def test_a_kernel_in_no_catalog_gets_the_nearest_catalog_kernels():
    # CK's 32x32x8 fp16 profiler kernel with other vectors: a kernel of the open space that no catalog holds (full
    # has 32x32x16, CK's lists do not name these vectors).
    listed = next(n for n in all_names("tests") if n.startswith("grouped_conv_fwd_fp16_nhwgc_2d_") and "_32x32x8_vec1_1_8" in n)
    name = listed.replace("_vec1_1_8", "_vec2_2_8")
    assert name not in all_names()
    ex = Explainer("gfx950", "-ck-curation")
    exp = ex.explain(name, neighbours=3)
    assert exp.valid
    assert not any(v for k, v in exp.sets.items() if k not in ("tests", "tiny"))
    assert any(note.kind == "in-no-catalog" for note in exp.notes)
    assert exp.catalog_neighbours
    asked = parse_name(name)
    members: dict[str, set[str]] = {}
    for cn in exp.catalog_neighbours:
        got = parse_name(cn.neighbour.name)
        assert {k: got[k] for k in ("variant", "ndim", "dtype")} == {k: asked[k] for k in ("variant", "ndim", "dtype")}
        for catalog in cn.catalogs:  # the catalog it is named with holds it
            if catalog not in members:
                members[catalog] = {c["name"] for c in Space(arch="gfx950", catalog=catalog).enumerate()}
            assert cn.neighbour.name in members[catalog], (catalog, cn.neighbour.name)
    # the listed kernel itself is one change away (vec_a and vec_b: two fields), in both of CK's lists
    assert any(cn.neighbour.name == listed and {"ck-profiler", "ck-tests"} <= set(cn.catalogs)
               for cn in exp.catalog_neighbours)
    assert exp.to_json()["catalog_neighbours"][0]["catalogs"]
