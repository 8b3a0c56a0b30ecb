"""CK tile-engine's JSON trait configs (seed 002) as a filter.

tile-engine's instance builder takes a JSON allow-list and builds the cartesian product of its values:

    {"variant": "forward",
     "trait_config": {"data_type": {"values": ["bf16"]}, "pipeline": {"values": ["compv3", "compv4"]},
                      "wave_mode": {"values": ["intrawave", "interwave"]}, "ndim_spatial": {"values": [2, 3]}}}

Here the same file is a filter on a kernel set: each key allows its values, the keys are and-ed, and the result is a
`--where` expression, so it composes with --where, --variant and the rest and is checked like them. Keys "mirror
GroupedConvKernelConfig fields" (CK's README): CK's names (data_type, ndim_spatial, wave_mode, warp_m for the waves,
vector_size_a, ...) and ckspace's field names are both accepted. `tile_config` is read like `trait_config`. A key's
value is {"values": [...]}, {"min": a, "max": b[, "step": s]}, a list or one value.

wave_mode's values are a scheduler with tile-engine's optional suffix `_dsb` (double LDS buffer): `intrawave`
allows both buffer modes, `intrawave_dsb` only the double one. The suffix `_si` (store immediate) names a choice
ckspace's model does not have, so it is an error rather than a silently wider filter. Reading is strict: an unknown
key, a value outside a field's domain, or a wrong type is one error line naming the file, the key and the values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ..errors import CkspaceError
from .data import FieldDef

MAX_FILE_BYTES = 1024 * 1024  # a trait config is a few hundred bytes

# CK's spelling -> ckspace's field (warp_m/n/k are CK's names for the waves, as in its JSON instance configs)
KEY_ALIASES = {
    "data_type": "dtype", "datatype": "dtype", "ndim_spatial": "ndim", "wave_mode": "scheduler",
    "warp_m": "wave_m", "warp_n": "wave_n", "warp_k": "wave_k",
    "vector_size_a": "vec_a", "vector_size_b": "vec_b", "vector_size_c": "vec_c",
    "streamk_reduction_strategy": "streamk",
}
VARIANTS = {"forward": "forward", "fwd": "forward", "bwd_data": "bwd_data", "backward_data": "bwd_data",
            "bwd_weight": "bwd_weight", "backward_weight": "bwd_weight", "forward_depthwise": "forward_depthwise"}
SECTIONS = ("trait_config", "tile_config")
TOP_KEYS = ("variant", *SECTIONS)
WAVE_SUFFIXES = {"_dsb": "double_smem_buffer"}


class TraitConfigError(CkspaceError):
    """A trait config that cannot be read: one line naming the file and the key (exit 2)."""

    exit_code = 2


def read(path: str | Path) -> dict[str, Any]:
    """The JSON document of a trait config file ('-' is not accepted: the filter must be re-readable)."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise TraitConfigError(f"{path}: not a trait config (larger than {MAX_FILE_BYTES:,} bytes)")
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise TraitConfigError(f"--trait-config {path}: cannot read it: {reason}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise TraitConfigError(f"{path}: not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise TraitConfigError(f"{path}: a trait config is a JSON object with {', '.join(TOP_KEYS)}")
    return doc


def to_where(doc: Mapping[str, Any], fields: Mapping[str, FieldDef], where: str = "trait config") -> str | None:
    """The filter of one trait config as a --where expression (None when it allows everything)."""
    unknown = [k for k in doc if k not in TOP_KEYS]
    if unknown:
        raise TraitConfigError(f"{where}: unknown key {unknown[0]!r}; a trait config has {', '.join(TOP_KEYS)}")
    terms: list[str] = []
    if "variant" in doc:
        terms.append(_variant_term(doc["variant"], where))
    for section in SECTIONS:
        body = doc.get(section, {})
        if not isinstance(body, dict):
            raise TraitConfigError(f"{where}: {section} is a JSON object of keys and their values")
        for key, spec in body.items():
            terms.append(_key_term(f"{where}: {section}.{key}", key, spec, fields))
    return " and ".join(terms) if terms else None


def strata_of(doc: Mapping[str, Any]) -> dict[str, list[str]]:
    """The --variant/--ndim/--dtype a (checked) trait config pins, so that counts list only its strata."""
    out: dict[str, list[str]] = {}
    if "variant" in doc:
        names = doc["variant"] if isinstance(doc["variant"], list) else [doc["variant"]]
        out["variant"] = list(dict.fromkeys(VARIANTS[v] for v in names))
    for section in SECTIONS:
        for key, spec in doc.get(section, {}).items():
            name = KEY_ALIASES.get(key, key)
            if name in ("ndim", "dtype"):
                out[name] = [str(v) for v in dict.fromkeys(_values(key, spec))]
    return out


def _variant_term(value: object, where: str) -> str:
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(v, str) and v in VARIANTS for v in names):
        raise TraitConfigError(f"{where}: variant {value!r} is not one of {', '.join(VARIANTS)}")
    return _membership("variant", sorted({VARIANTS[v] for v in names}, key=list(VARIANTS.values()).index))


def _key_term(where: str, key: str, spec: object, fields: Mapping[str, FieldDef]) -> str:
    name = KEY_ALIASES.get(key, key)
    field = fields.get(name)
    if field is None or field.derived:
        known = sorted({*KEY_ALIASES, *(f for f, d in fields.items() if not d.derived)})
        raise TraitConfigError(f"{where}: unknown key; the keys are ckspace's fields or CK's names: {', '.join(known)}")
    values = _values(where, spec)
    if key == "wave_mode":
        return _wave_mode_term(where, values, field)
    checked = [_checked(where, field, v) for v in values]
    return _membership(name, list(dict.fromkeys(checked)))


def _values(where: str, spec: object) -> list:
    if isinstance(spec, dict):
        if set(spec) == {"values"} and isinstance(spec["values"], list):
            values = spec["values"]
        elif {"min", "max"} <= set(spec) <= {"min", "max", "step"}:
            lo, hi, step = spec["min"], spec["max"], spec.get("step", 1)
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi, step)) or step < 1 or lo > hi:
                raise TraitConfigError(f"{where}: min, max and step are integers with min <= max and step >= 1")
            values = list(range(lo, hi + 1, step))
        else:
            raise TraitConfigError(f"{where}: give {{\"values\": [...]}} or {{\"min\": a, \"max\": b, \"step\": s}}")
    elif isinstance(spec, list):
        values = spec
    else:
        values = [spec]
    if not values:
        raise TraitConfigError(f"{where}: an empty list of values allows no kernel")
    return values


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
            raise TraitConfigError(f"{where}: {value!r}: the suffix _si (store immediate) is not a choice of "
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
    return json.dumps(value) if isinstance(value, (bool, str, int, float)) or value is None else repr(value)
