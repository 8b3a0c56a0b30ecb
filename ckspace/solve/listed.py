"""The kernels of a list-of-configs catalog (CK's shipped JSON configs, or a user's via --ck-config) on one arch.

A listed catalog names its kernels instead of curating them with rules, so its kernels of an arch are the listed
configs that break no fact of the arch under the active families (the plain-Python check, the same one `explain`
uses: no solver). A listed config that breaks a fact is kept as a `Rejected` with the first broken rule, for the
commands to report: never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from ..memo import cached
from .. import cache
from ..rules import compiled
from ..rules import expr as E
from ..rules.check import domain_verdicts, violations
from ..rules.ckconfig import CkConfigError, Entry, Skipped, documents_from_table, entries_of, read_path
from ..rules.data import Catalog, DataSet, read_toml
from ..rules.model import Model, Stratum
from ..rules.verdict import Verdict


@dataclass(frozen=True)
class Rejected:
    """A listed config that breaks a fact of the arch."""

    entry: Entry
    verdict: Verdict


@cached("solve.listed.stored", maxsize=16)
def _stored(root: Path, rel: str, digest: str, config_set: str | None) -> tuple[tuple[Entry, ...], tuple[Skipped, ...]]:
    """A stored table's kernels (the data digest keys both caches: an edited table is read again). Reading the
    table costs most of a second (500 KB of TOML, 3,157 names); the result cache makes it 30 ms."""
    key = cache.key("listed", digest, {"table": rel, "set": config_set})
    hit = cache.load("listed", key, _is_packed)
    if hit is not None:
        return (tuple(Entry(f, i, id_, n, c) for f, i, id_, n, c in hit["entries"]),
                tuple(Skipped(f, i, id_, r) for f, i, id_, r in hit["skipped"]))
    entries, skipped = _read_stored(root, rel, config_set, digest)
    cache.store("listed", key, {"entries": [[e.file, e.index, e.id, e.name, e.config] for e in entries],
                                "skipped": [[k.file, k.index, k.id, k.reason] for k in skipped]})
    return entries, skipped


def _is_packed(payload: object) -> bool:
    if not isinstance(payload, dict) or not isinstance(payload.get("entries"), list) \
            or not isinstance(payload.get("skipped"), list):
        return False
    return all(isinstance(e, list) and len(e) == 5 and isinstance(e[3], str) and isinstance(e[4], dict)
               and e[4].get("name") == e[3] for e in payload["entries"]) \
        and all(isinstance(k, list) and len(k) == 4 for k in payload["skipped"])


@cached("solve.listed.table", maxsize=4)
def _table(root: Path, rel: str, digest: str) -> dict:
    """The stored table, read once per process for all its sets (profiler and tests share the file)."""
    return read_toml(root / rel, root)


def _documents(root: Path, rel: str, digest: str,
               wanted: Callable[[str, dict], bool]) -> Iterator[tuple[str, list[Entry], list[Skipped]]]:
    """The kernels of each document of a stored table that `wanted` accepts by its path and header: the package's
    own table from the build's compiled documents (rules.compiled), any other read and parsed."""
    documents = compiled.documents(root, rel, digest)
    if documents is not None:
        for document in documents:
            if wanted(document[0], document[1]):
                entries, skipped = compiled.kernels(document)
                yield document[0], entries, skipped
        return
    for path, doc in documents_from_table(_table(root, rel, digest), rel, wanted):
        entries, skipped = entries_of(doc, f"{rel}: {path}")
        yield path, entries, skipped


def _read_stored(root: Path, rel: str, config_set: str | None,
                 digest: str) -> tuple[tuple[Entry, ...], tuple[Skipped, ...]]:
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    for _, got, skip in _documents(root, rel, digest,
                                   lambda path, _: config_set is None or _set_of(path) == config_set):
        entries += got
        skipped += skip
    return tuple(entries), tuple(skipped)


def stratum_keys(data: DataSet, catalog: Catalog, variant: object, ndim: object,
                 dtype: object) -> frozenset[tuple]:
    """The canonical keys of the kernels the catalog lists for one (variant, ndim, dtype), whatever the arch.

    Of a stored table only the documents whose header names that stratum are read (explain of one name reads a
    tenth of the table, not 3,157 names); their entries are the same entries `entries` gives, since a config's
    variant, ndim and dtype come from its document's header (tests/test_ck_configs_catalog.py checks it)."""
    assert catalog.configs is not None
    got: Sequence[Entry]
    if catalog.user:
        got = entries(data, catalog)[0]
    else:
        def wanted(path: str, doc: dict) -> bool:
            return (catalog.config_set is None or _set_of(path) == catalog.config_set) \
                and header_stratum(doc) == (variant, ndim, dtype)

        got = []
        for _, entries_here, _ in _documents(data.root, catalog.configs, data.digest, wanted):
            got += entries_here
    return frozenset(canonical(e.config) for e in got
                     if (e.config.get("variant"), e.config.get("ndim"), e.config.get("dtype")) == (variant, ndim, dtype))


def header_stratum(doc: dict) -> tuple[object, object, object]:
    """The (variant, ndim, dtype) a config document's header gives its kernels (CK's `fwd` is `forward`)."""
    variant = doc.get("variant")
    return ("forward" if variant == "fwd" else variant, doc.get("ndim_spatial"), doc.get("datatype"))


def _set_of(path: str) -> str:
    """The set of a file in CK's tree: {direction}/{set}/{layout}_{dtype}.json."""
    parts = path.split("/")
    return parts[-2] if len(parts) >= 2 else ""


@cached("solve.listed.user", maxsize=16)
def _user(path: str, stamp: tuple) -> tuple[tuple[Entry, ...], tuple[Skipped, ...]]:
    entries, skipped = read_path(path)
    return tuple(entries), tuple(skipped)


def _stamp(path: Path) -> tuple:
    """What changes when a file or directory of configs changes (the cache never serves an edited file stale)."""
    files = [path] if path.is_file() else sorted(path.rglob("*.json"))
    out = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        out.append((str(f), st.st_size, st.st_mtime_ns))
    return tuple(out)


def entries(data: DataSet, catalog: Catalog) -> tuple[tuple[Entry, ...], tuple[Skipped, ...]]:
    """Every listed kernel of the catalog, first of each name (a name listed twice is one kernel), in list order."""
    assert catalog.configs is not None
    if catalog.user:
        got, skipped = _user(catalog.configs, _stamp(Path(catalog.configs)))
    else:
        got, skipped = _stored(data.root, catalog.configs, data.digest, catalog.config_set)
    seen: set[tuple] = set()
    unique = []
    for e in got:
        key = canonical(e.config)
        if key not in seen:
            seen.add(key)
            unique.append(e)
    return tuple(unique), skipped


_NOT_IDENTITY = frozenset(("name", "layout", "kind"))


def canonical(config) -> tuple:
    """A kernel's identity whatever its name spells: the 3D layout token (ndhwgc / nhwgc) is one kernel."""
    return tuple(sorted((k, v) for k, v in config.items() if k not in _NOT_IDENTITY))


def kernels(model: Model, data: DataSet, catalog: Catalog, strata: Sequence[Stratum], where: E.Node | None,
            rejected: list[Rejected] | None = None) -> Iterator[dict[str, object]]:
    """The listed kernels of these strata that pass `where` and break no rule of the model's families, sorted by
    name; the ones that break a rule go to `rejected`."""
    wanted = {(s.variant, s.ndim, s.dtype) for s in strata}
    out = []
    for e in entries(data, catalog)[0]:
        cfg = e.config
        if (cfg.get("variant"), cfg.get("ndim"), cfg.get("dtype")) not in wanted:
            continue
        if where is not None and not _passes(model, where, cfg):
            continue
        broken = domain_verdicts(model, cfg) or violations(model, cfg)
        if broken:
            if rejected is not None:
                rejected.append(Rejected(e, broken[0]))
            continue
        out.append(dict(cfg))
    out.sort(key=lambda c: str(c["name"]))
    yield from out


def _passes(model: Model, where: E.Node, cfg: dict[str, object]) -> bool:
    node = model.filter_for(where, Stratum(cfg["variant"], cfg["ndim"], cfg["dtype"]))  # type: ignore[arg-type]
    if node is None:
        return False  # no kernel of its stratum passes (as enumerate solves it)
    try:
        return bool(E.evaluate(node, cfg, model.resolve))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return False


__all__ = ["CkConfigError", "Rejected", "canonical", "entries", "kernels"]
