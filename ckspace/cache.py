"""A result cache in the user's cache dir, keyed by a digest of everything a result depends on.

The key covers the engine's source, the rule data, the arch and the options, so a change to any of them is a miss:
the cache can never serve a stale result. Entries are written atomically (temp file + rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from . import __version__

_ENGINE_DIGEST: str | None = None


def cache_dir() -> Path:
    override = os.environ.get("CKSPACE_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ckspace"


def engine_digest() -> str:
    """A digest of the engine's own source files: a new ckspace build never reads an old build's results."""
    global _ENGINE_DIGEST
    if _ENGINE_DIGEST is None:
        h = hashlib.sha256(__version__.encode())
        for path in sorted(Path(__file__).parent.rglob("*.py")):
            h.update(path.relative_to(Path(__file__).parent).as_posix().encode())
            h.update(path.read_bytes())
        _ENGINE_DIGEST = h.hexdigest()
    return _ENGINE_DIGEST


def key(kind: str, data_digest: str, options: dict[str, Any]) -> str:
    payload = json.dumps({"kind": kind, "engine": engine_digest(), "data": data_digest, "options": options}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def load(kind: str, digest: str) -> Any | None:
    path = cache_dir() / kind / f"{digest}.json"
    try:
        with path.open("rb") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def store(kind: str, digest: str, value: Any) -> None:
    """Best effort: an unwritable cache dir only means the next run is cold."""
    folder = cache_dir() / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(value, fh, separators=(",", ":"))
            os.replace(tmp, folder / f"{digest}.json")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return
