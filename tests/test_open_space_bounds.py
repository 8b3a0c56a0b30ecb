"""A command that must hold a set in memory refuses the open space (`--rules -ck-curation`: 43,639,549,726,800
kernels on gfx950, README's Catalogs section) with one line and exit 2, after counting it and before listing any
of it; the limit is coverage's and a selection's (ckspace.select.selection.UNIVERSE_LIMIT, 500,000 kernels).
`sample` draws from the open space without listing it (ckspace.solve.sampling), in bounded memory.

Each command runs in a child limited to 3 GiB of address space and a timeout: a command that lists the open space
instead fails the test with a MemoryError or a timeout, and cannot eat the machine."""

from __future__ import annotations

import os
import resource
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OPEN = ["--arch", "gfx950", "--rules", "-ck-curation"]
OPEN_TOTAL = "43,639,549,726,800"  # README: the open space of gfx950
MEMORY = 3 << 30
TIMEOUT = 120  # a cold count of the open space takes ~12 s; listing it takes days


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def ckspace(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=TIMEOUT, preexec_fn=_limited, **kwargs)


def assert_refused(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ckspace: error: "), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert "more than 500,000 kernels" in lines[0], lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert proc.stdout == ""


@pytest.mark.parametrize("args", [
    ["coverage", *OPEN, "--set", "full"],  # the reported run: grew by ~20 MB/s to a MemoryError
    ["coverage", "--set", "full", "--arch", "gfx950", "--rules=-ck-curation", "--format", "json"],
], ids=["coverage", "coverage-json"])
def test_a_set_command_refuses_the_open_space_before_listing_it(args):
    started = time.monotonic()
    proc = ckspace(*args)
    assert_refused(proc, f"{OPEN_TOTAL} kernels")  # the count: nothing was listed to find it
    assert time.monotonic() - started < 60


@pytest.mark.slow
def test_sample_draws_from_the_open_space_without_listing_it():
    started = time.monotonic()
    proc = ckspace("sample", *OPEN, "--set", "full", "-n", "5")
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = proc.stdout.split()
    assert len(names) == len(set(names)) == 5 and proc.stderr == ""
    assert time.monotonic() - started < 60


def test_coverage_of_names_over_the_open_space_is_refused(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("grouped_conv_bwd_data_fp32_nhwgc_2d_mem_cshuffle_intrawave_64x64x32_2x2x1_16x16x8_vec1_1_1\n")
    assert_refused(ckspace("coverage", str(names), *OPEN), "the space to cover", f"{OPEN_TOTAL} kernels")


def test_a_table_of_the_open_space_is_refused_and_a_stream_is_not():
    assert_refused(ckspace("enumerate", *OPEN, "--format", "table"), f"{OPEN_TOTAL} kernels", "--format names")
    with subprocess.Popen([sys.executable, "-m", "ckspace", "enumerate", *OPEN, "--format", "jsonl"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, preexec_fn=_limited,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}) as proc:
        try:
            first = proc.stdout.readline()  # the open space streams: a first kernel comes, memory stays bounded
        finally:
            proc.kill()
    assert first.startswith(b'{"name":"grouped_conv_')


def test_the_open_space_under_the_limit_is_still_listed():
    # bwd_data 2d fp32 of the open space, pinned to a few kernels: counted, under the limit, sampled
    where = ("tile_m == 64 and tile_n == 64 and tile_k == 32 and wave_m == 2 and wave_n == 2 and warp_tile_m == 16 "
             "and warp_tile_n == 16 and pipeline == 'mem' and scheduler == 'intrawave' and vec_a == 1 and vec_b == 1 "
             "and vec_c == 1")
    base = [*OPEN, "--variant", "bwd_data", "--ndim", "2", "--dtype", "fp32", "--where", where]
    counted = ckspace("enumerate", *base, "--count", "--format", "csv")
    assert counted.returncode == 0, counted.stderr
    total = sum(int(line.split(",")[3]) for line in counted.stdout.splitlines()[1:])  # variant,ndim,dtype,count,cpp
    assert 0 < total <= 500_000
    sampled = ckspace("sample", *base, "-n", str(total + 1))
    assert sampled.returncode == 0, sampled.stderr
    assert len(sampled.stdout.split()) == total


def test_the_terminal_summary_of_the_open_space_counts_it():
    # On a terminal enumerate prints the counts per stratum and how to get the names: the open space is counted,
    # not listed (before, the summary made a list of every kernel).
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ckspace", "enumerate", *OPEN], stdout=slave,
                            stderr=subprocess.PIPE, cwd=ROOT, preexec_fn=_limited,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"})
    os.close(slave)
    out = b""
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        status = proc.wait()
        err = proc.stderr.read().decode()
        proc.stderr.close()
    assert status == 0, err
    text = out.decode(errors="replace")
    assert OPEN_TOTAL in text and "kernels: pipe them" in text


@pytest.mark.slow
@pytest.mark.parametrize("set_name", ["ck-full-tests", "ck-tiny"])
def test_cks_procedures_over_the_open_space_are_refused(set_name):
    # CK's full-tests and tiny are chosen by CK's loops over the whole of full: under -ck-curation that is the open
    # space, counted and refused before CK's procedure lists any of it
    proc = ckspace("enumerate", *OPEN, "--set", set_name, "--no-cache")
    assert_refused(proc, f"CK's {set_name}", f"{OPEN_TOTAL} kernels")
