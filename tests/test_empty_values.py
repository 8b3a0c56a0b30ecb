"""A value given empty ('' or only white space; for a comma-separated list, only commas) is no value: one line on
stderr, exit 2, no traceback, and no work done (nothing solved, cached or written), for every string option and
argument of every command. argparse takes '' as a value, and the commands read it as "not given" (--set '',
--rules '', --ck-api '', --toolchain ''), as the current directory (--ck-config '', --constraints '') or as standard
output (--export-json ''), so each of those ran before.

The cases are the issue's reports, then every string-valued option of every command, read from the parser (so a new
option is covered when it is added). Each runs as a whole process with its own cache directory.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ckspace.cli.app import build_parser

REPO = Path(__file__).resolve().parent.parent
NAME = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"

# What each command needs besides the value under test (OUT: a directory under tmp_path that must stay empty).
BASE = {
    "enumerate": ["--arch", "gfx950"],
    "explain": [NAME],
    "coverage": ["--arch", "gfx950"],
    "sample": ["-n", "1", "--arch", "gfx950"],
    "emit": ["--arch", "gfx950", "-o", "OUT"],
    "build": ["OUT"],
    "verify": ["--arch", "gfx950"],
    "rules": [],
    "fields": [],
    "problems": ["--arch", "gfx942", "--set", "tiny", "--ck-api", "2025.11"],
}
LISTS = {"--variant", "--ndim", "--dtype", "--rules", "--count-by", "--stratify", "--offload-arch"}

# The reports (each must also be among the generated cases below).
REPORTED = [
    ("enumerate", "--set", ""), ("enumerate", "--rules", ""), ("enumerate", "--rules", ","),
    ("enumerate", "--ck-api", ""), ("enumerate", "--export-json", ""), ("verify", "-o", ""),
    ("enumerate", "--where", ""), ("enumerate", "--variant", ""), ("enumerate", "--dtype", ""),
    ("enumerate", "--ndim", ""), ("enumerate", "--constraints", ""), ("enumerate", "--objective", ""),
    ("enumerate", "--stable-from", ""), ("enumerate", "-o", ""), ("enumerate", "--toolchain", ""),
    ("enumerate", "--ck-include", ""), ("build", "--compiler", ""), ("build", "--launcher", ""),
]


def _string_actions() -> list[tuple[str, argparse.Action]]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    out = []
    for command, sub in commands.items():
        for action in sub._actions:
            if action.nargs == 0 or isinstance(action, argparse._HelpAction):
                continue  # flags
            if action.type not in (None, str) or "--arch" in action.option_strings:
                continue  # typed (argparse's own line) or --arch (its line names the archs)
            out.append((command, action))
    return out


def _cases() -> list[tuple[str, str, str]]:
    """(command, option or positional metavar, value): every string option and argument given ''; on enumerate and
    build (one check serves every command) also white space, and a comma-separated one only commas."""
    cases: dict[tuple[str, str, str], None] = {}
    for command, action in _string_actions():
        flag = action.option_strings[0] if action.option_strings else f"<{action.metavar or action.dest}>"
        more = command in ("enumerate", "build")
        for value in ("", *(("  ",) if more else ()),
                      *((",", " , ") if more and LISTS.intersection(action.option_strings) else ())):
            cases[(command, flag, value)] = None
    for reported in REPORTED:
        cases[reported] = None
    return list(cases)


CASES = _cases()


def test_the_reported_cases_are_among_every_commands_cases() -> None:
    generated = {(c, f, v) for c, f, v in CASES}
    assert set(REPORTED) <= generated
    # every command with string options is covered, and so is each option the issue names on each of its commands
    assert {c for c, _, _ in CASES} == set(BASE)
    for command, flag in [("explain", "--set"), ("coverage", "--set"), ("sample", "--set"), ("emit", "--set"),
                          ("verify", "--set"), ("explain", "--rules"), ("sample", "--rules"), ("emit", "--rules"),
                          ("verify", "--rules"), ("coverage", "--rules"), ("emit", "--ck-api"),
                          ("verify", "--ck-api"), ("explain", "--ck-api"), ("emit", "-o"), ("rules", "--constraints"),
                          ("fields", "--constraints"), ("build", "--offload-arch"), ("build", "--ck-include")]:
        assert (command, flag, "") in generated, (command, flag)


def _argv(command: str, flag: str, value: str, out: Path) -> list[str]:
    base = list(BASE[command])
    if flag.startswith("<"):  # a positional: the value takes the place of the base's
        positional = {"explain": 0, "build": 0}.get(command)
        if positional is not None:
            base[positional] = value
        else:
            base.append(value)
        argv = [command, *base]
    else:
        argv = [command, *base, flag, value]
    return [str(out) if a == "OUT" else a for a in argv]


@pytest.mark.slow
@pytest.mark.parametrize("command, flag, value", CASES, ids=[f"{c} {f} {v!r}" for c, f, v in CASES])
def test_an_empty_value_is_one_error_line_before_any_work(command: str, flag: str, value: str,
                                                           tmp_path: Path) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(REPO), "CKSPACE_CACHE_DIR": str(cache)}
    argv = _argv(command, flag, value, out)
    proc = subprocess.run([sys.executable, "-m", "ckspace", *argv], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (argv, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("ckspace: error: "), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    name = flag.strip("<>") if flag.startswith("<") else None
    action = next(a for c, a in _string_actions() if c == command and (
        flag in a.option_strings if name is None else (a.metavar or a.dest) == name))
    shown = action.option_strings[-1] if action.option_strings else name
    if action.choices is not None:  # --format, --launcher: argparse's line names the choices
        assert shown in lines[0] and f"invalid choice: {value!r}" in lines[0], lines[0]
    else:
        assert shown in lines[0] and "empty" in lines[0], lines[0]
    assert proc.stdout == ""  # --export-json '' wrote the list to stdout
    assert not out.exists() or not any(out.iterdir())  # nothing emitted
    assert not cache.exists() or not any(p.is_file() for p in cache.rglob("*"))  # nothing solved and cached
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (out, cache) if p.exists())
