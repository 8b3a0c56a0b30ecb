"""Typed reads of a kernel config.

A kernel travels as its fields by name (`Config`, a mapping: the fields are data, constraints/fields.toml, not a
class), as a name parses and as the model lists it: an int field holds an int, a bool field a bool, the rest a str.
Where code needs one field as a number or a text, these read it with its type checked, so the reader needs no cast
and mypy no `type: ignore`; a value of another type is a TypeError naming the field (a config not from the model).
"""

from __future__ import annotations

from typing import Mapping

Config = Mapping[str, object]


def number(config: Config, name: str) -> int:
    """An int field's value (not a bool: True is no tile size)."""
    value = config[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"field {name} holds {value!r}, not a number")
    return value


def numbers(config: Config, *names: str) -> tuple[int, ...]:
    return tuple(number(config, name) for name in names)


def text(config: Config, name: str) -> str:
    """An enum or string field's value."""
    value = config[name]
    if not isinstance(value, str):
        raise TypeError(f"field {name} holds {value!r}, not a text")
    return value


def stratum_of(config: Config) -> tuple[str, int, str]:
    """(variant, ndim, dtype): the problem a kernel serves, and the independent part of the space it lies in."""
    return text(config, "variant"), number(config, "ndim"), text(config, "dtype")
