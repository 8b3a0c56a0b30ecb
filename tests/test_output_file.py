"""`-o FILE` (and `--export-json FILE`) behave like `> FILE` in a shell, except that a regular file is replaced
atomically (README, the -o paragraph):
- what is not a regular file (/dev/null, /dev/full, a FIFO, a symlink to one) is written through, never replaced;
  a write error is one error line, exit 2;
- a regular file is replaced by a temporary in its directory, only when the run ends well (a failed run leaves it
  byte-identical, and no temporary); a symlink to one stays a symlink and its target is replaced;
- the new file keeps the old one's mode (and, where the process may, its owner and group); a new file gets
  0o666 less the umask."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["enumerate", "--arch", "gfx950", "--variant", "bwd_data", "--ndim", "2", "--dtype", "fp32"]  # 84 kernels
AS_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="needs root: only root may write into /dev or give a file to another user")


def ckspace(*args: str, umask: int | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    preexec = (lambda: os.umask(umask)) if umask is not None else None  # noqa: E731
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, env=env, cwd=ROOT,
                          timeout=timeout, preexec_fn=preexec)


@pytest.fixture(scope="module")
def expected() -> bytes:
    """The names of SMALL as a pipe gets them: what -o FILE must hold."""
    proc = ckspace(*SMALL)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.split()) == 84  # spec: gfx950 bwd_data 2d fp32
    return proc.stdout


def assert_one_error_line(proc: subprocess.CompletedProcess, *needles: str) -> None:
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ckspace: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


def is_char_device(path: str) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


def test_dev_null_stays_a_character_device_and_the_run_succeeds():
    assert is_char_device("/dev/null")
    proc = ckspace(*SMALL, "-o", "/dev/null")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"" and proc.stderr == b""
    assert is_char_device("/dev/null")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("option", ["-o", "--export-json"])
@pytest.mark.parametrize("extra", [[], ["--count"]], ids=["listing", "count"])
def test_dev_full_is_one_error_line_and_stays_a_character_device(option, extra):
    proc = ckspace(*SMALL, *extra, option, "/dev/full")
    assert_one_error_line(proc, f"{option} /dev/full", "No space left on device")
    assert is_char_device("/dev/full")


def test_a_symlink_to_a_device_is_written_through(tmp_path):
    link = tmp_path / "sink"
    link.symlink_to("/dev/null")
    proc = ckspace(*SMALL, "-o", str(link))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == "/dev/null" and is_char_device("/dev/null")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sink"]  # no temporary left


def test_standard_output_as_a_file_name_is_written_through(expected):
    # /proc/self/fd/1 (what /dev/stdout points to) is this run's pipe: the names come out of it
    proc = ckspace(*SMALL, "-o", "/proc/self/fd/1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected


def test_a_fifo_gets_the_bytes(tmp_path, expected):
    fifo = tmp_path / "names.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as fh:  # blocks until ckspace opens the FIFO for writing
            got.append(fh.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc = ckspace(*SMALL, "-o", str(fifo))
    reader.join(timeout=60)
    if reader.is_alive() and stat.S_ISFIFO(os.lstat(fifo).st_mode):  # the writer never came: let the reader go
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file renamed over it
    assert got == [expected]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["names.fifo"]


def test_a_regular_file_keeps_its_mode(tmp_path, expected):
    out = tmp_path / "names.txt"
    out.write_bytes(b"old\n")
    out.chmod(0o600)
    proc = ckspace(*SMALL, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == expected
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    out.chmod(0o640)
    assert ckspace(*SMALL, "-o", str(out), umask=0o077).returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640  # the old file's mode, not the umask's
    assert sorted(p.name for p in tmp_path.iterdir()) == ["names.txt"]


@AS_ROOT
def test_a_regular_file_keeps_its_owner_and_group(tmp_path, expected):
    out = tmp_path / "names.txt"
    out.write_bytes(b"old\n")
    os.chown(out, 4321, 4322)
    out.chmod(0o640)
    proc = ckspace(*SMALL, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    st = out.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o640)
    assert out.read_bytes() == expected


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_file_gets_the_mode_of_the_umask(tmp_path, umask, expected):
    out = tmp_path / "names.txt"
    proc = ckspace(*SMALL, "-o", str(out), umask=umask)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == expected
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask  # as `> names.txt` would make it


def test_a_symlink_to_a_regular_file_stays_a_symlink(tmp_path, expected):
    real = tmp_path / "real.txt"
    real.write_bytes(b"old\n")
    real.chmod(0o600)
    link = tmp_path / "link.txt"
    link.symlink_to("real.txt")
    proc = ckspace(*SMALL, "-o", str(link))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == "real.txt"
    assert real.read_bytes() == expected and stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]


@pytest.mark.parametrize("bad", [["--where", "tile_m == 7"], ["--where", "tile_q > 1"], ["--variant", "nope"]])
def test_a_failing_run_leaves_the_old_file_byte_identical(tmp_path, bad):
    out = tmp_path / "names.txt"
    old = b"old bytes\x00\xff\n"
    out.write_bytes(old)
    out.chmod(0o600)
    link = tmp_path / "link.txt"
    link.symlink_to("names.txt")
    for target in (out, link):
        proc = ckspace(*SMALL, *bad, "-o", str(target))
        assert_one_error_line(proc)
        assert out.read_bytes() == old and stat.S_IMODE(out.stat().st_mode) == 0o600
        assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "names.txt"]  # no temporary left


def test_output_file_api_replaces_only_when_the_block_ends_well(tmp_path):
    from ckspace.cli.output import output_file

    out = tmp_path / "k.txt"
    out.write_text("old\n")
    with pytest.raises(RuntimeError):
        with output_file(out) as fh:
            fh.write("partial\n")
            raise RuntimeError("stop")
    assert out.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["k.txt"]
    with output_file(out) as fh:
        fh.write("new\n")
    assert out.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["k.txt"]
