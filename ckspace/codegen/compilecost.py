"""The expected compile cost of a kernel (templates/compile-cost.toml): what the default compile units balance.

A compile unit costs a fixed part (CK Tile's headers and template machinery, paid once per unit) plus one part per
kernel in it. The per-kernel part is a base by arch plus seconds added for some field values (the pipeline decides
how many hot-loop and tail-number instantiations a kernel needs) and seconds per multiple of a product of fields
(the block tile's area). The figures are fitted by scripts/fit_compile_cost.py to units compiled by `ckspace
verify`; they are seconds of one core on the machine they were measured on, so they rank and balance units well
and give the order of magnitude of a build, not its wall time elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..memo import cached
from ..errors import DataError
from ..rules.data import FieldDef, load_fields
from ..rules.kernel import number
from ..rules.schema import Float, Int, ListOf, Str, Table, format_path, load_toml
from .ckapi import templates_dir

COST_FILE = "compile-cost.toml"

_SECONDS = Float(lo=0.0, hi=86400.0)
_FIELD = Str(pattern=r"[a-z_][a-z0-9_]*", what="a field name")
COST_SCHEMA = Table({
    "measured": Str(nonblank=True),
    "unit": _SECONDS,
    "kernel": Table({
        "base": Table(extra=_SECONDS, key=Str(pattern=r"[a-z0-9_]+", what="an arch name or 'default'")),
        "value": Table(extra=Table(extra=_SECONDS), key=_FIELD),
        "product": ListOf(Table({
            "fields": ListOf(_FIELD, min_len=1, what="a list of field names"),
            "per": Int(lo=1),
            "seconds": _SECONDS,
        }, required=("fields", "per", "seconds"))),
    }, required=("base",)),
}, required=("measured", "unit", "kernel"))


@dataclass(frozen=True)
class CostModel:
    """Expected seconds of one core: `unit` per compile unit, `kernel(config, arch)` per kernel in it."""

    measured: str
    unit: float
    base: Mapping[str, float]  # arch -> seconds; "default" for an arch without measurements
    values: Mapping[str, Mapping[object, float]]  # field -> value -> seconds added
    products: tuple[tuple[tuple[str, ...], int, float], ...]  # (fields, per, seconds per `per` of their product)

    def kernel(self, config: Mapping[str, object], arch: str) -> float:
        seconds = self.base.get(arch, self.base["default"])
        for name, by_value in self.values.items():
            seconds += by_value.get(config.get(name), 0.0)  # a field of the other kind (depthwise, gemm) adds nothing
        for fields, per, each in self.products:
            if all(name in config for name in fields):
                product = 1
                for name in fields:
                    product *= number(config, name)
                seconds += each * product / per
        return seconds


def read(path: Path, fields: Mapping[str, FieldDef]) -> CostModel:
    """A cost file, checked against COST_SCHEMA and against the fields (names and values) of the model."""
    label = f"{path.parent.name}/{path.name}"
    raw = load_toml(path, label, COST_SCHEMA)
    kernel = raw["kernel"]
    if "default" not in kernel["base"]:
        raise DataError(f"{label}: kernel.base: give a 'default' base for the archs without measurements")
    values: dict[str, dict[object, float]] = {}
    for name, by_value in kernel.get("value", {}).items():
        field = _field(fields, name, label, ("kernel", "value", name))
        known = {str(v).lower(): v for v in field.values}
        values[name] = {}
        for text, seconds in by_value.items():
            if text.lower() not in known:
                where = format_path(("kernel", "value", name, text))
                shown = ", ".join(str(v) for v in field.values)
                raise DataError(f"{label}: {where}: {name} has no value {text!r} (its values: {shown})")
            values[name][known[text.lower()]] = float(seconds)
    products = []
    for i, spec in enumerate(kernel.get("product", [])):
        for name in spec["fields"]:
            field = _field(fields, name, label, ("kernel", "product", i, "fields"))
            if field.type != "int":
                where = format_path(("kernel", "product", i, "fields"))
                raise DataError(f"{label}: {where}: {name} is not an integer field")
        products.append((tuple(spec["fields"]), int(spec["per"]), float(spec["seconds"])))
    return CostModel(" ".join(raw["measured"].split()), float(raw["unit"]),
                     {k: float(v) for k, v in kernel["base"].items()}, values, tuple(products))


def _field(fields: Mapping[str, FieldDef], name: str, label: str, path: tuple) -> FieldDef:
    if name not in fields:
        raise DataError(f"{label}: {format_path(path)}: unknown field {name!r}")
    return fields[name]


@cached("codegen.compilecost.model", maxsize=1)
def model() -> CostModel:
    """The shipped cost model (read once per process)."""
    return read(templates_dir() / COST_FILE, load_fields())
