"""Whole answers of plain `enumerate` runs, kept so that a repeated run reads one file and writes it.

A warm `ckspace enumerate --arch gfx950` would otherwise load the rule data, check the cached kernel list and
format 14,048 names again, to print the bytes it printed last time. Here the bytes themselves are the cache entry
(ckspace.cache: the same key discipline and checks), keyed by the command line and by digests of everything else
the answer depends on: the engine's source, the rule data, the objectives and the CK API revisions
(templates/*.toml). So a stale answer cannot be served.

Only a run that depends on nothing else is kept: `enumerate` with options from a fixed list (no files of the user's:
no --ck-config, --objective, --stable-from, --trait-config, --constraints or -o), into a pipe or a file (a terminal
gets the summary), with a catalog as its set (a coverage selection also depends on the solver's version), and
ending with exit 0 and nothing on stderr. Anything else takes the ordinary path, unchanged.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import IO, Sequence

from .. import cache
from ..errors import CkspaceError

KIND = "answer"
MAX_KEPT_CHARS = 64 * 1024 * 1024  # a larger answer (an open-space listing) is streamed and not kept

_VALUED = {"--arch", "--set", "--variant", "--ndim", "--dtype", "--where", "--rules", "--count-by", "--format",
           "--ck-api", "--over", "--toolchain", "--problem"}
_FLAGS = {"--count"}
_FORMATS = {"names", "json", "jsonl", "csv"}
_NOT_CATALOGS = {"tests", "tiny"}  # coverage selections: their answer also depends on the solver's version
# explain NAME: only a rejected name's answer is kept (exit 1). A valid name's says whether ckspace's tests and tiny
# hold it, which depends on the solver's version and on whether they were selected yet; a name that full rejects is
# in neither. Nor are --set, --rules or --ck-api taken: a name they reject may be in full, so in its tests.
_EXPLAIN_VALUED = {"--arch", "--format", "--neighbours", "--neighbors"}
_EXPLAIN_FORMATS = {"text", "json"}
_KEPT_STATUS = {"enumerate": 0, "explain": 1}


def _options(argv: Sequence[str]) -> dict[str, list[str]] | None:
    """The options of an `enumerate` or `explain NAME` command line that may be kept, or None. explain's name is
    the option "NAME"."""
    if not argv or argv[0] not in _KEPT_STATUS:
        return None
    explain = argv[0] == "explain"
    valued, flags = (_EXPLAIN_VALUED, set()) if explain else (_VALUED, _FLAGS)
    out: dict[str, list[str]] = {}
    i = 1
    while i < len(argv):
        token = argv[i]
        name, eq, value = token.partition("=")
        if explain and not token.startswith("-") and "NAME" not in out:
            out["NAME"] = [token]
            i += 1
            continue
        if name in flags and not eq:
            out.setdefault(name, []).append("")
            i += 1
            continue
        if name not in valued:
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None
            value = argv[i + 1]
            i += 1
        out.setdefault(name, []).append(value)
        i += 1
    if explain:
        if "NAME" not in out or _is_a_path(out["NAME"][0]):
            return None  # explain FILE says to use --names: that answer depends on the file system
        if any(v not in _EXPLAIN_FORMATS for v in out.get("--format", [])):
            return None
    elif "--arch" not in out:
        return None
    for name, bad in (("--arch", {"auto"}), ("--ck-api", {"auto"}), ("--toolchain", {"auto"})):
        if any(v in bad for v in out.get(name, [])):
            return None  # read from the machine, not the command line
    if not explain and any(v not in _FORMATS for v in out.get("--format", [])):
        return None
    if any(v in _NOT_CATALOGS for v in out.get("--set", [])):
        return None
    return out


def _is_a_path(name: str) -> bool:
    import os

    return os.path.lexists(name.strip()) or "/" in name


MAX_DATA_FILE = 4 * 1024 * 1024  # = ckspace.rules.schema.MAX_FILE_BYTES (not imported: this path loads no rules)


def _tree_digest(root: Path | None, pattern: str) -> str:
    from ..files import tree_digest

    if root is None:
        return tree_digest(root, pattern, MAX_DATA_FILE)
    return cache.remembered_digest(root, pattern, lambda _paths: tree_digest(root, pattern, MAX_DATA_FILE))


def key(argv: Sequence[str]) -> str | None:
    """The entry of this command line's answer (None: it is not kept). Spellings of one command share it: the options
    are taken by name (`--arch=gfx950` is `--arch gfx950`; options in any order), each name's values in order."""
    options = _options(argv)
    if options is None:
        return None
    from ..paths import data_dir

    try:
        inputs = {"command": [argv[0], sorted(options.items())], "engine": cache.engine_digest(),
                  "constraints": _tree_digest(data_dir("constraints", "fields.toml"), "*.toml"),
                  "objectives": _tree_digest(data_dir("objectives", "tests.toml"), "*.toml"),
                  # the CK API revisions (--ck-api's families, the default revision of --problem)
                  "revisions": _tree_digest(data_dir("templates", "revisions.toml"), "*.toml")}
    except CkspaceError:  # a data file that cannot be read: not kept; the run itself says what is wrong
        return None
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def _eligible_stream(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and not stream.isatty()
    except (AttributeError, ValueError):
        return False


def _is_answer(payload: object) -> bool:
    """An answer of exit status 0 is its text; another is [text, status]."""
    return type(payload) is str or (type(payload) is list and len(payload) == 2 and type(payload[0]) is str
                                    and type(payload[1]) is int and 0 < payload[1] < 256)


def serve(argv: Sequence[str]) -> int | None:
    """Write the kept answer of this command line, if there is one (the user's cache, else the answers shipped with
    the package), and give its exit status; None: run it."""
    if not _eligible_stream(sys.stdout):
        return None
    entry = key(argv)
    if entry is None:
        return None
    payload = cache.load(KIND, entry, _is_answer) if cache.holds_kind(KIND) else None
    if payload is None:
        payload = shipped(entry)
    if payload is None:
        return None
    if isinstance(payload, str):
        sys.stdout.write(payload)
        status = 0
    else:
        sys.stdout.write(payload[0])
        status = int(payload[1])
    cache.remember_pending_digests()  # answered: the repeat finds the digests of engine and data remembered
    return status


# -- answers shipped with the package --------------------------------------------------------------------------------
#
# The build (setup.py, after the compiled rule data) runs the plain listings of every arch (`enumerate --arch A`, with
# each catalog and CK's procedures as --set, and --count) and stores their answers beside the data files, under the
# keys a run computes: so a fresh machine's first listing is a file read, as its repeat is. The key holds the
# digests of the engine's source and of the data files, as the user's cache does: after any change to either, the
# shipped answers are misses and the command runs. The file: a magic line, an index line (JSON: key -> [offset,
# length] of the answer's zlib stream after the index), then the streams.

SHIPPED_FILE = "_answers.bin"
SHIPPED_MAGIC = b"ckspace-answers 1"
SHIPPED_SETS = ("ck-full-tests", "ck-tiny")  # with the catalogs; not ckspace's tests/tiny (their solver's version)


def shipped(entry: str) -> str | None:
    """The shipped answer under `entry`, or None (no such answer, no file, or a damaged one: the command runs)."""
    import zlib

    from ..paths import data_dir

    root = data_dir("constraints", "fields.toml")
    if root is None:
        return None
    try:
        with open(root / SHIPPED_FILE, "rb") as fh:
            if fh.readline() != SHIPPED_MAGIC + b"\n":
                return None
            where = json.loads(fh.readline()).get(entry)
            if not (isinstance(where, list) and len(where) == 2 and all(type(x) is int and x >= 0 for x in where)):
                return None
            fh.seek(fh.tell() + where[0])
            return zlib.decompress(fh.read(where[1])).decode()
    except (OSError, ValueError, AttributeError, zlib.error):  # AttributeError: an index that is not an object
        return None


class Recorder:
    """Passes writes through to a stream and keeps a copy (up to MAX_KEPT_CHARS)."""

    def __init__(self, stream: IO[str]):
        self._stream = stream
        self.parts: list[str] | None = []
        self.size = 0

    def write(self, text: str) -> int:
        if self.parts is not None:
            self.size += len(text)
            if self.size > MAX_KEPT_CHARS:
                self.parts = None
            else:
                self.parts.append(text)
        return self._stream.write(text)

    def __getattr__(self, name: str):
        if name == "buffer":  # bytes written past the copy would make a kept answer incomplete
            raise AttributeError("buffer")
        return getattr(self._stream, name)


class Watch:
    """Passes writes through to a stream and notes whether there were any."""

    def __init__(self, stream: IO[str]):
        self._stream = stream
        self.written = False

    def write(self, text: str) -> int:
        if text:
            self.written = True
        return self._stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def run_and_keep(argv: Sequence[str], run) -> int:
    """Run the command (`run()` gives its exit status) and keep its answer when it may be kept."""
    entry = key(argv) if _eligible_stream(sys.stdout) else None
    if entry is None:
        return run()
    out, err = Recorder(sys.stdout), Watch(sys.stderr)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        # A listing's answer is kept whenever it succeeds, so it stores nothing else; explain's only when the name is
        # rejected, so a valid name's run stores what its repeat reads (CK's procedure members of its part of full)
        with cache.keep_only(KIND if argv[0] == "enumerate" else None):
            status = run()
    finally:
        sys.stdout, sys.stderr = saved
    if status == _KEPT_STATUS[argv[0]] and not err.written and out.parts is not None:
        text = "".join(out.parts)
        cache.store(KIND, entry, text if status == 0 else [text, status])
        cache.remember_pending_digests()
    return status
