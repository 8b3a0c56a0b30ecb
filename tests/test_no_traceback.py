"""No command ends in a Python traceback: a list of bad invocations, run as whole processes, each ends with one
`ckspace: error:` line (or quietly), a non-zero exit where it failed, and bounded time and memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

NAME = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"


def ckspace(*args: str, stdin: bytes = b"", env: dict[str, str] | None = None, shell_tail: str = "",
            timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m ckspace ARGS` (with `shell_tail` appended through sh, e.g. a redirection)."""
    cmd = [sys.executable, "-m", "ckspace", *args]
    full_env = {**os.environ, **(env or {})}
    if shell_tail:
        line = " ".join(_quote(c) for c in cmd) + " " + shell_tail
        return subprocess.run(["sh", "-c", line], input=stdin, capture_output=True, env=full_env, timeout=timeout)
    return subprocess.run(cmd, input=stdin, capture_output=True, env=full_env, timeout=timeout)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


@pytest.fixture(scope="module")
def emitted(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("emit") / "out"
    proc = ckspace("emit", "--arch", "gfx950", "--set", "tiny", "--ck-api", "2025.11", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def bad_manifests(root: Path) -> list[Path]:
    """Copies of an emitted dir whose manifest has the wrong shape."""
    out = []
    for i, edit in enumerate([lambda d: d.pop("arch"), lambda d: d.update(units=[1, 2]),
                              lambda d: d.update(units={"u.cpp": "x"}), lambda d: d.update(build_archs="gfx950"),
                              lambda d: d.update(arch=7)]):
        copy = root.parent / f"bad{i}"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(root, copy)
        data = json.loads((copy / "manifest.json").read_text())
        edit(data)
        (copy / "manifest.json").write_text(json.dumps(data))
        out.append(copy)
    return out


def cases(emitted: Path) -> list[tuple[str, dict]]:
    lines = "\n".join(["# a comment", "", NAME, "x" * 5000, "grouped_conv_fwd_f16", "\udcff".encode("utf-8", "surrogatepass").decode("latin-1")] * 200)
    out: list[tuple[str, dict]] = [
        ("stdout is /dev/full", dict(args=["enumerate", "--arch", "gfx950"], shell_tail="> /dev/full", rc=2)),
        ("stdout is closed", dict(args=["enumerate", "--arch", "gfx950", "--count"], shell_tail=">&-", rc=2)),
        ("explain to /dev/full", dict(args=["explain", NAME], shell_tail="> /dev/full", rc=2)),
        ("ascii stdout table", dict(args=["enumerate", "--arch", "gfx950", "--count", "--format", "table"],
                                    env={"PYTHONIOENCODING": "ascii"}, rc=0)),
        ("ascii stdout explain", dict(args=["explain", NAME], env={"PYTHONIOENCODING": "ascii"}, rc=0)),
        ("coverage /dev/zero", dict(args=["coverage", "/dev/zero", "--arch", "gfx950"], rc=2)),
        ("stable-from /dev/zero", dict(args=["enumerate", "--arch", "gfx950", "--set", "tiny", "--stable-from",
                                             "/dev/zero"], rc=2)),
        ("explain - /dev/zero", dict(args=["explain", "-"], stdin_file="/dev/zero", rc=2)),
        ("explain - 1,200 mixed lines", dict(args=["explain", "-"], stdin=lines.encode("utf-8", "replace"), rc=2,
                                             max_stderr_lines=12)),
        ("explain - json 1,200 mixed lines", dict(args=["explain", "-", "--format", "json"],
                                                  stdin=lines.encode("utf-8", "replace"), rc=2, json=True,
                                                  max_stderr_lines=12)),
        ("explain - non-UTF-8", dict(args=["explain", "-"], stdin=b"grouped_conv_\xff\xfe\n", rc=2)),
        ("explain a 100,000-char name", dict(args=["explain", "y" * 100_000], rc=2)),
        ("emit the open space", dict(args=["emit", "--arch", "gfx950", "--rules", "-ck-curation", "-o",
                                           str(emitted.parent / "open")], rc=2)),
        ("build a missing dir", dict(args=["build", str(emitted.parent / "nothing")], rc=2)),
        ("sample a 4,300-digit seed", dict(args=["sample", "-n", "3", "--arch", "gfx950", "--seed", "9" * 4300],
                                           rc=2)),
        ("ndim 2d in sample", dict(args=["sample", "-n", "2", "--arch", "gfx950", "--ndim", "2d"], rc=0)),
        ("ndim 3d in emit", dict(args=["emit", "--arch", "gfx950", "--set", "tiny", "--ndim", "3d", "-o",
                                       str(emitted.parent / "nd3")], rc=0)),
    ]
    for i, bad in enumerate(bad_manifests(emitted)):
        out.append((f"build with a bad manifest {i}", dict(args=["build", str(bad)], rc=2)))
    return out


@pytest.mark.slow
def test_no_command_ends_in_a_traceback(emitted: Path, tmp_path: Path) -> None:
    table = cases(emitted)

    def run(case: tuple[str, dict]) -> tuple[str, dict, subprocess.CompletedProcess]:
        label, spec = case
        stdin = spec.get("stdin", b"")
        if "stdin_file" in spec:
            with open(spec["stdin_file"], "rb") as fh:
                proc = subprocess.run([sys.executable, "-m", "ckspace", *spec["args"]], stdin=fh,
                                      capture_output=True, timeout=120,
                                      env={**os.environ, "CKSPACE_CACHE_DIR": str(tmp_path / "cache")})
            return label, spec, proc
        env = {"CKSPACE_CACHE_DIR": str(tmp_path / "cache"), **spec.get("env", {})}
        return label, spec, ckspace(*spec["args"], stdin=stdin, env=env, shell_tail=spec.get("shell_tail", ""))

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, table))
    problems = []
    for label, spec, proc in results:
        err = proc.stderr.decode("utf-8", "replace")
        lines = [x for x in err.splitlines() if x.strip()]
        if "Traceback" in err or "Traceback" in proc.stdout.decode("utf-8", "replace"):
            problems.append(f"{label}: traceback\n{err[-2000:]}")
            continue
        if proc.returncode != spec["rc"]:
            problems.append(f"{label}: exit {proc.returncode}, expected {spec['rc']}: {err[-500:]}")
        if spec["rc"] == 2 and not any(x.startswith("ckspace: error: ") for x in lines):
            problems.append(f"{label}: no `ckspace: error:` line: {err[-500:]}")
        if len(lines) > spec.get("max_stderr_lines", 1 if spec["rc"] == 2 else 3):
            problems.append(f"{label}: {len(lines)} stderr lines")
        if spec.get("json"):
            json.loads(proc.stdout)  # streamed batch JSON is still one valid document
    assert not problems, "\n".join(problems)
