"""A result cache in the user's cache dir, keyed by a digest of everything a result depends on.

The key covers the engine's source, the rule data, the arch and the options, so a change to any of them is a miss:
the cache can never serve a stale result. Entries are written atomically (temp file + rename).

Nor is it trusted: an entry is two lines, a header and the payload as JSON,

    {"v":2,"kind":"enumerate","key":"<the entry's key>","sha256":"<digest of the payload line>"}
    <payload>

and a reader serves it only if the header matches its kind, key and the payload's digest, and the payload has the
shape the reader expects (each reader passes its own check). Only a regular file of bounded size is read: a symlink,
a FIFO, a device or a directory in an entry's place is never opened for reading. Anything else is a miss: the
result is recomputed (and the entry rewritten), with one warning per process.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, Callable

from .memo import cached, memo
from .version import __version__

FORMAT_VERSION = 2
# The largest entry read (the whole CK space of an arch is ~4 MB): a bigger file is not ours, and is never loaded.
MAX_ENTRY_BYTES = 256 * 1024 * 1024
# Bytes asked of one read(); a typical entry comes in one.
_READ_CHUNK = 16 * 1024 * 1024
# Open an entry without following a symlink (ELOOP) or waiting for a FIFO's writer.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

_warned_corrupt = False


class _Corrupt(Exception):
    """An entry that exists but cannot be served."""


def cache_dir() -> Path:
    override = os.environ.get("CKSPACE_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ckspace"


@cached("cache.engine_digest", maxsize=1)
def engine_digest() -> str:
    """A digest of the engine's own source files: a new ckspace build never reads an old build's results."""
    root = Path(__file__).parent

    def compute(paths: list[Path]) -> str:
        h = hashlib.sha256(__version__.encode())
        for path in paths:
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
        return h.hexdigest()

    return remembered_digest(root, "*.py", compute)


# -- digests of file trees, remembered by the files' stat signatures ---------------------------------------------------

DIGESTS_KIND = "digests"
# A file changed less than this long before its digest was taken may change again within the file system's time
# granularity, its size the same (git's "racy" index entries): such a digest is used but not remembered.
RACY_SECONDS = 2.0


def remembered_digest(root: Path, pattern: str, compute: Callable[[list[Path]], str]) -> str:
    """`compute(files)` of the files under `root` matching `pattern` (sorted), remembered in the cache dir under their
    stat signature (path, size, modification time in ns, inode): a warm run stats the files instead of reading and
    hashing them (the engine's source and the rule data, 2 MB), and any change to a file changes the signature. The
    entry (kind "digests", one per tree) is written whatever else the run stores (keep_only), into a cache dir that
    exists or, once the command has answered, one it creates (remember_pending_digests); it is checked as every
    entry is."""
    found = _files_under(root, pattern)  # (relative POSIX path, stat), sorted by path
    h = hashlib.sha256()
    newest = 0
    for rel, st in found:
        newest = max(newest, st.st_mtime_ns)
        h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0".encode())
    signature = h.hexdigest()
    paths = [root / rel for rel, _ in found]
    entry = hashlib.sha256(f"{root}\0{pattern}".encode()).hexdigest()
    if holds_kind(DIGESTS_KIND):
        hit = load(DIGESTS_KIND, entry, lambda p: type(p) is list and len(p) == 2 and all(type(x) is str for x in p))
        if hit is not None and hit[0] == signature:
            return str(hit[1])
    digest = compute(paths)
    if newest < _now_ns() - RACY_SECONDS * 1e9:
        if cache_dir().is_dir():
            _write(DIGESTS_KIND, entry, [signature, digest])
        else:  # a run creates no cache dir before it has answered (bad input leaves nothing behind)
            _PENDING_DIGESTS[entry] = [signature, digest]
    return digest


_PENDING_DIGESTS: dict[str, list[str]] = memo("cache.pending_digests", {})


def remember_pending_digests() -> None:
    """Write the digests this process computed while there was no cache dir (a command's first run has answered:
    its repeat reads them back)."""
    if not _PENDING_DIGESTS:
        return
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    for entry, value in _PENDING_DIGESTS.items():
        _write(DIGESTS_KIND, entry, value)
    _PENDING_DIGESTS.clear()


def _files_under(root: Path, pattern: str) -> list[tuple[str, os.stat_result]]:
    """The regular files under `root` whose names match `pattern` (as Path.rglob matches them), with their stat, in
    the order of sorted(root.rglob(pattern)): os.walk, about five times faster than rglob on a warm run's path."""
    from fnmatch import fnmatch

    out = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        base = os.path.relpath(folder, root).replace(os.sep, "/")
        for name in names:
            if fnmatch(name, pattern):
                full = os.path.join(folder, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out.append((name if base == "." else f"{base}/{name}", st))
    out.sort(key=lambda item: Path(item[0]).parts)
    return out


def _now_ns() -> int:
    import time

    return time.time_ns()


def key(kind: str, data_digest: str, options: dict[str, Any]) -> str:
    payload = json.dumps({"kind": kind, "engine": engine_digest(), "data": data_digest, "options": options}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def entry_path(kind: str, digest: str) -> Path:
    return cache_dir() / kind / f"{digest}.json"


def holds_kind(kind: str) -> bool:
    """Whether an entry of this kind may be stored (its folder exists): when not, every lookup of it misses, and a
    reader need not compute its key."""
    return (cache_dir() / kind).is_dir()


def load(kind: str, digest: str, is_valid: Callable[[Any], bool]) -> Any | None:
    """The payload stored under (kind, digest), or None on a miss. `is_valid` is the reader's check of the payload's
    shape; an entry that fails it, or the header check, is a miss that warns (once per process) and is removed."""
    path = entry_path(kind, digest)
    try:
        payload = _decode(_read_entry(path), kind, digest)
        if not _passes(is_valid, payload):
            raise _Corrupt("unexpected shape")
    except FileNotFoundError:
        return None  # never written: the ordinary miss
    except (OSError, _Corrupt):
        _discard(path)
        _warn_corrupt(path)
        return None
    return payload


_only_kind: str | None = None  # while set (keep_only): the one kind of entry this run stores


class keep_only:
    """Within: only entries of `kind` are stored (None: every kind). A run that keeps its whole answer
    (ckspace.cli.answers) writes nothing else, since its repeat reads back only that answer: a cold run writes no
    more than it will read back."""

    def __init__(self, kind: str | None) -> None:
        self.kind = kind
        self.outer: str | None = None

    def __enter__(self) -> None:
        global _only_kind
        self.outer, _only_kind = _only_kind, self.kind

    def __exit__(self, *exc: object) -> None:
        global _only_kind
        _only_kind = self.outer


def store(kind: str, digest: str, value: Any) -> None:
    """Best effort: an unwritable cache dir (read-only, full disk) only means the next run is cold."""
    if _only_kind is not None and kind != _only_kind:
        return
    _write(kind, digest, value)


def _write(kind: str, digest: str, value: Any) -> None:
    try:
        entry = _encode(kind, digest, value)
    except (ValueError, RecursionError):  # NaN or infinity: not JSON, so a reader would refuse it
        return
    if len(entry) > MAX_ENTRY_BYTES:
        return
    from .signals import deferred

    folder = cache_dir() / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # Ctrl-C or SIGTERM waits for the entry (a finished result, a few kB): one arriving between mkstemp and the
        # try below would leave the temporary file behind
        with deferred():
            import tempfile  # here: a run served from a kept answer writes nothing, and tempfile costs 3 ms to import

            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(entry)
                os.replace(tmp, folder / f"{digest}.json")  # a rename replaces a symlink or FIFO, never its target
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
    except OSError:
        return


# -- the entry format -------------------------------------------------------------------------------------------------


def _header(kind: str, digest: str, payload: bytes) -> bytes:
    """The header line: the reader rebuilds it from the payload it read and compares bytes, so the header needs no
    parsing of its own, and an entry moved under another key or kind fails like an edited one."""
    fields = {"v": FORMAT_VERSION, "kind": kind, "key": digest, "sha256": hashlib.sha256(payload).hexdigest()}
    return json.dumps(fields, separators=(",", ":")).encode()


def _encode(kind: str, digest: str, value: Any) -> bytes:
    # ASCII, so no newline inside; no cycle check: payloads are trees built here (a cycle would be RecursionError)
    payload = json.dumps(value, separators=(",", ":"), allow_nan=False, check_circular=False).encode()
    return _header(kind, digest, payload) + b"\n" + payload


def _decode(entry: bytes, kind: str, digest: str) -> Any:
    header, newline, payload = entry.partition(b"\n")
    if not newline or header != _header(kind, digest, payload):
        raise _Corrupt("header or checksum mismatch")
    try:
        return json.loads(payload, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:  # bad UTF-8 or JSON, an int past Python's digit limit, deep nesting
        raise _Corrupt(str(exc)) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _passes(is_valid: Callable[[Any], bool], payload: Any) -> bool:
    try:
        return bool(is_valid(payload))
    except (LookupError, TypeError, ValueError, RecursionError):  # a check that trips over an odd shape rejects it
        return False


# -- reading a file safely ----------------------------------------------------------------------------------------


def _read_entry(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_ENTRY_BYTES, read in bounded chunks. A symlink fails to open
    (O_NOFOLLOW), a FIFO opens without waiting (O_NONBLOCK) and, like a device or a directory, fails the S_ISREG
    check before a byte is read."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Corrupt("not a regular file")
        if info.st_size > MAX_ENTRY_BYTES:
            raise _Corrupt("too large")
        chunks: list[bytes] = []
        total = 0
        while True:
            # st_size is only a hint (the file may grow while read): one byte past the bound proves it too large
            chunk = os.read(fd, min(_READ_CHUNK, MAX_ENTRY_BYTES + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_ENTRY_BYTES:
                raise _Corrupt("too large")
    finally:
        os.close(fd)


def _discard(path: Path) -> None:
    """Remove a bad entry (best effort; a directory stays), so that a result that is not cached again (a streamed
    enumeration, a lookup that does not recompute) does not warn on every run."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _warn_corrupt(path: Path) -> None:
    global _warned_corrupt
    if _warned_corrupt or sys.stderr is None:
        return
    _warned_corrupt = True
    try:
        print(f"ckspace: warning: ignored a corrupt cache entry ({path}); recomputed", file=sys.stderr)
    except (OSError, ValueError):  # stderr closed: the warning is only a courtesy
        pass
