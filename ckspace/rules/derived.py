"""The derived quantities of a kernel, as the data formats report them (one evaluator per space), and the fields
and derived quantities as `ckspace fields` lists them."""

from __future__ import annotations

from typing import Mapping, TypedDict

from . import expr as E
from .data import DataSet
from .model import Model, kind_of_variant


class Deriver:
    """The derived quantities of a kernel (fields.toml [derive.*]: layout, threads, lds_bytes, block_per_cu, ...), as
    the data formats report them: every one that applies to the kernel's family, evaluated by the model's own
    formulas on the arch (memoised per kernel family and the fields a formula reads)."""

    def __init__(self, model: Model, data: DataSet) -> None:
        self._evaluate = E.evaluate
        self._kind_of = kind_of_variant
        self._resolve = model.resolve
        self._derives = list(data.derives.values())
        self.names = [d.field for d in self._derives]
        self._by_kind: dict[str, list] = {}
        self._memo: dict[tuple, object] = {}
        self._reads = {d.field: tuple(sorted(E.fields_of(d.expr))) for d in self._derives}

    def __call__(self, cfg: Mapping[str, object]) -> dict[str, object]:
        kind = self._kind_of(str(cfg.get("variant")))
        derives = self._by_kind.get(kind)
        if derives is None:
            derives = self._by_kind[kind] = [d for d in self._derives if d.applies_to(kind)]
        out: dict[str, object] = {}
        for d in derives:
            key = (d.field, *(cfg.get(f) for f in self._reads[d.field]))
            if key not in self._memo:
                self._memo[key] = self._evaluate(d.expr, cfg, self._resolve)
            out[d.field] = self._memo[key]
        return out


class Row(TypedDict, total=False):
    """A field (what == "field": kind, type, values, doc, and the formula of a derived one) or a derived quantity
    (what == "derived": kind, formula, source)."""

    name: str
    what: str
    kind: str
    type: str
    values: list[object]
    doc: str
    ck_json: str
    cpp: str
    changes_cpp: bool
    formula: str
    source: str


def field_rows(data: DataSet) -> list[Row]:
    """One record per field, then one per derived quantity, in the data's order."""
    out: list[Row] = []
    for f in data.fields.values():
        record: Row = {"name": f.name, "what": "field", "kind": f.kind, "type": f.type,
                       "values": list(f.values), "doc": f.doc, "ck_json": f.ck_json, "cpp": f.cpp,
                       "changes_cpp": f.code}
        if f.derived and f.name in data.derives:  # a field of the name that its formula decides (layout)
            record["formula"] = E.show(data.derives[f.name].expr)
        out.append(record)
    for d in data.derives.values():
        if d.field not in data.fields:
            out.append({"name": d.field, "what": "derived", "kind": d.kind, "formula": E.show(d.expr),
                        "source": d.source})
    return out
