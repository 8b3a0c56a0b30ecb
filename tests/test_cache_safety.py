"""The cache serves only what it can vouch for.

For every cache kind a command writes, the cache is filled by one run, then each entry file in turn is replaced by
every corrupt shape (truncated, garbage, valid JSON of another shape with or without a recomputed checksum, an
edited row, a symlink, a FIFO, a directory, ...). The next run must print what `--no-cache` prints, exit 0, warn
once (one line, no traceback), rewrite the entry, and finish in bounded time.

Runs are in process (ckspace.cli.main) for speed; the shapes that could hang or exhaust memory if opened naively
(a FIFO, a symlink to /dev/zero) run in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from ckspace import cache
from ckspace.cli import main
from ckspace.solve.packed import CODES

REPO = Path(__file__).resolve().parents[1]
SMALL = ["--arch", "gfx950", "--variant", "bwd_data", "--ndim", "2", "--dtype", "fp32"]  # 84 kernels

# The commands, and the cache kinds each one writes (one entry per kind).
COMMANDS: dict[str, list[str]] = {
    "enumerate": ["enumerate", *SMALL, "--format", "jsonl"],
    "count": ["enumerate", "--arch", "gfx950", "--variant", "bwd_data", "--count", "--format", "json"],
    "tiny": ["enumerate", "--arch", "gfx950", "--set", "tiny", "--format", "jsonl"],  # 22 kernels on gfx950
    # A run that keeps its answer stores nothing else (cache.keep_only); a table is never kept, so these two store
    # the listing and the count themselves
    "listing": ["enumerate", *SMALL, "--format", "table"],
    "counting": ["enumerate", "--arch", "gfx950", "--variant", "bwd_data", "--count", "--format", "table"],
}
KINDS: dict[str, list[str]] = {"enumerate": ["answer"], "count": ["answer"], "listing": ["enumerate"],
                               "counting": ["count"], "tiny": ["enumerate", "select"]}
FRONT = "answer"  # whole answers (ckspace.cli.answers): read before any other kind, so removed to test those

# Bounds on one run: a hang is a failure, not a stuck test session.
RUN_SECONDS = 180
WARNING = re.compile(r"^ckspace: warning: ignored a corrupt cache entry \((.+)\); recomputed$")
INJECTED = "grouped_conv_fwd_INJECTED"
HUGE_INT = "1" + "0" * 5000  # past Python's 4300-digit int parsing limit


# -- an entry and the ways to spoil it --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str
    digest: str
    raw: bytes

    @property
    def payload_bytes(self) -> bytes:
        return self.raw.partition(b"\n")[2]

    @property
    def payload(self) -> Any:
        return json.loads(self.payload_bytes)


def signed(entry: Entry, payload: bytes, kind: str | None = None, digest: str | None = None) -> bytes:
    """An entry whose header matches `payload`: the checksum recomputed, as a careful editor would."""
    return cache._header(kind or entry.kind, digest or entry.digest, payload) + b"\n" + payload


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def with_huge_int(value: Any, marker: int = 987654321987) -> bytes:
    """`value` as JSON with `marker` written as a 5001-digit integer (json.dumps cannot write one)."""
    return dumps(value).replace(str(marker).encode(), HUGE_INT.encode())


Shape = Callable[[Entry], "bytes | None"]  # the new file content; None: the shape made the path itself


def _put(path: Path, content: bytes | None) -> None:
    if content is not None:
        path.write_bytes(content)


# Shapes of any kind's file: its bytes, its header, its file type.
def _truncated(e: Entry) -> bytes:
    return e.raw[: len(e.raw) // 2]


def _checksum_flipped(e: Entry) -> bytes:
    at = e.raw.index(b'"sha256":"') + len(b'"sha256":"')
    return e.raw[:at] + (b"1" if e.raw[at:at + 1] == b"0" else b"0") + e.raw[at + 1:]


def _directory(e: Entry) -> None:
    e.path.mkdir()
    (e.path / "inside").write_text("x")  # not empty: nothing may remove it


def _symlink_to_valid(e: Entry) -> None:
    target = e.path.with_name(e.path.name + ".target")
    target.write_bytes(e.raw)
    e.path.symlink_to(target)  # even an intact entry behind a symlink is not followed


def _oversize(e: Entry) -> None:
    with e.path.open("wb") as fh:  # sparse: no disk is used, but the size is past the bound
        fh.write(e.raw[:100])
        fh.truncate(cache.MAX_ENTRY_BYTES + 1)


# The list, tried on every entry file (with the edits of each kind below).
CORE_SHAPES: dict[str, Shape] = {
    "empty": lambda e: b"",
    "truncated": _truncated,
    "binary_garbage": lambda e: random.Random(0).randbytes(4096),
    "non_utf8": lambda e: e.raw[:-2] + b"\xff\xfe" + e.raw[-2:],
    "non_utf8_signed": lambda e: signed(e, b'["\xff\xfe\x80"]'),
    "json_list_signed": lambda e: signed(e, b"[]"),
    "json_dict_signed": lambda e: signed(e, b"{}"),
    "json_number_signed": lambda e: signed(e, b"0"),
    "json_null_signed": lambda e: signed(e, b"null"),
    "json_nested_wrong_types_signed": lambda e: signed(e, dumps({"layouts": {}, "rows": "x", "names": 1,
                                                                 "stats": [[{}]]})),
    "huge_int_signed": lambda e: signed(e, HUGE_INT.encode()),
    "directory": _directory,
}
# More of them, tried on the enumerate entry of a small stratum only: each is read by the same code whatever the
# kind (the header, checksum and file checks come before a kind's shape check).
MORE_SHAPES: dict[str, Shape] = {
    "last_byte_dropped": lambda e: e.raw[:-1],
    "header_only": lambda e: e.raw.partition(b"\n")[0] + b"\n",
    "payload_without_header": lambda e: e.payload_bytes,  # as the unchecked format of earlier builds stored it
    "nul_bytes": lambda e: b"\0" * 4096,
    "header_of_another_kind": lambda e: signed(e, e.payload_bytes, kind="other"),
    "header_of_another_key": lambda e: signed(e, e.payload_bytes, digest="0" * 64),
    "header_of_another_version": lambda e: e.raw.replace(b'"v":%d' % cache.FORMAT_VERSION, b'"v":1', 1),
    "checksum_flipped": _checksum_flipped,
    "deep_nesting_signed": lambda e: signed(e, b"[" * 100_000 + b"]" * 100_000),
    "nan_signed": lambda e: signed(e, b"[NaN]"),
    "symlink_to_valid_entry": _symlink_to_valid,
    "symlink_dangling": lambda e: e.path.symlink_to(e.path.with_name("nowhere.json")),
    "oversize_sparse": _oversize,
    "json_list_unsigned": lambda e: b"[]",
}
OTHER_JSON = {"negative": -1, "float": 2.5, "true": True, "string": "text", "list_of_list": [[]],
              "list_of_dict": [{}], "list_of_null": [None, None, None]}
for _name, _value in OTHER_JSON.items():
    MORE_SHAPES[f"json_{_name}_signed"] = lambda e, v=_value: signed(e, dumps(v))
# Subprocess only: opened naively, these hang (a FIFO waits for a writer) or exhaust memory (/dev/zero never ends).
HANG_SHAPES: dict[str, Shape] = {
    "fifo": lambda e: os.mkfifo(e.path),
    "symlink_to_dev_zero": lambda e: e.path.symlink_to("/dev/zero"),
}


# Edits of a kind's payload: (edit, whether the shape check must also catch it with a recomputed checksum, whether it
# is on the list). An edit that keeps the shape (a row dropped from an enumeration) is caught by the checksum
# alone.
Edit = Callable[[Any], bytes]
EditSpec = tuple[Edit, bool, bool]


def _changed(fn: Callable[[Any], None]) -> Edit:
    """An edit made in place on the parsed payload."""
    def edit(payload: Any) -> bytes:
        fn(payload)
        return dumps(payload)
    return edit


def _enumerate_edits() -> dict[str, EditSpec]:
    """Edits of the columns of the entry's one stratum (solve.packed): {"layouts", "strata": [[layout index, kernels,
    [column, ...]]]}, a column a list of values or {"values", "codes"}."""
    def columns(p: dict) -> list:
        return p["strata"][0][2]

    def coded_int(p: dict) -> dict:  # a dictionary-coded column of integers (tile_m, ...)
        return next(c for c in columns(p) if type(c) is dict and type(c["values"][0]) is int
                    and not isinstance(c["values"][0], bool))

    def names(p: dict) -> Any:  # the names' column: a list of every name, or coded where the names are few
        return columns(p)[p["layouts"][p["strata"][0][0]].index("name")]

    def plain(p: dict) -> list:  # the names' values
        column = names(p)
        return column if type(column) is list else column["values"]

    def each_kernel(p: dict, edit_codes: Callable[[str], str], edit_list: Callable[[list], None], dn: int) -> None:
        for c in columns(p):
            if type(c) is dict:
                c["codes"] = edit_codes(c["codes"])
            else:
                edit_list(c)
        p["strata"][0][1] += dn

    def dropped(p: dict) -> None:  # the middle kernel, consistently: only the checksum tells
        mid = p["strata"][0][1] // 2
        each_kernel(p, lambda codes: codes[:mid] + codes[mid + 1:], lambda values: values.pop(mid), -1)

    def injected(p: dict) -> None:  # a copy of the first kernel, named as no kernel is
        each_kernel(p, lambda codes: codes + codes[0], lambda values: values.append(values[0]), +1)
        column = names(p)
        if type(column) is list:
            column[-1] = INJECTED
        else:
            column["values"].append(INJECTED)
            column["codes"] = column["codes"][:-1] + CODES[len(column["values"]) - 1]

    def huge(p: dict) -> bytes:
        coded_int(p)["values"][0] = 987654321987
        return with_huge_int(p)

    def huge_index(p: dict) -> bytes:
        p["strata"][0][0] = 987654321987
        return with_huge_int(p)

    def set_value(value: Any) -> Callable[[dict], None]:
        return lambda p: coded_int(p)["values"].__setitem__(0, value)

    def bumped(p: dict) -> None:
        coded_int(p)["values"][0] += 1

    def set_stratum(i: int, value: Any) -> Callable[[dict], None]:
        return lambda p: p["strata"][0].__setitem__(i, value)

    def first_code(char: str) -> Callable[[dict], None]:
        def edit(p: dict) -> None:
            column = coded_int(p)
            column["codes"] = char + column["codes"][1:]
        return edit

    def past_the_values(p: dict) -> None:
        column = coded_int(p)
        column["codes"] = CODES[len(column["values"])] + column["codes"][1:]

    return {
        "row_dropped": (_changed(dropped), False, True),
        "row_injected": (_changed(injected), False, True),
        "value_edited": (_changed(bumped), False, True),
        "huge_int_value": (huge, False, True),
        "huge_int_index": (huge_index, True, True),
        "value_is_list": (_changed(set_value([1])), True, True),
        "value_is_object": (_changed(set_value({"a": 1})), True, False),
        "name_is_list": (_changed(lambda p: plain(p).__setitem__(0, [INJECTED])), True, False),
        "index_is_string": (_changed(set_stratum(0, "0")), True, False),
        "index_is_bool": (_changed(set_stratum(0, False)), True, False),
        "index_is_float": (_changed(set_stratum(0, 0.0)), True, False),
        "index_out_of_range": (_changed(set_stratum(0, 99)), True, False),
        "index_negative": (_changed(set_stratum(0, -1)), True, False),
        "count_raised": (_changed(lambda p: p["strata"][0].__setitem__(1, p["strata"][0][1] + 1)), True, False),
        "count_zero": (_changed(set_stratum(1, 0)), True, False),
        "count_is_float": (_changed(lambda p: p["strata"][0].__setitem__(1, float(p["strata"][0][1]))), True, False),
        "column_added": (_changed(lambda p: columns(p).append(list(plain(p)))), True, False),
        "column_dropped": (_changed(lambda p: columns(p).pop()), True, False),
        "codes_shortened": (_changed(lambda p: coded_int(p).__setitem__("codes", coded_int(p)["codes"][:-1])), True,
                            False),
        "code_past_the_values": (_changed(past_the_values), True, False),
        "code_not_a_code": (_changed(first_code("\n")), True, False),
        "codes_is_list": (_changed(lambda p: coded_int(p).__setitem__("codes", list(coded_int(p)["codes"]))), True,
                          False),
        "values_empty": (_changed(lambda p: coded_int(p).__setitem__("values", [])), True, False),
        "coded_extra_key": (_changed(lambda p: coded_int(p).__setitem__("extra", 1)), True, False),
        "stratum_is_object": (_changed(lambda p: p["strata"].__setitem__(0, {"name": INJECTED})), True, False),
        "stratum_empty": (_changed(lambda p: p["strata"].__setitem__(0, [])), True, False),
        "column_renamed": (_changed(lambda p: p["layouts"][0].__setitem__(0, "tile_q")), True, False),
        "column_duplicated": (_changed(lambda p: p["layouts"][0].__setitem__(1, p["layouts"][0][0])), True, False),
        "column_not_a_string": (_changed(lambda p: p["layouts"][0].__setitem__(0, 7)), True, False),
        "layouts_missing": (_changed(lambda p: p.pop("layouts")), True, False),
        "extra_key": (_changed(lambda p: p.__setitem__("extra", 1)), True, False),
    }


def _count_edits() -> dict[str, EditSpec]:
    def huge(p: list) -> bytes:
        p[0][3] = 987654321987
        return with_huge_int(p)

    def set_field(i: int, value: Any) -> Callable[[list], None]:
        return lambda p: p[0].__setitem__(i, value)

    return {
        "row_dropped": (_changed(lambda p: p.pop()), True, True),
        "row_injected": (_changed(lambda p: p.append(["forward", 2, "fp16", 1])), True, True),
        "rows_swapped": (_changed(lambda p: p.reverse()), True, False),
        "value_edited": (_changed(lambda p: p[0].__setitem__(3, p[0][3] + 1)), False, True),
        "huge_int_count": (huge, True, True),
        "count_negative": (_changed(set_field(3, -1)), True, False),
        "count_is_string": (_changed(set_field(3, "84")), True, True),
        "count_is_bool": (_changed(set_field(3, True)), True, False),
        "count_is_float": (_changed(set_field(3, 84.0)), True, False),
        "ndim_is_string": (_changed(set_field(1, "2")), True, False),
        "ndim_is_float": (_changed(set_field(1, 2.0)), True, False),
        "variant_renamed": (_changed(set_field(0, "forward")), True, False),
        "row_widened": (_changed(lambda p: p[0].append(0)), True, False),
        "row_is_object": (_changed(lambda p: p.__setitem__(0, {"count": 1})), True, False),
    }


def _select_edits() -> dict[str, EditSpec]:
    def injected(p: dict) -> None:  # a name that is no kernel, with the size kept consistent
        p["names"] = sorted([*p["names"], INJECTED])
        p["stats"]["size"] += 1

    def huge(p: dict) -> bytes:
        p["stats"]["size"] = 987654321987
        return with_huge_int(p)

    return {
        "name_dropped": (_changed(lambda p: p["names"].pop()), True, True),
        "name_injected": (_changed(injected), True, True),
        "name_edited": (_changed(lambda p: p["names"].__setitem__(0, p["names"][0] + "_x")), True, False),
        "names_unsorted": (_changed(lambda p: p["names"].reverse()), True, False),
        "name_duplicated": (_changed(lambda p: p["names"].insert(0, p["names"][0])), True, False),
        "name_is_int": (_changed(lambda p: p["names"].__setitem__(0, 5)), True, True),
        "names_is_string": (_changed(lambda p: p.__setitem__("names", "x")), True, False),
        "size_edited": (_changed(lambda p: p["stats"].__setitem__("size", p["stats"]["size"] + 1)), True, False),
        "huge_int_size": (huge, True, True),
        "stats_is_list": (_changed(lambda p: p.__setitem__("stats", [])), True, False),
        "stable_is_string": (_changed(lambda p: p["stats"].__setitem__("stable", "x")), True, False),
        "stat_is_object": (_changed(lambda p: p["stats"].__setitem__("gap", {"a": 1})), True, False),
        "stats_missing": (_changed(lambda p: p.pop("stats")), True, False),
        "value_edited": (_changed(lambda p: p["stats"].__setitem__("status", "edited")), False, True),
    }


def _answer_edits() -> dict[str, EditSpec]:
    """A kept answer is text: an edit that keeps it text is caught by the checksum alone, any other by the check."""
    return {
        "line_dropped": (lambda p: dumps(p.split("\n", 1)[-1]), False, True),
        "line_injected": (lambda p: dumps(INJECTED + "\n" + p), False, True),
        "text_is_list": (lambda p: dumps([p]), True, True),
        "text_is_number": (lambda p: dumps(84), True, False),
        "text_is_object": (lambda p: dumps({"out": p}), True, False),
    }


EDITS: dict[str, dict[str, EditSpec]] = {
    "enumerate": _enumerate_edits(), "count": _count_edits(), "select": _select_edits(), "answer": _answer_edits(),
}


def edit_shapes(kind: str, core_only: bool = False) -> dict[str, Shape]:
    """Each edit with the stale checksum, and, where the shape check must catch it too, with a recomputed one."""
    out: dict[str, Shape] = {}
    for name, (edit, check_catches, core) in EDITS[kind].items():
        if core_only and not core:
            continue
        out[name] = lambda e, f=edit: e.raw.partition(b"\n")[0] + b"\n" + f(e.payload)
        if check_catches:
            out[f"{name}_signed"] = lambda e, f=edit: signed(e, f(e.payload))
    return out


ALL_SHAPES = {kind: {**CORE_SHAPES, **MORE_SHAPES, **edit_shapes(kind)} for kind in EDITS}

# Which shapes each entry file gets in a run of its command. Every shape is tried on the enumerate entry of a small
# stratum; the count entry gets the list and all its kind's edits. A run that has to recompute the tiny set
# pays for a selection (or, for its universe, the enumeration of a whole arch) each time, so those two files get one
# shape per stage of the reader (header, checksum, decoding, shape check, file type) and the edits of their
# kind; the select kind's shape check meets all its edits in test_the_select_reader_rejects_every_edit.
PLAN: dict[tuple[str, str], list[str]] = {
    ("listing", "enumerate"): list(ALL_SHAPES["enumerate"]),
    ("enumerate", "answer"): [*CORE_SHAPES, *edit_shapes("answer")],
    ("count", "answer"): ["truncated", "json_list_signed", "directory", *edit_shapes("answer", core_only=True)],
    ("counting", "count"): [*CORE_SHAPES, *edit_shapes("count")],
    ("tiny", "select"): ["truncated", "binary_garbage", "non_utf8_signed", "json_list_signed", "directory",
                         *edit_shapes("select", core_only=True)],
    ("tiny", "enumerate"): ["truncated", "row_dropped", "value_is_list_signed", "directory"],
}
HANG_PLAN: dict[tuple[str, str], list[str]] = {
    ("listing", "enumerate"): list(HANG_SHAPES), ("counting", "count"): list(HANG_SHAPES),
    ("enumerate", "answer"): list(HANG_SHAPES),
    ("tiny", "select"): list(HANG_SHAPES), ("tiny", "enumerate"): ["symlink_to_dev_zero"],
}
assert sorted({kind for _, kind in PLAN}) == sorted(EDITS) and all(
    (command, kind) in PLAN for command, kinds in KINDS.items() for kind in kinds)


# -- running the CLI --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


class Overran(BaseException):
    """Raised by the alarm; a BaseException so that the CLI's own error handling cannot swallow it."""


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def expire(signum, frame):
        raise Overran(f"the run took over {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_in_process(argv: list[str], cache_dir: Path, capsys, monkeypatch) -> Result:
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(cache, "_warned_corrupt", False)  # each run stands for a process of its own
    capsys.readouterr()
    with time_limit(RUN_SECONDS):
        code = main(argv)
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def run_subprocess(argv: list[str], cache_dir: Path) -> Result:
    env = {**os.environ, "CKSPACE_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "ckspace", *argv], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=RUN_SECONDS)
    return Result(proc.returncode, proc.stdout, proc.stderr)


# -- a filled cache per command, made once per test process -----------------------------------------------------------


@dataclass(frozen=True)
class Filled:
    folder: Path  # the cache dir after one run: copied, never changed
    expected: str  # what --no-cache prints
    entries: dict[str, Entry]  # kind -> the entry the run wrote


_FILLED: dict[str, Filled] = {}


@pytest.fixture
def filled(tmp_path_factory, capsys, monkeypatch) -> Callable[[str], Filled]:
    def get(command: str) -> Filled:
        if command not in _FILLED:
            folder = tmp_path_factory.mktemp(f"filled-{command}")
            argv = COMMANDS[command]
            reference = run_in_process([*argv, "--no-cache"], folder / "unused", capsys, monkeypatch)
            first = run_in_process(argv, folder, capsys, monkeypatch)
            warm = run_in_process(argv, folder, capsys, monkeypatch)  # what was written passes its reader's check
            assert reference.code == first.code == warm.code == 0 and reference.err == first.err == warm.err == ""
            assert first.out == warm.out == reference.out
            assert not (folder / "unused").exists()
            entries = {}
            # (the digests of the engine's and the data's files, cache.remembered_digest, are tested on their own)
            for kind_dir in sorted(p for p in folder.iterdir() if p.name != cache.DIGESTS_KIND):
                files = list(kind_dir.iterdir())
                assert len(files) == 1, files
                entries[kind_dir.name] = Entry(files[0], kind_dir.name, files[0].stem, files[0].read_bytes())
            assert sorted(entries) == sorted(KINDS[command]), "a command writes a cache kind this test does not cover"
            for e in entries.values():
                assert signed(e, e.payload_bytes) == e.raw  # the test signs as the cache does
            _FILLED[command] = Filled(folder, reference.out, entries)
        return _FILLED[command]

    return get


def copy_of(filled: Filled, tmp_path: Path, kind: str | None = None) -> Path:
    """A copy of a filled cache in which an entry of `kind` is read: without the kept answer that would be served
    before it (unless the answer is what is tested)."""
    folder = tmp_path / "cache"
    shutil.copytree(filled.folder, folder)
    if kind is not None and kind != FRONT:
        shutil.rmtree(folder / FRONT, ignore_errors=True)
    return folder


def assert_recovered(result: Result, expected: str, entry_path: Path) -> None:
    """Same output as --no-cache, exit 0, one warning line naming the entry, no traceback."""
    assert result.code == 0, result.err
    assert "Traceback" not in result.err
    assert result.out == expected
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    match = WARNING.match(lines[0])
    assert match and match.group(1) == str(entry_path), lines[0]


def assert_rewritten(path: Path, kind: str, digest: str) -> None:
    """The entry is a regular file again and reads back intact; the atomic write left no temp file behind."""
    assert path.is_file() and not path.is_symlink()
    assert cache.load(kind, digest, lambda payload: True) is not None
    assert not list(path.parent.glob(".tmp-*"))


CASES = [(command, kind, shape) for (command, kind), shapes in PLAN.items() for shape in shapes]


@pytest.mark.slow
@pytest.mark.parametrize("command,kind,shape", CASES, ids=[f"{c}-{k}-{s}" for c, k, s in CASES])
def test_a_corrupt_entry_is_recomputed(command: str, kind: str, shape: str, filled, tmp_path: Path, capsys,
                                       monkeypatch) -> None:
    base = filled(command)
    folder = copy_of(base, tmp_path, kind)
    entry = base.entries[kind]
    path = folder / kind / entry.path.name
    path.unlink()
    _put(path, ALL_SHAPES[kind][shape](Entry(path, kind, entry.digest, entry.raw)))

    result = run_in_process(COMMANDS[command], folder, capsys, monkeypatch)

    assert_recovered(result, base.expected, path)
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(folder))
    if shape == "directory":
        assert (path / "inside").is_file()  # left alone: the rewrite is best effort
    else:
        assert_rewritten(path, kind, entry.digest)


HANG_CASES = [(command, kind, shape) for (command, kind), shapes in HANG_PLAN.items() for shape in shapes]


@pytest.mark.parametrize("command,kind,shape", HANG_CASES, ids=[f"{c}-{k}-{s}" for c, k, s in HANG_CASES])
def test_an_entry_that_could_hang_is_never_read(command: str, kind: str, shape: str, filled, tmp_path: Path) -> None:
    base = filled(command)
    folder = copy_of(base, tmp_path, kind)
    entry = base.entries[kind]
    path = folder / kind / entry.path.name
    path.unlink()
    HANG_SHAPES[shape](Entry(path, kind, entry.digest, entry.raw))

    result = run_subprocess(COMMANDS[command], folder)  # subprocess.TimeoutExpired fails the test

    assert_recovered(result, base.expected, path)
    assert path.is_file() and not path.is_symlink()


def test_two_corrupt_entries_give_one_warning(filled, tmp_path: Path, capsys, monkeypatch) -> None:
    base = filled("tiny")
    folder = copy_of(base, tmp_path)
    for kind, entry in base.entries.items():
        (folder / kind / entry.path.name).write_bytes(_truncated(entry))

    result = run_in_process(COMMANDS["tiny"], folder, capsys, monkeypatch)

    assert result.code == 0 and result.out == base.expected
    assert len(result.err.splitlines()) == 1 and WARNING.match(result.err.strip()), result.err


def test_a_corrupt_selection_is_not_a_set_membership(filled, tmp_path: Path, capsys, monkeypatch) -> None:
    """explain reads set membership straight from the select cache (cached_names): a corrupt entry reads as not
    selected, never as a crash or as a list of names it made up."""
    from ckspace.explain.explainer import Explainer
    from ckspace.select.sets import selected_names

    base = filled("tiny")
    folder = copy_of(base, tmp_path)
    entry = base.entries["select"]
    payload = entry.payload
    payload["names"].append(7)
    (folder / "select" / entry.path.name).write_bytes(signed(entry, dumps(payload)))
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "_warned_corrupt", False)
    ex = Explainer("gfx950")
    capsys.readouterr()

    assert selected_names(ex.data, "gfx950", ex.default_families, "tiny") is None

    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and WARNING.match(err.strip()), err
    assert not (folder / "select" / entry.path.name).exists()  # removed, so the next run does not warn again


@pytest.mark.parametrize("shape", list(edit_shapes("select")))
def test_the_select_reader_rejects_every_edit(shape: str, filled, tmp_path: Path, capsys, monkeypatch) -> None:
    """select()'s read of its entry (the check select() passes, the universe of the set given) refuses each edit."""
    from ckspace.select.selection import _is_selection

    base = filled("tiny")
    folder = copy_of(base, tmp_path)
    entry = base.entries["select"]
    path = folder / "select" / entry.path.name
    path.write_bytes(edit_shapes("select")[shape](entry))
    universe = _names_of(base.entries["enumerate"].payload)
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "_warned_corrupt", False)
    capsys.readouterr()

    assert cache.load("select", entry.digest, lambda payload: _is_selection(payload, universe)) is None

    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and WARNING.match(err.strip()), err


def _names_of(payload: dict) -> set[str]:
    """The kernel names of an enumerate entry's payload."""
    from ckspace.solve import packed

    return {values[keys.index("name")] for keys, values in packed.rows(payload)}


def test_the_reader_accepts_every_result_the_writer_stores(tmp_path: Path, monkeypatch) -> None:
    """The shape checks are exact for what ckspace writes: a whole arch, depthwise and GEMM layouts mixed, and an
    empty result; each entry holds exactly the kernels the listing gave."""
    from ckspace.solve import packed
    from ckspace.solve.kernels import KernelSpace

    for i, where in enumerate((None, "tile_m == 16 and tile_n == 256 and tile_k == 256")):
        monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path / str(i)))
        space = KernelSpace(arch="gfx942")
        listed = list(space.enumerate(where=where))
        (entry,) = (tmp_path / str(i) / "enumerate").iterdir()
        payload = json.loads(entry.read_bytes().partition(b"\n")[2])
        assert packed.is_packed(payload, space._columns(space.strata()))
        stored = [dict(zip(keys, values)) for keys, values in packed.rows(payload)]
        assert stored == listed  # == also compares True with 1: the types too
        assert [[type(v) for v in c.values()] for c in stored] == [[type(v) for v in c.values()] for c in listed]
        assert len(listed) == (0 if where else 14_048) and len(payload["layouts"]) == (0 if where else 2)
        # by column: the values of every field coded one character a kernel; the names too where they are few
        for index, n, columns in payload["strata"]:
            keys = payload["layouts"][index]
            assert all(type(c) is dict for k, c in zip(keys, columns) if k != "name")
            assert (type(columns[keys.index("name")]) is dict) == (n <= len(CODES))


def test_the_data_is_loaded_once_until_a_file_changes(tmp_path: Path) -> None:
    """rules.data.load serves the DataSet it loaded while the files' bytes are the same, and reads an edited file
    again at once (same size, same second: the digest of the bytes decides, not a timestamp)."""
    from ckspace.rules.data import default_constraints_dir, load

    root = tmp_path / "constraints"
    shutil.copytree(default_constraints_dir(), root)
    first = load(root)
    assert load(root) is first
    families = root / "families.toml"
    text = families.read_text()
    edited = text.replace('doc = "hardware facts of the arch', 'doc = "HARDWARE facts of the arch', 1)
    assert edited != text and len(edited) == len(text)
    families.write_text(edited)
    second = load(root)
    assert second is not first and second.families["arch"].doc.startswith("HARDWARE facts")
    assert second.digest != first.digest
    families.write_text(text)
    assert load(root).families["arch"].doc.startswith("hardware facts")
    # Only the few most recent directories are kept: loading more lets the oldest go (read again when asked).
    from ckspace.rules import data as D

    kept = load(root)
    for i in range(D.LOADED_KEPT):
        other = tmp_path / f"other{i}"
        shutil.copytree(default_constraints_dir(), other)
        load(other)
    assert len(D._LOADED) == D.LOADED_KEPT and load(root) is not kept


@pytest.mark.parametrize("payload", [[[1], None], [["a"]], {"a": 1}, [["x"], [2]]])
def test_a_corrupt_part_of_cks_procedures_is_recomputed(payload: Any, tmp_path: Path, capsys, monkeypatch) -> None:
    """explain of one name caches CK's procedure members of its part of full (kind ck-procedure-part): an entry
    of the wrong shape, signed as the cache signs, is ignored with one warning and recomputed."""
    name = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
    argv = ["explain", name, "--format", "json"]
    reference = run_in_process(argv, tmp_path / "reference", capsys, monkeypatch)
    first = run_in_process(argv, tmp_path / "cache", capsys, monkeypatch)
    assert first.code == reference.code == 0 and first.out == reference.out
    (path,) = (tmp_path / "cache" / "ck-procedure-part").iterdir()
    entry = Entry(path, "ck-procedure-part", path.stem, path.read_bytes())
    path.write_bytes(signed(entry, dumps(payload)))
    again = run_in_process(argv, tmp_path / "cache", capsys, monkeypatch)
    assert again.out == reference.out and again.code == 0
    (line,) = again.err.splitlines()
    assert WARNING.match(line) and str(path) in line
    assert json.loads(path.read_bytes().partition(b"\n")[2])[0]  # rewritten with the members
