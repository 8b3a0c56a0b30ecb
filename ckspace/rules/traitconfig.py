"""CK tile-engine's JSON trait configs (seed 002) as a filter.

tile-engine's instance builder takes a JSON allow-list and builds the cartesian product of its values:

    {"variant": "forward",
     "trait_config": {"data_type": {"values": ["bf16"]}, "pipeline": {"values": ["compv3", "compv4"]},
                      "wave_mode": {"values": ["intrawave", "interwave"]}, "ndim_spatial": {"values": [2, 3]}}}

Here the same file is a filter on a kernel set: each key allows its values, the keys are and-ed, and the result is a
`--where` expression, so it composes with --where, --variant and the rest and is checked like them. Keys "mirror
GroupedConvKernelConfig fields" (CK's README): CK's names (data_type, ndim_spatial, wave_mode, warp_m for the waves,
vector_size_a, ...) and ckspace's field names are both accepted. `tile_config` is read like `trait_config`. A key's
value is {"values": [...]}, {"min": a, "max": b[, "step": s]}, a list or one value. A range is tile-engine's
range(a, b + 1, s) as a filter on an integer field: the field's values in it (a <= v <= b, v - a divisible by s),
however wide it is; it is never listed, and one that holds no value of the field is an error.

wave_mode's values are a scheduler with tile-engine's optional suffix `_dsb` (double LDS buffer): `intrawave`
allows both buffer modes, `intrawave_dsb` only the double one. The suffix `_si` (store immediate) names a choice
ckspace's model does not have, so it is an error rather than a silently wider filter. Reading is strict: an unknown
key, a value outside a field's domain, or a wrong type is one error line naming the file, the key and the values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

from ..errors import CkspaceError
from ..lines import parse_json, read_bounded
from .data import FieldDef
from .names import VARIANT_SPELLINGS
from .schema import display

MAX_FILE_BYTES = 1024 * 1024  # a trait config is a few hundred bytes

# CK's spelling -> ckspace's field (warp_m/n/k are CK's names for the waves, as in its JSON instance configs)
KEY_ALIASES = {
    "data_type": "dtype", "datatype": "dtype", "ndim_spatial": "ndim", "wave_mode": "scheduler",
    "warp_m": "wave_m", "warp_n": "wave_n", "warp_k": "wave_k",
    "vector_size_a": "vec_a", "vector_size_b": "vec_b", "vector_size_c": "vec_c",
    "streamk_reduction_strategy": "streamk",
}
VARIANTS = VARIANT_SPELLINGS  # CK's spellings too (fwd, bwdd, bwdw, backward_data, ...)
SECTIONS = ("trait_config", "tile_config")
TOP_KEYS = ("variant", *SECTIONS)
WAVE_SUFFIXES = {"_dsb": "double_smem_buffer"}


class TraitConfigError(CkspaceError):
    """A trait config that cannot be read: one line naming the file and the key (exit 2)."""

    exit_code = 2


def read(path: str | Path) -> dict[str, Any]:
    """The JSON document of a trait config file ('-' is not accepted: the filter must be re-readable). Read with a
    bound (ckspace.lines: /dev/zero, a FIFO or a huge file is one error line, not gigabytes or a hang) and parsed
    strictly (deep nesting or an integer of thousands of digits is one line naming the file and the key)."""
    label = f"--trait-config {display(path)}"
    blob = read_bounded(path, MAX_FILE_BYTES, label, error=TraitConfigError)
    doc = parse_json(blob, display(path), error=TraitConfigError)
    if not isinstance(doc, dict):
        raise TraitConfigError(f"{display(path)}: a trait config is a JSON object with {', '.join(TOP_KEYS)}")
    return doc


def to_where(doc: Mapping[str, Any], fields: Mapping[str, FieldDef], where: str = "trait config") -> str | None:
    """The filter of one trait config as a --where expression (None when it allows everything)."""
    unknown = [k for k in doc if k not in TOP_KEYS]
    if unknown:
        raise TraitConfigError(f"{where}: unknown key {_shown(unknown[0])}; a trait config has {', '.join(TOP_KEYS)}")
    terms: list[str] = []
    if "variant" in doc:
        terms.append(_variant_term(doc["variant"], where))
    for section in SECTIONS:
        body = doc.get(section, {})
        if not isinstance(body, dict):
            raise TraitConfigError(f"{where}: {section} is a JSON object of keys and their values")
        for key, spec in body.items():
            terms.append(_key_term(f"{where}: {section}.{_name(key)}", key, spec, fields))
    return " and ".join(terms) if terms else None


def strata_of(doc: Mapping[str, Any], fields: Mapping[str, FieldDef]) -> dict[str, list[str]]:
    """The --variant/--ndim/--dtype a (checked) trait config pins, so that counts list only its strata."""
    out: dict[str, list[str]] = {}
    if "variant" in doc:
        names = doc["variant"] if isinstance(doc["variant"], list) else [doc["variant"]]
        out["variant"] = list(dict.fromkeys(VARIANTS[v] for v in names))
    for section in SECTIONS:
        for key, spec in doc.get(section, {}).items():
            name = KEY_ALIASES.get(key, key)
            if name in ("ndim", "dtype"):
                out[name] = [str(v) for v in dict.fromkeys(_values(key, spec, fields[name]))]
    return out


def _variant_term(value: object, where: str) -> str:
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(v, str) and v in VARIANTS for v in names):
        raise TraitConfigError(f"{where}: variant {_shown(value)} is not one of {', '.join(VARIANTS)}")
    return _membership("variant", sorted({VARIANTS[cast(str, v)] for v in names}, key=list(VARIANTS.values()).index))


def _key_term(where: str, key: str, spec: object, fields: Mapping[str, FieldDef]) -> str:
    name = KEY_ALIASES.get(key, key)
    field = fields.get(name)
    if field is None or field.derived:
        known = sorted({*KEY_ALIASES, *(f for f, d in fields.items() if not d.derived)})
        raise TraitConfigError(f"{where}: unknown key; the keys are ckspace's fields or CK's names: {', '.join(known)}")
    values = _values(where, spec, field)
    if key == "wave_mode":
        return _wave_mode_term(where, values, field)
    checked = [_checked(where, field, v) for v in values]
    return _membership(name, list(dict.fromkeys(checked)))


def _values(where: str, spec: object, field: FieldDef) -> list:
    if isinstance(spec, dict):
        if set(spec) == {"values"} and isinstance(spec["values"], list):
            values = spec["values"]
        elif {"min", "max"} <= set(spec) <= {"min", "max", "step"}:
            values = _range(where, spec["min"], spec["max"], spec.get("step", 1), field)
        else:
            raise TraitConfigError(f"{where}: give {{\"values\": [...]}} or {{\"min\": a, \"max\": b, \"step\": s}}")
    elif isinstance(spec, list):
        values = spec
    else:
        values = [spec]
    if not values:
        raise TraitConfigError(f"{where}: an empty list of values allows no kernel")
    return values


def _range(where: str, lo: object, hi: object, step: object, field: FieldDef) -> list[int]:
    """The values of an integer field that a range {min, max, step} holds (tile-engine's range(min, max + 1, step)):
    the field's own values on the step's grid, never the range listed element by element (it may span billions)."""
    # (the casts: each is an int once the first test passes)
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi, step)) \
            or cast(int, step) < 1 or cast(int, lo) > cast(int, hi):
        raise TraitConfigError(f"{where}: min, max and step are integers with min <= max and step >= 1")
    if field.type != "int":
        raise TraitConfigError(f"{where}: a range {{min, max, step}} is for integer fields; {field.name} is "
                               f"{field.type}: list its values")
    held = [v for v in field.values if lo <= v <= hi and (v - lo) % step == 0]
    if not held:
        shown = ", ".join(_json(v) for v in field.values)
        raise TraitConfigError(f"{where}: the range min {_json(lo)}, max {_json(hi)}, step {_json(step)} holds no "
                               f"value of {field.name}; "
                               f"values: {shown}")
    return held


def _checked(where: str, field: FieldDef, value: object) -> object:
    ok = {"bool": lambda v: isinstance(v, bool),
          "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "enum": lambda v: isinstance(v, str)}[field.type](value)
    if not ok or (field.values and value not in field.values):
        shown = ", ".join(_json(v) for v in field.values)
        raise TraitConfigError(f"{where}: {_json(value)} is not a value of {field.name}; values: {shown}")
    return value


def _wave_mode_term(where: str, values: list, field: FieldDef) -> str:
    alternatives: list[str] = []
    plain: list[str | None] = []
    for value in values:
        if not isinstance(value, str):
            raise TraitConfigError(f"{where}: {_json(value)} is not a wave mode; values: "
                                   f"{', '.join(field.values)}, each optionally with the suffix _dsb")
        scheduler, flags = value, []
        for suffix, flag in WAVE_SUFFIXES.items():
            if scheduler.endswith(suffix):
                scheduler, flags = scheduler[: -len(suffix)], [flag]
        if scheduler.endswith("_si") or "_si_" in value:
            raise TraitConfigError(f"{where}: {_shown(value)}: the suffix _si (store immediate) is not a choice of "
                                   f"ckspace's model; leave it out")
        _checked(where, field, scheduler)
        alternatives.append(" and ".join([f"scheduler == {scheduler!r}", *flags]))
        plain.append(scheduler if not flags else None)
    if None not in plain:  # no suffix: a plain allow-list of schedulers
        return _membership("scheduler", list(dict.fromkeys(plain)))
    unique = list(dict.fromkeys(alternatives))
    return unique[0] if len(unique) == 1 else "(" + " or ".join(f"({a})" for a in unique) + ")"


def _membership(name: str, values: list) -> str:
    shown = [repr(v) if not isinstance(v, bool) else ("true" if v else "false") for v in values]
    return f"{name} == {shown[0]}" if len(shown) == 1 else f"{name} in ({', '.join(shown)})"


def _json(value: object) -> str:
    """A value for an error line: JSON for a scalar, the kind of a list or object (which may nest deeply)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**64:
        return "an integer of more than 64 digits"  # (given through the API: str() of thousands of digits raises)
    if isinstance(value, (bool, str, int, float)) or value is None:
        text = json.dumps(value)
        return text if len(text) <= 80 else text[:76] + "..."
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _name(key: str) -> str:
    """A key of the file for an error line: as written when it is a plain word, else quoted (one line, short)."""
    return key if key.isidentifier() and len(key) <= 64 else _shown(key)


def _shown(value: object) -> str:
    """A value for an error line, as Python writes it (one line, short); a list or object by its kind only."""
    if isinstance(value, str):
        return repr(value if len(value) <= 64 else value[:60] + "...")
    return _json(value)


# ckspace's field -> the key a written trait config uses (CK's spelling where CK's JSON has one)
WRITTEN_KEYS = {"dtype": "data_type", "ndim": "ndim_spatial", "wave_m": "warp_m", "wave_n": "warp_n",
                "wave_k": "warp_k", "vec_a": "vector_size_a", "vec_b": "vector_size_b", "vec_c": "vector_size_c"}
TILE_KEYS = ("tile_m", "tile_n", "tile_k", "wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n", "warp_tile_k")
NOT_WRITTEN = ("variant", "layout", "double_smem_buffer")  # the document's variant; derived; part of wave_mode


def to_documents(configs: Sequence[Mapping[str, object]], fields: Mapping[str, FieldDef]) -> dict[str, dict]:
    """tile-engine trait configs that select the kernels' values: one document per variant (by file name,
    <variant>.json), each key with the values its kernels use, in the field's order. A trait config is a product
    of its keys' values, so it selects those kernels and the other combinations of their values (a superset;
    read back with --trait-config it is a filter that keeps every one of them). wave_mode is the scheduler, with
    tile-engine's suffix _dsb where every kernel of that scheduler has the double LDS buffer."""
    by_variant: dict[str, list[Mapping[str, object]]] = {}
    for c in configs:
        by_variant.setdefault(str(c["variant"]), []).append(c)
    docs: dict[str, dict] = {}
    for variant in (v for v in fields["variant"].values if v in by_variant):
        kernels = by_variant[variant]
        trait: dict[str, dict] = {}
        tile: dict[str, dict] = {}
        for name, field in fields.items():
            if name in NOT_WRITTEN or not field.code or not all(name in k for k in kernels):
                continue  # pads: the C++ ignores them (and CK's JSON has none)
            used = {k[name] for k in kernels}
            values = [v for v in field.values if v in used]
            if name == "scheduler" and "double_smem_buffer" in fields:
                values = [f"{v}_dsb" if all(k["double_smem_buffer"] for k in kernels if k["scheduler"] == v) else v
                          for v in values]
                (trait if name not in TILE_KEYS else tile)["wave_mode"] = {"values": values}
                continue
            (tile if name in TILE_KEYS else trait)[WRITTEN_KEYS.get(name, name)] = {"values": values}
        docs[f"{variant}.json"] = {"variant": variant, "trait_config": trait, "tile_config": tile}
    return docs
