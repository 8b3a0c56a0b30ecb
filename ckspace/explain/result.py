"""What `explain` answers about one kernel name: the verdicts, derived quantities, notes, sets and neighbours, and
the documented JSON schema of all of it (docs/explain-json.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..rules.model import kind_of_variant
from ..rules.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

# Bump when a key of the JSON output changes meaning or disappears (adding keys keeps the version).
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Derived:
    field: str
    value: object
    steps: tuple[str, ...]  # how the value follows from the config: branch conditions, then the arithmetic
    source: str


@dataclass(frozen=True)
class Change:
    field: str
    before: object
    after: object


@dataclass(frozen=True)
class Neighbour:
    name: str
    changes: tuple[Change, ...]
    optimal: bool = True  # false only when the solver stopped at its time limit
    distance: int = 0  # domain steps the changed numbers moved (the tie-break after the number of changes)


@dataclass(frozen=True)
class CatalogNeighbour:
    """A near kernel of some catalog, for a kernel that is in none."""

    neighbour: Neighbour
    catalogs: tuple[str, ...]


@dataclass(frozen=True)
class Note:
    kind: str  # valid-on | hardware-ok-on | hardware-policy | curation-only | in-no-catalog | optional-only | optional-off | known-issue | off-family
    text: str


@dataclass
class Explanation:
    name: str
    arch: str
    families: tuple[str, ...]  # enabled rule families (without the built-in `model`)
    config: dict[str, object]
    valid: bool
    reasons: list[Verdict]  # enabled and switched-off families alike; `enabled` tells them apart
    derived: list[Derived]
    sets: dict[str, bool | None]
    notes: list[Note] = field(default_factory=list)
    valid_on: list[str] = field(default_factory=list)  # other archs where it is valid under the same rules
    hardware_ok_on: list[str] = field(default_factory=list)  # when valid nowhere: archs whose hardware facts accept it
    neighbours: list[Neighbour] | None = None  # None: not searched
    catalog_neighbours: list[CatalogNeighbour] | None = None  # kernels in no catalog: the nearest catalog kernels
    search: dict[str, object] = field(default_factory=dict)
    family_info: dict[str, dict[str, object]] = field(default_factory=dict)  # doc, default, enabled per family
    arch_facts: dict[str, object] = field(default_factory=dict)  # warp_size, lds_bytes of the arch
    problem: dict[str, object] | None = None  # explain --problem: its text, the CK API revision, whether it runs

    @property
    def kind(self) -> str:
        return kind_of_variant(str(self.config.get("variant")))

    @property
    def rejecting(self) -> list[Verdict]:
        return [r for r in self.reasons if r.enabled]

    def rejecting_families(self) -> list[str]:
        return list(dict.fromkeys(r.family for r in self.rejecting))

    def render(self, console: "Console") -> None:
        """Print the report `ckspace explain` prints (rich markup) on a rich console."""
        from .render import render

        render(console, self)

    def __str__(self) -> str:
        """The report `ckspace explain` prints, as plain text (print(space.explain(name)) shows it)."""
        return self.text()

    def __rich__(self):
        """The report `ckspace explain` prints, styled, for rich: `rich.print(space.explain(name))`."""
        from .render import styled

        return styled(self)

    def text(self, width: int = 120) -> str:
        """The report `ckspace explain` prints, as plain text `width` columns wide (names are never wrapped)."""
        from .render import text

        return text(self, width)

    def to_json(self) -> dict[str, object]:
        """The documented schema (docs/explain-json.md)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "status": "valid" if self.valid else "rejected",
            "arch": self.arch,
            "rules": list(self.families),
            "kind": self.kind,
            "fields": {k: v for k, v in self.config.items() if k != "kind"},
            "sets": dict(self.sets),
            "violations": [
                {"rule": r.rule, "family": r.family, "enabled": r.enabled, "message": r.message, "source": r.source,
                 "fields": list(r.fields), "fix": r.fix}
                for r in self.reasons
            ],
            "rejected_by": self.rejecting_families(),
            "families": {k: dict(v) for k, v in self.family_info.items()},
            "arch_facts": dict(self.arch_facts),
            "derived": [{"field": d.field, "value": d.value, "steps": list(d.steps), "source": d.source}
                        for d in self.derived],
            "notes": [{"kind": n.kind, "text": n.text} for n in self.notes],
            "valid_on": list(self.valid_on),
            "hardware_ok_on": list(self.hardware_ok_on),
            "neighbours": None if self.neighbours is None else [
                {"name": n.name, "changed": len(n.changes), "optimal": n.optimal,
                 "changes": [{"field": c.field, "from": c.before, "to": c.after} for c in n.changes]}
                for n in self.neighbours
            ],
            "neighbour_search": dict(self.search),
            "problem": None if self.problem is None else dict(self.problem),
            "catalog_neighbours": None if self.catalog_neighbours is None else [
                {"name": c.neighbour.name, "catalogs": list(c.catalogs), "changed": len(c.neighbour.changes),
                 "changes": [{"field": ch.field, "from": ch.before, "to": ch.after} for ch in c.neighbour.changes]}
                for c in self.catalog_neighbours
            ],
        }
