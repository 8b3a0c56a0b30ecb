"""The manifest of what ckspace wrote into an output directory (the safe writes themselves: ckspace.files).

Every file goes through `Writer`:

- a path is a relative POSIX path that must stay inside the output directory (no absolute paths, no `..`, no
  backslashes or NUL, no symlinked parent leading outside), so no kernel name can make a write land elsewhere;
- a file whose content is unchanged is not touched (it keeps its timestamp, so ninja rebuilds nothing);
- a changed file is written to a temporary file in the same directory and renamed over the old one (atomic);
- `manifest.json` records every generated file with a digest of its text; a file listed by the previous manifest
  and not generated now is stale and removed. A file that ckspace did not generate is never deleted, and a listed
  file that was edited by hand since (its digest differs) is left alone too.
- The manifest is written last, so before each file is written its path and digest are appended to the journal
  `.manifest.pending`: an emit stopped half-way (Ctrl-C, SIGTERM, SIGKILL) leaves a record of every file it may
  have written, and the next emit removes those it does not generate again (when they still hold what ckspace wrote)
  as it removes the previous manifest's stale files. The journal goes once a manifest lists what is there.
- A temporary file is removed when its write is interrupted (its name is chosen before it is created, so there is
  no moment when it exists unnamed), and a later run sweeps what a killed one left (`sweep_temporaries`).

One ckspace at a time writes into an output directory: emit and build hold `locked(DIR)` (an flock on
DIR/.ckspace.lock) and a second one fails at once with one line. Under the lock, `sweep_temporaries` removes what a
killed run (SIGKILL, power loss) left half-written: no other run can be writing it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from ..errors import CkspaceError, UsageError
from ..files import _NOFOLLOW, atomic_write, check_inside, ensure_dir, LOCK_FILE, OutputDirError, safe_relpath

MANIFEST = "manifest.json"
FORMAT = 1
PENDING = ".manifest.pending"  # the journal of files written since the last manifest (see the module doc)
RESERVED = (MANIFEST, PENDING, LOCK_FILE)  # ckspace's own bookkeeping: never a generated file, never removed as one
MAX_PENDING_BYTES = 64 << 20  # a journal larger than this is not read (nothing it lists is removed then)


def digest(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()[:32]



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
    """Writes generated files under `root` safely and incrementally, and keeps the manifest (and its journal)."""

    def __init__(self, root: Path):
        self.root = ensure_dir(Path(root))
        self.previous = load(self.root)
        self.pending = load_pending(self.root)  # rel path -> digests an unfinished earlier run may have left there
        self.files: dict[str, str] = {}  # rel path -> digest of what was generated now
        self.stats = WriteStats()
        self._dirs: set[Path] = set()
        self._journal: int | None = None  # the journal, open for appending once this run writes a file
        self._swept = False

    def write(self, rel: str, text: str | bytes, mode: int = 0o644) -> bool:
        """Write one generated file; return True when its content changed (or it was new)."""
        data = text.encode() if isinstance(text, str) else text
        rel = safe_relpath(rel)
        if rel in self.files:
            raise CkspaceError(f"internal error: {rel} generated twice")
        if rel in RESERVED:
            raise CkspaceError(f"internal error: {rel} is ckspace's own file, not a generated one")
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
        self._record(rel, h)  # before the file exists: a run stopped after this line has left a record of it
        try:
            atomic_write(path, data, mode)
        except OSError as exc:
            raise OutputDirError(f"cannot write {path}: {exc.strerror or exc}") from None
        self.stats.written += 1
        return True

    def _record(self, rel: str, h: str) -> None:
        """Append (digest, path) to the journal, one JSON line in one O_APPEND write."""
        path = self.root / PENDING
        try:
            if self._journal is None:
                self._journal = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | _NOFOLLOW, 0o644)
            os.write(self._journal, (json.dumps([h, rel]) + "\n").encode())
        except OSError as exc:
            raise OutputDirError(f"cannot write {path}: {exc.strerror or exc}") from None

    def close(self) -> None:
        """Close the journal (finish does; a run that stops early leaves that to the garbage collector)."""
        if self._journal is not None:
            fd, self._journal = self._journal, None
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except (OSError, AttributeError):
            pass

    def remove_stale(self, keep: Iterable[str] = ()) -> None:
        """Delete the files that the previous manifest lists, or that the journal says an unfinished run wrote, and
        that are not generated now; only while they hold what ckspace wrote there (a file edited by hand since, or a
        file ckspace never wrote, is left alone)."""
        keep = set(keep) | set(self.files)
        owned: dict[str, set[str]] = {rel: set(ds) for rel, ds in self.pending.items()}
        for rel, old_digest in self.previous.get("files", {}).items():
            if isinstance(old_digest, str):
                owned.setdefault(rel, set()).add(old_digest)
        for rel, digests in sorted(owned.items()):
            if rel in keep or rel in RESERVED:
                continue
            try:
                path = check_inside(self.root, rel)
            except CkspaceError:
                continue  # a manifest edited to point outside: never follow it
            if not path.is_file():
                continue
            try:
                if digest(path.read_bytes()) not in digests:
                    if rel in self.previous.get("files", {}):  # the journal's own unwritten entries are no news
                        self.stats.kept_edited.append(rel)
                    continue
                path.unlink()
                self.stats.removed += 1
            except OSError:
                continue
            _prune_empty_dirs(self.root, path.parent)
        self._swept = True

    def finish(self, manifest: Mapping[str, object]) -> Path:
        """Write manifest.json (listing every generated file) last, so a crash never loses track of files; then,
        when remove_stale has run, drop the journal: what it listed is in the manifest now, or gone."""
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
        self.close()
        if self._swept:
            try:
                os.unlink(self.root / PENDING)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise OutputDirError(f"cannot remove {self.root / PENDING}: {exc.strerror or exc}") from None
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


def load_pending(root: Path) -> dict[str, set[str]]:
    """The journal of `root`: path -> the digests written there since the manifest (see Writer). A line that is not
    a [digest, path] pair (a run killed in the middle of appending it) is skipped, and so is a journal that is not a
    regular file or is too large: nothing is removed on its word then."""
    out: dict[str, set[str]] = {}
    try:
        fd = os.open(Path(root) / PENDING, os.O_RDONLY | os.O_CLOEXEC | _NOFOLLOW)
    except OSError:
        return out
    try:
        import stat

        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_PENDING_BYTES:
            return out
        with os.fdopen(os.dup(fd), "rb") as fh:
            raw = fh.read(MAX_PENDING_BYTES + 1)
    except OSError:
        return out
    finally:
        os.close(fd)
    for line in raw.decode(errors="replace").splitlines():
        try:
            h, rel = json.loads(line)
        except (ValueError, TypeError):
            continue
        if isinstance(h, str) and isinstance(rel, str):
            out.setdefault(rel, set()).add(h)
    return out


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
