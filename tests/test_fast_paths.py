"""The fast paths of issue 15 give what the slow ones give.

* The plain-Python join (ckspace.solve.pysearch) lists the same bag rows as CP-SAT, on every bag of every catalog
  of every arch, and on random sub-spaces of the open space; the whole enumeration is the same either way.
* fast_name is format_name, byte for byte.
* A kept answer (ckspace.cli.answers) is what the command prints, and never outlives what it depends on.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckspace.memo import clear_all
from ckspace import Space
from ckspace.rules.data import load
from ckspace.rules.names import fast_name, format_name, name_rows
from ckspace.solve import bags as B
from ckspace.solve import pysearch

REPO = Path(__file__).resolve().parents[1]
DATA = load()
CATALOGS = sorted(c for c, cat in DATA.catalogs.items() if not cat.listed and c == cat.name)


def _unique_bags(space: Space, where: str | None = None) -> dict[tuple, tuple]:
    out: dict[tuple, tuple] = {}
    node = space.parse_where(where)
    for stratum in space.strata():
        plan = space._plan(stratum, node)
        if plan is None or plan.infeasible_by:
            continue
        for fac in plan.factors:
            if fac.constraints or fac.implied:
                defs = [space.data.fields[f] for f in fac.fields]
                out.setdefault(B._model_key(defs, fac.constraints, fac.implied, ()), (defs, fac))
    return out


def _cp_sat_rows(defs, fac, narrowed=()) -> list[tuple]:
    from ckspace.solve.cpsat import enumerate_all

    cp, variables = B.bag_model({d.name: d for d in defs}, fac, narrowed)
    return enumerate_all(cp, [variables[f] for f in fac.fields], None)


@pytest.mark.slow
def test_every_catalog_bag_of_every_arch_is_listed_as_cp_sat_lists_it() -> None:
    bags: dict[tuple, tuple] = {}
    for arch in sorted(DATA.archs):
        for catalog in CATALOGS:
            bags.update(_unique_bags(Space(arch=arch, catalog=catalog, use_cache=False)))
    assert len(bags) > 200
    for defs, fac in bags.values():
        rows = pysearch.rows(defs, (*fac.constraints, *fac.implied), {}, None)  # no catalog bag is declined
        assert rows == _cp_sat_rows(defs, fac), fac.fields


@pytest.mark.parametrize("arch,catalog", [("gfx950", "full"), ("gfx90a", "full"), ("gfx942", "ck-default"),
                                          ("gfx1201", "ck-rdna")])
def test_the_whole_enumeration_is_the_same_with_cp_sat_alone(arch, catalog, monkeypatch) -> None:
    fast = [c["name"] for c in Space(arch=arch, catalog=catalog, use_cache=False).enumerate()]
    clear_all()
    monkeypatch.setattr(B, "USE_PYTHON", False)
    slow = [c["name"] for c in Space(arch=arch, catalog=catalog, use_cache=False).enumerate()]
    clear_all()
    assert fast == slow and (fast or catalog == "ck-rdna")


OPEN = Space(arch="gfx950", rules="-ck-curation", use_cache=False)
_TILES = [16, 32, 64, 128, 256]


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(["forward", "bwd_data", "bwd_weight"]), dtype=st.sampled_from(["fp16", "fp32"]),
       tile_m=st.sampled_from(_TILES), tile_n=st.sampled_from(_TILES),
       pipeline=st.sampled_from(["compv3", "compv4", "mem", "basic_v1", "wavelet"]),
       vec=st.sampled_from([1, 2, 4, 8]))
def test_random_open_subspaces_list_as_cp_sat_lists_them(variant, dtype, tile_m, tile_n, pipeline, vec) -> None:
    """The open space (curation off) cut by a random filter: every bag the Python join takes agrees with CP-SAT, also
    with narrowed domains (as the lazy walk and counting ask), and one it declines is declined within its budget."""
    where = (f"variant == '{variant}' and dtype == '{dtype}' and tile_m == {tile_m} and tile_n == {tile_n} and "
             f"pipeline == '{pipeline}' and vec_a == {vec}")
    compared = 0
    for defs, fac in _unique_bags(OPEN, where).values():
        constraints = (*fac.constraints, *fac.implied)
        try:
            rows = pysearch.rows(defs, constraints, {}, 4000, budget=20_000)
        except (pysearch.Unsupported, OverflowError):
            continue
        assert rows == _cp_sat_rows(defs, fac), fac.fields
        compared += len(fac.fields) > 1
        if rows and len(fac.fields) > 1:  # narrowed to the values of the first row's first field
            name, raw = fac.fields[0], rows[0][0]
            narrowed = pysearch.rows(defs, constraints, {name: [raw]}, None)
            assert narrowed == [r for r in rows if r[0] == raw] == _cp_sat_rows(defs, fac, ((name, (raw,)),))
    assert compared  # each filtered open stratum has bags the Python join lists


def test_a_search_past_its_budget_is_declined_not_answered() -> None:
    big = max(_unique_bags(OPEN).values(), key=lambda b: len(b[1].fields))
    defs, fac = big
    with pytest.raises(pysearch.Unsupported):
        pysearch.rows(defs, (*fac.constraints, *fac.implied), {}, None, budget=100, per_row=0)


def test_the_open_spaces_largest_bags_are_listed_in_python_as_cp_sat_lists_them() -> None:
    """A search that keeps finding rows runs past BUDGET (PER_ROW visits per row found): the open space's largest
    bags (tens of thousands of rows, where CP-SAT takes seconds) are listed here; those of up to 10,000 rows are
    compared with CP-SAT."""
    listed_past_budget = 0
    for defs, fac in _unique_bags(OPEN, "variant == 'forward' and ndim == 2 and dtype == 'bf16'").values():
        constraints = (*fac.constraints, *fac.implied)
        try:
            rows = pysearch.rows(defs, constraints, {}, 10_000)  # larger ones take CP-SAT seconds to compare
        except (pysearch.Unsupported, OverflowError):
            continue
        if len(rows) * pysearch.PER_ROW > pysearch.BUDGET:
            assert rows == _cp_sat_rows(defs, fac), fac.fields
            listed_past_budget += 1
    assert listed_past_budget


def test_a_catalog_run_never_imports_or_tools() -> None:
    code = ("import sys; from ckspace import Space; "
            "n = sum(1 for _ in Space(arch='gfx942', use_cache=False).enumerate()); "
            "c = sum(Space(arch='gfx950', catalog='ck-default', use_cache=False).count().values()); "
            "print(n, c, 'ortools' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True).stdout.split()
    assert out[2] == "False" and int(out[0]) > 10_000 and int(out[1]) == 352  # README: ck-default on gfx950


# -- fast_name ----------------------------------------------------------------------------------------------------
def test_fast_name_is_format_name_on_every_kernel_of_every_catalog() -> None:
    for arch in ("gfx950", "gfx90a", "gfx1201"):
        for catalog in (*CATALOGS, "ck-profiler", "ck-tests"):
            for cfg in Space(arch=arch, catalog=catalog).enumerate():
                assert fast_name(cfg) == format_name(cfg) == cfg["name"]


def _config(draw_value) -> dict:
    return {f.name: draw_value(f) for f in DATA.fields.values() if not f.derived}


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fast_name_agrees_with_format_name_or_fails_the_same(data) -> None:
    """Any config of the model's domains, and some that are not (negative, text, huge values): both give the same
    name, or both raise."""
    spoiled = data.draw(st.sampled_from([None, *DATA.fields]))  # at most one field outside its domain

    def value(f):
        choices = list(f.values) if f.type != "bool" else [False, True, 0, 1]
        if f.name == spoiled:
            return data.draw(st.sampled_from([-1, 10**19, "x", None, 2.0, "Compv3"]))
        return data.draw(st.sampled_from(choices))
    cfg = _config(value)
    cfg["layout"] = data.draw(st.sampled_from(["nhwgc", "ndhwgc", "ngchw", "NHWGC"]))
    results = []
    for fn in (format_name, fast_name):
        try:
            results.append(("ok", fn(cfg)))
        except (ValueError, TypeError, KeyError) as exc:
            results.append(("error", type(exc).__name__))
    assert results[0] == results[1]


OUTCOMES = [0, 0]  # failed, named: test_name_rows_sees_both_outcomes checks that the batches above met both


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_name_rows_names_a_batch_as_format_name_names_each_row(data) -> None:
    """A batch of configs of one key order (some of them GEMM and depthwise mixed, at most one spoiled value):
    name_rows gives format_name's names, or fails where format_name fails first."""
    size = data.draw(st.integers(1, 6))
    spoiled = data.draw(st.sampled_from([None, *DATA.fields]))
    bad_row = data.draw(st.integers(0, size - 1))
    configs = []
    for i in range(size):
        def value(f, i=i):
            if f.name == spoiled and i == bad_row:
                return data.draw(st.sampled_from([-1, 10**19, "x", None, 2.0, "Compv3", [1]]))
            return data.draw(st.sampled_from(list(f.values) if f.type != "bool" else [False, True, 0, 1]))
        cfg = _config(value)
        cfg["layout"] = data.draw(st.sampled_from(["nhwgc", "ndhwgc", "ngchw", "NHWGC"]))
        configs.append(cfg)
    keys = tuple(configs[0])
    rows = [tuple(c[k] for k in keys) for c in configs]
    try:
        want: object = [format_name(c) for c in configs]
    except (ValueError, TypeError, KeyError) as exc:
        want = type(exc).__name__
    try:
        got: object = name_rows(keys, rows)
    except (ValueError, TypeError, KeyError) as exc:
        got = type(exc).__name__
    assert got == want
    OUTCOMES[isinstance(want, list)] += 1
    if spoiled is None:  # every value is of its domain: the domains may stand for the rows' integers and flags
        try:
            trusted: object = name_rows(keys, rows, DATA.fields)
        except (ValueError, TypeError, KeyError) as exc:
            trusted = type(exc).__name__
        assert trusted == want


def test_name_rows_sees_both_outcomes() -> None:
    if OUTCOMES == [0, 0]:
        test_name_rows_names_a_batch_as_format_name_names_each_row()  # run alone (-k, xdist): run the batches here
    assert OUTCOMES[0] > 0 and OUTCOMES[1] > 0, OUTCOMES


def test_a_domain_that_breaks_the_checks_sends_name_rows_back_to_the_rows() -> None:
    """name_rows trusts the domains for integers and flags only when the domains pass the checks themselves."""
    from dataclasses import replace

    cfg = next(iter(Space(arch="gfx950", use_cache=False).enumerate(variant="forward", ndim=2, dtype="fp16")))
    cfg = {k: v for k, v in cfg.items() if k != "name"}
    keys = tuple(cfg)
    bad = {**cfg, "tile_m": -16}
    domains = {**DATA.fields, "tile_m": replace(DATA.fields["tile_m"], values=(-16, *DATA.fields["tile_m"].values))}
    with pytest.raises(ValueError):
        format_name(bad)
    with pytest.raises(ValueError):
        name_rows(keys, [tuple(cfg.values()), tuple(bad.values())], domains)
    assert name_rows(keys, [tuple(cfg.values())], domains) == [format_name(cfg)]


def test_names_are_the_names_of_enumerate(tmp_path, monkeypatch) -> None:
    """Space.names (the names-only listing) gives enumerate's names in enumerate's order: solved, read back from
    the cache, and of a listed catalog."""
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path))
    for catalog, filters in (("full", {}), ("full", {"variant": "forward,bwd_data", "dtype": "fp32"}),
                             ("ck-tests", {})):
        space = Space(arch="gfx950", catalog=catalog)
        first = list(space.names(**filters))  # solves (and caches) or reads the list
        assert list(space.names(**filters)) == first  # from the cache
        assert [c["name"] for c in Space(arch="gfx950", catalog=catalog, use_cache=False).enumerate(**filters)] \
            == first and len(first) == len(set(first)) > 0


# -- kept answers -------------------------------------------------------------------------------------------------
def _ckspace(args: list[str], cache: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "CKSPACE_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True, env=env,
                          input=stdin, timeout=600)


def test_a_kept_answer_is_the_answer_and_is_read_back(tmp_path) -> None:
    args = ["enumerate", "--arch", "gfx950", "--variant", "bwd_data", "--dtype", "fp32", "--format", "csv"]
    first = _ckspace(args, tmp_path)
    kept = list((tmp_path / "answer").glob("*.json"))
    assert first.returncode == 0 and len(kept) == 1
    second = _ckspace(args, tmp_path)
    assert second.stdout == first.stdout and second.stderr == "" and second.returncode == 0
    # what is served is the entry itself: a re-signed edit of it shows (the checksum, not trust, guards it)
    from ckspace import cache

    edited = "edited\n"
    payload = json.dumps(edited, separators=(",", ":")).encode()
    kept[0].write_bytes(cache._header("answer", kept[0].stem, payload) + b"\n" + payload)
    assert _ckspace(args, tmp_path).stdout == edited


def test_a_kept_answer_never_outlives_the_engine_or_the_data(tmp_path, monkeypatch) -> None:
    from ckspace import cache
    from ckspace.cli import answers

    argv = ["enumerate", "--arch", "gfx950"]
    monkeypatch.setattr(cache, "engine_digest", lambda: "a")
    a = answers.key(argv)
    monkeypatch.setattr(cache, "engine_digest", lambda: "b")
    assert answers.key(argv) != a  # another build of the engine: another entry
    monkeypatch.setattr(answers, "_tree_digest", lambda root, pattern: f"{root}{pattern}changed")
    assert answers.key(argv) not in (a, None)


@pytest.mark.parametrize("argv", [
    ["enumerate", "--arch", "gfx950", "--set", "tiny"],  # a selection: also the solver's version
    ["enumerate", "--arch", "gfx950", "--format", "table"],
    ["enumerate", "--arch", "gfx950", "--timings"],
    ["enumerate", "--arch", "auto"],
    ["enumerate", "--arch", "gfx950", "--constraints", "constraints"],
    ["enumerate", "--arch", "gfx950", "-o", "x.txt"],
    ["enumerate", "--arch", "gfx950", "--trait-config", "t.json"],
    ["enumerate", "--arch", "gfx950", "--no-cache"],
    ["explain", "grouped_conv_x", "--set", "ck-default"],  # a name ck-default rejects may be in full's tests
    ["explain", "grouped_conv_x", "--rules", "+ck-archfilter"],
    ["explain", "grouped_conv_x", "--select-sets"],
    ["explain", "-"],  # names from stdin
    ["explain", "--names", "names.txt"],
    ["explain", "tests/conftest.py"],  # a file: explain says to use --names
    ["explain", "grouped_conv_x", "--format", "table"],
    ["enumerate", "--arch"],
])
def test_what_depends_on_more_than_the_command_line_is_never_kept(argv) -> None:
    from ckspace.cli import answers

    assert answers.key(argv) is None


def test_a_run_with_warnings_or_a_failure_keeps_nothing(tmp_path, monkeypatch, capsys) -> None:
    from ckspace.cli import answers

    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(sys, "stdout", io.StringIO())

    def warns() -> int:
        print("kernel", file=sys.stdout)
        print("ckspace: warning: something", file=sys.stderr)
        return 0

    assert answers.run_and_keep(["enumerate", "--arch", "gfx950"], warns) == 0
    assert answers.run_and_keep(["enumerate", "--arch", "gfx942"], lambda: 2) == 2
    assert not (tmp_path / "answer").exists()


# -- compiled rules -------------------------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.data())
def test_compiled_rules_evaluate_as_the_tree_walk_does(data) -> None:
    """The language's evaluator (compiled closures: rules.expr.evaluate, and compile_node's exact form that the
    plain checks use) against an independent tree walk (tests/expr_oracle.py), for every rule of an arch on a config
    of the model's domains: the same value, or the same kind of error."""
    from expr_oracle import tree_walk

    from ckspace.rules import expr as E
    from ckspace.rules.model import Model

    arch = data.draw(st.sampled_from(sorted(DATA.archs)))
    model = _MODELS.setdefault(arch, Model(DATA, arch, set(DATA.families)))
    variant = data.draw(st.sampled_from(DATA.fields["variant"].values))
    cfg = _config(lambda f: data.draw(st.sampled_from(list(f.values))))
    cfg["variant"] = variant
    cfg["layout"] = "ngchw" if variant == "forward_depthwise" else "nhwgc"
    for rule in model.data.rules:
        for node in (rule.when, rule.require):
            outcomes = []
            for fn in (lambda c, n=node: tree_walk(n, c, model.resolve),
                       lambda c, n=node: E.evaluate(n, c, model.resolve),
                       E.compile_node(node, model.resolve, exact=True)):
                try:
                    outcomes.append(("value", fn(cfg)))
                except Exception as exc:  # noqa: BLE001 - the kind of error is what is compared
                    outcomes.append(("error", type(exc).__name__))
            assert outcomes[0] == outcomes[1] == outcomes[2], (rule.id, outcomes)


_MODELS: dict = {}


# -- the TOML rows fast path --------------------------------------------------------------------------------------
def test_every_data_file_reads_the_same_with_the_rows_fast_path() -> None:
    """json.dumps tells true from 1 and 1 from 1.0, which == does not."""
    import tomllib

    from ckspace.rules import schema

    fast = 0
    for path in sorted((REPO / "constraints").rglob("*.toml")):
        blob = path.read_bytes()
        assert json.dumps(schema.parse_toml(blob, path.name)) == json.dumps(tomllib.loads(blob.decode()))
        fast += schema._with_rows_read(blob.decode()) is not None
    assert fast >= 1  # CK's config table takes the fast path


SLASH_ESCAPE = "<json slash escape>"
_cell = st.recursive(
    st.one_of(st.integers(-2**63, 2**63 - 1), st.booleans(), st.text(max_size=6),
              st.floats(allow_nan=True, allow_infinity=True),
              st.sampled_from(["\x7f", SLASH_ESCAPE, "\ud800", "\U0001f600", "\u00e9"])),
    lambda inner: st.lists(inner, max_size=3), max_leaves=6)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if v != v else ("inf" if v == float("inf") else ("-inf" if v == float("-inf") else repr(v)))
    if v == SLASH_ESCAPE:
        return '"a\\/b"'  # JSON's escape of "/", which TOML lacks
    if isinstance(v, str):
        return json.dumps(v)  # non-ASCII as \\u escapes; an astral character as a surrogate pair, which TOML refuses
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return str(v)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(_cell, min_size=1, max_size=4), min_size=1, max_size=5),
       name=st.text(max_size=5), trailing=st.booleans())
def test_fuzz_the_rows_fast_path_reads_what_tomllib_reads(rows, name, trailing, monkeypatch) -> None:
    """Generated row tables, with values TOML and JSON read differently (DEL, lone surrogates, NaN, \\/): the fast
    path gives tomllib's document exactly, or steps aside; where tomllib fails, so does parse_toml."""
    import tomllib

    from ckspace.errors import DataError
    from ckspace.rules import schema

    monkeypatch.setattr(schema, "FAST_ROWS_MIN", 0)
    lines = [f"name = {json.dumps(name)}", "rows = ["]
    lines += [f"  {_toml_value(r)}," if trailing or i < len(rows) - 1 else f"  {_toml_value(r)}"
              for i, r in enumerate(rows)]
    lines += ["]", ""]
    text = "\n".join(lines)
    try:
        expected = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        with pytest.raises(DataError):
            schema.parse_toml(text.encode("utf-8", "surrogatepass"), "fuzz.toml")
        return
    assert json.dumps(schema.parse_toml(text.encode("utf-8", "surrogatepass"), "fuzz.toml"),
                      allow_nan=True) == json.dumps(expected, allow_nan=True)


_FRAGMENT = st.sampled_from(["[", "]", '"', ",", " ", "1", "true", '"a"', '"]"', '"["', '"\\""', "\\", "[1]"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.lists(_FRAGMENT, max_size=6).map(lambda parts: "[" + "".join(parts) + "]"),
                      min_size=1, max_size=4))
def test_row_lines_that_open_or_close_what_another_line_holds_read_as_tomllib_reads(lines, monkeypatch) -> None:
    """A block's rows are parsed in one JSON array only where that reads each line as one row: lines whose
    brackets or quotes pair up with another line's (["a", "x],["] then ["]) give tomllib's document or fail
    as tomllib fails, never rows of their own making."""
    import tomllib

    from ckspace.errors import DataError
    from ckspace.rules import schema

    monkeypatch.setattr(schema, "FAST_ROWS_MIN", 0)
    for text in ("rows = [\n" + "".join(f"  {line},\n" for line in lines) + "]\n",
                 "rows = [\n" + "".join(f"  {line}\n" for line in lines) + "]\n",  # no commas: TOML's error
                 'rows = [\n  ["a", "x],["],\n  ["p"],["q"],\n  ["]\n]\n'):
        try:
            expected = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            with pytest.raises(DataError):
                schema.parse_toml(text.encode(), "fuzz.toml")
            continue
        assert schema.parse_toml(text.encode(), "fuzz.toml") == expected


def test_the_process_entry_defers_the_collector_and_the_library_does_not() -> None:
    """The `ckspace` process collects cyclic garbage every 200,000 allocations (a catalog's run never); a program
    that uses the library keeps its own setting."""
    import gc

    from ckspace.cli import GC_FIRST_GENERATION, main

    code = "import gc, ckspace.cli as c; c.main = lambda argv=None: print(gc.get_threshold()[0]) or 0; c.run()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True).stdout
    assert int(out) == GC_FIRST_GENERATION == 200_000
    before = gc.get_threshold()
    assert main(["enumerate", "--arch", "gfx950", "--variant", "bwd_data", "--dtype", "fp32", "--count",
                 "--no-cache"]) == 0
    assert gc.get_threshold() == before


def test_the_kept_answers_and_the_cache_digest_the_rule_data_alike() -> None:
    """One digest of the data files (ckspace.files.tree_digest), read with one bound, for the result cache and for
    the CLI's kept answers (which load no rules, so they keep a copy of the bound)."""
    from ckspace.cli import answers
    from ckspace.paths import data_dir
    from ckspace.rules import data as D
    from ckspace.rules.schema import MAX_FILE_BYTES

    assert answers.MAX_DATA_FILE == MAX_FILE_BYTES
    root = data_dir("constraints", "fields.toml")
    assert answers._tree_digest(root, "*.toml") == D.digest_dir(root)
    # the oracle: the same digest written out by hand
    import hashlib

    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*.toml") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    assert D.digest_dir(root) == h.hexdigest()


def test_the_kept_answers_read_enumerates_options_as_argparse_does() -> None:
    """answers' allow-list of options (read before argparse loads, to serve a kept answer) names options of
    enumerate's parser, valued where the parser takes a value and flags where it takes none: the two readings of a
    command line cannot drift apart."""
    import argparse

    from ckspace.cli import answers
    from ckspace.cli.app import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    enumerate_parser = sub.choices["enumerate"]
    by_option = {o: a for a in enumerate_parser._actions for o in a.option_strings}
    for option in answers._VALUED:
        assert option in by_option and by_option[option].nargs != 0, option
    for option in answers._FLAGS:
        assert option in by_option and by_option[option].nargs == 0, option
    assert answers._FORMATS <= set(by_option["--format"].choices)
    explain = {o: a for a in sub.choices["explain"]._actions for o in a.option_strings}
    for option in answers._EXPLAIN_VALUED:
        assert option in explain and explain[option].nargs != 0, option
    assert answers._EXPLAIN_FORMATS <= set(explain["--format"].choices)
