"""The package as `pip install .` builds it, for the tests that check what the build adds (the compiled rule data,
the shipped answers): setup.py's build_py on a copy of the checkout, in a temp dir."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILT_FILES = ("_compiled.pickle", "_answers.bin")  # what a build writes beside the data: never copied from here


def build_package(tmp: Path) -> Path:
    """Build a copy of the checkout into tmp/lib and return that folder (the package's parent)."""
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPO / name, src / name)
    for name in ("ckspace", "constraints", "objectives", "templates"):
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", *BUILT_FILES))
    lib = tmp / "lib"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)], cwd=src, env=env,
                   check=True, capture_output=True)
    return lib
