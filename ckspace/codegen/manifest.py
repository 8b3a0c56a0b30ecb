"""Safe writes into an output directory, and the manifest of what ckspace wrote there.

Every file goes through `Writer`:

- a path is a relative POSIX path that must stay inside the output directory (no absolute paths, no `..`, no
  backslashes or NUL, no symlinked parent leading outside), so no kernel name can make a write land elsewhere;
- a file whose content is unchanged is not touched (it keeps its timestamp, so ninja rebuilds nothing);
- a changed file is written to a temporary file in the same directory and renamed over the old one (atomic);
- `manifest.json` records every generated file with a digest of its text; a file listed by the previous manifest
  and not generated now is stale and removed. A file that ckspace did not generate is never deleted, and a listed
  file that was edited by hand since (its digest differs) is left alone too.

One ckspace at a time writes into an output directory: emit and build hold `locked(DIR)` (an flock on
DIR/.ckspace.lock) and a second one fails at once with one line. Under the lock, `sweep_temporaries` removes what a
killed run (SIGKILL, power loss) left half-written: no other run can be writing it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable, Iterator, Mapping

from ..errors import CkspaceError, UsageError

MANIFEST = "manifest.json"
FORMAT = 1
LOCK_FILE = ".ckspace.lock"
PROBE_PREFIX = ".ckspace-probe-"
# The temporaries of atomic_write (`.<name>.<8 random>.tmp`, tempfile's alphabet) and of ensure_dir's probe: only
# names of exactly these shapes are ever swept, so a user's own files never match.
_TEMPORARY = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$|^" + re.escape(PROBE_PREFIX) + r"[a-z0-9_]{8}$")


class OutputDirError(CkspaceError):
    """The output directory cannot be created or written (exit 2)."""


def digest(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()[:32]


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


def ensure_dir(root: Path) -> Path:
    """Create the output directory and check that it is writable; one clear line (exit 2) otherwise."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputDirError(f"cannot create output directory {root}: {exc.strerror or exc}") from None
    if not root.is_dir():
        raise OutputDirError(f"output path {root} exists and is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=root)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputDirError(f"output directory {root} is not writable: {exc.strerror or exc}") from None
    return root


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
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


@dataclass
class WriteStats:
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    kept_edited: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = f"{self.written} written, {self.unchanged} unchanged, {self.removed} stale removed"
        if self.kept_edited:
            text += f", {len(self.kept_edited)} stale but edited by hand (kept)"
        return text


class Writer:
    """Writes generated files under `root` safely and incrementally, and keeps the manifest."""

    def __init__(self, root: Path):
        self.root = ensure_dir(Path(root))
        self.previous = load(self.root)
        self.files: dict[str, str] = {}  # rel path -> digest of what was generated now
        self.stats = WriteStats()
        self._dirs: set[Path] = set()

    def write(self, rel: str, text: str | bytes, mode: int = 0o644) -> bool:
        """Write one generated file; return True when its content changed (or it was new)."""
        data = text.encode() if isinstance(text, str) else text
        rel = safe_relpath(rel)
        if rel in self.files:
            raise CkspaceError(f"internal error: {rel} generated twice")
        path = self.root / rel
        parent = path.parent
        if parent not in self._dirs:
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise OutputDirError(f"cannot create {parent}: {exc.strerror or exc}") from None
            check_inside(self.root, rel)
            self._dirs.add(parent)
        elif path.is_symlink():
            raise UsageError(f"refusing to write {rel!r}: it is a symbolic link")
        h = digest(data)
        self.files[rel] = h
        try:
            if path.stat().st_size == len(data) and path.read_bytes() == data:
                self.stats.unchanged += 1
                return False
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise OutputDirError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            atomic_write(path, data, mode)
        except OSError as exc:
            raise OutputDirError(f"cannot write {path}: {exc.strerror or exc}") from None
        self.stats.written += 1
        return True

    def remove_stale(self, keep: Iterable[str] = ()) -> None:
        """Delete files the previous manifest generated that are not generated now (unless edited by hand)."""
        keep = set(keep) | set(self.files)
        for rel, old_digest in sorted(self.previous.get("files", {}).items()):
            if rel in keep:
                continue
            try:
                path = check_inside(self.root, rel)
            except CkspaceError:
                continue  # a manifest edited to point outside: never follow it
            if not path.is_file():
                continue
            try:
                if digest(path.read_bytes()) != old_digest:
                    self.stats.kept_edited.append(rel)
                    continue
                path.unlink()
                self.stats.removed += 1
            except OSError:
                continue
            _prune_empty_dirs(self.root, path.parent)

    def finish(self, manifest: Mapping[str, object]) -> Path:
        """Write manifest.json (listing every generated file) last, so a crash never loses track of files."""
        body = dict(manifest)
        body["format"] = FORMAT
        body["files"] = dict(sorted(self.files.items()))
        text = json.dumps(body, indent=1, sort_keys=False) + "\n"
        path = self.root / MANIFEST
        data = text.encode()
        try:
            if not (path.is_file() and path.read_bytes() == data):
                atomic_write(path, data)
        except OSError as exc:
            raise OutputDirError(f"cannot write {path}: {exc.strerror or exc}") from None
        return path


def _prune_empty_dirs(root: Path, start: Path) -> None:
    real_root = root.resolve()
    d = start
    while d.resolve() != real_root and real_root in d.resolve().parents:
        try:
            d.rmdir()  # only when empty
        except OSError:
            return
        d = d.parent


def load(root: Path) -> dict:
    """The manifest of `root`, or an empty one. A broken manifest counts as none (nothing is deleted then)."""
    path = Path(root) / MANIFEST
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("files", {}), dict):
        return {}
    return data


def require(root: Path) -> dict:
    """The manifest of an emitted directory, or a usage error; its shape is checked, since build reads it."""
    data = load(root)
    if not data.get("kernels"):
        raise UsageError(f"{root} has no {MANIFEST} from `ckspace emit`; run `ckspace emit ... -o {root}` first")
    problem = shape_problem(data)
    if problem:
        raise UsageError(f"{root / MANIFEST}: {problem}; emit again (ckspace emit ... -o {root})")
    return data


def _str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def shape_problem(data: dict) -> str | None:
    """What is wrong with the shape of a manifest that build reads (arch, units, kernels, build_archs), or None."""
    if not isinstance(data.get("arch"), str):
        return "'arch' must be a string"
    if not isinstance(data.get("kernels"), dict):
        return "'kernels' must be a table of kernel names"
    units = data.get("units")
    if not isinstance(units, dict) or not all(isinstance(u, str) and _str_list(n) for u, n in units.items()):
        return "'units' must map each compile unit to a list of kernel names"
    if "build_archs" in data and data["build_archs"] is not None and not _str_list(data["build_archs"]):
        return "'build_archs' must be a list of arch names"
    if "ck_api" in data and data["ck_api"] is not None and not isinstance(data["ck_api"], str):
        return "'ck_api' must be a string"
    return None
