"""The build's one step beyond pyproject.toml: compile the installed rule data (ckspace.rules.compiled), then ship
the answers of the plain listings (ckspace.cli.ship).

After build_py has copied the package, the data files it ships in ckspace/constraints are loaded once and pickled
beside them, as pip compiles the code to .pyc: a cold ckspace process then reads one file instead of parsing 30 TOML
files. A failure here (broken data, a Python without tomllib) only leaves the file out: the package is the same, and
ckspace parses the data files as a checkout does. An editable install compiles nothing (its data is the checkout's).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithCompiledData(build_py):
    def run(self) -> None:
        super().run()
        if self.dry_run or getattr(self, "editable_mode", False):
            return
        lib = Path(self.build_lib).resolve()
        constraints = lib / "ckspace" / "constraints"
        if not (constraints / "fields.toml").is_file():
            return
        env = {**os.environ, "PYTHONPATH": str(lib)}
        # A process of its own: it imports the copied package, whose engine digest is the installed one's.
        done = subprocess.run([sys.executable, "-m", "ckspace.rules.compile_data", str(constraints)], env=env, cwd=lib,
                              capture_output=True, text=True)
        print((done.stdout + done.stderr).strip())
        # Then the answers of every arch's plain listings (ckspace.cli.ship), computed with that data: a fresh
        # machine's first `ckspace enumerate --arch gfx950` reads its answer. A failure only leaves them out.
        done = subprocess.run([sys.executable, "-m", "ckspace.cli.ship", str(constraints)], env=env, cwd=lib,
                              capture_output=True, text=True)
        print((done.stdout + done.stderr).strip()[-2000:])


setup(cmdclass={"build_py": BuildPyWithCompiledData})
