"""The rule/where expression language never crashes, never hangs and never serves a wrong answer.

Any text given as `--where` (or written in a rule file) either gives a result, on which the plain-Python reader
(`expr.evaluate`) and the solver agree, or fails with one ckspace error line: a type error, a value outside an enum
field's domain, too deep, too long, an integer beyond the solver's range, text that is not printable UTF-8.
"""

from __future__ import annotations

import shutil
import time
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckspace import Space
from ckspace.cli import main
from ckspace.errors import CkspaceError, DataError
from ckspace.rules import data as D
from ckspace.rules import expr as E
from ckspace.rules.model import Model, resolve_families

STRATUM = {"variant": "bwd_data", "ndim": 2, "dtype": "fp16"}  # 124 kernels: small enough to compare the solver with the oracle per example
SECONDS_PER_EXAMPLE = 5.0  # a generous bound: a count of this stratum takes ~50 ms

_SPACE: dict[str, object] = {}


def _space() -> tuple[Space, list[dict]]:
    """One Space and the stratum's configs for the whole module (hypothesis runs outside function fixtures)."""
    if not _SPACE:
        space = Space(arch="gfx950", use_cache=False)
        _SPACE["space"] = space
        _SPACE["configs"] = list(space.enumerate(**STRATUM))
    return _SPACE["space"], _SPACE["configs"]  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------------------------
# Expressions from the language's grammar, of every type, right and wrong

_DATA = D.load()
# Names the gemm configs of STRATUM carry (fields of both families and derived quantities of gemm kernels).
NAMES = sorted({f.name for f in _DATA.fields.values() if f.applies_to("gemm")}
               | {n for n, d in _DATA.derives.items() if d.applies_to("gemm")})
TEXTS = sorted({str(v) for f in _DATA.fields.values() if f.type == "enum" for v in f.values}
               | {"x", "compv9", "3d", "", "true", "fp64"})
INTS = st.one_of(st.integers(-3, 300), st.sampled_from([0, 2**40, -(2**40), 2**40 + 1, 2**48, 2**63, 10**23]))
REFS = ["arch.warp_size", "arch.lds_bytes", "arch.name", "arch.wave_layouts", "arch.warp_tiles", "arch.warp_tiles[dtype]",
        "arch.wave_layouts[0]", "ck.tile", "ck.depthwise", "archfilter.bwd_pipelines", "derive.legacy_warp_k_tiles"]
BINARY = ["+", "-", "*", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "in", "not in"]

LEAVES = st.one_of(st.sampled_from(NAMES), INTS.map(str), st.sampled_from(TEXTS).map(repr),
                   st.sampled_from(["true", "false"]), st.sampled_from(REFS))


def _compound(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    # Every compound is bracketed, so that the text means the tree it was built as.
    return st.one_of(
        st.tuples(st.sampled_from(["not ", "-"]), children).map(lambda t: f"({t[0]}{t[1]})"),
        st.tuples(children, st.sampled_from(BINARY), children).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.tuples(st.sampled_from(["min", "max"]), st.lists(children, min_size=2, max_size=3))
        .map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.lists(children, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ("," if len(xs) == 1 else "") + ")"),
        st.tuples(children, children).map(lambda t: f"{t[0]}[{t[1]}]"),
    )


EXPRESSIONS = st.recursive(LEAVES, _compound, max_leaves=8)
# Inputs at and past the limits: deep prefix runs and brackets, long operator chains.
DEEP = st.tuples(st.sampled_from(["not ", "-", "("]), st.integers(1, 150), LEAVES).map(
    lambda t: "(" * t[1] + t[2] + ")" * t[1] if t[0] == "(" else t[0] * t[1] + t[2])
CHAINS = st.tuples(LEAVES, st.sampled_from(["+", "*", "and", "==", "-", "//"]), st.integers(2, 120)).map(
    lambda t: f" {t[1]} ".join([t[0]] * t[2]))
# Any character (a lone surrogate is how a byte that is not UTF-8 reaches sys.argv), dropped into an expression.
ODD_CHARACTERS = st.tuples(EXPRESSIONS, st.characters(), st.integers(0, 40)).map(lambda t: t[0][: t[2]] + t[1] + t[0][t[2]:])

# Mostly well-typed filters, so that the two readers are compared on many real answers, not only on errors.
# Hypothesis prefers the first entries of a list: these fields vary within STRATUM, most others do not.
VARYING = ["tile_m", "tile_n", "tile_k", "vec_a", "vec_b", "vec_c", "wave_m", "wave_n", "warp_tile_m", "warp_tile_k",
           "threads", "a_per_thread", "lds_bytes", "num_groups_to_merge", "pipeline", "specialization"]
INT_NAMES = [n for n in VARYING if n not in ("pipeline", "specialization")] + [
    n for n in NAMES if n not in VARYING and (n not in _DATA.fields or _DATA.fields[n].type == "int")]
BOOL_NAMES = [n for n in NAMES if n in _DATA.fields and _DATA.fields[n].type == "bool"]
ENUM_TESTS = [f"{f.name} {op} {v!r}" for f in sorted(_DATA.fields.values(), key=lambda f: f.name not in VARYING)
              if f.type == "enum" and f.applies_to("gemm") for v in f.values for op in ("==", "!=")]
TABLE_TESTS = ["(warp_tile_m, warp_tile_n, warp_tile_k) in arch.warp_tiles[dtype]", "(wave_m, wave_n, wave_k) in arch.wave_layouts",
               "pipeline in archfilter.bwd_pipelines", "(variant, pipeline) not in pipeline.backward_unsupported",
               "(tile_m, tile_n, tile_k) in derive.legacy_warp_k_tiles", "pipeline in ('mem', 'compv3', 'compv4')",
               "(variant, dtype, tile_m, tile_n, tile_k, vec_a, vec_b, vec_c) in ck.vec"]
INT_TERMS = st.deferred(lambda: st.one_of(
    st.sampled_from(INT_NAMES), st.sampled_from([64, 128, 32, 16, 256, 8, 4, 2, 1]).map(str), st.integers(0, 300).map(str),
    st.sampled_from(["arch.warp_size", "arch.lds_bytes"]),
    st.tuples(INT_TERMS, st.sampled_from(["+", "-", "*", "//", "%"]), INT_TERMS).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    st.tuples(st.sampled_from(["min", "max"]), INT_TERMS, INT_TERMS).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
    st.tuples(INT_TERMS, CONDITIONS, INT_TERMS).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
))
# `field op constant`: the tests that split a stratum, so that many answers are neither all nor nothing.
SPLITS = st.tuples(st.sampled_from(INT_NAMES[:12]), st.sampled_from(["==", "!=", "<", "<=", ">", ">="]),
                   st.sampled_from([64, 128, 32, 16, 4, 256, 8, 2, 1])).map(lambda t: f"{t[0]} {t[1]} {t[2]}")
CONDITIONS = st.deferred(lambda: st.one_of(
    SPLITS,
    st.tuples(INT_TERMS, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), INT_TERMS).map(" ".join),
    st.sampled_from([*ENUM_TESTS, *TABLE_TESTS, *BOOL_NAMES, "true", "false"]),
    st.tuples(INT_TERMS, st.lists(st.integers(0, 256), max_size=4)).map(
        lambda t: f"{t[0]} in ({', '.join(map(str, t[1]))}{',' if len(t[1]) == 1 else ''})"),
    st.tuples(CONDITIONS, st.sampled_from(["and", "or"]), CONDITIONS).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    CONDITIONS.map(lambda c: f"not ({c})"),
    st.tuples(CONDITIONS, CONDITIONS, CONDITIONS).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
))

WHERE_TEXTS = st.one_of(
    CONDITIONS,
    CONDITIONS,
    EXPRESSIONS,
    EXPRESSIONS.map(lambda e: f"{e} == {e}"),
    st.tuples(st.sampled_from(NAMES), st.sampled_from(["==", "!=", "in", "<"]), EXPRESSIONS).map(" ".join),
    DEEP, CHAINS, ODD_CHARACTERS,
)


def _assert_one_line(exc: CkspaceError) -> None:
    message = str(exc)
    assert message and "\n" not in message and "Traceback" not in message, message


@settings(max_examples=150, deadline=timedelta(seconds=SECONDS_PER_EXAMPLE),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(WHERE_TEXTS)
def test_any_where_gives_a_result_or_one_error_line_and_the_readers_agree(text: str) -> None:
    space, configs = _space()
    started = time.perf_counter()
    try:
        node = space.parse_where(text)
        if node is None:
            return
        accepted = [bool(E.evaluate(node, cfg, space.model.resolve)) for cfg in configs]
        counts = space.count(**STRATUM, where=text)
    except CkspaceError as exc:
        _assert_one_line(exc)
        return
    # The solver serves exactly the configs the plain-Python reader accepts: nothing wrong is ever served.
    assert sum(counts.values()) == sum(accepted), text
    assert time.perf_counter() - started < SECONDS_PER_EXAMPLE


# ---------------------------------------------------------------------------------------------------------------
# The command line: every input that used to print a traceback is one error line with exit code 2

CLI_CASES = [
    ("-'abc' == 1", "--where: '-' takes integers, got 'abc' (str) in -'abc'"),
    ("min('a', 1) == 1", "--where: min() takes integers, got 'a' (str) in min('a', 1)"),
    ("(1, 2) < 3", "--where: cannot order (1, 2) (tuple) and 3 (int): '<' compares integers"),
    ("tile_m == 'x'", "--where: cannot compare tile_m (int) with 'x' (str)"),
    ("arch.warp_tiles[tile_m] == 1", "--where: arch.warp_tiles is indexed by str, got tile_m (int)"),
    ("tile_m == 99999999999999999999999", "--where: integer 99999999999999999999999 is out of range"),
    ("not " * 900 + "pad_m", "--where: expression nests too deeply (more than 64 levels"),
    ("not " * 10_000 + "pad_m", "--where: expression too long (40005 characters; at most 4000)"),
    (" + ".join(["tile_m"] * 3000) + " > 0", "--where: expression too long"),
    (" + ".join(["1"] * 100) + " == tile_m", "--where: expression nests too deeply"),
    ("tile_m == '\udcff'", "--where: not valid UTF-8 text (byte 0xff at column 12)"),
    ("tile_m == 16\x00", "--where: non-printable character U+0000 at column 13"),
    ("pipeline == 'compv9'", "--where: pipeline has no value 'compv9'; values: compv1, compv2, compv3, compv4, "),
    ("ndim == '3d'", "--where: cannot compare ndim (int) with '3d' (str)"),
    ("tile_m * 1099511627776 * 1099511627776 > 0", "beyond the solver's integer range"),
    ("tile_m", "--where: expected a condition (true or false), got tile_m (int)"),
    ("tile_m in (tile_n, 32)", "the right side of 'in' must be known per stratum"),
    ("pipeline == scheduler", "the solver compares an enum field only with constants"),
    ("tile_m // -2 == 1", "--where: '//' takes non-negative operands, got -2 (int)"),
]


@pytest.mark.parametrize("where,expected", CLI_CASES, ids=[w[:30] for w, _ in CLI_CASES])
def test_bad_where_is_one_error_line_with_exit_code_2(where: str, expected: str, capsys) -> None:
    code = main(["enumerate", "--arch", "gfx950", "--no-cache", "--count", "--where", where])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert "Traceback" not in err and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ckspace: error: "), err
    assert expected in lines[0], lines[0]


@pytest.mark.parametrize("where", [
    "tile_n >= 128 and pipeline == 'compv3'",
    "(warp_tile_m, warp_tile_n) == (16, 16)",
    "(warp_tile_m, warp_tile_n, warp_tile_k) in arch.warp_tiles[dtype]",
    "not " * 64 + "pad_m",
    "(" * 100 + "pad_m" + ")" * 100,  # brackets alone do not nest the tree
    f"tile_m * {2**40} > 0",
    "layout == 'nhwgc' and threads <= 256",
])
def test_limits_leave_room_for_real_filters(where: str) -> None:
    space, configs = _space()
    node = space.parse_where(where)
    expected = sum(bool(E.evaluate(node, c, space.model.resolve)) for c in configs)
    assert sum(space.count(**STRATUM, where=where).values()) == expected


def test_limits_are_exact() -> None:
    space, _ = _space()
    space.parse_where("pad_m" + " " * (E.MAX_SOURCE_CHARS - 5))
    with pytest.raises(CkspaceError, match="too long"):
        space.parse_where("pad_m" + " " * (E.MAX_SOURCE_CHARS - 4))
    with pytest.raises(CkspaceError, match="nests too deeply"):
        space.parse_where("not " * (E.MAX_DEPTH + 1) + "pad_m")
    space.parse_where(f"tile_m > -{E.INT_LIMIT}")
    with pytest.raises(CkspaceError, match="out of range"):
        space.parse_where(f"tile_m > -{E.INT_LIMIT + 1}")
    with pytest.raises(CkspaceError, match="too large"):
        space.parse_where("tile_m in (" + ", ".join(["1"] * E.MAX_NODES) + ")")


# ---------------------------------------------------------------------------------------------------------------
# Rule files get the same check, and every shipped rule passes it


def test_every_shipped_rule_is_well_typed_on_every_arch() -> None:
    data = D.load()
    every_family = ",".join(f for f in data.families if f != "model")
    for arch in data.archs:
        Model(data, arch, resolve_families(data, every_family)).validate_references()


@pytest.mark.parametrize("old,new,expected", [
    ('require = "(pipeline, epilogue, scheduler) not in pipeline.trait_unsupported"', 'require = "tile_m == \'x\'"',
     "rules/pipeline.toml: rule pipeline.scheduler 'require': cannot compare tile_m (int) with 'x' (str)"),
    ('require = "(pipeline, epilogue, scheduler) not in pipeline.trait_unsupported"', 'require = "pipeline != \'compv9\'"',
     "rules/pipeline.toml: rule pipeline.scheduler 'require': pipeline has no value 'compv9'"),
    ('require = "(pipeline, epilogue, scheduler) not in pipeline.trait_unsupported"', 'require = "tile_m + 1"',
     "rules/pipeline.toml: rule pipeline.scheduler 'require': expected a condition"),
    ('message = "pipeline {pipeline} cannot run', 'message = "pipeline {pipeline + 1} cannot run',
     "rules/pipeline.toml: rule pipeline.scheduler message: '+' takes integers, got pipeline (str)"),
    ('require = "(pipeline, epilogue, scheduler) not in pipeline.trait_unsupported"',
     'require = "(pipeline, epilogue) not in ck.pipeline"',
     "rules/pipeline.toml: rule pipeline.scheduler 'require' on gfx950: cannot look for (pipeline, epilogue) (tuple) "
     "in ck.pipeline, whose entries are tuples of 13"),
])
def test_rule_file_type_errors_name_the_file_and_rule(tmp_path: Path, old: str, new: str, expected: str) -> None:
    root = tmp_path / "constraints"
    shutil.copytree(D.default_constraints_dir(), root)
    path = root / "rules" / "pipeline.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(DataError) as caught:
        Space(arch="gfx950", constraints_dir=root, use_cache=False)
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_a_node_keeps_its_hash_and_never_carries_it_across_processes():
    """Expression nodes cache their hash (trees are dict keys, looked up subtree by subtree); equal trees built apart
    hash alike, and a copy or pickle drops the cached value (string hashes are salted per process)."""
    import copy
    import pickle

    from ckspace.rules import expr as E

    def tree():
        return E.And((E.Cmp("<=", E.BinOp("*", E.Field("tile_m"), E.Const(2)), E.Ref(("arch", "lds_bytes"))),
                      E.In(E.Field("pipeline"), E.Tup((E.Const("mem"), E.Const("compv3"))), False)))

    a, b = tree(), tree()
    assert a is not b and a == b and hash(a) == hash(b) == hash(a)
    assert "_hash" in a.__dict__  # kept once computed
    assert {a: 1}[b] == 1
    for other in (copy.deepcopy(a), copy.copy(a), pickle.loads(pickle.dumps(a))):
        assert "_hash" not in other.__dict__ and other == a and hash(other) == hash(a)
    assert E.BinOp("+", E.Field("x"), E.Const(1)) != E.BinOp("+", E.Field("x"), E.Const(2))
