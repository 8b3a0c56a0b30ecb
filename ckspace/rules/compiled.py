"""Compiled data: the installed constraints directory, loaded and pickled when the wheel is built.

Like the .pyc files pip writes for the code, it spares every cold process work that depends on the data files
alone: the parse of 30 TOML files and the checks of their rules (50 ms), the check of every rule's references on an
arch (13 ms), CK's curation tables of an arch (20 ms), and CK's 500 KB config table with its 3,157 kernel names
(0.2 s; read by explain and CK's shipped catalogs). The build (setup.py runs ckspace.rules.compile_data) writes it
into the package's own constraints directory, and it is read only from there: a pickle runs code when loaded, so
only the package's own file is trusted, as its code is; a user's --constraints directory is always parsed.

It is served only while its key holds: the digest of the data files' bytes (data.load computes it anyway), the digest
of the engine's source (the code that built the objects) and the Python version. An edited data file, another build,
or a file that is damaged or unreadable is a miss, and the files are read as always; so is anything but a regular
file of at most MAX_BYTES (a FIFO there never blocks the open, a huge or endless file is never read). The file is
one header line, the key and the SHA-256 of the payload, then the payload.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from pathlib import Path
from typing import Any

from ..memo import memo
from .. import cache
from ..errors import CkspaceError
from ..lines import read_bounded
from ..paths import PACKAGE

FILE_NAME = "_compiled.pickle"
FORMAT = 3
# The file is about 1.8 MB (every catalog's config documents, every arch's curation tables); a file far larger than
# that (a sparse file, /dev/zero behind a link) is no build of ours, and is bypassed rather than read into memory.
MAX_BYTES = 16 * 1024 * 1024
# The package's own constraints directory, the only one read from a compiled file (tests point it elsewhere).
OWN_ROOT = PACKAGE / "constraints"

# (root, data digest) -> the payload, or None: a miss
_READ: dict[tuple[Path, str], "dict[str, Any] | None"] = memo("rules.compiled.read", {})
# arch -> its unpickled curation tables, of the payload in _READ
_CURATED: dict[str, Any] = memo("rules.compiled.curated", {})


def key(data_digest: str) -> str:
    """What a compiled file must have been built from to be served."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return f"ckspace-compiled-data {FORMAT} python {version} engine {cache.engine_digest()} data {data_digest}"


def data(root: Path, data_digest: str) -> Any:
    """The compiled DataSet of `root` (resolved) with this digest, or None (parse the files). (Typed Any: this
    module sits below rules.data, which reads it.)"""
    payload = _payload(root, data_digest)
    if payload is None:
        return None
    loaded = payload["data"]
    loaded.root = root  # built elsewhere (the build's copy of the package); the files are the same bytes
    return loaded


# One document of a stored config table, compiled: its path in CK's tree, its header (variant, ndim_spatial, layout,
# datatype) and its kernels as ckconfig.entries_of gives them, pickled apart (a reader unpickles only the documents
# it wants: explain of one name reads two of 42).
Document = tuple[str, dict[str, Any], bytes]


def documents(root: Path, rel: str, data_digest: str) -> "list[Document] | None":
    """The compiled documents of the stored config table `rel` of `root`, or None (read and parse the table)."""
    payload = _payload(root, data_digest)
    return None if payload is None else payload["documents"].get(rel)


def kernels(document: Document) -> Any:
    """A compiled document's (entries, skipped)."""
    return pickle.loads(document[2])


def curated(data: Any, arch: str) -> "dict[str, Any] | None":
    """CK's curation tables of `arch` (name -> Relation, as CkCuration builds them) for a DataSet of the package's
    own directory, or None (build them). Pickled per arch: a process unpickles only its arch's, once (the explainer
    makes a model per catalog of one arch; relations are immutable, so they share the tables)."""
    if data.root != OWN_ROOT.resolve():
        return None
    payload = _payload(data.root, data.digest)
    if payload is None or arch not in payload["curated"]:
        return None
    if arch not in _CURATED:
        _CURATED[arch] = pickle.loads(payload["curated"][arch])
    return _CURATED[arch]


def _payload(root: Path, data_digest: str) -> "dict[str, Any] | None":
    if root != OWN_ROOT.resolve():
        return None
    memo = (root, data_digest)
    if memo not in _READ:
        forget()  # one directory's file at a time: a new digest makes the old one useless
        _READ[memo] = _read(root / FILE_NAME, key(data_digest))
    return _READ[memo]


def forget() -> None:
    """Read the compiled file again when next asked (it was just written, or another one is asked for)."""
    _READ.clear()
    _CURATED.clear()


def _read(path: Path, wanted: str) -> "dict[str, Any] | None":
    try:  # a regular file of at most MAX_BYTES, read with that bound (a FIFO neither blocks nor is read)
        blob = read_bounded(path, MAX_BYTES, FILE_NAME, regular_only=True)
    except CkspaceError:  # not built (a checkout, an editable install), unreadable, not a file or too large: parse
        return None
    header, newline, body = blob.partition(b"\n")
    if not newline or header != _header(wanted, body):
        return None  # another build, other data, or damaged bytes
    try:
        payload = pickle.loads(body)
    except Exception:  # noqa: BLE001  # the digest matched, so only a bug gets here; parsing is always right
        return None
    if not isinstance(payload, dict) or not all(isinstance(payload.get(k), dict) for k in ("documents", "curated")) \
            or "data" not in payload:
        return None
    return payload


def _header(wanted: str, body: bytes) -> bytes:
    return f"{wanted} sha256 {hashlib.sha256(body).hexdigest()}".encode()
