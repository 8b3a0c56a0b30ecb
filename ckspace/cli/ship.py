"""The build step that ships answers with the package (ckspace.cli.answers reads them): setup.py runs
`python -m ckspace.cli.ship CONSTRAINTS_DIR` on the build's copy, after the compiled rule data is written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..files import atomic_write
from . import answers


def shipped_commands(root: Path) -> list[list[str]]:
    """The command lines whose answers the build ships: every arch's plain listing, --count and each set (the archs
    and catalogs of the constraints folder `root`)."""
    from ..spec import archs_and_catalogs

    archs, catalogs = archs_and_catalogs(root)
    sets = [name for name in catalogs if name not in answers._NOT_CATALOGS] + list(answers.SHIPPED_SETS)
    out = []
    for arch in archs:
        out += [["enumerate", "--arch", arch], ["enumerate", "--arch", arch, "--count"]]
        out += [["enumerate", "--arch", arch, "--set", name] for name in dict.fromkeys(sets)]
    return out


def ship(root: Path) -> tuple[int, int]:
    """Run the shipped commands in this process and write their answers to root/SHIPPED_FILE (the build step, on
    the build's copy of the package; `root` is its constraints folder). Returns (answers, bytes)."""
    import io
    import os
    import tempfile
    import zlib

    from .app import main

    class Capture(io.StringIO):
        def isatty(self) -> bool:
            return False

    (root / answers.SHIPPED_FILE).unlink(missing_ok=True)  # a previous build's: never read while these are computed
    blobs: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="ckspace-ship-") as tmp:
        saved_env = os.environ.get("CKSPACE_CACHE_DIR")
        os.environ["CKSPACE_CACHE_DIR"] = tmp  # the runs' own caches: thrown away
        saved = sys.stdout, sys.stderr
        try:
            for argv in shipped_commands(root):
                entry = answers.key(argv)
                out, err = Capture(), Capture()
                sys.stdout, sys.stderr = out, err
                try:
                    status = main(argv)
                except SystemExit as exc:  # argparse's refusal of a set the arch does not have
                    status = exc.code if isinstance(exc.code, int) else 2
                finally:
                    sys.stdout, sys.stderr = saved
                if entry is not None and status == 0 and not err.getvalue():
                    blobs[entry] = zlib.compress(out.getvalue().encode(), 9)
        finally:
            sys.stdout, sys.stderr = saved
            if saved_env is None:
                os.environ.pop("CKSPACE_CACHE_DIR", None)
            else:
                os.environ["CKSPACE_CACHE_DIR"] = saved_env
    index: dict[str, list[int]] = {}
    streams: dict[bytes, list[int]] = {}  # one stream per distinct answer (`--set full` is the plain listing)
    offset = 0
    for entry, blob in blobs.items():
        if blob not in streams:
            streams[blob] = [offset, len(blob)]
            offset += len(blob)
        index[entry] = streams[blob]
    body = answers.SHIPPED_MAGIC + b"\n" + json.dumps(index, sort_keys=True).encode() + b"\n" + b"".join(streams)
    atomic_write(root / answers.SHIPPED_FILE, body)  # readable by every user, as the data files beside it
    return len(blobs), len(body)


if __name__ == "__main__":
    count, size = ship(Path(sys.argv[1]))
    print(f"ckspace: shipped {count} answers ({size:,} bytes)")
