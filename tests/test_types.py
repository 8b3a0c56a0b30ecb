"""`mypy ckspace` passes with the project's configuration (pyproject.toml [tool.mypy]), and the package ships
py.typed (issue 26). CI installs mypy with the test extra; elsewhere the test skips when mypy is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_mypy_passes(tmp_path: Path) -> None:
    try:
        import mypy  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("mypy is not installed (pip install '.[test]')")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_the_package_is_typed() -> None:
    assert (ROOT / "ckspace" / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text()
    assert '"ckspace" = ["py.typed"]' in text
