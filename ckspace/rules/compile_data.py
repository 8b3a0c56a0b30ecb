"""The build step of the compiled rule data (ckspace.rules.compiled): load a constraints directory from its files and
pickle it beside them. setup.py runs `python -m ckspace.rules.compile_data DIR` on the build's copy of the package."""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
from pathlib import Path

from . import compiled
from . import data as D
from .ckconfig import STORED_HEADER, CkConfigError, documents_from_table, entries_of
from .curation import CURATION_TABLES, CkCuration
from .model import Model
from .relation import Relation
from ..errors import CkspaceError
from ..paths import PACKAGE


def write(root: Path) -> Path:
    """Load the constraints directory `root` from its files and write its compiled file there (the build step):
    the DataSet, the documents of the stored config tables of its catalogs with their kernels, and CK's curation
    tables of every arch. Raises the DataError of broken data."""
    root = root.resolve()
    digest = D.digest_dir(root)
    loaded = D._load(root)  # not the memo: a fresh object, with nothing cached on it yet
    documents: dict[str, list[compiled.Document]] = {}
    for catalog in dict.fromkeys(loaded.catalogs.values()):
        if catalog.configs is not None and not catalog.user and catalog.configs not in documents:
            try:
                documents[catalog.configs] = _documents(root, catalog.configs)
            except CkConfigError:
                continue  # left to be read when listed, which reports the broken entry as always
    loaded.checked_archs = frozenset(a for a in loaded.archs if _references_resolve(loaded, a))
    curated = {arch: pickle.dumps(_curated(loaded, arch), protocol=pickle.HIGHEST_PROTOCOL) for arch in loaded.archs}
    body = pickle.dumps({"data": loaded, "documents": documents, "curated": curated},
                        protocol=pickle.HIGHEST_PROTOCOL)
    target = root / compiled.FILE_NAME
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".tmp-", suffix=".pickle")
    try:
        os.chmod(tmp, 0o644)  # installed for every user, as the data files beside it are
        with os.fdopen(fd, "wb") as fh:
            fh.write(compiled._header(compiled.key(digest), body) + b"\n" + body)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    compiled.forget()  # the models built here looked for the file (and found none, or the previous build's)
    return target


def _references_resolve(data: D.DataSet, arch: str) -> bool:
    """Whether every rule of every family resolves and type-checks on the arch (then so does any choice of them)."""
    try:
        Model(data, arch, frozenset(data.families)).validate_references()
    except CkspaceError:
        return False  # a process checks it, and reports the rule, as always
    return True


def _curated(data: D.DataSet, arch: str) -> dict[str, Relation]:
    """Every CK curation table of the arch that builds (one that does not is left to the process, which reports it)."""
    curation = CkCuration(data.ck_raw, data.archs[arch])
    out = {}
    for name in CURATION_TABLES:
        try:
            out[name] = curation.relation(name)
        except CkspaceError:
            continue
    return out


def _documents(root: Path, rel: str) -> list[compiled.Document]:
    """Every document of a stored config table with its kernels, as the listing parses them."""
    out = []
    for path, doc in documents_from_table(D.read_toml(root / rel, root), rel):
        entries, skipped = entries_of(doc, f"{rel}: {path}")
        head = {k: doc[k] for k in STORED_HEADER}
        out.append((path, head, pickle.dumps((entries, skipped), protocol=pickle.HIGHEST_PROTOCOL)))
    return out


def main(argv: list[str]) -> int:
    """`python -m ckspace.rules.compile_data DIR`: write DIR's compiled file (setup.py runs it on the build's copy)."""
    if len(argv) != 1:
        print("usage: python -m ckspace.rules.compile_data CONSTRAINTS_DIR", file=sys.stderr)
        return 2
    root = Path(argv[0]).resolve()
    if root.parent != PACKAGE:  # the key holds the digest of the engine that runs here: it must be the one built
        print(f"ckspace: compiled data not written: {root} is not the constraints directory of the ckspace "
              f"imported here ({PACKAGE})", file=sys.stderr)
        return 2
    try:
        target = write(root)
    except (CkspaceError, OSError) as exc:
        print(f"ckspace: compiled data not written: {exc}", file=sys.stderr)
        return 1
    print(f"ckspace: compiled data written to {target}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
