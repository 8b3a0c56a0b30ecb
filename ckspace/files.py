"""Safe writes into an output directory: paths that stay inside it, atomic writes, one writer at a time.

- a path is a relative POSIX path that must stay inside the directory (no absolute paths, no `..`, no backslashes or
  NUL, no symlinked parent leading outside), so no kernel name can make a write land elsewhere;
- a file is written to a temporary file in the same directory and renamed over the old one (atomic); a temporary is
  removed when its write is interrupted (its name is chosen before it is created, so there is no moment when it
  exists unnamed), and a later run sweeps what a killed one left (`sweep_temporaries`);
- one ckspace at a time writes into a directory: `locked(DIR)` (an flock on DIR/.ckspace.lock), and a second one
  fails at once with one line.

Infrastructure: the emitter's manifest (ckspace.codegen.manifest), verify's results and the CLI's outputs use it.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
from pathlib import Path, PurePosixPath
from typing import Iterable, Iterator

from .errors import CkspaceError, UsageError

LOCK_FILE = ".ckspace.lock"
PROBE_PREFIX = ".ckspace-probe-"
# The temporaries of atomic_write (`.<name>.<8 random>.tmp`, tempfile's alphabet) and of ensure_dir's probe: only
# names of exactly these shapes are ever swept, so a user's own files never match.
_TEMPORARY = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$|^" + re.escape(PROBE_PREFIX) + r"[a-z0-9_]{8}$")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
_RANDOM = random.Random()
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class OutputDirError(CkspaceError):
    """The output directory cannot be created or written (exit 2)."""


def safe_relpath(rel: str) -> str:
    """Check that `rel` names a file strictly inside the output directory; return it normalised."""
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        raise UsageError(f"refusing to write {rel!r}: not a plain relative path")
    p = PurePosixPath(rel)
    if p.is_absolute() or any(part in ("..", ".", "") for part in rel.split("/")):
        raise UsageError(f"refusing to write {rel!r}: it would land outside the output directory")
    if any(len(part.encode()) > 255 for part in p.parts):
        raise UsageError(f"refusing to write {rel!r}: a path component is longer than 255 bytes")
    return str(p)


def check_inside(root: Path, rel: str) -> Path:
    """The absolute path of `rel` under `root`, after making sure no symlinked parent leads outside."""
    rel = safe_relpath(rel)
    target = root / rel
    real_root = root.resolve()
    parent = target.parent.resolve()
    if parent != real_root and real_root not in parent.parents:
        raise UsageError(f"refusing to write {rel!r}: its directory resolves outside {root}")
    if target.is_symlink():
        raise UsageError(f"refusing to write {rel!r}: it is a symbolic link")
    return target


def check_subdir(root: Path, rel: str) -> Path:
    """The path of the directory `rel` under `root` that a run will write into, checked as every write of
    Writer is (`check_inside`): no symlinked parent leading outside, and not a symlink itself, so that a planted
    `DIR/work -> elsewhere` makes ckspace refuse (exit 2) rather than write into elsewhere. It need not exist."""
    path = check_inside(root, rel)
    if path.exists() and not path.is_dir():
        raise UsageError(f"refusing to write into {path}: it exists and is not a directory")
    return path


def ensure_dir(root: Path) -> Path:
    """Create the output directory and check that it is writable; one clear line (exit 2) otherwise."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputDirError(f"cannot create output directory {root}: {exc.strerror or exc}") from None
    if not root.is_dir():
        raise OutputDirError(f"output path {root} exists and is not a directory")
    try:
        _create_and_remove(root / f"{PROBE_PREFIX}{_random_chars()}")
    except OSError as exc:
        raise OutputDirError(f"output directory {root} is not writable: {exc.strerror or exc}") from None
    return root


def _random_chars() -> str:
    """Eight characters of tempfile's alphabet: the random part of a temporary's name (`_TEMPORARY`)."""
    return "".join(_RANDOM.choices(_ALPHABET, k=8))


def _remove_quietly(path: Path) -> None:
    """Remove a temporary of ours, holding Ctrl-C and SIGTERM back meanwhile (they are acted on right after)."""
    from .signals import deferred

    with deferred():
        try:
            os.unlink(path)
        except OSError:  # not created yet, or already renamed into place
            pass


def _create_and_remove(probe: Path) -> None:
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW, 0o600))
    finally:
        _remove_quietly(probe)


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename.

    The temporary's name is chosen before it is created, so whatever stops the write (an error, Ctrl-C or SIGTERM,
    which raise KeyboardInterrupt) finds it by name and removes it: no `.NAME.XXXXXXXX.tmp` is left behind but by
    SIGKILL, and those the next run sweeps (`sweep_temporaries`)."""
    tmp: Path | None = None
    try:
        while True:
            tmp = path.parent / f".{path.name[:40]}.{_random_chars()}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW, 0o600)
                break
            except FileExistsError:  # another temporary of that name: not ours to remove
                tmp = None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        tmp = None
    except BaseException:
        if tmp is not None:
            _remove_quietly(tmp)
        raise


class OutputDirBusy(OutputDirError):
    """Another ckspace holds the output directory (exit 2)."""


_HELD: dict[str, int] = {}  # real path of an output directory this process holds -> nesting depth


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold the (existing) output directory `root` for this process while inside: another ckspace that emits or
    builds into it meanwhile gets OutputDirBusy at once (no waiting: it would write the same files). Re-entrant
    within the process, so the CLI can hold it around the library calls that hold it too. The lock goes with the
    process, also on SIGKILL."""
    key = os.path.realpath(root)
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    path = Path(key) / LOCK_FILE
    fd = _acquire(path, root)
    _HELD[key] = 1
    try:
        yield
    finally:
        del _HELD[key]
        _release(fd, path)


def _acquire(path: Path, shown: Path) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputDirError(f"cannot lock output directory {shown}: {exc.strerror or exc}") from None
        try:
            _flock(fd)
        except BlockingIOError:
            holder = _holder_pid(fd)
            os.close(fd)
            raise OutputDirBusy(f"{shown} is in use by another ckspace ({holder})") from None
        except OSError as exc:
            os.close(fd)
            raise OutputDirError(f"cannot lock output directory {shown}: {exc.strerror or exc}") from None
        # The previous holder removes the file as it lets go: if that happened after our open, we hold the lock of a
        # file nobody else will see, so start over on the one that is there now.
        if _is_file_at(fd, path):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)


def _flock(fd: int) -> None:
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _holder_pid(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    return f"pid {text}" if text.isdigit() else "pid unknown"


def _is_file_at(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def _release(fd: int, path: Path) -> None:
    try:
        if _is_file_at(fd, path):
            os.unlink(path)  # still holding the lock: nobody can have taken it on this file meanwhile
    except OSError:
        pass  # a stale lock file is harmless: the lock is the flock, which goes with the descriptor
    finally:
        os.close(fd)


def sweep_temporaries(root: Path, folders: Iterable[str] = ("",)) -> int:
    """Remove the temporaries of interrupted atomic writes (and probes) in `folders` of `root`; return how many.

    Call it holding `locked(root)`: then no other run is writing them. A temporary is never a finished file (that
    is renamed into place in one step), so removing one loses nothing.
    """
    removed = 0
    for folder in folders:
        if folder:
            try:
                check_subdir(root, folder)  # a folder planted as a symlink: not ckspace's to sweep
            except CkspaceError:
                continue
        try:
            entries = list(os.scandir(root / folder))
        except OSError:  # not there (yet)
            continue
        for entry in entries:
            if _TEMPORARY.match(entry.name) and entry.is_file(follow_symlinks=False):
                try:
                    os.unlink(entry.path)
                    removed += 1
                except OSError:
                    pass
    return removed


def tree_digest(root: Path | None, pattern: str, limit: int, error: type[CkspaceError] = UsageError) -> str:
    """A digest of every file under `root` matching `pattern` (its POSIX path relative to root and its bytes, in
    sorted order; a missing root digests as empty): the rule data's identity for the result cache and for the kept
    answers of the CLI. Each file is read with the bound `limit` (a FIFO or /dev/zero named *.toml is one error)."""
    import hashlib

    from .lines import read_bounded

    h = hashlib.sha256()
    if root is not None:
        for path in sorted(p for p in root.rglob(pattern) if p.is_file()):
            rel = path.relative_to(root).as_posix()
            h.update(rel.encode() + b"\0" + read_bounded(path, limit, rel, regular_only=True, error=error) + b"\0")
    return h.hexdigest()
