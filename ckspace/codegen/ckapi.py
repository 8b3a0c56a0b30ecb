"""CK Tile API revisions: which template set (templates/revisions.toml) and which rule families go with `--ck-api`.

Kept apart from ckspace.codegen.emit so that `enumerate --ck-api REV` and the set commands can restrict the model to
what a revision can build without importing the emitter (or jinja2). `combine_rules(rules, ck_api)` is the one entry
point the commands use; `resolve_revision` turns `None` / `auto` / a name into a revision name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, TypedDict

from ..memo import cached
from ..errors import DataError, UsageError
from ..paths import data_dir
from ..rules.schema import Bool, ListOf, Str, Table, format_path, load_toml


def templates_dir() -> Path:
    """templates/ of this checkout, or the copy installed inside the package."""
    found = data_dir("templates", "revisions.toml")
    if found is None:
        raise DataError("cannot find ckspace's templates (templates/revisions.toml)")
    return found


class _ProbeFile(TypedDict):
    file: str


class Probe(_ProbeFile, total=False):
    """One probe of a revision's `detect` list (templates/revisions.toml), as PROBE checked it."""

    contains: list[str]
    lacks: list[str]
    absent: bool


@dataclass(frozen=True)
class Revision:
    name: str
    doc: str
    fallback: str | None
    families: tuple[str, ...]
    detect: tuple[Probe, ...]
    unbuildable_archs: Mapping[str, str] = field(default_factory=dict)  # arch -> why the headers fail for it
    unexpressible_rules: tuple[str, ...] = ()  # the rules whose kernels the revision's templates cannot write


# A revision name is also the name of its template directory.
REVISION_NAME = Str(pattern=r"[0-9A-Za-z][0-9A-Za-z._-]*", what="a revision name such as '2026.06'")
PROBE = Table({
    "file": Str(pattern=r"(?!/)(?!.*(^|/)\.\.(/|$)).+", what="a path relative to --ck-include, without '..'"),
    "contains": ListOf(Str()),
    "lacks": ListOf(Str()),
    "absent": Bool(),
}, required=("file",))
REVISIONS_FILE = Table({
    "default": REVISION_NAME,
    "revision": Table(extra=Table({
        "doc": Str(),
        "fallback": REVISION_NAME,
        "families": ListOf(Str(nonblank=True), what="a list of rule family names"),
        "detect": ListOf(PROBE),
        "unbuildable_archs": Table(extra=Str(nonblank=True),
                                   key=Str(pattern=r"gfx[0-9a-f]{2,5}", what="an arch name such as 'gfx1250'")),
        "unexpressible_rules": ListOf(Str(nonblank=True), what="a list of rule ids"),
    }), key=REVISION_NAME),
}, required=("default", "revision"))

@cached("codegen.ckapi.revisions", maxsize=1)
def revisions() -> tuple[str, dict[str, Revision]]:
    """(default revision, revisions by name) from templates/revisions.toml."""
    return read_revisions(templates_dir() / "revisions.toml")


def read_revisions(path: Path) -> tuple[str, dict[str, Revision]]:
    """(default revision, revisions by name) from a revisions file, checked against REVISIONS_FILE."""
    label = f"{path.parent.name}/{path.name}"  # templates/revisions.toml, wherever the package is installed
    raw = load_toml(path, label, REVISIONS_FILE)
    revs = {}
    for name, spec in raw["revision"].items():
        revs[name] = Revision(name, " ".join(spec.get("doc", "").split()), spec.get("fallback"),
                              tuple(spec.get("families", ())), tuple(spec.get("detect", ())),
                              {arch: " ".join(why.split()) for arch, why in spec.get("unbuildable_archs", {}).items()},
                              tuple(spec.get("unexpressible_rules", ())))
    default = raw["default"]
    if default not in revs:
        raise DataError(f"{label}: default: revision {default!r} is not listed")
    for r in revs.values():
        if r.fallback and r.fallback not in revs:
            where = format_path(("revision", r.name, "fallback"))
            raise DataError(f"{label}: {where}: unknown revision {r.fallback!r}")
    return default, revs


def unbuildable_arch(rev: str, arch: str) -> str | None:
    """Why CK API `rev`'s headers do not compile for `arch` at all (templates/revisions.toml unbuildable_archs), or
    None when they do."""
    return revisions()[1][resolve_revision(rev)].unbuildable_archs.get(arch)


def revision_names() -> list[str]:
    return sorted(revisions()[1], reverse=True)


def detect_revision(ck_include: str | Path | None) -> str:
    """The newest revision whose probes all hold on the CK Tile headers under `ck_include`."""
    if not ck_include:
        raise UsageError("--ck-api auto needs --ck-include DIR (the directory that holds ck_tile/)")
    root = Path(ck_include)
    if not (root / "ck_tile").is_dir():
        raise UsageError(f"--ck-include {root}: no ck_tile/ directory there")
    _, revs = revisions()
    for name in revision_names():
        if all(_probe(root, p) for p in revs[name].detect):
            return name
    raise UsageError(f"--ck-api auto: the CK Tile headers under {root} match no known revision "
                     f"({', '.join(revision_names())}); pass --ck-api explicitly")


def _probe(root: Path, probe: Probe) -> bool:
    path = root / str(probe["file"])
    if probe.get("absent"):
        return not path.exists()
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    return all(s in text for s in probe.get("contains", ())) and not any(s in text for s in probe.get("lacks", ()))


def resolve_revision(name: str | None, ck_include: str | Path | None = None) -> str:
    default, revs = revisions()
    if name in (None, ""):
        return default
    if name == "auto":
        return detect_revision(ck_include)
    if name not in revs:
        raise UsageError(f"unknown CK API revision {name!r}; choices: {', '.join(revision_names())}, auto")
    return name


def families_for_ck_api(rev: str | None, ck_include: str | Path | None = None) -> str:
    """The `--rules` fragment that restricts the model to what CK API `rev` can build: its own families on, every
    other revision's off (each ck-api-* family belongs to one revision).

    The default revision's families are on by default and the others' off, so it is "" for the default; e.g.
    `families_for_ck_api("2025.11") == "+ck-api-2025.11,-ck-api-2026.06"`. `rev` may be "auto" (with `ck_include`)
    or None.
    """
    rev = resolve_revision(rev, ck_include)
    default, revs = revisions()
    if rev == default:  # its families are on by default, every other revision's off
        return ""
    newest = [f for f in revs[default].families if f not in revs[rev].families]
    return ",".join([*(f"+{f}" for f in revs[rev].families), *(f"-{f}" for f in newest)])


def combine_rules(rules: str | None, ck_api: str | None, ck_include: str | Path | None = None) -> str | None:
    """`--rules` and `--ck-api` together as one rules spec for `Space(rules=...)`."""
    extra = families_for_ck_api(ck_api, ck_include) if ck_api else ""
    if not extra:
        return rules
    if not rules:
        return extra
    if rules.strip()[0] not in "+-":  # a bare list replaces the default set: keep it, less the other revisions'
        parts = extra.split(",")  # families, and add the API's own
        off = {p[1:] for p in parts if p.startswith("-")}
        kept = [f for f in (x.strip() for x in rules.split(",")) if f and f not in off]
        return ",".join([*kept, *(p[1:] for p in parts if p.startswith("+") and p[1:] not in kept)])
    return f"{rules},{extra}"
