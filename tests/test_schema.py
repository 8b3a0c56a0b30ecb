"""Every data file is checked against a schema when it is loaded: a broken file is one line, never a traceback.

The mutation test takes each data file ckspace ships (constraints/**/*.toml, objectives/*.toml,
templates/revisions.toml), breaks it in many ways in a copy of the tree, and loads the copy the way ckspace does.
Each mutation must either leave a file that is still valid (the short lists LOADS and REFERENCED say which, and
why), or give one CkspaceError line that names the file and the key. Any other exception fails the test.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import os
import random
import re
import shutil
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace.cli import main
from ckspace.codegen import ckapi
from ckspace.errors import CkspaceError, DataError
from ckspace.rules import data as D
from ckspace.rules import support
from ckspace.rules.model import Model
from ckspace.solve import listed
from ckspace.rules.schema import MAX_FILE_BYTES
from ckspace.select import objectives

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted(
    [p.relative_to(REPO).as_posix() for p in (REPO / "constraints").rglob("*.toml")]
    + [p.relative_to(REPO).as_posix() for p in (REPO / "objectives").glob("*.toml")]
    + ["templates/revisions.toml"]
)
NESTED_SAMPLE = 12  # nested keys per file, besides every top-level key
CK_RELATIONS = ("tile", "wave_warp", "vec", "pipeline", "depthwise")

# ---- mutations that leave a valid file -----------------------------------------------------------------------------
# (file, mutation, key path) globs. A missing optional key is valid by definition; the rest say why they are.
LOADS = [
    ("constraints/archs/*", "extra", ""),  # rules read any arch fact as arch.NAME: an arch may hold facts of its own
    ("constraints/archs/*", "*", "family"),  # ... and `family` is such a free-form fact
    ("constraints/archs/*", "missing", "warp_tiles.*"),  # an arch without instructions for a dtype
    ("constraints/tables/*", "type:int", "table.*.rows[*][*]"),  # a table cell is an integer, a string or a boolean
    ("constraints/tables/*", "type:str", "table.*.rows[*][*]"),
    ("constraints/tables/ck/depthwise.toml", "type:str", "rows[*][*]"),
    ("constraints/fields.toml", "shape", "field.*.values"),  # a domain of 2 values instead of 3
    ("constraints/fields.toml", "missing", "field.*.doc"),
    ("constraints/fields.toml", "missing", "field.*.stratum"),
    ("constraints/fields.toml", "missing", "field.*.ck_json"),  # documentation (tests/test_identical_code.py checks
    ("constraints/fields.toml", "missing", "field.*.cpp"),  # the shipped file has both for every field)
    ("constraints/fields.toml", "missing", "field.*.code"),  # optional: true
    ("constraints/fields.toml", "missing", "derive.*.kind"),
    ("constraints/fields.toml", "missing", "derive.*.source"),
    ("constraints/families.toml", "missing", "family.*.*"),
    ("constraints/catalogs.toml", "missing", "catalog.*.layout_3d"),  # optional: nhwgc
    ("constraints/catalogs.toml", "missing", "catalog.*.doc"),
    ("constraints/catalogs.toml", "missing", "catalog.*.source"),
    ("constraints/catalogs.toml", "missing", "catalog.*.aliases"),
    ("constraints/catalogs.toml", "missing", "catalog.ck-*"),  # a catalog besides full may go
    ("constraints/catalogs.toml", "missing", "catalog.*.config_set"),  # optional: the catalog lists its whole table
    ("constraints/catalogs.toml", "missing", "catalog.*.configs"),  # a catalog of families (ck-profiler has none:
    # that is reported, and is REFERENCED below)
    ("constraints/catalogs/*", "missing", "source*"),  # provenance, not read
    ("constraints/catalogs/*", "*", "file[*].rows[*][0]"),  # the `id` column: CK uses it only to pick an entry
    ("constraints/catalogs/*", "missing", "file[*].set"),  # a file outside both sets: no catalog lists it
    ("constraints/catalogs/*", "missing", "file[*].path"),
    ("constraints/catalogs/*", "shape", "file[*].rows"),  # fewer rows: fewer kernels
    ("constraints/catalogs/*", "missing", "file"),  # no files: empty catalogs
    ("constraints/catalogs/*", "empty", ""),
    ("constraints/rules/*", "missing", "rule"),  # a rule file may hold no rules
    ("constraints/rules/*", "empty", ""),
    ("constraints/rules/*", "missing", "rule[*].when"),
    ("constraints/rules/*", "missing", "rule[*].kind"),
    ("constraints/rules/*", "missing", "rule[*].allowed"),
    ("constraints/rules/*", "missing", "rule[*].reject"),
    ("constraints/rules/*", "missing", "rule[*].accept"),
    ("constraints/rules/*", "missing", "rule[*].arch"),
    ("constraints/tables/*", "missing", "table.*.source"),
    ("constraints/tables/ck/*", "missing", "*.*"),  # a variant, tile or dtype class without curated entries
    ("constraints/tables/ck/*", "missing", "*.*.*"),
    ("constraints/tables/ck/*", "missing", "*.*.*.*"),
    ("constraints/tables/ck/warp_tiles.toml", "missing", "*"),  # no exclusions, no exceptions
    ("constraints/tables/ck/warp_tiles.toml", "empty", ""),
    ("constraints/tables/ck/features.toml", "missing", "feature"),  # no feature configs
    ("constraints/tables/ck/features.toml", "empty", ""),
    ("constraints/tables/ck/features.toml", "missing", "feature.*[*].*"),
    ("constraints/tables/ck/pipelines.toml", "missing", "override"),
    ("constraints/tables/ck/vectors.toml", "missing", "extra"),
    ("constraints/tables/ck/waves.toml", "missing", "override"),
    ("templates/revisions.toml", "missing", "revision.*.unbuildable_archs.*"),  # an arch its headers do build
    ("objectives/*", "missing", "*"),  # every objective key has a default (but `cover` must cover something)
    ("objectives/*", "missing", "*.*"),
    ("constraints/support.toml", "missing", "rule[*].when"),  # optional: always
    ("constraints/support.toml", "missing", "rule[*].kind"),  # optional: gemm
    ("constraints/support.toml", "missing", "rule[*].*.arch"),  # an example's arch: gfx950
    ("constraints/support.toml", "type:str", "rule[*].message"),  # free text
    ("constraints/support.toml", "type:str", "rule[*].rationale"),
    ("constraints/support.toml", "type:str", "rule[*].source"),
    ("templates/revisions.toml", "missing", "revision.*"),  # any revision but the default one may go
    ("templates/revisions.toml", "missing", "revision.*.*"),
    ("templates/revisions.toml", "missing", "revision.*.detect[*].*"),
]
# Keys that other entries refer to: removing one is reported where it is referred to (another key or file).
REFERENCED = [
    ("constraints/families.toml", "missing", "family.*"),  # each rule names its family
    ("constraints/tables/*", "missing", "table"),  # rules and derived fields read the tables
    ("constraints/tables/*", "missing", "table.*"),
    ("constraints/tables/*", "empty", ""),
    ("constraints/tables/ck/*", "missing", "strategies.*"),  # tile lists name wave and vector strategies
    ("templates/revisions.toml", "missing", "revision.*"),  # `default` names a revision
    ("constraints/fields.toml", "missing", "derive.*"),  # other formulas and rules read the derived quantities
    # A stored CK config is read as CK's JSON entry: its error names the JSON file, the entry and CK's key.
    ("constraints/catalogs/*", "*", "file[*].*"),
    ("constraints/catalogs/*", "*", "file[*].rows[*]"),
    ("constraints/catalogs/*", "*", "file[*].rows[*][*]"),
    ("constraints/catalogs/*", "*", "file[*].columns[*]"),
    ("constraints/catalogs.toml", "*", "catalog.ck-profiler.*"),
    ("constraints/catalogs.toml", "*", "catalog.ck-tests.*"),
]


# ---- a TOML writer (the test may not add a dependency): every table inline, every value on one line -------------
def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k, ensure_ascii=False)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def dump_toml(data: dict[str, Any]) -> str:
    return "".join(f"{_key(k)} = {_value(v)}\n" for k, v in data.items())


def show(path: tuple) -> str:
    """A key path as error lines write it: field.tile_m.range, rule[3].id, family."ck-api-2025.11"."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{_key(part)}" if out else _key(part))
    return out


# ---- mutations ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutation:
    kind: str  # type:int|str|table|list, missing, extra, shape, bytes, empty
    path: tuple = ()

    def __str__(self) -> str:
        return f"{self.kind} {show(self.path)}".strip()


WRONG = {"type:int": 7, "type:str": "x", "type:table": {"x": 1}, "type:list": [1, 2]}


def _type_of(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    return {int: "type:int", str: "type:str", dict: "type:table", list: "type:list"}.get(type(v), "other")


def _paths(value: Any, at: tuple = ()) -> list[tuple]:
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        out.append((*at, k))
        out += _paths(v, (*at, k))
    return out


def chosen_paths(rel: str, data: dict[str, Any]) -> list[tuple]:
    """Every top-level key, and a deterministic sample of the nested ones."""
    nested = [p for p in _paths(data) if len(p) > 1]
    return [(k,) for k in data] + random.Random(rel).sample(nested, min(NESTED_SAMPLE, len(nested)))


def mutations(rel: str, data: dict[str, Any]) -> list[Mutation]:
    out = [Mutation("bytes"), Mutation("empty"), Mutation("extra")]
    for path in chosen_paths(rel, data):
        value = _get(data, path)
        out += [Mutation(kind, path) for kind in WRONG if kind != _type_of(value)]
        if isinstance(path[-1], str):
            out.append(Mutation("missing", path))
        if isinstance(value, dict):
            out.append(Mutation("extra", path))
        if isinstance(value, list) and len(value) == 3 and all(_type_of(v) == "type:int" for v in value):
            out.append(Mutation("shape", path))  # a triple ([m, n, k], [low, high, step]) cut to two
    return out


def _get(data: Any, path: tuple) -> Any:
    for k in path:
        data = data[k]
    return data


def apply(blob: bytes, data: dict[str, Any], m: Mutation) -> bytes:
    if m.kind == "bytes":
        return blob[: len(blob) // 2] + b"\xff\xfe" + blob[len(blob) // 2:]
    if m.kind == "empty":
        return b""
    new = copy.deepcopy(data)
    if m.kind == "extra" and not m.path:
        new["zz_unknown"] = 1
        return dump_toml(new).encode()
    parent, key = _get(new, m.path[:-1]), m.path[-1]
    if m.kind in WRONG:
        parent[key] = copy.deepcopy(WRONG[m.kind])
    elif m.kind == "missing":
        del parent[key]
    elif m.kind == "extra":
        parent[key]["zz_unknown"] = 1
    elif m.kind == "shape":
        parent[key] = parent[key][:2]
    return dump_toml(new).encode()


def _glob(pattern: str) -> re.Pattern:
    """`*` is one key (quoted keys included) or one list index; everything else is literal, `[` and `.` too."""
    return re.compile(re.escape(pattern).replace(r"\*", r'(?:"[^"]*"|[^."\[\]])*'))


def _matches(rules: list[tuple[str, str, str]], rel: str, m: Mutation) -> bool:
    shown = show(m.path)
    return any(fnmatch.fnmatchcase(rel, f) and fnmatch.fnmatchcase(m.kind, k) and _glob(p).fullmatch(shown)
               for f, k, p in rules)


# ---- loading a tree the way ckspace does ---------------------------------------------------------------------------
_FIELDS: list[str] = []


def load_tree(tree: Path, rel: str) -> None:
    """Load the copy with ckspace's loaders, far enough that every value of the mutated file has been used."""
    if rel.startswith("constraints/catalogs/"):  # a stored list of CK configs: read as CK's JSON entries
        data = D.load(tree / "constraints")
        for cat in dict.fromkeys(data.catalogs.values()):
            if cat.listed:
                listed.entries(data, cat)
        return
    if rel == "constraints/support.toml":  # read when a command takes --problem (and by `ckspace rules`)
        support.load(D.load(tree / "constraints"))
        return
    if rel.startswith("constraints/"):
        data = D.load(tree / "constraints")
        for arch in sorted(data.archs) if rel.startswith("constraints/archs/") else ["gfx950"]:
            model = Model(data, arch, frozenset(data.families))  # every family: every rule's references resolve
            model.validate_references()
            for name in CK_RELATIONS:
                model.curation.relation(name)
        return
    if rel.startswith("objectives/"):
        if not _FIELDS:
            _FIELDS.extend(D.load().fields)
        objectives.load(tree / rel, _FIELDS)
        return
    ckapi.read_revisions(tree / rel)


def label_of(tree: Path, rel: str) -> str:
    """How error lines name the file."""
    if rel.startswith("constraints/"):
        return rel.removeprefix("constraints/")
    if rel.startswith("objectives/"):
        return f"objective {tree / rel}"
    return rel


def outcome(tree: Path, rel: str, m: Mutation) -> str | None:
    """None when the mutation is handled as it must be, else what went wrong."""
    try:
        load_tree(tree, rel)
    except CkspaceError as exc:
        line = str(exc)
        if "\n" in line or not line.strip():
            return f"not one line: {line!r}"
        key = show((*m.path, "zz_unknown") if m.kind == "extra" else m.path)
        if label_of(tree, rel) in line and key in line:
            return None
        if _matches(REFERENCED, rel, m):
            return None
        return f"does not name the file and the key {key!r}: {line}"
    except Exception:  # noqa: BLE001 - the point of the test
        return "traceback: " + " | ".join(traceback.format_exc().strip().splitlines()[-3:])
    if _matches(LOADS, rel, m):
        return None
    return "loaded, but the mutation makes the file invalid (or belongs in LOADS)"


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    for part in ("constraints", "objectives", "templates"):
        shutil.copytree(REPO / part, root / part)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("rel", SHIPPED)
def test_mutated_data_file_loads_or_is_one_line_naming_file_and_key(tree: Path, rel: str) -> None:
    target = tree / rel
    blob = target.read_bytes()
    data = tomllib.loads(blob.decode())
    target.write_text(dump_toml(data))  # the writer itself: the unmutated file, rewritten, still loads
    load_tree(tree, rel)
    problems = []
    for m in mutations(rel, data):
        target.write_bytes(apply(blob, data, m))
        if (problem := outcome(tree, rel, m)) is not None:
            problems.append(f"{rel}: {m}: {problem}")
    target.write_bytes(blob)
    assert not problems, "\n".join(problems)


def test_every_shipped_file_is_covered() -> None:
    assert len([r for r in SHIPPED if r.startswith("constraints/")]) >= 20
    assert "objectives/tests.toml" in SHIPPED and "templates/revisions.toml" in SHIPPED


# ---- the command line: the cases of the issue, each one line and exit 2 -------------------------------------------
SMALL = ["--arch", "gfx950", "--variant", "bwd_data", "--ndim", "2", "--dtype", "fp32"]


def _fields_with(tree: Path, **tile_m: Any) -> Path:
    """The tree's constraints with field.tile_m replaced (None: the key removed)."""
    path = tree / "constraints" / "fields.toml"
    data = tomllib.loads(path.read_text())
    data["field"]["tile_m"] = tile_m.pop("whole") if "whole" in tile_m else {**data["field"]["tile_m"], **tile_m}
    path.write_text(dump_toml(data))
    return tree / "constraints"


def _cli_error(capsys: pytest.CaptureFixture, args: list[str]) -> str:
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("ckspace: error: "), err
    return err.strip().removeprefix("ckspace: error: ")


RANGE = "[low, high, step] (3 integers, low <= high, step >= 1, at most 65536 values)"


@pytest.mark.parametrize("change, line", [
    (dict(range="16..256"), f"fields.toml: field.tile_m.range: expected {RANGE}, found a string ('16..256')"),
    (dict(range=[16, 256]), f"fields.toml: field.tile_m.range: expected {RANGE}, found a list of 2 items ([16, 256])"),
    (dict(range=[0, 2_000_000_000, 1]), f"fields.toml: field.tile_m.range: expected {RANGE}, "
                                        "found a list of 3 items ([0, 2000000000, 1])"),
    (dict(whole=3), "fields.toml: field.tile_m: expected a table with type = 'int', found an integer (3)"),
    (dict(type="float"), "fields.toml: field.tile_m.type: expected 'int', found a string ('float')"),
    (dict(values=[16, 32]), "fields.toml: field.tile_m.range: expected only one of 'values' or 'range', "
                            "found values and range"),
    (dict(colour="red"), "fields.toml: field.tile_m.colour: unknown key; expected one of: ck_json, code, cpp, "
                         "derived, doc, kind, range, stratum, type, values"),
    (dict(code="no"), "fields.toml: field.tile_m.code: expected true or false, found a string ('no')"),
])
def test_broken_field_is_one_line_naming_file_and_key(tree: Path, capsys: pytest.CaptureFixture, change, line) -> None:
    constraints = _fields_with(tree, **change)
    assert _cli_error(capsys, ["enumerate", *SMALL, "--count", "--constraints", str(constraints)]) == line


def test_bytes_that_are_not_utf8(tree: Path, capsys: pytest.CaptureFixture) -> None:
    path = tree / "constraints" / "fields.toml"
    path.write_bytes(b"# caf\xe9\n" + path.read_bytes())
    err = _cli_error(capsys, ["enumerate", *SMALL, "--count", "--constraints", str(tree / "constraints")])
    assert err == "fields.toml: not UTF-8 text (byte 0xe9 at line 1, offset 5)"


def test_toml_syntax_error_names_the_line(tree: Path, capsys: pytest.CaptureFixture) -> None:
    path = tree / "constraints" / "families.toml"
    line = path.read_text().splitlines().index("[family.arch]") + 1  # the header the edit breaks
    path.write_text(path.read_text().replace("[family.arch]", "[family.arch"))
    err = _cli_error(capsys, ["enumerate", *SMALL, "--count", "--constraints", str(tree / "constraints")])
    assert err.startswith("families.toml: invalid TOML: ") and f"(at line {line}, column 13)" in err


def test_rule_errors_name_the_rule(tree: Path, capsys: pytest.CaptureFixture) -> None:
    path = tree / "constraints" / "rules" / "arch.toml"
    path.write_text(path.read_text().replace('family = "arch"', 'family = "arch"\ncolour = "red"', 1))
    err = _cli_error(capsys, ["enumerate", *SMALL, "--count", "--constraints", str(tree / "constraints")])
    assert err.startswith("rules/arch.toml: rule[0].colour: unknown key; expected one of: accept, allowed, ")
    assert err.endswith("; id 'arch.workgroup-size'")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_not_read(tree: Path) -> None:
    """A FIFO would block the reader forever: only regular files are opened."""
    os.mkfifo(tree / "constraints" / "archs" / "gfx0.toml")
    with pytest.raises(DataError, match=r"^archs/gfx0.toml: cannot read: not a regular file$"):
        D.load(tree / "constraints")


def test_a_huge_file_is_not_read(tree: Path) -> None:
    (tree / "constraints" / "rules" / "zz.toml").write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(DataError, match=r"^rules/zz.toml: file too large \("):
        D.load(tree / "constraints")


@pytest.mark.parametrize("solver, line", [
    ("seed = 18446744073709551616", "solver.seed: expected an integer >= 0 and <= 2147483647, "
                                    "found an integer beyond 64 bits"),
    ("seed = 4294967296", "solver.seed: expected an integer >= 0 and <= 2147483647, found an integer (4294967296)"),
    ("workers = 99999999999999999999999", "solver.workers: expected an integer >= 1 and <= 1024, "
                                          "found an integer beyond 64 bits"),
    ("time_limit = nan", "solver.time_limit: expected a number >= 0.1 and <= 1e+07, found a float (nan)"),
    ("deterministic_time = inf", "solver.deterministic_time: expected a number >= 0.1 and <= 1e+07, "
                                 "found a float (inf)"),
    ("seed = true", "solver.seed: expected an integer >= 0 and <= 2147483647, found true"),
])
def test_objective_numbers_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture, solver: str, line: str) -> None:
    path = tmp_path / "my.toml"
    path.write_text(f"[cover]\ndimensions = ['tile']\n[solver]\n{solver}\n")
    err = _cli_error(capsys, ["enumerate", "--arch", "gfx950", "--set", "tiny", "--objective", str(path)])
    assert err == f"objective {path}: {line}"


@pytest.mark.parametrize("text, line", [
    ("default = 1\n", "default: expected a revision name such as '2026.06', found an integer (1)"),
    ("default = 'a'\n[revision.a]\ndetect = [{file = '../../etc/passwd'}]\n",
     "revision.a.detect[0].file: expected a path relative to --ck-include, without '..', "
     "found a string ('../../etc/passwd')"),
    ("default = 'a'\n[revision.a]\nfallback = 'b'\n", "revision.a.fallback: unknown revision 'b'"),
])
def test_revisions_file(tmp_path: Path, text: str, line: str) -> None:
    path = tmp_path / "templates" / "revisions.toml"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(DataError) as exc:
        ckapi.read_revisions(path)
    assert str(exc.value) == f"templates/revisions.toml: {line}"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.text(max_size=4),
                                   st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1]),
                                   st.booleans(), st.floats(allow_nan=False), st.none()), max_size=6), max_size=5))
def test_rows_of_plain_cells_are_checked_in_one_pass_with_the_same_verdict(rows):
    """A table's rows (ListOf(ListOf(OneOf(Int, Str, Bool)))) take a one-pass type check; the verdict is the plain
    definition's: every cell a boolean, a string or an integer of 64 bits, else the first bad cell's error line."""
    from ckspace.rules.schema import INT64_MAX, INT64_MIN, Bool, Int, ListOf, OneOf, SchemaError, Str

    spec = ListOf(ListOf(OneOf((Int(), Str(), Bool()), what="a cell")))
    bad = [(i, j) for i, row in enumerate(rows) for j, v in enumerate(row)
           if not (isinstance(v, (bool, str)) or (type(v) is int and INT64_MIN <= v <= INT64_MAX))]
    try:
        spec.check(rows, ("rows",))
    except SchemaError as exc:
        assert bad and exc.path == ("rows", *bad[0]), (exc.path, bad)
    else:
        assert not bad
