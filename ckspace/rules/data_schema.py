"""The schemas of the files under constraints/ (ckspace.rules.schema says how they are written and checked).

`schema_for(rel)` gives the schema of a file by its path relative to the constraints directory; the loaders in
ckspace.rules.data check each file against it before reading a value. What the schemas guarantee is what the
loaders and the curation code index without guards: types, shapes (a wave layout has three integers), the keys
they read, and bounds that keep every integer inside CP-SAT's range. Cross-file facts (a rule's family exists, an
expression names known fields) stay with the loaders, which report them on one line too.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Mapping

from .names import EPILOGUES, SCHEDULERS, SPECIALIZATIONS, STREAMK
from .schema import (INT32_MAX, INT32_MIN, Anything, Bool, Checked, Int, ListOf, OneOf, Spec, Str, Switch, Table, Tree,
                     exactly_one_of, names_defined, rows_match)

KINDS = ("gemm", "depthwise", "both")
MAX_DOMAIN = 65_536  # values of one field: far above any real one, and small enough to never stall the model

# ---- names and small values -------------------------------------------------------------------------------------
IDENT = Str(pattern=r"[A-Za-z_][A-Za-z0-9_]*", what="a name of letters, digits and _")
NAME = Str(pattern=r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", what="a name of letters, digits and _ . + -")
WORD = r"[a-z][a-z0-9]*"  # a token of a kernel name (ckspace.rules.names.WORD)
TILE = Str(pattern=r"[0-9]{1,6}x[0-9]{1,6}x[0-9]{1,6}", what="a block tile MxNxK such as '64x64x32'")
PIPELINE_PAIR = Str(pattern=r"[a-z0-9_]+/[a-z0-9_]+", what="pipeline/scheduler such as 'compv3/intrawave'")
DTYPE_CLASS = ("half", "float")  # CK's dtype classes (ckspace.rules.curation.dtype_class)
COUNT = Int(1, 4096)  # a wave count, a warp-tile edge, a vector width
TRIPLE = ListOf(COUNT, 3, 3)
PAIR = ListOf(COUNT, 2, 2)
SCALAR = OneOf((Int(), Str(), Bool()), what="an integer, a string or true/false")
TEXT = Str()


# ---- fields.toml --------------------------------------------------------------------------------------------------
def _range_ok(r: list[int]) -> bool:
    low, high, step = r
    return step >= 1 and low <= high and (high - low) // step < MAX_DOMAIN


def _field(kind: Str, type_: str, value: Spec) -> Table:
    """The table of one field of `type_`, whose values are each `value`."""
    common: dict[str, Spec] = {"kind": kind, "type": Str(choices=(type_,)), "stratum": Bool(), "derived": Bool(),
                               "doc": TEXT, "ck_json": TEXT, "cpp": TEXT, "code": Bool()}
    if type_ == "bool":
        return Table(common, required=("kind", "type"))
    values = ListOf(value, 1, MAX_DOMAIN, unique=True)
    if type_ == "enum":
        return Table({**common, "values": values}, required=("kind", "type", "values"))
    span = Checked(ListOf(value, 3, 3), _range_ok,
                   what=f"[low, high, step] (3 integers, low <= high, step >= 1, at most {MAX_DOMAIN} values)")
    return Table({**common, "values": values, "range": span}, required=("kind", "type"),
                 checks=(exactly_one_of("values", "range"),))


ANY_KIND = Str(choices=KINDS)
FIELD = Switch("type", {
    "int": _field(ANY_KIND, "int", Int(INT32_MIN, INT32_MAX)),
    "bool": _field(ANY_KIND, "bool", Bool()),
    "enum": _field(ANY_KIND, "enum", Str(nonblank=True)),
})


def _name_field(kind: str, type_: str, value: Spec | None = None) -> Switch:
    """A field the kernel-name grammar reads (ckspace.rules.names.format_name): its kind and type are fixed, and its
    values must be ones a name can spell (non-negative integers, lower-case words, the grammar's fixed words)."""
    default = {"int": Int(0, INT32_MAX), "enum": Str(pattern=WORD, what="a lower-case word"), "bool": Bool()}[type_]
    return Switch("type", {type_: _field(Str(choices=(kind,)), type_, value or default)})


NAMED_WORDS = Str(pattern=rf"{WORD}(_{WORD})*", what="lower-case words joined by _")
NAME_FIELDS: dict[str, Switch] = {
    "variant": _name_field("both", "enum", Str(choices=("forward", "bwd_data", "bwd_weight", "forward_depthwise"))),
    "ndim": _name_field("both", "int"),
    "dtype": _name_field("both", "enum"),
    "layout": _name_field("both", "enum"),
    "pipeline": _name_field("gemm", "enum", NAMED_WORDS),
    "epilogue": _name_field("gemm", "enum", Str(choices=EPILOGUES)),
    "scheduler": _name_field("gemm", "enum", Str(choices=SCHEDULERS)),
    "specialization": _name_field("gemm", "enum", Str(choices=("default", *SPECIALIZATIONS))),
    "streamk": _name_field("gemm", "enum", Str(choices=("none", *STREAMK))),
    **{name: _name_field("gemm", "int") for name in (
        "tile_m", "tile_n", "tile_k", "wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n", "warp_tile_k",
        "vec_a", "vec_b", "vec_c", "num_wave_groups", "num_groups_to_merge")},
    **{name: _name_field("gemm", "bool") for name in (
        "double_smem_buffer", "two_stage", "explicit_gemm", "streamk_persistent", "split_image", "pad_m", "pad_n",
        "pad_k")},
    **{name: _name_field("depthwise", "int") for name in (
        "dw_tile_h", "dw_tile_w", "filter_size", "stride_h", "stride_w", "pad_h", "pad_w", "nbatch", "sub_h", "sub_w",
        "in_vec", "out_vec")},
}

DERIVE = Table({"kind": ANY_KIND, "source": TEXT, "expr": Str(nonblank=True), "output_only": Bool(),
                "spellings": Str(nonblank=True)},
               required=("expr",))
FIELDS_FILE = Table({
    "field": Table(NAME_FIELDS, required=tuple(NAME_FIELDS), extra=FIELD, key=IDENT),
    "derive": Table(extra=DERIVE, key=IDENT),
}, required=("field",))

# ---- families.toml ------------------------------------------------------------------------------------------------
# layer: "fact" (what the hardware, CK Tile's C++ and the compiler allow: `verify --audit` checks its rules'
# near misses against the compiler), "naming" (which names denote a kernel at all: a field that does not apply to a
# variant; the C++ ignores it, so there is nothing to compile) or "catalog" (a rule set's choices on top of the
# facts; the default).
FAMILIES_FILE = Table({"family": Table(extra=Table({"default": Bool(), "doc": TEXT,
                                                     "layer": Str(choices=("fact", "naming", "catalog"))}),
                                   key=NAME)})

# ---- catalogs.toml: CK's rule sets as named curation on top of the facts --------------------------------------------
# A catalog is curation families (rules and tables), or a list of configs: `configs` names a stored table of CK
# JSON configs under catalogs/ (and `config_set` the part of it, e.g. profiler); its `families` may then be empty.
CATALOG = Table({"families": ListOf(NAME), "aliases": ListOf(NAME), "layout_3d": Str(choices=("nhwgc", "ndhwgc")),
                 "doc": TEXT, "source": TEXT,
                 "configs": Str(pattern=r"catalogs/[A-Za-z0-9_.-]+\.toml", what="a file catalogs/NAME.toml"),
                 "config_set": NAME}, required=("families",))
CATALOGS_FILE = Table({"catalog": Table(extra=CATALOG, key=NAME)}, required=("catalog",))

# ---- catalogs/*.toml: CK's JSON configs as tables (scripts/import_ck_configs.py writes them) -----------------------
CONFIG_ROW_VALUE = OneOf((Int(), Str(), Bool()), what="an integer, a string or true/false")
CONFIG_FILE_TABLE = Table({
    "path": TEXT, "set": NAME, "variant": NAME, "ndim_spatial": Int(1, 3), "layout": NAME, "datatype": NAME,
    "columns": ListOf(IDENT, min_len=1), "rows": ListOf(ListOf(CONFIG_ROW_VALUE)),
}, required=("path", "variant", "ndim_spatial", "layout", "datatype", "columns", "rows"))
CONFIG_TABLES_FILE = Table({
    "source": Table({"repo": TEXT, "commit": TEXT, "path": TEXT, "files": Int(0), "entries": Int(0)}),
    "file": ListOf(CONFIG_FILE_TABLE),
}, required=("file",))

# ---- archs/*.toml -------------------------------------------------------------------------------------------------
# Rules read any fact as `arch.NAME`, so an arch file may hold facts of its own beside the ones the engine reads.
FACT = Tree(SCALAR)
ARCH_FILE = Table({
    "name": NAME,
    "family": FACT,
    "warp_size": Int(1, 1024),
    "lds_bytes": Int(0, INT32_MAX),
    "wave_layouts": ListOf(TRIPLE, what="a list of wave layouts [m, n, k] (3 integers >= 1 each)"),
    "warp_tiles": Table(extra=ListOf(TRIPLE, what="a list of warp tiles [m, n, k] (3 integers >= 1 each)"), key=NAME),
}, required=("name", "warp_size", "lds_bytes", "wave_layouts", "warp_tiles"), extra=FACT, key=IDENT)

# ---- tables/*.toml ------------------------------------------------------------------------------------------------
RELATION = Table({
    "source": TEXT,
    "columns": ListOf(IDENT, 1, unique=True),
    "rows": ListOf(ListOf(SCALAR, what="a row: a list of integers, strings or true/false")),
}, required=("columns", "rows"), checks=(rows_match(),))
TABLES_FILE = Table({"table": Table(extra=RELATION, key=IDENT)})

# ---- tables/ck/*.toml (CK's curation tables, read by ckspace.rules.curation) -------------------------------------
def _per_variant(value: Spec) -> Table:
    """variant -> tile -> value, the shape of most of CK's tables."""
    return Table(extra=Table(extra=value, key=TILE), key=NAME)


def _per_class(value: Spec) -> Table:
    return Table({c: value for c in DTYPE_CLASS})


CK_TILES = Table({
    "tiles": Table(extra=Table(extra=ListOf(TILE), key=Str(pattern=r"[0-9]{1,2}d\.[A-Za-z0-9_]+",
                                                           what="'<ndim>d.<dtype>' such as '2d.fp16'")), key=NAME),
}, required=("tiles",))
STRATEGY_NAMES = ListOf(IDENT)
CK_WAVES = Table({
    # a tile without a list of its own uses SINGLE
    "strategies": Table(extra=TRIPLE, key=IDENT, required=("SINGLE",)),
    "base": Table(extra=STRATEGY_NAMES, key=TILE),
    "override": _per_variant(STRATEGY_NAMES),
}, required=("strategies", "base"), checks=(names_defined(("strategies",), (("base", "*"), ("override", "*", "*"))),))
CK_WARP_TILES = Table({
    "excluded_mn": ListOf(PAIR),
    "exception": ListOf(Table({"variant": NAME, "tile": TILE, "wave": TRIPLE, "warp_mn": ListOf(PAIR)},
                              required=("variant", "tile", "wave", "warp_mn"))),
})
VECTOR = ListOf(Int(1, 4096), 3, 3, what="a vector triple [a, b, c] (3 integers >= 1)")
CK_VECTORS = Table({
    # a tile missing from a variant's table uses GENERIC
    "strategies": Table(extra=Table({c: VECTOR for c in DTYPE_CLASS}, required=DTYPE_CLASS), key=IDENT,
                        required=("GENERIC",)),
    "table": _per_variant(_per_class(STRATEGY_NAMES)),
    "extra": _per_variant(_per_class(ListOf(VECTOR))),
}, required=("strategies", "table"),
   checks=(names_defined(("strategies",), [("table", "*", "*", c) for c in DTYPE_CLASS]),))
CK_PIPELINES = Table({
    "curated": _per_variant(ListOf(PIPELINE_PAIR)),
    "override": _per_variant(_per_class(ListOf(PIPELINE_PAIR))),
}, required=("curated",))
CK_FEATURES = Table({"feature": Table(extra=ListOf(Table({
    "num_groups_to_merge": Int(1, 4096),
    "split_image": Bool(),
    "two_stage": Bool(),
    "explicit_gemm": Bool(),
    "streamk": Str(choices=("none", *STREAMK)),
    "streamk_persistent": Bool(),
    "tiles": ListOf(TILE),
    "pipelines": ListOf(PIPELINE_PAIR),
    "dtype_classes": ListOf(Str(choices=DTYPE_CLASS)),
}, required=("tiles",))), key=NAME)})
CK_DEPTHWISE = Table({
    "source": TEXT,
    "columns": ListOf(IDENT, 1, unique=True),
    "rows": ListOf(ListOf(SCALAR, what="a row: a list of integers, strings or true/false")),
}, required=("columns", "rows"), checks=(rows_match(),))
# CK's generation order (the loops of CK's grouped_config_rules_full.py get_configs), read by ckspace.select.ckorder
# for CK's full-tests and tiny procedures
CK_ORDER = Table({
    "variants": ListOf(NAME, 1, unique=True),
    "ndims": ListOf(Int(1, 3), 1, unique=True),
    "dtypes": ListOf(NAME, 1, unique=True),
    "specializations": ListOf(Str(choices=("default", *SPECIALIZATIONS)), 1, unique=True),
    "depthwise_after": NAME,
}, required=("variants", "ndims", "dtypes", "specializations", "depthwise_after"))
CK_TABLES: Mapping[str, Spec] = {
    "tiles": CK_TILES, "waves": CK_WAVES, "warp_tiles": CK_WARP_TILES, "vectors": CK_VECTORS,
    "pipelines": CK_PIPELINES, "features": CK_FEATURES, "depthwise": CK_DEPTHWISE, "order": CK_ORDER,
}

# ---- rules/*.toml -------------------------------------------------------------------------------------------------
KERNEL_NAMES = OneOf((Str(nonblank=True), ListOf(Str(nonblank=True))), what="a kernel name or a list of them")
# What every rule states, a kernel rule (rules/*.toml) and a support rule (support.toml) alike.
RULE_TEXT = {key: Str(nonblank=True) for key in ("when", "require", "message", "rationale", "source")}
RULE = Table({
    "id": Str(nonblank=True),
    "family": Str(nonblank=True),
    "kind": ANY_KIND,
    **RULE_TEXT,
    "allowed": ListOf(IDENT),
    "reject": KERNEL_NAMES,
    "accept": KERNEL_NAMES,
    "arch": NAME,
}, required=("id", "family", "require", "message", "rationale", "source"))
RULES_FILE = Table({"rule": ListOf(RULE, note_key="id")})

# ---- support.toml: which kernels run a problem (ckspace.rules.support) ----------------------------------------------
KERNEL_AND_PROBLEM = Table({"kernel": Str(nonblank=True), "problem": Str(nonblank=True), "arch": NAME},
                           required=("kernel", "problem"))
SUPPORT_RULE = Table({
    "id": Str(pattern=r"support\.[a-z0-9][a-z0-9-]*", what="support.<name> (lower case, digits, dashes)"),
    "ck_api": ListOf(Str(pattern=r"[0-9]{4}\.[0-9]{2}", what="a CK API revision such as 2025.11"), 1, unique=True),
    "kind": ANY_KIND,
    **RULE_TEXT,
    "reject": KERNEL_AND_PROBLEM,
    "accept": KERNEL_AND_PROBLEM,
}, required=("id", "ck_api", "require", "message", "rationale", "source", "reject", "accept"))
SUPPORT_FILE = Table({"rule": ListOf(SUPPORT_RULE, note_key="id")}, required=("rule",))


def schema_for(rel: str) -> Spec:
    """The schema of the data file at `rel` (relative to the constraints directory, with / separators)."""
    path = PurePosixPath(rel)
    top = path.parts[0] if len(path.parts) > 1 else ""
    if rel == "fields.toml":
        return FIELDS_FILE
    if rel == "families.toml":
        return FAMILIES_FILE
    if rel == "catalogs.toml":
        return CATALOGS_FILE
    if rel == "support.toml":
        return SUPPORT_FILE
    if top == "catalogs":
        return CONFIG_TABLES_FILE
    if top == "archs":
        return ARCH_FILE
    if top == "rules":
        return RULES_FILE
    if top == "tables":
        if path.parent.name == "ck":  # the loader's test: a file in a directory named ck is a CK table
            return CK_TABLES.get(path.stem, Anything())  # a file no code reads
        return TABLES_FILE
    return Anything()

