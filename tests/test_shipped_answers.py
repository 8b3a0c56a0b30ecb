"""Answers shipped with the package, and what a run writes into its cache (issue 29).

* The build (setup.py) ships the answers of every arch's plain listings; an installed package serves them on a fresh
  machine, byte for byte what the checkout computes, and writes nothing but the digests it reads back next time.
* A shipped answer is served only under the key a run computes (engine, data, command): after a change it is a miss.
* A run that keeps its answer stores no other kind of entry (cache.keep_only).
* The digests of the engine's and the data's files are remembered by stat signature, and never outlive an edit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from ckspace import cache
from ckspace.cli import answers
from packaging_helper import REPO, build_package


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> Path:
    return build_package(tmp_path_factory.mktemp("build"))


def _run(argv: list[str], package: Path, cache_dir: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CKSPACE_CACHE_DIR")}
    env.update(PYTHONPATH=str(package), CKSPACE_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-m", "ckspace", *argv], cwd=cwd, env=env, capture_output=True)


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).parent.as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ["enumerate", "--arch", "gfx950"],
    ["enumerate", "--arch=gfx950", "--set", "ck-full-tests"],  # another spelling of an option: the same key
    ["enumerate", "--set", "ck-tiny", "--arch", "gfx90a"],  # the options in another order: the same key
    ["enumerate", "--arch", "gfx1201", "--count"],
])
def test_the_installed_package_serves_the_checkouts_answers_and_writes_only_what_it_reads(lib, tmp_path, argv):
    shipped = lib / "ckspace" / "constraints" / answers.SHIPPED_FILE
    assert shipped.is_file() and shipped.stat().st_mode & 0o444 == 0o444
    checkout = _run([*argv, "--no-cache"], REPO, tmp_path / "unused", tmp_path)
    cold = _run(argv, lib, tmp_path / "cache", tmp_path)
    assert cold.returncode == checkout.returncode == 0 and cold.stderr == checkout.stderr == b""
    assert cold.stdout == checkout.stdout and cold.stdout.count(b"\n") >= 2
    assert set(_files(tmp_path / "cache")) <= {cache.DIGESTS_KIND}  # no listing, no answer: it was shipped
    warm = _run(argv, lib, tmp_path / "cache", tmp_path)
    assert warm.stdout == cold.stdout and warm.returncode == 0


@pytest.mark.slow
def test_a_shipped_answer_is_served_only_under_the_key_of_the_run(lib, tmp_path) -> None:
    """Answers are found by the key the run computes: a damaged file, an edited data file or an edited engine file
    makes the command run (and print the same names, computed)."""
    copy = tmp_path / "lib"
    shutil.copytree(lib, copy)
    argv = ["enumerate", "--arch", "gfx942", "--set", "ck-default"]
    expected = _run([*argv, "--no-cache"], REPO, tmp_path / "unused", tmp_path).stdout
    shipped = copy / "ckspace" / "constraints" / answers.SHIPPED_FILE
    # a marker in place of the shipped answer shows whether it was served
    magic, index, body = shipped.read_bytes().split(b"\n", 2)
    import json

    where = json.loads(index)
    marker = zlib.compress(b"SERVED\n")
    forged = {k: [0, len(marker)] for k in where}
    shipped.write_bytes(magic + b"\n" + json.dumps(forged).encode() + b"\n" + marker)
    assert _run(argv, copy, tmp_path / "c1", tmp_path).stdout == b"SERVED\n"  # the key: served
    toml = copy / "ckspace" / "constraints" / "archs" / "gfx942.toml"
    toml.write_text(toml.read_text() + "\n# edited\n")
    assert _run(argv, copy, tmp_path / "c2", tmp_path).stdout == expected  # the data changed: computed
    toml.write_text(toml.read_text().replace("\n# edited\n", ""))
    assert _run(argv, copy, tmp_path / "c3", tmp_path).stdout == b"SERVED\n"
    engine = copy / "ckspace" / "version.py"
    engine.write_text(engine.read_text() + "\n# edited\n")
    assert _run(argv, copy, tmp_path / "c4", tmp_path).stdout == expected  # the engine changed: computed
    for damaged in (b"", b"ckspace-answers 1\n{not json\n", b"ckspace-answers 1\n[1, 2]\n",
                    magic + b"\n" + json.dumps(forged).encode() + b"\n" + b"\x00garbage"):
        shipped.write_bytes(damaged)
        done = _run(argv, copy, tmp_path / "c5", tmp_path)
        assert done.stdout == expected and done.returncode == 0 and done.stderr == b""
        shutil.rmtree(tmp_path / "c5", ignore_errors=True)


def test_a_run_that_keeps_its_answer_stores_nothing_else(tmp_path, monkeypatch, capsys) -> None:
    """CK's full-tests: a cold run keeps its answer (and the digests it will read back), not the full listing or
    the procedure's list, which its repeat never reads."""
    from ckspace.cli import main

    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(answers, "shipped", lambda entry: None)  # computed here, whether or not a build shipped it
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    assert main(["enumerate", "--arch", "gfx950", "--set", "ck-full-tests"]) == 0
    assert capsys.readouterr().out.count("\n") == 2_805
    kinds = set(_files(tmp_path))
    assert kinds <= {answers.KIND, cache.DIGESTS_KIND} and answers.KIND in kinds
    # the same listing as a table is not kept: it stores the listing and CK's procedure for the next run
    assert main(["enumerate", "--arch", "gfx950", "--set", "ck-full-tests", "--format", "table"]) == 0
    assert {"enumerate", "ck-procedure"} <= set(_files(tmp_path))


def test_keep_only_lets_one_kind_through() -> None:
    written: list[str] = []
    real = cache._write
    try:
        cache._write = lambda kind, digest, value: written.append(kind)  # type: ignore[assignment]
        with cache.keep_only("answer"):
            cache.store("enumerate", "k", [])
            cache.store("answer", "k", "text")
        cache.store("enumerate", "k", [])
    finally:
        cache._write = real  # type: ignore[assignment]
    assert written == ["answer", "enumerate"]


def test_one_command_in_any_spelling_has_one_key_and_another_command_another() -> None:
    key = answers.key
    a = key(["enumerate", "--arch", "gfx950", "--set", "ck-tiny"])
    assert a is not None
    assert key(["enumerate", "--arch=gfx950", "--set=ck-tiny"]) == a
    assert key(["enumerate", "--set", "ck-tiny", "--arch", "gfx950"]) == a
    assert key(["enumerate", "--arch", "gfx942", "--set", "ck-tiny"]) not in (a, None)
    w1 = key(["enumerate", "--arch", "gfx950", "--where", "tile_m == 16", "--where", "tile_n == 64"])
    w2 = key(["enumerate", "--arch", "gfx950", "--where", "tile_n == 64", "--where", "tile_m == 16"])
    assert w1 != w2  # one option's values keep their order


def test_a_remembered_digest_never_outlives_a_change(tmp_path, monkeypatch) -> None:
    """The digest of a tree is computed once while its files' stat signature holds: an edit of the same size, a new
    file, a removed one or a damaged entry makes it computed again. A tree edited within the racy window is not
    remembered."""
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.toml").write_text("x = 1\n")
    (root / "b.toml").write_text("y = 2\n")
    calls: list[int] = []

    def compute(paths: list[Path]) -> str:
        calls.append(1)
        return "|".join(p.read_text() for p in paths)

    def digest() -> str:
        return cache.remembered_digest(root, "*.toml", compute)

    monkeypatch.setattr(cache, "_now_ns", lambda: 10**19)  # every file older than the racy window
    assert digest() == "x = 1\n|y = 2\n" and len(calls) == 1
    assert digest() == "x = 1\n|y = 2\n" and len(calls) == 1  # remembered
    st = (root / "a.toml").stat()
    (root / "a.toml").write_text("x = 3\n")  # same size
    os.utime(root / "a.toml", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert digest() == "x = 3\n|y = 2\n" and len(calls) == 2
    (root / "c.toml").write_text("z = 0\n")
    assert digest().endswith("z = 0\n") and len(calls) == 3
    (root / "c.toml").unlink()
    assert digest() == "x = 3\n|y = 2\n" and len(calls) == 4
    assert digest() == "x = 3\n|y = 2\n" and len(calls) == 4
    for entry in (tmp_path / "cache" / cache.DIGESTS_KIND).iterdir():
        entry.write_bytes(entry.read_bytes()[:-3])  # damaged: a miss (with the cache's one warning)
    assert digest() == "x = 3\n|y = 2\n" and len(calls) == 5
    monkeypatch.setattr(cache, "_now_ns", lambda: 0)  # every file inside the racy window
    shutil.rmtree(tmp_path / "cache" / cache.DIGESTS_KIND)
    assert digest() and digest() and len(calls) == 7  # used, never remembered


def test_the_early_answer_reports_a_full_disk_in_one_line(tmp_path) -> None:
    """A kept answer served before the CLI loads still says 'cannot write output' with exit 2 on /dev/full, and
    ends quietly when a pipe's reader goes away."""
    env = {k: v for k, v in os.environ.items() if k != "CKSPACE_CACHE_DIR"}
    env.update(PYTHONPATH=str(REPO), CKSPACE_CACHE_DIR=str(tmp_path))
    argv = [sys.executable, "-m", "ckspace", "enumerate", "--arch", "gfx950", "--set", "ck-default"]
    first = subprocess.run(argv, env=env, capture_output=True, cwd=tmp_path)
    assert first.returncode == 0 and (tmp_path / answers.KIND).is_dir()  # kept: the next run is served early
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            done = subprocess.run(argv, env=env, stdout=full, stderr=subprocess.PIPE, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.decode().splitlines() == ["ckspace: error: cannot write output: No space left on device"]
    piped = subprocess.run(f"{' '.join(argv)} | head -n 1", shell=True, env=env, capture_output=True, cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == b"" and piped.stdout.count(b"\n") == 1


def test_a_rejected_names_explanation_is_kept_with_its_exit_status_and_a_valid_names_is_not(tmp_path) -> None:
    """explain of a name full rejects: the repeat prints the same text and exits 1, from the kept answer. A valid
    name's explanation says whether ckspace's tests and tiny hold it (selected or not yet): never kept."""
    env = {k: v for k, v in os.environ.items() if k != "CKSPACE_CACHE_DIR"}
    env.update(PYTHONPATH=str(REPO), CKSPACE_CACHE_DIR=str(tmp_path / "cache"))
    rejected = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8"
    valid = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"

    def explain(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ckspace", "explain", *argv], env=env, capture_output=True,
                              cwd=tmp_path)

    first = explain(rejected, "--arch", "gfx950", "--format", "json")
    import json

    assert first.returncode == 1 and json.loads(first.stdout)["name"] == rejected
    assert len(list((tmp_path / "cache" / answers.KIND).iterdir())) == 1
    (entry,) = (tmp_path / "cache" / answers.KIND).iterdir()
    again = explain("--format=json", rejected, "--arch", "gfx950")
    assert (again.returncode, again.stdout, again.stderr) == (1, first.stdout, b"")
    assert entry.stat().st_mtime_ns == next((tmp_path / "cache" / answers.KIND).iterdir()).stat().st_mtime_ns
    assert explain(valid, "--arch", "gfx950").returncode == 0
    assert len(list((tmp_path / "cache" / answers.KIND).iterdir())) == 1  # the valid name's is not kept
