#!/usr/bin/env python3
"""`tarxz.py c ARCHIVE ROOT PATH...` packs PATHs (relative to ROOT) into an xz'd tar; `tarxz.py x ARCHIVE ROOT` unpacks
it under ROOT. Python's own tarfile and lzma, so that neither machine needs tar's xz (a fresh Debian may lack xz-utils).
Packing writes ARCHIVE.tmp and renames it into place: a broken run leaves no half archive."""

import os
import sys
import tarfile


def main(argv: list[str]) -> int:
    if len(argv) >= 4 and argv[0] == "c":
        archive, root, paths = argv[1], argv[2], argv[3:]
        with tarfile.open(archive + ".tmp", "w:xz", preset=6) as tar:
            for path in paths:
                tar.add(os.path.join(root, path), arcname=path)
        os.replace(archive + ".tmp", archive)
        return 0
    if len(argv) == 3 and argv[0] == "x":
        with tarfile.open(argv[1], "r:xz") as tar:
            tar.extractall(argv[2], filter="tar") if hasattr(tarfile, "data_filter") else tar.extractall(argv[2])
        return 0
    sys.stderr.write("usage: tarxz.py c ARCHIVE ROOT PATH... | tarxz.py x ARCHIVE ROOT\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
