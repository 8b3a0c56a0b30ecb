"""The kernels of a list-of-configs catalog (CK's shipped JSON configs, or a user's via --ck-config) on one arch.

A listed catalog names its kernels instead of curating them with rules, so its kernels of an arch are the listed
configs that break no fact of the arch under the active families (the plain-Python check, the same one `explain`
uses: no solver). A listed config that breaks a fact is kept as a `Rejected` with the first broken rule, for the
commands to report: never dropped silently.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from ..rules import expr as E
from ..rules.check import domain_verdicts, violations
from ..rules.ckconfig import CkConfigError, Entry, Skipped, documents_from_table, entries_of, read_path
from ..rules.data import Catalog, DataSet, read_toml
from ..rules.model import Model, Stratum, kind_of_variant
from ..rules.verdict import Verdict


@dataclass(frozen=True)
class Rejected:
    """A listed config that breaks a fact of the arch."""

    entry: Entry
    verdict: Verdict


@functools.lru_cache(maxsize=16)
def _stored(root: Path, rel: str, digest: str, config_set: str | None) -> tuple[tuple[Entry, ...], tuple[Skipped, ...]]:
    """A stored table's kernels (the data digest keys the cache: an edited table is read again)."""
    table = read_toml(root / rel, root)
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    for path, doc in documents_from_table(table, rel):
        if config_set is not None and _set_of(path) != config_set:
            continue
        got, skip = entries_of(doc, f"{rel}: {path}")
        entries += got
        skipped += skip
    return tuple(entries), tuple(skipped)


def _set_of(path: str) -> str:
    """The set of a file in CK's tree: {direction}/{set}/{layout}_{dtype}.json."""
    parts = path.split("/")
    return parts[-2] if len(parts) >= 2 else ""


@functools.lru_cache(maxsize=16)
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
    seen: set[str] = set()
    unique = []
    for e in got:
        key = canonical(e.config)
        if key not in seen:
            seen.add(key)
            unique.append(e)
    return tuple(unique), skipped


def canonical(config: dict[str, object] | object) -> str:
    """A kernel's identity whatever its name spells: the 3D layout token (ndhwgc / nhwgc) is one kernel."""
    cfg = dict(config)  # type: ignore[call-overload]
    return repr(sorted((k, v) for k, v in cfg.items() if k not in ("name", "layout", "kind")))


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
    kind = kind_of_variant(str(cfg.get("variant")))
    if not E.fields_of(where) <= {f.name for f in model.fields(kind)}:
        return False  # the filter reads fields this kernel family does not have (as enumerate does)
    try:
        return bool(E.evaluate(where, cfg, model.resolve))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return False


__all__ = ["CkConfigError", "Rejected", "canonical", "entries", "kernels"]
