"""A wrong value of any option of any command gets one line on stderr, exit 2 and no traceback, before any long work.

Run in process through `ckspace.cli.main` (the real parser and commands), so the table stays cheap to extend.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ckspace.cli import main

NAME = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
E = ["enumerate", "--arch", "gfx950"]

CASES: list[tuple[list[str], str]] = [
    # enumerate
    (["enumerate", "--arch", "gfx1"], "unknown arch 'gfx1'"),
    (["enumerate", "--arch", ""], "unknown arch ''"),
    ([*E, "--set", "all"], "unknown set 'all'"),
    ([*E, "--variant", ""], "empty value in --variant"),
    ([*E, "--variant", "forward,"], "empty value in --variant"),
    ([*E, "--variant", "forward,,bwd_data"], "empty value in --variant"),
    ([*E, "--variant", "fwdw"], "unknown variant 'fwdw'"),
    ([*E, "--ndim", "2x"], "unknown ndim '2x'"),
    ([*E, "--ndim", "two"], "unknown ndim 'two'"),
    ([*E, "--ndim", "4d"], "unknown ndim '4d'"),
    ([*E, "--ndim", "3,"], "empty value in --ndim"),
    ([*E, "--ndim", "²"], "unknown ndim '²'"),
    ([*E, "--ndim", "9" * 5000], "unknown ndim"),
    ([*E, "--dtype", "f16"], "unknown dtype 'f16'"),
    ([*E, "--dtype", ","], "empty value in --dtype"),
    ([*E, "--format", "xml"], "invalid choice"),
    ([*E, "--rules", "+nope"], "unknown rule family 'nope'"),
    ([*E, "--rules", "-model"], "cannot be switched off"),
    ([*E, "--where", "tile_q > 1"], "unknown field 'tile_q'"),
    # a value no field can hold is a typo, not an empty answer: the field's values are named (fields.toml)
    ([*E, "--where", "pipeline == 'compv9'"], "pipeline has no value 'compv9'; values: compv1, compv2, compv3"),
    ([*E, "--where", "variant == 'fwd'"], "variant has no value 'fwd'; values: forward, bwd_data"),
    ([*E, "--where", "ndim == '3d'"], "cannot compare ndim (int) with '3d' (str); ndim values: 2, 3"),
    ([*E, "--where", "ndim == 4"], "ndim has no value 4; values: 2, 3"),
    ([*E, "--where", "tile_m == 7"], "tile_m has no value 7; values: 16, 32, 48"),
    ([*E, "--where", "vec_c in (1, 3)"], "vec_c has no value 3; values: 1, 2, 4, 8, 16"),
    ([*E, "--constraints", "/nonexistent/dir"], "/nonexistent/dir"),
    ([*E, "--ck-api", "1999.01"], "1999.01"),
    ([*E, "--ck-include", "/tmp"], "--ck-include is read only with --ck-api auto"),
    ([*E, "--set", "full", "--objective", "tiny"], "apply to --set tests and --set tiny only"),
    ([*E, "--set", "tests", "--objective", "/nonexistent/o.toml"], "/nonexistent/o.toml"),
    # sample
    (["sample", "-n", "x", "--arch", "gfx950"], "invalid int value"),
    (["sample", "-n", "-1", "--arch", "gfx950"], "-n must be >= 0"),
    (["sample", "-n", "3", "--arch", "gfx950", "--seed", "²"], "--seed"),
    (["sample", "-n", "3", "--arch", "gfx950", "--seed", "7" * 4300], "--seed"),
    (["sample", "-n", "3", "--arch", "gfx950", "--seed", ""], "--seed"),
    (["sample", "-n", "3", "--arch", "gfx950", "--stratify", "colour"], "unknown --stratify dimension 'colour'"),
    (["sample", "-n", "3", "--arch", "gfx950", "--ndim", "2d3"], "unknown ndim '2d3'"),
    (["sample", "-n", "3", "--arch", "gfx950", "--set", "most"], "unknown set 'most'"),
    # coverage
    (["coverage", "--set", "some", "--arch", "gfx950"], "unknown set 'some'"),
    (["coverage", "/nonexistent/names.txt", "--arch", "gfx950"], "cannot read"),
    (["coverage", "--set", "tiny", "--arch", "gfx950", "--format", "yaml"], "invalid choice"),
    # explain
    (["explain", NAME, "--neighbours", "x"], "invalid int value"),
    (["explain", NAME, "--neighbours", "1000"], "--neighbours must be between 0 and 100"),
    (["explain", NAME, "--format", "xml"], "invalid choice"),
    (["explain", NAME, "--arch", "gfx1"], "unknown arch 'gfx1'"),
    (["explain", NAME + "_"], "malformed kernel name"),
    # emit and build
    (["emit", "--arch", "gfx950", "--set", "tiny", "-o", "OUT", "--chunk-size", "0"], "--chunk-size must be"),
    (["emit", "--arch", "gfx950", "--set", "tiny", "-o", "OUT", "--chunk-size", "x"], "invalid int value"),
    (["emit", "--arch", "gfx950", "--set", "tiny", "-o", "OUT", "--chunk-size", "10" * 10], "--chunk-size must be"),
    (["emit", "--arch", "gfx950", "--set", "tiny", "-o", ""], "-o/--output needs a directory"),
    (["emit", "--arch", "gfx950", "--set", "tiny", "-o", "  "], "-o/--output needs a directory"),
    (["emit", "--arch", "gfx950", "--set", "tiny", "-o", "OUT", "--ndim", "2x"], "unknown ndim '2x'"),
    (["emit", "--arch", "gfx950", "--set", "tiny", "-o", "OUT", "--ck-api", "2024"], "2024"),
    (["emit", "--arch", "gfx950", "--rules", "-ck-curation", "-o", "OUT"], "more than --max-kernels 100,000"),
    (["emit", "--arch", "gfx950", "--toolchain", "none", "--max-kernels", "100", "-o", "OUT"], "14,048 kernels, more than --max-kernels 100"),
    (["emit", "--arch", "gfx950", "--max-kernels", "0", "-o", "OUT"], "--max-kernels must be at least 1"),
    (["build", "/nonexistent/out"], "/nonexistent/out"),
    (["build", "OUT", "-j", "x"], "invalid int value"),
    (["build", "OUT", "--launcher", "icecc"], "invalid choice"),
    # rules
    (["rules", "arch.nope"], "no rule or family 'arch.nope'"),
    (["rules", "--format", "html"], "invalid choice"),
    # no command, unknown command
    (["frobnicate"], "invalid choice"),
]


@pytest.mark.slow
@pytest.mark.parametrize("argv,needle", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_option_value_is_one_line_exit_2(argv: list[str], needle: str, tmp_path: Path, capsys,
                                              monkeypatch) -> None:
    monkeypatch.setenv("CKSPACE_CACHE_DIR", str(tmp_path / "cache"))
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("ckspace: error: "), lines[0]
    assert needle in lines[0], lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing written
