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


def _options(argv: Sequence[str]) -> dict[str, list[str]] | None:
    """The options of an `enumerate` command line that may be kept, or None."""
    if not argv or argv[0] != "enumerate":
        return None
    out: dict[str, list[str]] = {}
    i = 1
    while i < len(argv):
        token = argv[i]
        name, eq, value = token.partition("=")
        if name in _FLAGS and not eq:
            out.setdefault(name, []).append("")
            i += 1
            continue
        if name not in _VALUED:
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None
            value = argv[i + 1]
            i += 1
        out.setdefault(name, []).append(value)
        i += 1
    if "--arch" not in out:
        return None
    for name, bad in (("--arch", {"auto"}), ("--ck-api", {"auto"}), ("--toolchain", {"auto"})):
        if any(v in bad for v in out.get(name, [])):
            return None  # read from the machine, not the command line
    if any(v not in _FORMATS for v in out.get("--format", [])):
        return None
    if any(v in _NOT_CATALOGS for v in out.get("--set", [])):
        return None
    return out


MAX_DATA_FILE = 4 * 1024 * 1024  # = ckspace.rules.schema.MAX_FILE_BYTES (not imported: this path loads no rules)


def _tree_digest(root: Path | None, pattern: str) -> str:
    from ..files import tree_digest

    return tree_digest(root, pattern, MAX_DATA_FILE)


def key(argv: Sequence[str]) -> str | None:
    """The entry of this command line's answer (None: it is not kept)."""
    if _options(argv) is None:
        return None
    from ..paths import data_dir

    try:
        inputs = {"argv": list(argv), "engine": cache.engine_digest(),
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


def serve(argv: Sequence[str]) -> bool:
    """Write the kept answer of this command line, if there is one; False: run it."""
    if not _eligible_stream(sys.stdout):
        return False
    entry = key(argv)
    if entry is None:
        return False
    text = cache.load(KIND, entry, lambda payload: type(payload) is str)
    if text is None:
        return False
    sys.stdout.write(text)
    return True


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
        status = run()
    finally:
        sys.stdout, sys.stderr = saved
    if status == 0 and not err.written and out.parts is not None:
        cache.store(KIND, entry, "".join(out.parts))
    return status
