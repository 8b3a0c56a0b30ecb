"""Files given on the command line are read with a bound, whatever they are, and JSON inputs are parsed strictly: /dev/zero,
/dev/urandom, a sparse file of gigabytes, a FIFO without a writer, JSON nested 100,000 deep or an integer of
thousands of digits is one `ckspace: error:` line and exit 2, never gigabytes of memory, a hang or a traceback.

The shared reader is ckspace.lines (read_bounded, open_input, parse_json): --trait-config, --ck-config, --objective,
--record and the rule data read whole files through it, --stable-from, --names and coverage's FILE open through it.
CLI runs are whole processes with a private cache directory, a memory ceiling and a time limit, so that a reader
without its bound fails the test rather than the machine.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace.errors import CkspaceError, UsageError
from ckspace.lines import MAX_INT_DIGITS, parse_json, read_bounded

REPO = Path(__file__).resolve().parent.parent
USER = REPO / "tests" / "fixtures" / "ck-configs-user" / "forward" / "nhwgc_fp16.json"
NAME = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
HAS_FIFO = hasattr(os, "mkfifo")
MEMORY_CEILING = 2 << 30  # bytes of address space for a child: far above a run that errors, far below /dev/zero's


def _ceiling() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))


def ckspace(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CKSPACE_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=timeout, preexec_fn=_ceiling, stdin=subprocess.DEVNULL)


def one_error_line(proc: subprocess.CompletedProcess, *needles: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("ckspace: error: "), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr + proc.stdout
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _sparse(path: Path, size: int = 3 << 30) -> Path:
    with path.open("wb") as fh:  # holes: no disk is used
        fh.truncate(size)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _let_go(path: Path) -> None:
    """A reader blocked in open() on the FIFO (the bug) is let go: a writer opens and closes."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def _within(seconds: float, fn):
    """fn() run in a thread; its result, or a failure if it is still running after `seconds` (a blocked open)."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds}s"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]


# ---- the shared reader -------------------------------------------------------------------------------------------
def test_read_bounded_reads_up_to_the_limit_and_refuses_one_byte_more(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100, "f") == b"x" * 100
    with pytest.raises(UsageError, match=r"^f: file too large \(100 bytes; at most 99\)$"):
        read_bounded(path, 99, "f")
    with pytest.raises(UsageError, match=r"^f: cannot read: is a directory$"):
        read_bounded(tmp_path, 100, "f")
    with pytest.raises(UsageError, match=r"^f: cannot read: No such file or directory$"):
        read_bounded(tmp_path / "missing", 100, "f")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_read_only_to_one_byte_past_the_limit(device: str) -> None:
    with pytest.raises(UsageError, match=rf"^{device}: file too large \(more than 1,000 bytes\)$"):
        read_bounded(device, 1000, device)
    with pytest.raises(UsageError, match=rf"^{device}: cannot read: not a regular file$"):
        read_bounded(device, 1000, device, regular_only=True)


def test_a_sparse_file_of_gigabytes_is_refused_unread(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "big")
    with pytest.raises(UsageError, match=r"file too large \(3,221,225,472 bytes; at most 1,000\)"):
        _within(10, lambda: read_bounded(path, 1000, "big"))


@pytest.mark.skipif(not HAS_FIFO, reason="no FIFOs here")
def test_a_fifo_without_a_writer_reads_as_empty_and_one_with_a_writer_to_its_end(tmp_path: Path) -> None:
    path = _fifo(tmp_path / "fifo")
    try:
        assert _within(10, lambda: read_bounded(path, 1000, "fifo")) == b""
        with pytest.raises(UsageError, match=r"^fifo: cannot read: not a regular file$"):
            _within(10, lambda: read_bounded(path, 1000, "fifo", regular_only=True))
    finally:
        _let_go(path)

    def writer() -> None:
        with open(path, "wb") as fh:  # blocks until the reader opens
            fh.write(b"a" * 5000)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        with pytest.raises(UsageError, match="more than 1,000 bytes"):
            _within(10, lambda: read_bounded(path, 1000, "fifo"))
    finally:
        t.join(10)


@pytest.mark.skipif(not HAS_FIFO, reason="no FIFOs here")
def test_names_files_open_a_fifo_without_blocking(tmp_path: Path) -> None:
    """--stable-from, --names and coverage's FILE (read_names): a FIFO with no writer is an empty list of names."""
    from ckspace.select.selection import read_names

    path = _fifo(tmp_path / "names")
    try:
        assert _within(10, lambda: read_names(path, "--stable-from")) == []
    finally:
        _let_go(path)
    with pytest.raises(CkspaceError, match=r"^--names .*: cannot read: is a directory$"):
        read_names(tmp_path, "--names")


_RECORD_CHILD = """
import sys
from ckspace.oracle import check_record_file as _record_file
from ckspace.errors import CkspaceError
try:
    _record_file(sys.argv[1])
except CkspaceError as exc:
    print(exc)
"""


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_verify_record_reads_its_rule_file_with_the_bound(tmp_path: Path) -> None:
    """verify --record FILE is checked before any compile: a device, a huge file or TOML the parser cannot take is
    one line (run in a child: without the bound, /dev/zero is read until memory runs out)."""
    def record_error(path: Path | str) -> str:
        env = {**os.environ, "PYTHONPATH": str(REPO), "CKSPACE_CACHE_DIR": str(tmp_path / "cache")}
        proc = subprocess.run([sys.executable, "-c", _RECORD_CHILD, str(path)], capture_output=True, text=True,
                              env=env, timeout=60, preexec_fn=_ceiling)
        assert proc.returncode == 0 and proc.stdout.count("\n") == 1, proc.stderr[-2000:]
        return proc.stdout.strip()

    assert record_error("/dev/zero") == ("--record /dev/zero: not a readable TOML rule file (cannot read: not a "
                                         "regular file)")
    toml = _sparse(tmp_path / "r.toml")
    assert record_error(toml).startswith(f"--record {toml}: not a readable TOML rule file (file too large")
    toml.unlink()
    toml.write_text("x = " + "9" * 5000 + "\n")
    assert record_error(toml).startswith(f"--record {toml}: not a readable TOML rule file (invalid TOML")
    toml.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert record_error(toml).startswith(f"--record {toml}: not a readable TOML rule file (invalid TOML")


# ---- JSON --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "f.json: arrays or objects nested too deeply to be read"),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "f.json: arrays or objects nested too deeply to be read"),
    ('{"instances": [{"id": 0, "tile_m": ' + "9" * 5000 + "}]}",
     "f.json: instances[0].tile_m: an integer of 5,000 digits is out of range (at most 64 digits)"),
    ('{"a": [1, {"b c": -' + "1" * 65 + "}]}",
     'f.json: a[1]."b c": an integer of 65 digits is out of range (at most 64 digits)'),
    ("9" * 4301, "f.json: the document: an integer of 4,301 digits is out of range (at most 64 digits)"),
    ("", "f.json: not JSON: the file is empty"),
    ("{not json", "f.json: not JSON: line 1 column 2: Expecting property name enclosed in double quotes"),
])
def test_parse_json_refuses_with_one_line(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_json(text.encode(), "f.json")
    assert str(caught.value) == message


def test_parse_json_keeps_integers_up_to_the_digit_bound() -> None:
    assert parse_json("[" + "9" * MAX_INT_DIGITS + ", -1, 0]", "f") == [int("9" * MAX_INT_DIGITS), -1, 0]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                 st.recursive(st.integers() | st.text(max_size=5) | st.none() | st.booleans(),
                              lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                         max_size=3),
                              max_leaves=20).map(json.dumps),
                 st.integers(1, 3000).map(lambda n: "[" * n + "]" * n)))
def test_parse_json_gives_a_document_or_one_line(text: str) -> None:
    try:
        parse_json(text.encode("utf-8", errors="surrogatepass"), "fuzz.json")
    except UsageError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("fuzz.json: ")


# ---- --trait-config ----------------------------------------------------------------------------------------------
TRAIT_COMMANDS = {  # every command that takes --trait-config, with what it needs besides
    "enumerate": ["enumerate", "--arch", "gfx950"],
    "sample": ["sample", "-n", "2", "--arch", "gfx950"],
    "emit": ["emit", "--arch", "gfx950", "-o", "OUT"],
    "verify": ["verify", "--arch", "gfx950"],
}


def _bad_trait_inputs(tmp_path: Path) -> dict[str, tuple[Path | str, str]]:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    deep_object = tmp_path / "deep-object.json"
    deep_object.write_text('{"trait_config": {"tile_m": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    long_int = tmp_path / "long-int.json"
    long_int.write_text('{"tile_config": {"tile_m": {"min": 0, "max": ' + "9" * 5000 + "}}}")
    out = {"deep": (deep, "nested too deeply"), "deep object": (deep_object, "nested too deeply"),
           "long int": (long_int, "tile_config.tile_m.max: an integer of 5,000 digits"),
           "sparse": (_sparse(tmp_path / "sparse.json"), "file too large")}
    if os.path.exists("/dev/zero"):
        out["/dev/zero"] = ("/dev/zero", "--trait-config /dev/zero: file too large (more than 1,048,576 bytes)")
        out["/dev/urandom"] = ("/dev/urandom", "--trait-config /dev/urandom: file too large")
    if HAS_FIFO:
        out["fifo"] = (_fifo(tmp_path / "fifo.json"), "fifo.json: not JSON: the file is empty")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("command", TRAIT_COMMANDS)
def test_a_bad_trait_config_file_is_one_line_in_every_command(command: str, tmp_path: Path) -> None:
    for what, (path, needle) in _bad_trait_inputs(tmp_path).items():
        argv = [str(tmp_path / "out") if a == "OUT" else a for a in TRAIT_COMMANDS[command]]
        try:
            proc = ckspace(tmp_path, *argv, "--trait-config", str(path), timeout=60)
        finally:
            if what == "fifo":
                _let_go(Path(path))
        one_error_line(proc, needle)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing emitted


def test_a_huge_range_is_its_fields_values_on_the_grid(tmp_path: Path) -> None:
    """{"min": 0, "max": 1000000000} is not listed: it allows the values of the field in it (here: all of them)."""
    doc = tmp_path / "range.json"
    doc.write_text(json.dumps({"variant": "forward", "trait_config": {"data_type": ["fp16"], "ndim_spatial": [2]},
                               "tile_config": {"tile_m": {"min": 0, "max": 1_000_000_000}}}))
    plain = ckspace(tmp_path, "enumerate", "--arch", "gfx950", "--variant", "forward", "--dtype", "fp16", "--ndim",
                    "2", "--format", "names")
    ranged = ckspace(tmp_path, "enumerate", "--arch", "gfx950", "--trait-config", str(doc), "--format", "names")
    assert plain.returncode == ranged.returncode == 0, ranged.stderr
    assert ranged.stdout == plain.stdout and plain.stdout.count("\n") > 100


# ---- --ck-config -------------------------------------------------------------------------------------------------
CK_CONFIG_COMMANDS = {  # every command that takes --ck-config
    "enumerate": ["enumerate", "--arch", "gfx950"],
    "explain": ["explain", NAME],
    "coverage": ["coverage", "--arch", "gfx950"],
    "sample": ["sample", "-n", "2", "--arch", "gfx950"],
    "emit": ["emit", "--arch", "gfx950", "-o", "OUT"],
}


def test_the_ck_config_commands_are_every_command_with_the_option() -> None:
    from ckspace.cli.app import build_parser
    import argparse

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    have = {name for name, sub in commands.items() if any("--ck-config" in a.option_strings for a in sub._actions)}
    assert have == set(CK_CONFIG_COMMANDS)
    have = {name for name, sub in commands.items() if any("--trait-config" in a.option_strings for a in sub._actions)}
    assert have == set(TRAIT_COMMANDS)


@pytest.mark.parametrize("command", CK_CONFIG_COMMANDS)
def test_a_ck_config_integer_of_thousands_of_digits_is_one_line_naming_file_and_key(command: str,
                                                                                     tmp_path: Path) -> None:
    doc = json.loads(USER.read_text())
    text = json.dumps(doc).replace('"tile_n": 64', '"tile_n": ' + "7" * 5000, 1)
    assert text.count("7" * 5000) == 1
    path = tmp_path / "nhwgc_fp16.json"
    path.write_text(text)
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in CK_CONFIG_COMMANDS[command]]
    proc = ckspace(tmp_path, *argv, "--ck-config", str(path))
    one_error_line(proc, "nhwgc_fp16.json", "instances[0].tile_n", "5,000 digits")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing emitted


@pytest.mark.parametrize("what", ["deep", "/dev/zero", "link to /dev/zero", "sparse", "fifo"])
def test_a_ck_config_that_is_no_config_file_is_one_line(what: str, tmp_path: Path) -> None:
    if what in ("/dev/zero", "link to /dev/zero") and not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    if what == "fifo" and not HAS_FIFO:
        pytest.skip("no FIFOs here")
    path = tmp_path / "c.json"
    needle = {"deep": "c.json: arrays or objects nested too deeply", "/dev/zero": "/dev/zero: not a regular file",
              "link to /dev/zero": "c.json: not a regular file", "sparse": "c.json: file too large",
              "fifo": "c.json: not a regular file"}[what]
    if what == "deep":
        path.write_text('{"variant": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif what == "/dev/zero":
        path = Path("/dev/zero")
    elif what == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif what == "sparse":
        _sparse(path)
    else:
        _fifo(path)
    try:
        proc = ckspace(tmp_path, "enumerate", "--arch", "gfx950", "--ck-config", str(path), timeout=60)
    finally:
        if what == "fifo":
            _let_go(path)
    one_error_line(proc, needle)


# ---- --objective -------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_an_objective_that_is_a_device_or_huge_is_one_line(tmp_path: Path) -> None:
    proc = ckspace(tmp_path, "enumerate", "--arch", "gfx950", "--set", "tiny", "--objective", "/dev/zero")
    one_error_line(proc, "objective /dev/zero: cannot read: not a regular file")
    big = _sparse(tmp_path / "o.toml")
    proc = ckspace(tmp_path, "enumerate", "--arch", "gfx950", "--set", "tiny", "--objective", str(big))
    one_error_line(proc, "o.toml: file too large")
