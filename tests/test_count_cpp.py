"""Distinct C++ kernels (`--count`'s second number): checked against listing the kernels and keying each by its
fields less the pads (fields.toml marks them code = false; tests/test_identical_code.py shows the C++ ignores them).
"""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from ckspace.space import Space

FREE = ("pad_m", "pad_n", "pad_k")
# A slice of the open space small enough to list (1,920 kernels), where the pads are free.
BASE = ("variant == 'bwd_data' and ndim == 2 and dtype == 'fp16' and tile_m == 64 and tile_n == 64 and tile_k == 32 "
        "and pipeline == 'compv3' and wave_m == 2 and wave_n == 2 and vec_a == 8 and vec_b == 8 and scheduler == "
        "'intrawave' and epilogue == 'cshuffle' and specialization == 'default' and num_groups_to_merge == 1 and "
        "not split_image and not double_smem_buffer")
OPEN = Space(arch="gfx950", rules="-ck-curation", use_cache=False)


def _listed(space: Space, where: str | None) -> tuple[int, int]:
    kernels = 0
    keys = set()
    for cfg in space.enumerate(where=where):
        kernels += 1
        keys.add(tuple(sorted((k, v) for k, v in cfg.items() if k not in (*FREE, "name"))))
    return kernels, len(keys)


def _counted(space: Space, where: str | None) -> tuple[int, int]:
    return sum(space.count(where=where).values()), sum(space.count_cpp(where=where).values())


def test_the_open_slice_has_eight_names_per_cpp_kernel() -> None:
    kernels, distinct = _listed(OPEN, BASE)
    assert kernels == 8 * distinct and _counted(OPEN, BASE) == (kernels, distinct)


def test_catalogs_fix_the_pads_one_name_per_cpp_kernel() -> None:
    """CK's full and default sets pad always: as many C++ kernels as kernels; a listed catalog is keyed directly."""
    for space in (Space(arch="gfx950"), Space(arch="gfx950", catalog="ck-default"),
                  Space(arch="gfx942", catalog="ck-profiler")):
        counted = _counted(space, None)
        assert counted == _listed(space, None) and counted[0] == counted[1]


PADS = st.sampled_from(["pad_m", "pad_n", "pad_k", "not pad_m", "not pad_k"])
OTHERS = st.sampled_from(["warp_tile_m == 32", "warp_tile_n == 16", "vec_c == 8", "vec_c < 4", "warp_tile_k == 8"])
ATOM = st.one_of(PADS, OTHERS)
CLAUSE = st.builds(lambda a, b, op: f"({a} {op} {b})", ATOM, ATOM, st.sampled_from(["and", "or"]))
NEGATED = st.builds(lambda c, neg: f"not {c}" if neg else c, CLAUSE, st.booleans())


@settings(max_examples=25, deadline=None)
@given(st.lists(NEGATED, min_size=1, max_size=3))
def test_a_filter_that_reads_the_pads_counts_as_the_listing_does(clauses) -> None:
    where = " and ".join([BASE, *clauses])
    assert _counted(OPEN, where) == _listed(OPEN, where)


def test_count_shows_both_numbers(tmp_path) -> None:
    """--count: kernels and distinct C++ kernels per stratum, in every format."""
    from ckspace.cli import main
    import contextlib
    import io

    argv = ["enumerate", "--arch", "gfx950", "--rules", "-ck-curation", "--where", BASE, "--count", "--no-cache"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--format", "json"]) == 0
    doc = json.loads(out.getvalue())
    kernels, distinct = _listed(OPEN, BASE)
    assert (doc["total"], doc["total_cpp"]) == (kernels, distinct)
    assert [(s["count"], s["cpp"]) for s in doc["strata"] if s["count"]] == [(kernels, distinct)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].split("\t") == ["variant", "ndim", "dtype", "kernels", "cpp"]
    assert lines[-1].split() == ["total", str(kernels), str(distinct)]
