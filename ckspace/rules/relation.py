"""A relation: named columns and rows of values. The curated tables and arch facts become relations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Relation:
    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    source: str = ""
    _rowset: frozenset = field(default=frozenset(), compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_rowset", frozenset(self.rows))

    @classmethod
    def build(cls, name: str, columns: Sequence[str], rows: Iterable[Sequence[object]], source: str = "") -> "Relation":
        width = len(columns)
        unique: dict[tuple, None] = {}
        for row in rows:
            t = tuple(row)
            if len(t) != width:
                raise ValueError(f"table {name}: row {t!r} has {len(t)} values, expected {width} ({', '.join(columns)})")
            unique.setdefault(t, None)
        return cls(name, tuple(columns), tuple(unique))

    def contains(self, item: object) -> bool:
        if not isinstance(item, tuple):
            item = (item,)
        return item in self._rowset

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def select(self, where: dict[int, object]) -> list[tuple]:
        """Rows whose column positions in `where` hold the given values."""
        return [r for r in self.rows if all(r[i] == v for i, v in where.items())]

    def __repr__(self) -> str:
        return f"<table {self.name} ({', '.join(self.columns)}): {len(self.rows)} rows>"
