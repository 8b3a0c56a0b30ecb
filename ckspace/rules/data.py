"""Loading the rule data under constraints/: fields, derived fields, arch facts, tables and rule files.

The engine reads only what is here, so adding an arch, a tile or a rule is a data change. Every file is checked
against its schema (ckspace.rules.data_schema) before a value is read, and every problem in a file becomes one
DataError line naming the file and the entry.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Mapping

from ..memo import memo
from . import compiled
from . import expr as E
from . import typecheck as T
from ..errors import DataError, ExprError
from ..paths import PACKAGE, data_dir
from .data_schema import schema_for
from .relation import Relation
from .schema import MAX_FILE_BYTES, load_toml


def default_constraints_dir() -> Path:
    """constraints/ of this checkout, or the copy installed inside the package."""
    return data_dir("constraints", "fields.toml") or PACKAGE.parent / "constraints"


def data_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.toml") if p.is_file())


def digest_dir(root: Path) -> str:
    """A digest of every data file (path and bytes): the cache key's view of the rules."""
    from ..files import tree_digest

    return tree_digest(root, "*.toml", MAX_FILE_BYTES, DataError)


def read_toml(path: Path, root: Path) -> dict[str, Any]:
    """A data file, checked against its schema; errors name it relative to the constraints directory."""
    rel = path.relative_to(root).as_posix()
    return load_toml(path, rel, schema_for(rel))


class UnknownReference(DataError):
    """A rule reads an arch fact or a table that does not exist (Model.validate_references says which rule)."""


@dataclass(frozen=True)
class FieldDef:
    name: str
    kind: str  # gemm | depthwise | both
    type: str  # int | bool | enum
    values: tuple
    stratum: bool = False
    derived: bool = False
    doc: str = ""
    ck_json: str = ""  # its key in CK's dispatcher JSON configs ("" when CK's JSON cannot say it)
    cpp: str = ""  # where the emitted C++ takes it (the generated Config member, CK Tile's template parameter)
    code: bool = True  # False: it changes the name, not the C++ (CK's launcher pads always: pad_m/n/k)

    def applies_to(self, kind: str) -> bool:
        return self.kind in (kind, "both")


@dataclass(frozen=True)
class DeriveDef:
    field: str
    kind: str
    expr: E.Node
    source: str
    output_only: bool  # block_per_cu: reported, not a field of the name
    # The values a name may carry for this field, when the formula's value is only one spelling of it (layout:
    # a 3D GEMM kernel is the same C++ whether its name says nhwgc or ndhwgc). None: only the formula's value.
    spellings: E.Node | None = None

    def applies_to(self, kind: str) -> bool:
        return self.kind in (kind, "both")


@dataclass(frozen=True)
class Family:
    name: str
    default: bool
    doc: str
    switchable: bool = True
    layer: str = "catalog"  # fact | naming | catalog (families.toml)

    @property
    def fact(self) -> bool:
        return self.layer == "fact"


@dataclass(frozen=True)
class Rule:
    """One documented rule: `when` implies `require`. A config breaks it when `when` holds and `require` does not."""

    id: str
    family: str
    kind: str
    when: E.Node
    require: E.Node
    message: str
    rationale: str
    source: str
    file: str
    allowed: tuple[str, ...] = ()  # fields whose allowed values the message may list ({allowed})
    fields: frozenset[str] = field(default=frozenset())
    reject: tuple[str, ...] = ()  # example kernel names the rule rejects (tested)
    accept: tuple[str, ...] = ()  # example kernel names the rule accepts (tested)
    example_arch: str = "gfx950"  # the arch the examples are meant for

    def applies_to(self, kind: str) -> bool:
        return self.kind in (kind, "both")


@dataclass(frozen=True)
class Catalog:
    """One of CK's rule sets as curation families on top of the facts (constraints/catalogs.toml)."""

    name: str
    families: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    layout_3d: str = "nhwgc"  # how its 3D GEMM names spell the layout token
    doc: str = ""
    source: str = ""
    configs: str | None = None  # a list-of-configs catalog: its table under the constraints dir, or a JSON path
    config_set: str | None = None  # the part of the table it lists (the files whose `set` is this), None: all
    user: bool = False  # given on the command line (--ck-config), not in catalogs.toml

    @property
    def listed(self) -> bool:
        """Its kernels are a list of configs (checked against the facts), not curation rules."""
        return self.configs is not None


@dataclass
class DataSet:
    root: Path
    fields: dict[str, FieldDef]
    derives: dict[str, DeriveDef]
    families: dict[str, Family]
    archs: dict[str, dict[str, Any]]
    tables: dict[str, Relation]
    ck_raw: dict[str, dict[str, Any]]
    rules: list[Rule]
    macros: "Macros" = None  # type: ignore[assignment]
    namespaces: frozenset[str] = frozenset()
    formulas: dict[str, E.Node] = field(default_factory=dict)  # every derive's formula as written (macros unexpanded)
    catalogs: dict[str, "Catalog"] = field(default_factory=dict)  # by name and by alias
    # The archs on which every rule's data references resolve and type-check (Model.validate_references with every
    # family): set when the build compiles the data (rules.compile_data), so a process skips that check (13 ms).
    checked_archs: frozenset[str] = frozenset()

    @cached_property
    def digest(self) -> str:
        return digest_dir(self.root)

    def field_names(self, kind: str) -> list[str]:
        return [f.name for f in self.fields.values() if f.applies_to(kind)]


def _field_values(spec: dict[str, Any]) -> tuple:
    """The domain of a field (its schema guarantees `values` or a valid `range` where the type needs one)."""
    if spec["type"] == "bool":
        return (False, True)
    if "values" in spec:
        return tuple(spec["values"])
    lo, hi, step = spec["range"]
    return tuple(range(lo, hi + 1, step))


def _field_defs(raw_fields: Mapping[str, Any]) -> dict[str, FieldDef]:
    return {name: FieldDef(name, spec["kind"], spec["type"], _field_values(spec), bool(spec.get("stratum")),
                           bool(spec.get("derived")), spec.get("doc", ""), spec.get("ck_json", ""),
                           spec.get("cpp", ""), bool(spec.get("code", True)))
            for name, spec in raw_fields["field"].items()}


def load_fields(root: Path | None = None) -> dict[str, FieldDef]:
    """Only the fields of a constraints directory (fields.toml): what an input format needs to check its values
    against, without the cost of the rules."""
    root = (root or default_constraints_dir()).resolve()
    if not (root / "fields.toml").is_file():
        raise DataError(f"{root}: not a constraints directory (no fields.toml)")
    return _field_defs(read_toml(root / "fields.toml", root))


# The last DataSet of the most recently loaded directories, served again while a directory's digest holds (a few:
# a program that loads many directories, such as the test suite, does not keep them all).
_LOADED: "OrderedDict[Path, DataSet]" = memo("rules.data.loaded", OrderedDict())
LOADED_KEPT = 4


def load(root: Path | None = None) -> DataSet:
    """The constraints directory's data, checked. Loaded once per process while its files are unchanged: the
    digest of their bytes (2 ms) decides, so an edited file is read again, and the explainer, its kernel space and
    the facade share one load instead of three (40 ms each). The package's own directory comes from its compiled
    file when the build wrote one for these bytes (rules.compiled)."""
    root = (root or default_constraints_dir()).resolve()
    if not (root / "fields.toml").is_file():
        raise DataError(f"{root}: not a constraints directory (no fields.toml)")
    digest = digest_dir(root)
    known = _LOADED.get(root)
    if known is not None and known.digest == digest:
        _LOADED.move_to_end(root)
        return known
    data = compiled.data(root, digest) or _load(root)  # the build's pickle of the package's own data, else parse
    data.digest = digest  # the bytes the memo is keyed on (cached_property's slot)
    _LOADED[root] = data
    _LOADED.move_to_end(root)
    while len(_LOADED) > LOADED_KEPT:
        _LOADED.popitem(last=False)
    return data


def _load(root: Path) -> DataSet:
    raw_fields = read_toml(root / "fields.toml", root)
    fields = _field_defs(raw_fields)
    archs = {}
    for path in sorted((root / "archs").glob("*.toml")):
        facts = read_toml(path, root)
        archs[facts["name"]] = _freeze(facts)
    tables: dict[str, Relation] = {}
    ck_raw: dict[str, dict[str, Any]] = {}
    for path in sorted((root / "tables").rglob("*.toml")):
        content = read_toml(path, root)
        if path.parent.name == "ck":
            ck_raw[path.stem] = content
            continue
        for tname, spec in content.get("table", {}).items():
            tables[f"{path.stem}.{tname}"] = Relation.build(
                f"{path.stem}.{tname}", spec["columns"], spec["rows"], spec.get("source", "")
            )
    families = {
        "model": Family("model", True, "field domains and derived fields; always on", switchable=False),
    }
    fam_raw = read_toml(root / "families.toml", root) if (root / "families.toml").is_file() else {}
    for name, spec in fam_raw.get("family", {}).items():
        families[name] = Family(name, bool(spec.get("default", False)), spec.get("doc", ""),
                                layer=str(spec.get("layer", "catalog")))
    namespaces = {"arch", "ck", *(t.split(".")[0] for t in tables)}
    derive_specs = raw_fields.get("derive", {})
    _check_derived_fields(fields, derive_specs)
    names = {**fields, **dict.fromkeys(derive_specs)}
    derives: dict[str, DeriveDef] = {}
    for name, spec in derive_specs.items():
        try:
            node = E.parse(spec["expr"], names, namespaces, f"derived field {name}")
            spelt = (E.parse(spec["spellings"], names, namespaces, f"derived field {name} spellings")
                     if "spellings" in spec else None)
        except (ExprError, KeyError, TypeError) as exc:
            raise DataError(f"fields.toml: derive.{name}: {exc}") from None
        derives[name] = DeriveDef(name, spec.get("kind", "gemm"), node, spec.get("source", ""),
                                  bool(spec.get("output_only")), spelt)
    macros = Macros({n: d.expr for n, d in derives.items() if d.output_only})
    formulas = {n: d.expr for n, d in derives.items()}
    derives = {n: DeriveDef(d.field, d.kind, macros.expand(d.expr), d.source, d.output_only, d.spellings)
               for n, d in derives.items()}
    scope = T.Scope(fields, formulas, _data_ref_type(archs, tables))
    _check_formulas(scope, fields, formulas)
    rules = _load_rules(root, names, families, namespaces, macros, scope)
    catalogs = _load_catalogs(root, families)
    return DataSet(root, fields, derives, families, archs, tables, ck_raw, rules, macros, frozenset(namespaces),
                   formulas, catalogs)


def _load_catalogs(root: Path, families: Mapping[str, Family]) -> dict[str, Catalog]:
    """The catalogs by name and alias; without catalogs.toml, `full` is the default curation families."""
    path = root / "catalogs.toml"
    if not path.is_file():
        default = tuple(f for f, fam in families.items() if fam.default and f not in ("model", "arch", "pipeline"))
        return {"full": Catalog("full", default)}
    out: dict[str, Catalog] = {}
    for name, spec in read_toml(path, root)["catalog"].items():
        for fam in spec["families"]:
            if fam not in families:
                raise DataError(f"catalogs.toml: catalog.{name}.families: unknown family {fam!r}")
        if not spec["families"] and "configs" not in spec:
            raise DataError(f"catalogs.toml: catalog.{name}: give its curation families or its configs")
        if "configs" in spec and not (root / spec["configs"]).is_file():
            raise DataError(f"catalogs.toml: catalog.{name}.configs: no file {spec['configs']}")
        cat = Catalog(name, tuple(spec["families"]), tuple(spec.get("aliases", ())), spec.get("layout_3d", "nhwgc"),
                      " ".join(spec.get("doc", "").split()), spec.get("source", ""), spec.get("configs"),
                      spec.get("config_set"))
        for key in (name, *cat.aliases):
            if key in out:
                raise DataError(f"catalogs.toml: catalog.{name}: the name {key!r} is used twice")
            out[key] = cat
    if "full" not in out:
        raise DataError("catalogs.toml: no catalog named 'full' (the default set)")
    return out


def _data_ref_type(archs: Mapping[str, dict[str, Any]], tables: Mapping[str, Relation]) -> T.RefTyper:
    """Types of data references before an arch is chosen: an arch fact has the join of its types over every arch;
    the ck.* tables are built per arch, so their columns are not known yet (Model checks the rules again per arch)."""

    def ref_type(path: tuple[str, ...]) -> T.Type:
        head, rest = path[0], path[1:]
        if head == "arch":
            values: list[object] = list(archs.values())
            for key in rest:
                values = [v[key] for v in values if isinstance(v, dict) and key in v]
            if not values:
                raise ExprError(f"unknown arch fact {'.'.join(path)!r}")
            return T.join_data(T.value_type(v) for v in values)
        if head == "ck" and len(rest) == 1:
            return T.TableT(None)
        name = ".".join(path)
        if name in tables:
            return T.value_type(tables[name])
        raise ExprError(f"unknown table {name!r}")

    return ref_type


def _check_formulas(scope: T.Scope, fields: Mapping[str, FieldDef], formulas: Mapping[str, E.Node]) -> None:
    """Type every derive: a derived field's formula must give values of the field's type."""
    for name, formula in formulas.items():
        try:
            t = scope.name_type(name) if name not in fields else T.check_value(formula, scope, f"derive.{name}")
            if name in fields and not T.comparable(T.field_type(fields[name]), t):
                raise ExprError(f"derive.{name}: the formula gives {T.type_name(t)}, the field is "
                                f"{T.type_name(T.field_type(fields[name]))}")
        except ExprError as exc:
            raise DataError(f"fields.toml: {exc}") from None


def _check_derived_fields(fields: Mapping[str, FieldDef], derive_specs: Mapping[str, Mapping[str, Any]]) -> None:
    """A [derive.X] formula either pins field X (which says `derived = true`) or is an output-only quantity that is
    not a field; the model relies on both (it pins each derived field by its formula, and expands quantities)."""
    for name, spec in derive_specs.items():
        output_only = bool(spec.get("output_only"))
        if output_only and name in fields:
            raise DataError(f"fields.toml: derive.{name}.output_only: expected a quantity that is not a field, "
                            f"found field.{name}")
        if not output_only and name not in fields:
            found = "false" if "output_only" in spec else "nothing"
            raise DataError(f"fields.toml: derive.{name}.output_only: expected true (there is no field.{name} for the "
                            f"formula to pin), found {found}")
        if not output_only and not fields[name].derived:
            raise DataError(f"fields.toml: field.{name}.derived: expected true (derive.{name} pins it), found false")
    for f in fields.values():
        if f.derived and (f.name not in derive_specs or derive_specs[f.name].get("output_only")):
            raise DataError(f"fields.toml: field.{f.name}.derived: true, but there is no derive.{f.name} formula "
                            f"(without output_only) to pin it")


def _freeze(value: Any) -> Any:
    """Lists become tuples so that facts can be members of sets and compared with tuples of fields."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return {k: _freeze(v) for k, v in value.items()}
    return value


class Macros:
    """Output-only derived quantities (threads, elem_bytes, lds_bytes, ...) that rules may read by name.

    They are expanded into their formulas when a rule is loaded, so neither the plain-Python check nor the solver
    needs to know about them.
    """

    def __init__(self, nodes: Mapping[str, E.Node]):
        self.nodes = dict(nodes)

    def expand(self, node: E.Node, stack: tuple[str, ...] = ()) -> E.Node:
        if isinstance(node, E.Field) and node.name in self.nodes:
            if node.name in stack:
                raise DataError(f"fields.toml: derived fields form a cycle: {' -> '.join((*stack, node.name))}")
            return self.expand(self.nodes[node.name], (*stack, node.name))
        kids = E.children(node)
        if not kids:
            return node
        return E.rebuild(node, tuple(self.expand(k, stack) for k in kids))


def _load_rules(root: Path, fields: Mapping[str, object], families: Mapping[str, Family], namespaces: set[str],
                macros: Macros, scope: T.Scope) -> list[Rule]:
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for path in sorted((root / "rules").glob("*.toml")):
        rel = f"rules/{path.name}"
        content = read_toml(path, root)
        for spec in content.get("rule", []):
            rid = spec["id"]
            where = f"{rel}: rule {rid}"
            if rid in seen:
                raise DataError(f"{where}: duplicate id (also in {seen[rid]})")
            if spec["family"] not in families or spec["family"] == "model":
                raise DataError(f"{where}: unknown family {spec['family']!r} (families.toml lists {', '.join(families)})")
            kind = spec.get("kind", "gemm")
            try:
                when = _rule_condition(spec.get("when", "true"), fields, namespaces, scope, f"rule {rid} 'when'")
                require = _rule_condition(spec["require"], fields, namespaces, scope, f"rule {rid} 'require'")
                when, require = macros.expand(when), macros.expand(require)
                _check_message(spec["message"], fields, namespaces, scope, rid)
                if "{expected}" in spec["message"] and not (isinstance(require, E.Cmp) and require.op == "=="):
                    raise DataError(f"{where}: {{expected}} in a message needs a `field == formula` requirement")
            except ExprError as exc:
                raise DataError(f"{rel}: {exc}") from None
            allowed = tuple(spec.get("allowed", ()))
            for f in allowed:
                if f not in fields:
                    raise DataError(f"{where}: 'allowed' names unknown field {f!r}")
            seen[rid] = rel
            rules.append(Rule(
                rid, spec["family"], kind, when, require, spec["message"].strip(), " ".join(spec["rationale"].split()),
                spec["source"].strip(), rel, allowed, E.fields_of(when) | E.fields_of(require),
                _names_list(spec.get("reject")), _names_list(spec.get("accept")), spec.get("arch", "gfx950"),
            ))
    return rules


def _names_list(value: str | list[str] | None) -> tuple[str, ...]:
    """`reject` / `accept`: one kernel name or a list of them (the schema checked which)."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def message_parts(template: str) -> list[tuple[str, str, str]]:
    """Split a message template into (text, expression, format) triples; `{expr:fmt}` marks an expression."""
    hit = _PARTS.get(template)
    if hit is None:
        hit = tuple(_message_parts(template))
        if len(_PARTS) < PARTS_KEPT:
            _PARTS[template] = hit
    return list(hit)


# a batch renders the same few hundred templates
_PARTS: dict[str, tuple[tuple[str, str, str], ...]] = memo("rules.data.parts", {})
PARTS_KEPT = 4096  # templates remembered (the data has a few hundred; a bound all the same)


def _message_parts(template: str) -> list[tuple[str, str, str]]:
    parts: list[tuple[str, str, str]] = []
    i = 0
    text = ""
    while i < len(template):
        c = template[i]
        if c == "{":
            j = template.find("}", i)
            if j < 0:
                raise ExprError(f"unclosed '{{' in message {template!r}")
            inner = template[i + 1 : j]
            expr_text, _, fmt = inner.partition(":") if not inner.startswith("allowed") else (inner, "", "")
            parts.append((text, expr_text.strip(), fmt.strip()))
            text = ""
            i = j + 1
        else:
            text += c
            i += 1
    parts.append((text, "", ""))
    return parts


def _rule_condition(text: object, fields: Mapping[str, object], namespaces: set[str], scope: T.Scope,
                    what: str) -> E.Node:
    if not isinstance(text, str):
        raise ExprError(f"{what}: expected an expression (a string), got {type(text).__name__}")
    node = E.parse(text, fields, namespaces, what)
    T.check_condition(node, scope, what)
    return node


def _check_message(template: str, fields: Mapping[str, object], namespaces: set[str], scope: T.Scope,
                   rid: str) -> None:
    for _, expr_text, _ in message_parts(template):
        # {allowed} lists the allowed values; {expected} is the right side of a `field == formula` requirement
        if expr_text and expr_text not in ("allowed", "expected"):
            what = f"rule {rid} message"
            T.check_value(E.parse(expr_text, fields, namespaces, what), scope, what)


def arch_resolver(data: DataSet, arch: str, ck_relations: Callable[[str], Relation]) -> Callable[[tuple[str, ...]], object]:
    """Resolve data references (`arch.x`, `ck.t`, `derive.t`) for one arch."""
    facts = data.archs[arch]

    def resolve(path: tuple[str, ...]) -> object:
        head, rest = path[0], path[1:]
        if head == "arch":
            value: object = facts
            for key in rest:
                if not isinstance(value, dict) or key not in value:
                    raise UnknownReference(f"unknown arch fact {'.'.join(path)!r}")
                value = value[key]
            return value
        if head == "ck" and len(rest) == 1:
            return ck_relations(rest[0])
        name = ".".join(path)
        if name in data.tables:
            return data.tables[name]
        raise UnknownReference(f"unknown table {name!r}")

    return resolve
