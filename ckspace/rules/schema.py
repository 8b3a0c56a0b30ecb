"""Declarative schemas for ckspace's TOML data files, and the one bounded way to read such a file.

Every data file (constraints/, objectives/, templates/revisions.toml, or a user's own copy of any of them) is user
input. `load_toml` reads it only when it is a regular file of at most MAX_FILE_BYTES, decodes it as UTF-8, parses
it, and checks it against its schema before a loader reads a single value, so a loader may index and iterate
without guarding each access. Whatever is wrong becomes one DataError line that names the file, the key path and
what was expected against what was found:

    fields.toml: field.tile_m.range: expected [low, high, step] (3 integers), found a string ('16..256')

A schema is a tree of spec objects: `Table` (known keys, required keys, and a spec for any other key or none),
`ListOf` (items and length bounds), `Int` and `Float` (bounds), `Str` (choices or a pattern), `Bool`, `OneOf`,
`Switch` (a table whose shape depends on one of its keys), `Tree` (free-form nested data) and `Checked` (a spec plus
one predicate). Each spec knows how to describe itself, so error lines are generated, never written by hand.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    # mypy checks as Python 3.10 (pyproject), where tomli is the parser; it is installed on 3.10 only.
    import tomli as tomllib  # Python 3.10

from ..errors import DataError
from ..lines import display, read_bounded  # noqa: F401  (display: rules modules import it from here)

MAX_FILE_BYTES = 4 * 1024 * 1024  # the largest shipped data file is about 20 KB: anything this big is a mistake
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # CP-SAT's integers
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # CP-SAT parameters (seed, workers) are 32-bit

KeyPath = tuple  # the keys (str) and list indices (int) from the file's root to a value
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SHORT = 40  # characters of a value quoted in an error line


# ---- error lines ------------------------------------------------------------------------------------------------
class SchemaError(Exception):
    """Internal: the first place where a value does not match its spec; `check` turns it into a DataError."""

    def __init__(self, path: KeyPath, problem: str, note: str = ""):
        super().__init__(problem)
        self.path = path
        self.problem = problem
        self.note = note

    def line(self, label: str) -> str:
        where = format_path(self.path)
        note = f"; {self.note}" if self.note else ""
        return f"{label}: {where}: {self.problem}{note}" if where else f"{label}: {self.problem}{note}"


def mismatch(path: KeyPath, expected: str, value: Any) -> SchemaError:
    return SchemaError(path, f"expected {expected}, found {describe(value)}")


def format_path(path: KeyPath) -> str:
    """`field.tile_m.range`, `rule[3].require`, `family."ck-api-2025.11"` (TOML's quoting for keys that need it)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            key = part if _BARE_KEY.fullmatch(part) else json.dumps(part)
            out += f".{key}" if out else key
    return out


def _short(text: str) -> str:
    return text if len(text) <= _SHORT else text[: _SHORT - 3] + "..."


def describe(value: Any) -> str:
    """What a value is, in a few words and on one line: `a string ('16..256')`, `a list of 2 items ([16, 256])`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"an integer ({value})" if value.bit_length() <= 64 else "an integer beyond 64 bits"
    if isinstance(value, float):
        return f"a float ({value!r})"
    if isinstance(value, str):
        return f"a string ({_short(repr(value))})"
    if isinstance(value, list):
        items = "item" if len(value) == 1 else "items"
        return f"a list of {len(value)} {items} ({_short(_brief(value))})"
    if isinstance(value, dict):
        return f"a table ({_short(_brief(value))})" if value else "an empty table"
    return f"a {type(value).__name__} ({_short(repr(str(value)))})"  # TOML dates and times


def _brief(value: Any, depth: int = 0) -> str:
    """repr for lists and tables, with huge integers shortened (str() of one may raise, and says nothing)."""
    if depth > 3:
        return "..."
    if isinstance(value, list):
        return "[" + ", ".join(_brief(v, depth + 1) for v in value[:8]) + (", ...]" if len(value) > 8 else "]")
    if isinstance(value, dict):
        items = list(value.items())[:8]
        return "{" + ", ".join(f"{format_path((k,))} = {_brief(v, depth + 1)}" for k, v in items) + "}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "<integer beyond 64 bits>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


# ---- specs ------------------------------------------------------------------------------------------------------
class Spec:
    """What a value must be. `expected` is the phrase of error lines ("a list of 3 integers")."""

    __slots__ = ()
    what: str  # a hand-written phrase that replaces the generated one ("" for none)

    def expected(self) -> str:
        return self.what or self._expected()

    def plural(self) -> str | None:
        """The phrase for many of these as the items of a list ("integers >= 1"), or None where there is none."""
        return None if self.what else self._plural()

    def _expected(self) -> str:
        raise NotImplementedError

    def _plural(self) -> str | None:
        return None

    def check(self, value: Any, path: KeyPath) -> None:
        raise NotImplementedError


def _bounds(lo: float, hi: float, default_lo: float, default_hi: float, fmt: Callable[[float], str]) -> str:
    parts = []
    if lo != default_lo:
        parts.append(f">= {fmt(lo)}")
    if hi != default_hi:
        parts.append(f"<= {fmt(hi)}")
    return (" " + " and ".join(parts)) if parts else ""


class Anything(Spec):
    """Any value: the schema does not look inside (a file no loader reads)."""

    __slots__ = ("what",)

    def __init__(self, what: str = "anything"):
        self.what = what

    def check(self, value: Any, path: KeyPath) -> None:
        return None


class Int(Spec):
    """An integer (never a boolean) within [lo, hi]."""

    __slots__ = ("lo", "hi", "what")

    def __init__(self, lo: int = INT64_MIN, hi: int = INT64_MAX, what: str = ""):
        self.lo = lo
        self.hi = hi
        self.what = what

    def _expected(self) -> str:
        return "an integer" + _bounds(self.lo, self.hi, INT64_MIN, INT64_MAX, str)

    def _plural(self) -> str:
        return "integers" + _bounds(self.lo, self.hi, INT64_MIN, INT64_MAX, str)

    def check(self, value: Any, path: KeyPath) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or not self.lo <= value <= self.hi:
            raise mismatch(path, self.expected(), value)


class Float(Spec):
    """A finite number (an integer or a float, never a boolean) within [lo, hi]."""

    __slots__ = ("lo", "hi", "what")

    def __init__(self, lo: float = -math.inf, hi: float = math.inf, what: str = ""):
        self.lo = lo
        self.hi = hi
        self.what = what

    def _expected(self) -> str:
        return "a number" + _bounds(self.lo, self.hi, -math.inf, math.inf, lambda v: f"{v:g}")

    def _plural(self) -> str:
        return "numbers" + _bounds(self.lo, self.hi, -math.inf, math.inf, lambda v: f"{v:g}")

    def check(self, value: Any, path: KeyPath) -> None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if isinstance(value, int) and value.bit_length() > 64:
            ok = False  # float() of it would overflow or lose the point of a bound
        if not ok or not math.isfinite(value) or not self.lo <= value <= self.hi:
            raise mismatch(path, self.expected(), value)


class Bool(Spec):
    __slots__ = ("what",)

    def __init__(self, what: str = ""):
        self.what = what

    def _expected(self) -> str:
        return "true or false"

    def _plural(self) -> str:
        return "booleans (true or false)"

    def check(self, value: Any, path: KeyPath) -> None:
        if not isinstance(value, bool):
            raise mismatch(path, self.expected(), value)


class Str(Spec):
    """A string: one of `choices`, or a full match of `pattern` (described by `what`), or non-blank."""

    __slots__ = ("choices", "pattern", "nonblank", "what")

    def __init__(self, choices: tuple[str, ...] = (), pattern: str | None = None, nonblank: bool = False,
                 what: str = ""):
        self.choices = choices
        self.pattern = pattern
        self.nonblank = nonblank
        self.what = what

    def _expected(self) -> str:
        if len(self.choices) == 1:
            return repr(self.choices[0])
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return "a non-blank string" if self.nonblank else "a string"

    def _plural(self) -> str:
        if self.choices:
            return "strings, each one of " + ", ".join(repr(c) for c in self.choices)
        return "non-blank strings" if self.nonblank else "strings"

    def check(self, value: Any, path: KeyPath) -> None:
        if not isinstance(value, str):
            raise mismatch(path, self.expected(), value)
        if self.nonblank and not value.strip():
            raise mismatch(path, self.expected(), value)
        if self.choices and value not in self.choices:
            raise mismatch(path, self.expected(), value)
        if self.pattern is not None and not re.fullmatch(self.pattern, value):
            raise mismatch(path, self.expected(), value)


class ListOf(Spec):
    """A list of `item`s, with `min_len` to `max_len` items, optionally without repeats.

    `note_key`: when an item is a table with this key (a rule's `id`), errors inside it say so, because "rule 'x'"
    finds the entry faster than "rule[41]".
    """

    __slots__ = ("item", "min_len", "max_len", "unique", "what", "note_key", "_plain", "_plain_rows")

    def __init__(self, item: Spec, min_len: int = 0, max_len: int | None = None, unique: bool = False,
                 what: str = "", note_key: str | None = None):
        self.item = item
        self.min_len = min_len
        self.max_len = max_len
        self.unique = unique
        self.what = what
        self.note_key = note_key
        self._plain = _plain_types(item)
        # A list of rows of plain cells (a big table's rows): checked in C-level passes over all of them at once.
        self._plain_rows = ((item._plain, item.min_len, item.max_len)
                            if isinstance(item, ListOf) and item._plain is not None and not item.unique else None)

    def _expected(self) -> str:
        return self._phrase("a list", "a non-empty list")

    def _plural(self) -> str | None:
        return self._phrase("lists", "non-empty lists")

    def _phrase(self, lists: str, non_empty: str) -> str:
        """`a list of 3 integers`, `a non-empty list of strings`, `a list of items, each a tile MxNxK ...`."""
        if self.max_len is not None and self.min_len == self.max_len:
            head = f"{lists} of {self.min_len}"
        elif self.min_len == 1 and self.max_len is None:
            head = f"{non_empty} of"
        elif self.min_len or self.max_len is not None:
            most = "" if self.max_len is None else f" and at most {self.max_len}"
            head = f"{lists} of at least {self.min_len}{most}"
        else:
            head = f"{lists} of"
        items = self.item.plural()
        return f"{head} {items}" if items else f"{head} items, each {self.item.expected()}"

    def check(self, value: Any, path: KeyPath) -> None:
        if not isinstance(value, list):
            raise mismatch(path, self.expected(), value)
        if len(value) < self.min_len or (self.max_len is not None and len(value) > self.max_len):
            raise mismatch(path, self.expected(), value)
        if self._plain is not None and _all_plain(value, self._plain):
            pass  # a row of a big table: every cell a plain int, string or boolean, checked in one pass
        elif self._plain_rows is not None and _all_plain_rows(value, *self._plain_rows):
            pass  # every row of a big table so: the rows are not checked one by one
        else:
            self._check_items(value, path)
        if self.unique:
            seen: set = set()
            for i, item in enumerate(value):
                key = json.dumps(item, sort_keys=True, default=str)
                if key in seen:
                    raise SchemaError((*path, i), f"expected no repeated items, found {describe(item)} a second time")
                seen.add(key)

    def _check_items(self, value: list, path: KeyPath) -> None:
        for i, item in enumerate(value):
            try:
                self.item.check(item, (*path, i))
            except SchemaError as exc:
                name = item.get(self.note_key) if self.note_key and isinstance(item, dict) else None
                if isinstance(name, str) and not exc.note:
                    exc.note = f"{self.note_key} {_short(repr(name))}"
                raise


def _plain_types(spec: Spec) -> frozenset[type] | None:
    """The exact Python types that satisfy `spec` whatever their value, when that is all it asks: an Int of the
    default (64-bit) bounds, a Str with no choices, pattern or blank check, a Bool, or a OneOf of those. None for any
    other spec (its values are checked one by one)."""
    options = spec.options if isinstance(spec, OneOf) else (spec,)
    out: set[type] = set()
    for o in options:
        if type(o) is Int and o.lo == INT64_MIN and o.hi == INT64_MAX:
            out.add(int)
        elif type(o) is Str and not (o.choices or o.pattern is not None or o.nonblank):
            out.add(str)
        elif type(o) is Bool:
            out.add(bool)
        else:
            return None
    return frozenset(out)


def _all_plain(value: list, types: frozenset[type]) -> bool:
    if not set(map(type, value)) <= types:
        return False
    if int not in types:
        return True
    ints = [v for v in value if type(v) is int]
    return not ints or (min(ints) >= INT64_MIN and max(ints) <= INT64_MAX)


def _all_plain_rows(rows: list, types: frozenset[type], min_len: int, max_len: int | None) -> bool:
    """Whether every row is a list of min_len..max_len plain cells of `types` (what each row's own check accepts);
    False leaves the rows to their own checks, which name the first one that fails."""
    if not rows:
        return True
    if set(map(type, rows)) != {list}:
        return False
    lengths = set(map(len, rows))
    if min(lengths) < min_len or (max_len is not None and max(lengths) > max_len):
        return False
    cells = list(itertools.chain.from_iterable(rows))
    return _all_plain(cells, types)


TableCheck = Callable[[Mapping[str, Any], KeyPath], None]


class Table(Spec):
    """A table with `keys` (each with its spec), of which `required` must be present.

    `extra` is the spec of every other key's value (a free-form map: tiles, arch facts), and `key` the spec of
    such a key's name; without `extra`, any other key is an error. `checks` run on the whole table once every
    value has matched, for rules that span keys (rows as wide as the columns, names that refer to other keys).
    """

    __slots__ = ("keys", "required", "extra", "key", "checks", "what")

    def __init__(self, keys: Mapping[str, Spec] | None = None, required: tuple[str, ...] = (),
                 extra: Spec | None = None, key: Str | None = None, checks: tuple[TableCheck, ...] = (),
                 what: str = ""):
        self.keys: Mapping[str, Spec] = keys or {}
        self.required = required
        self.extra = extra
        self.key = key
        self.checks = checks
        self.what = what

    def _expected(self) -> str:
        return "a table"

    def _plural(self) -> str:
        return "tables"

    def check(self, value: Any, path: KeyPath) -> None:
        if not isinstance(value, dict):
            raise mismatch(path, self.expected(), value)
        for k, v in value.items():
            spec = self.keys.get(k)
            if spec is None:
                if self.extra is None:
                    known = ", ".join(sorted(self.keys)) or "none"
                    raise SchemaError((*path, k), f"unknown key; expected one of: {known}")
                if self.key is not None:
                    try:
                        self.key.check(k, (*path, k))
                    except SchemaError:
                        raise SchemaError((*path, k), f"expected a key that is {self.key.expected()}, found "
                                                      f"{_short(repr(k))}") from None
                spec = self.extra
            spec.check(v, (*path, k))
        for k in self.required:
            if k not in value:
                spec = self.keys.get(k) or self.extra
                expected = spec.expected() if spec is not None else "a value"
                raise SchemaError((*path, k), f"missing; expected {expected}")
        for rule in self.checks:
            rule(value, path)


class Switch(Spec):
    """A table whose shape depends on the value of one key (a field's `type`): `cases` maps it to the table spec."""

    __slots__ = ("on", "cases", "what")

    def __init__(self, on: str, cases: Mapping[str, Table], what: str = ""):
        self.on = on
        self.cases = cases
        self.what = what

    def _expected(self) -> str:
        return f"a table with {self.on} = " + " or ".join(repr(c) for c in self.cases)

    def check(self, value: Any, path: KeyPath) -> None:
        if not isinstance(value, dict):
            raise mismatch(path, self.expected(), value)
        choice = Str(choices=tuple(self.cases))
        if self.on not in value:
            raise SchemaError((*path, self.on), f"missing; expected {choice.expected()}")
        choice.check(value[self.on], (*path, self.on))
        self.cases[value[self.on]].check(value, path)


class OneOf(Spec):
    """Any one of `options`. When exactly one option has the value's TOML type, its own error is the one reported."""

    __slots__ = ("options", "what")

    def __init__(self, options: tuple[Spec, ...], what: str = ""):
        self.options = options
        self.what = what

    def _expected(self) -> str:
        return " or ".join(o.expected() for o in self.options)

    def check(self, value: Any, path: KeyPath) -> None:
        # The option of the value's own type first, without raising: a table of 100,000 cells checks in a pass
        # (which option fails, and how, is only worked out for a value that fails).
        kind = _toml_type_of(value)
        for option in self.options:
            if _toml_type(option) == kind:
                try:
                    option.check(value, path)
                    return
                except SchemaError:
                    break
        errors = []
        for option in self.options:
            try:
                option.check(value, path)
                return
            except SchemaError as exc:
                errors.append((option, exc))
        same_type = [exc for option, exc in errors if _toml_type(option) == _toml_type_of(value)]
        if len(same_type) == 1:
            raise same_type[0]
        raise mismatch(path, self.expected(), value)


def _toml_type(spec: Spec) -> str:
    return {Int: "int", Float: "number", Bool: "bool", Str: "str", ListOf: "list", Table: "table", Switch: "table"}.get(
        type(spec), "?")


def _toml_type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    return {str: "str", float: "number", list: "list", dict: "table"}.get(type(value), "?")


class Tree(Spec):
    """Free-form data: a `leaf`, or a list or table (any keys) of such, at most `max_depth` levels deep."""

    __slots__ = ("leaf", "max_depth", "what")

    def __init__(self, leaf: Spec, max_depth: int = 8, what: str = ""):
        self.leaf = leaf
        self.max_depth = max_depth
        self.what = what

    def _expected(self) -> str:
        return f"{self.leaf.expected()}, or a list or table of such values"

    def check(self, value: Any, path: KeyPath, depth: int = 0) -> None:
        if isinstance(value, (list, dict)):
            if depth >= self.max_depth:
                raise SchemaError(path, f"expected at most {self.max_depth} levels of nested lists and tables")
            items = enumerate(value) if isinstance(value, list) else value.items()
            for k, v in items:
                self.check(v, (*path, k), depth + 1)
            return
        try:
            self.leaf.check(value, path)
        except SchemaError:
            raise mismatch(path, self.expected(), value) from None


class Checked(Spec):
    """`spec`, and then `test(value)` must hold; `what` says both (it is the expected phrase of either failure)."""

    __slots__ = ("spec", "test", "what")

    def __init__(self, spec: Spec, test: Callable[[Any], bool], what: str = ""):
        self.spec = spec
        self.test = test
        self.what = what

    def _expected(self) -> str:
        return self.spec.expected()

    def check(self, value: Any, path: KeyPath) -> None:
        try:
            self.spec.check(value, path)
        except SchemaError as exc:
            if exc.path != path:
                raise  # an inner item is wrong: its own line is more precise
            raise mismatch(path, self.expected(), value) from None
        if not self.test(value):
            raise mismatch(path, self.expected(), value)


# ---- reading ------------------------------------------------------------------------------------------------------
def read_bytes(path: Path, label: str) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES (a FIFO or device would block or never end), read with
    that bound (ckspace.lines.read_bounded: the file may grow after its size is looked at)."""
    return read_bounded(path, MAX_FILE_BYTES, label, regular_only=True, error=DataError)


def parse_toml(blob: bytes, label: str) -> dict[str, Any]:
    """TOML from UTF-8 bytes; a decoding or syntax error is one line with the offset or the line and column."""
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = blob.count(b"\n", 0, exc.start) + 1
        where = f"byte 0x{blob[exc.start]:02x} at line {line}, offset {exc.start}"
        raise DataError(f"{label}: not UTF-8 text ({where})") from None
    fast = _with_rows_read(text)
    if fast is not None:
        return fast
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{label}: invalid TOML: {' '.join(str(exc).split())}") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise DataError(f"{label}: invalid TOML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise DataError(f"{label}: invalid TOML: arrays or tables nested too deeply") from None


# `rows = [` on a line of its own, then one row per line, then `]`: how the generated tables write their rows (CK's
# config table has 3,157 of them, 500 KB, which tomllib takes 0.17 s to read).
_ROWS_OPEN = re.compile(r"^[ \t]*rows[ \t]*=[ \t]*\[[ \t]*$")
_ROWS_CLOSE = re.compile(r"^[ \t]*\][ \t]*$")
_ROW_LINE = re.compile(r"^[ \t]*(\[.*\])[ \t]*(,?)[ \t]*$")
_MARK = "\\u0000ckspace-rows-{}"  # a TOML string no data holds: NUL is not text
FAST_ROWS_MIN = 65536  # smaller files: tomllib is fast enough
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _with_rows_read(text: str) -> dict[str, Any] | None:
    """The document, with its row arrays read as JSON (each row line is a JSON array in the tables' plain form) and
    the rest by tomllib; None where any row line is not in that plain form (tomllib then reads the whole file, and
    reports any error). Only what JSON and TOML read alike is taken: integers, plain floats, true/false and
    double-quoted strings without the escape TOML lacks; a row with null, NaN or Infinity is not."""
    lines = text.split("\n")
    if len(text) < FAST_ROWS_MIN or not any(_ROWS_OPEN.match(line) for line in lines):
        return None  # small files: tomllib is fast enough, and one reader is simpler to trust
    out_lines: list[str] = []
    blocks: list[list[Any]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not _ROWS_OPEN.match(line):
            out_lines.append(line)
            i += 1
            continue
        texts: list[str] = []
        comma = True
        i += 1
        while i < len(lines) and not _ROWS_CLOSE.match(lines[i]):
            if lines[i].strip():
                match = _ROW_LINE.match(lines[i])
                if match is None or not comma:
                    return None  # not a row line, or a row after one without its comma (TOML's error)
                texts.append(match.group(1))
                comma = bool(match.group(2))
            i += 1
        if i == len(lines):
            return None  # an unclosed array: tomllib's error
        rows = _rows_at_once(texts)
        if rows is None:
            rows = _rows_one_by_one(texts)
            if rows is None:
                return None
        out_lines.append(line.replace("[", "[\"" + _MARK.format(len(blocks)) + "\"]", 1))
        blocks.append(rows)
        i += 1
    try:
        doc = tomllib.loads("\n".join(out_lines))
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    found = _put_rows(doc, blocks)
    return doc if found == len(blocks) else None


def _not_toml(name: str) -> Any:
    raise ValueError(name)


_SURROGATE = re.compile("[\ud800-\udfff]")
_PLAIN_CELLS = frozenset((int, bool, str))


def _rows_at_once(texts: list[str]) -> list[Any] | None:
    """The rows of a block's lines as one JSON array (one C-level parse), where that reads each line as exactly
    one row: no backslash anywhere (so no escape, and every string ends where its quotes pair up on its line),
    an even number of quotes on each line, rows of plain cells only (no line can open a list the next one closes)
    and one row per line. None: read them one by one."""
    joined = ",".join(texts)
    if "\\" in joined or "\x7f" in joined or any(t.count('"') % 2 for t in texts):
        return None
    try:
        rows = json.loads(f"[{joined}]", parse_constant=_not_toml)
    except ValueError:
        return None
    if len(rows) != len(texts) or set(map(type, rows)) != {list} \
            or not set(map(type, itertools.chain.from_iterable(rows))) <= _PLAIN_CELLS:
        return None
    return rows


def _rows_one_by_one(texts: list[str]) -> list[Any] | None:
    """Each line's row read on its own; None where a line is not in the plain form TOML and JSON read alike."""
    rows = []
    for text in texts:
        if "\\/" in text or "\x7f" in text or _SURROGATE_ESCAPE.search(text):
            return None  # an escape TOML lacks (\/, a surrogate \ud83d), or DEL, which TOML wants escaped
        try:
            row = json.loads(text, parse_constant=_not_toml)
        except ValueError:
            return None
        if not _toml_like(row):
            return None
        rows.append(row)
    return rows


def _toml_like(value: Any) -> bool:
    if isinstance(value, list):
        if set(map(type, value)) <= _PLAIN_CELLS:  # a row of a table: one pass over its strings
            return not any(_SURROGATE.search(v) for v in value if type(v) is str)
        return all(_toml_like(v) for v in value)
    if isinstance(value, str):  # a lone surrogate (JSON reads "\\ud800") is no Unicode scalar: TOML refuses it
        return _SURROGATE.search(value) is None
    return isinstance(value, (bool, int)) or (isinstance(value, float) and math.isfinite(value))


def _put_rows(node: Any, blocks: list[list[Any]]) -> int:
    """Put each block's rows where its mark stands; the number of marks replaced."""
    done = 0
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str) \
                    and value[0].startswith("\0ckspace-rows-"):
                node[key] = blocks[int(value[0].rsplit("-", 1)[1])]
                done += 1
            else:
                done += _put_rows(value, blocks)
    elif isinstance(node, list):
        for item in node:
            done += _put_rows(item, blocks)
    return done


def check(spec: Spec, value: Any, label: str) -> None:
    """Raise one DataError line when `value` does not match `spec`."""
    try:
        spec.check(value, ())
    except SchemaError as exc:
        raise DataError(exc.line(label)) from None
    except RecursionError:
        raise DataError(f"{label}: arrays or tables nested too deeply") from None


def load_toml(path: Path, label: str, spec: Spec) -> dict[str, Any]:
    """Read, parse and check one data file. `label` names it in error lines (`fields.toml`, `objective my.toml`)."""
    raw = parse_toml(read_bytes(path, label), label)
    check(spec, raw, label)
    return raw


def exactly_one_of(*keys: str) -> TableCheck:
    """A table check: the table holds exactly one of `keys` (a field's `values` or `range`)."""

    wanted = " or ".join(repr(k) for k in keys)

    def rule(table: Mapping[str, Any], path: KeyPath) -> None:
        present = [k for k in keys if k in table]
        if not present:
            raise SchemaError((*path, keys[0]), f"missing; expected {wanted}")
        if len(present) > 1:
            raise SchemaError((*path, present[1]), f"expected only one of {wanted}, found {' and '.join(present)}")

    return rule


def rows_match(columns_key: str = "columns", rows_key: str = "rows") -> TableCheck:
    """A table check: every row has one value per column."""

    def rule(table: Mapping[str, Any], path: KeyPath) -> None:
        width = len(table[columns_key])
        for i, row in enumerate(table[rows_key]):
            if len(row) != width:
                columns = format_path((*path, columns_key))
                raise mismatch((*path, rows_key, i), f"a row of {width} values (one per item of {columns})", row)

    return rule


def names_defined(defined_at: Sequence[str], used_at: Sequence[Sequence[str]]) -> TableCheck:
    """A table check: every name in the lists at `used_at` (paths, `*` for any key) is a key of the table at
    `defined_at` (wave strategies named in the tile lists must exist)."""

    def rule(table: Mapping[str, Any], path: KeyPath) -> None:
        defined: Any = table
        for k in defined_at:
            defined = defined.get(k, {})
        for pattern in used_at:
            for where, names in _walk(table, tuple(pattern), ()):
                for i, name in enumerate(names):
                    if name not in defined:
                        expected = f"a name defined in [{format_path(tuple(defined_at))}]"
                        raise mismatch((*path, *where, i), expected, name)

    return rule


def _walk(value: Any, pattern: tuple[str, ...], at: KeyPath):
    """(path, value) pairs at `pattern` below `value`; `*` matches every key of a table, or every item of a list."""
    if not pattern:
        yield at, value
        return
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        items = enumerate(value) if isinstance(value, list) else (value.items() if isinstance(value, dict) else ())
        for k, v in items:
            yield from _walk(v, rest, (*at, k))
    elif isinstance(value, dict) and head in value:
        yield from _walk(value[head], rest, (*at, head))
