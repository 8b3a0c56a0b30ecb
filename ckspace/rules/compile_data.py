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
from ..errors import CkspaceError
from ..paths import PACKAGE


def write(root: Path) -> Path:
    """Load the constraints directory `root` from its files and write its compiled file there (the build step):
    the DataSet, and the documents of the stored config tables of its catalogs with their kernels. Raises the
    DataError of broken data."""
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
    body = pickle.dumps({"data": loaded, "documents": documents}, protocol=pickle.HIGHEST_PROTOCOL)
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
    return target


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
