"""The `ckspace enumerate` command line: outputs, exit codes, one-line errors, determinism and the cache."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ckspace.rules import data as D

SMALL = ["--arch", "gfx950", "--variant", "bwd_data", "--ndim", "2", "--dtype", "fp32"]  # 84 kernels (spec table)


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ckspace: error:")
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_names_output_is_sorted_and_counts_match_spec() -> None:
    proc = run("enumerate", *SMALL, "--format", "names")
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.split()
    assert len(names) == 84 and names == sorted(names)
    assert all(n.startswith("grouped_conv_bwd_data_fp32_nhwgc_2d_") for n in names)


def test_pipe_default_is_plain_names() -> None:
    assert run("enumerate", *SMALL).stdout == run("enumerate", *SMALL, "--format", "names").stdout


def test_repeated_and_comma_separated_options() -> None:
    a = run("enumerate", "--arch", "gfx950", "--variant", "bwd_data", "--variant", "forward_depthwise", "--count", "--format", "json")
    b = run("enumerate", "--arch", "gfx950", "--variant", "bwd_data,forward_depthwise", "--count", "--format", "json")
    assert a.returncode == 0 and a.stdout == b.stdout
    assert json.loads(a.stdout)["total"] == 124 + 124 + 84 + 104 + 104 + 84 + 60


def test_json_jsonl_csv_agree() -> None:
    names = run("enumerate", *SMALL).stdout.split()
    as_json = json.loads(run("enumerate", *SMALL, "--format", "json").stdout)
    as_jsonl = [json.loads(line) for line in run("enumerate", *SMALL, "--format", "jsonl").stdout.splitlines()]
    as_csv = list(csv.DictReader(io.StringIO(run("enumerate", *SMALL, "--format", "csv").stdout)))
    assert [r["name"] for r in as_json] == names == [r["name"] for r in as_jsonl] == [r["name"] for r in as_csv]
    first = as_json[0]
    assert first["variant"] == "bwd_data" and first["dtype"] == "fp32" and isinstance(first["tile_m"], int)


def test_table_format_has_counts() -> None:
    proc = run("enumerate", *SMALL, "--format", "table")
    assert proc.returncode == 0
    assert "84" in proc.stdout and "bwd_data" in proc.stdout


def test_count_table_and_plain() -> None:
    plain = run("enumerate", "--arch", "gfx950", "--variant", "forward_depthwise", "--count")
    assert plain.returncode == 0
    lines = plain.stdout.strip().splitlines()
    assert lines[-1].split() == ["total", "60", "60"]  # kernels, distinct C++ kernels (depthwise has no pads)
    table = run("enumerate", "--arch", "gfx950", "--variant", "forward_depthwise", "--count", "--format", "table")
    assert "60" in table.stdout


def test_count_in_a_pipe_has_a_header_and_no_impossible_rows() -> None:
    """Depthwise is 2D only (CK Tile's depthwise kernel has no 3D form), and CK's curation gives wave32 no fp32
    kernel: those strata get no row, and the rows that remain add up to the total."""
    for arch, gone in (("gfx950", {("forward_depthwise", "3d")}), ("gfx1201", {("forward_depthwise", "3d")})):
        lines = run("enumerate", "--arch", arch, "--count").stdout.strip().splitlines()
        assert lines[0].split("\t") == ["variant", "ndim", "dtype", "kernels", "cpp"]
        rows = [line.split("\t") for line in lines[1:-1]]
        assert not [r for r in rows if (r[0], r[1]) in gone]
        assert sum(int(r[3]) for r in rows) == int(lines[-1].split()[1]) > 0
        if arch == "gfx1201":
            assert not [r for r in rows if r[2] == "fp32" and r[0] != "forward_depthwise"]
    dw = json.loads(run("enumerate", "--arch", "gfx950", "--variant", "forward_depthwise", "--count", "--format",
                        "json").stdout)["strata"]
    assert sorted({s["ndim"] for s in dw}) == [2]  # JSON has no impossible stratum either
    # a stratum with no kernel is no row in text and csv (as in the table); JSON keeps it, counted 0. gfx12's WMMA
    # has no fp32 form (LLVM's gfx12 instructions: v_wmma_f32_16x16x16_f16/bf16 and integer ones only).
    argv = ["enumerate", "--arch", "gfx1201", "--rules", "-ck-curation", "--variant", "forward", "--ndim", "2",
            "--count"]
    csv = run(*argv, "--format", "csv").stdout.splitlines()
    assert [line.split(",")[2] for line in csv[1:]] == ["fp16", "bf16"]
    strata = json.loads(run(*argv, "--format", "json").stdout)["strata"]
    assert [(s["dtype"], s["count"] > 0) for s in strata] == [("fp16", True), ("bf16", True), ("fp32", False)]


def test_where_filters_and_counts() -> None:
    proc = run("enumerate", *SMALL, "--where", "tile_n >= 128 and vec_a == 4")
    names = proc.stdout.split()
    assert names and all("_vec4_" in n for n in names)


def test_output_is_byte_identical_across_runs_and_cache() -> None:
    cold = run("enumerate", *SMALL, "--format", "jsonl", "--no-cache").stdout
    first = run("enumerate", *SMALL, "--format", "jsonl").stdout
    second = run("enumerate", *SMALL, "--format", "jsonl").stdout
    assert cold == first == second


def test_cache_is_keyed_by_rule_files(tmp_path: Path) -> None:
    """Change a rule file: the next run must not serve the old result."""
    rules = tmp_path / "constraints"
    shutil.copytree(D.default_constraints_dir(), rules)
    before = run("enumerate", *SMALL, "--constraints", str(rules)).stdout.split()
    tiles = rules / "tables" / "ck" / "tiles.toml"
    head, _, tail = tiles.read_text().partition("[tiles.bwd_data]")
    line = next(x for x in tail.splitlines() if x.startswith('"2d.fp32"'))
    tiles.write_text(head + "[tiles.bwd_data]" + tail.replace(line, line.replace('"128x256x32", ', "")))
    after = run("enumerate", *SMALL, "--constraints", str(rules)).stdout.split()
    assert len(before) == 84 and after and len(after) < len(before)
    assert not any("_128x256x32_" in n for n in after)


@pytest.mark.parametrize("args,needles", [
    (["enumerate", "--arch", "gfx9999"], ["unknown arch 'gfx9999'", "gfx950"]),
    (["enumerate", "--arch", "gfx950", "--variant", "sideways"], ["unknown variant 'sideways'", "bwd_data"]),
    (["enumerate", "--arch", "gfx950", "--dtype", "fp64"], ["unknown dtype 'fp64'", "fp16"]),
    (["enumerate", "--arch", "gfx950", "--ndim", "4"], ["unknown ndim '4'"]),
    (["enumerate", "--arch", "gfx950", "--format", "xml"], ["invalid choice", "names"]),
    (["enumerate", "--arch", "gfx950", "--where", "tile_q > 3"], ["unknown field 'tile_q'"]),
    (["enumerate", "--arch", "gfx950", "--where", "tile_m >"], ["syntax error", "--where"]),
    (["enumerate", "--arch", "gfx950", "--rules", "+nonsense"], ["unknown rule family 'nonsense'", "ck-curation"]),
    (["enumerate", "--arch", "gfx950", "--set", "huge"], ["unknown set 'huge'"]),
    (["enumerate"], ["--arch"]),
])
def test_bad_input_is_one_line_exit_2(args, needles) -> None:
    assert_one_line_error(run(*args), *needles)


@pytest.mark.parametrize("where,needles", [
    # the column is the 1-based index into the text as printed (whitespace runs made single spaces)
    ("pipline == 'compv3'", ["unknown field 'pipline' at column 1", "did you mean 'pipeline'?"]),
    ("pipeline == compv3", ["unknown field 'compv3' at column 13", "a string is quoted: pipeline == 'compv3'"]),
    ("tile_m == 128 and", ["at column 18", "ends after 'and'"]),
    ("tile_m  ==  128  or", ["'tile_m == 128 or' at column 17", "ends after 'or'"]),
    ("tile_m = 128", ["at column 8", "compare with '=='"]),
    ("tile_m == 128 and and tile_n == 2", ["at column 19"]),
    ("qqqq > 1", ["unknown field 'qqqq' at column 1", "`ckspace fields` lists the fields"]),
])
def test_where_errors_point_at_the_column_and_suggest(where, needles, capsys) -> None:
    from ckspace.cli import main

    assert main(["enumerate", "--arch", "gfx950", "--no-cache", "--count", "--where", where]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and all(n in err for n in needles), err


@pytest.mark.parametrize("mutate,needle", [
    (lambda p: (p / "rules" / "arch.toml").write_text("[[rule]\nid = 1"), "invalid TOML"),
    (lambda p: (p / "rules" / "arch.toml").write_text((p / "rules" / "arch.toml").read_text().replace(
        'require = "tile_m % (wave_m * warp_tile_m) == 0"', 'require = "tile_m % (wave_m * warp_tile_zz) == 0"')), "unknown field 'warp_tile_zz'"),
    (lambda p: (p / "rules" / "pipeline.toml").write_text((p / "rules" / "pipeline.toml").read_text().replace(
        'family = "pipeline"', 'family = "pipelines"', 1)), "unknown family 'pipelines'"),
    (lambda p: (p / "rules" / "ck-curation.toml").write_text((p / "rules" / "ck-curation.toml").read_text().replace(
        "in ck.vec", "in ck.vectors")), "unknown table 'ck.vectors'"),
    (lambda p: (p / "rules" / "arch.toml").write_text((p / "rules" / "arch.toml").read_text() + (
        '\n[[rule]]\nid = "arch.warp-tile"\nfamily = "arch"\nrequire = "true"\nmessage = "m"\nrationale = "r"\nsource = "s"\n')), "duplicate id"),
])
def test_broken_rule_files_are_one_line_exit_2(tmp_path: Path, mutate, needle) -> None:
    rules = tmp_path / "constraints"
    shutil.copytree(D.default_constraints_dir(), rules)
    mutate(rules)
    assert_one_line_error(run("enumerate", *SMALL, "--constraints", str(rules)), needle)


def test_timings_split_is_printed() -> None:
    proc = run("enumerate", *SMALL, "--no-cache", "--timings")
    assert proc.returncode == 0
    assert "timings: imports" in proc.stderr and "solve" in proc.stderr and "output" in proc.stderr


def test_rules_value_may_start_with_a_dash() -> None:
    """The issue's own spelling, `--rules -ck-curation`, must work (argparse alone reads it as an option)."""
    a = run("enumerate", "--arch", "gfx950", "--variant", "forward_depthwise", "--rules", "-ck-curation", "--count", "--format", "json")
    b = run("enumerate", "--arch", "gfx950", "--variant", "forward_depthwise", "--rules=-ck-curation", "--count", "--format", "json")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout and json.loads(a.stdout)["total"] > 60


def test_enumerate_on_a_terminal_shows_the_summary_not_a_table_of_every_kernel():
    """Issue 14: on a terminal (a pseudo-terminal here) the main command prints the per-stratum counts and how to get
    the names, in the order --count uses, and no 14,048-row table; a short list is printed under its summary."""
    import os
    import sys

    from test_terminal_summary import on_a_terminal as run_on_a_terminal

    def on_a_terminal(*args: str) -> str:
        env = {**os.environ, "COLUMNS": "120", "LINES": "40", "NO_COLOR": "1"}
        return run_on_a_terminal([sys.executable, "-m", "ckspace", *args], env, ("stdout", "stderr"))

    text = on_a_terminal("enumerate", "--arch", "gfx950")
    lines = text.splitlines()
    assert len(lines) < 40 and "14,048" in text and "--format names" in text
    assert "grouped_conv_" not in text  # no kernel rows
    strata = [line.split("│")[1].strip() + " " + line.split("│")[3].strip() for line in lines
              if line.count("│") >= 4 and line.split("│")[1].strip() in ("forward", "bwd_data", "bwd_weight")]
    assert strata[0] == "forward fp16"  # --count's order (variants as fields.toml lists them), not the names' order
    tiny = on_a_terminal("enumerate", "--arch", "gfx950", "--set", "tiny")
    assert tiny.count("grouped_conv_") == 22  # the 22 tiny names fit under the summary


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_the_data_formats_carry_every_derived_quantity(fmt, capsys):
    """Issue 14: every [derive.*] of fields.toml that applies to a kernel's family is in its record, none empty;
    threads and elem_bytes checked against the spec's arithmetic (block size = 64 · waves; 2 bytes for fp16/bf16)."""
    import csv
    import io
    import json
    from pathlib import Path

    from ckspace.cli import main
    from ckspace.rules.schema import tomllib

    derives = tomllib.loads((Path(__file__).resolve().parent.parent / "constraints" / "fields.toml").read_text())["derive"]
    rows = []
    for args in (["--set", "tiny"], ["--variant", "forward_depthwise", "--dtype", "fp32"]):
        assert main(["enumerate", "--arch", "gfx950", *args, "--format", fmt]) == 0
        out = capsys.readouterr().out
        if fmt == "csv":
            rows += list(csv.DictReader(io.StringIO(out)))
        elif fmt == "json":
            rows += json.loads(out)
        else:
            rows += [json.loads(line) for line in out.splitlines()]
    assert rows and any(r["variant"] == "forward_depthwise" for r in rows)
    for r in rows:
        kind = "depthwise" if r["variant"] == "forward_depthwise" else "gemm"
        for name, d in derives.items():
            if d["kind"] in (kind, "both"):
                assert r.get(name) not in (None, ""), (r["name"], name)
        assert int(r["elem_bytes"]) == {"fp16": 2, "bf16": 2, "fp32": 4}[r["dtype"]]
        if kind == "gemm":
            assert int(r["threads"]) == 64 * int(r["wave_m"]) * int(r["wave_n"]) * int(r["wave_k"])


def test_output_file_is_written_atomically_in_the_format_of_its_suffix(tmp_path, capsys):
    from ckspace.cli import main

    base = ["enumerate", "--arch", "gfx950", "--set", "tiny"]
    assert main([*base, "--format", "csv"]) == 0
    piped = capsys.readouterr().out
    assert main([*base, "-o", str(tmp_path / "k.csv")]) == 0
    assert capsys.readouterr().out == "" and (tmp_path / "k.csv").read_text() == piped
    assert main([*base, "--export-json", str(tmp_path / "k.json")]) == 0
    assert len(json.loads((tmp_path / "k.json").read_text())) == 22
    assert main([*base, "-o", str(tmp_path / "k.txt")]) == 0
    assert len((tmp_path / "k.txt").read_text().split()) == 22  # names
    said = capsys.readouterr().err.strip().splitlines()  # each write to a file is confirmed, one line each
    assert said == [f"ckspace: wrote {tmp_path / name} ({fmt}, {lines} lines)"
                    for name, fmt, lines in (("k.json", "json", 24), ("k.txt", "names", 22))]  # (k.csv's: read above)
    # an unwritable or wrong path: exit 2, one line, no file
    for bad in (str(tmp_path / "no" / "k.txt"), str(tmp_path), ""):
        assert main([*base, "-o", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("ckspace: error: -o")
    assert not (tmp_path / "no").exists()
    # a run that fails leaves the old file as it was, and no temporary
    (tmp_path / "old.txt").write_text("old\n")
    assert main([*base, "--where", "tile_m == 7", "-o", str(tmp_path / "old.txt")]) == 2
    assert (tmp_path / "old.txt").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.csv", "k.json", "k.txt", "old.txt"]
    assert main([*base, "--export-json", str(tmp_path / "a.json"), "--format", "csv"]) == 2


def test_count_by_any_fields_matches_a_count_of_the_listing(capsys):
    from collections import Counter

    from ckspace.cli import main

    base = ["enumerate", "--arch", "gfx950", "--variant", "forward,bwd_data"]
    assert main([*base, "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = Counter((r["pipeline"], r["scheduler"], r["threads"]) for r in rows)  # threads: a derived quantity
    assert main([*base, "--count-by", "pipeline,scheduler,threads", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {(g["pipeline"], g["scheduler"], g["threads"]): g["count"] for g in out["groups"]} == dict(expected)
    assert out["total"] == len(rows) and out["by"] == ["pipeline", "scheduler", "threads"]
    assert main([*base, "--count-by", "pipeline"]) == 0  # tab-separated with a header in a pipe
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "pipeline\tcount" and sum(int(line.split("\t")[1]) for line in lines[1:]) == len(rows)
    assert main([*base, "--count-by", "tile_q"]) == 2 and "unknown field 'tile_q'" in capsys.readouterr().err


def test_fields_lists_every_field_with_the_values_of_fields_toml(capsys):
    from ckspace.cli import main
    from ckspace.rules.schema import tomllib

    toml = tomllib.loads((Path(__file__).resolve().parent.parent / "constraints" / "fields.toml").read_text())
    assert main(["fields", "--format", "json"]) == 0
    listed = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    for name, f in toml["field"].items():
        assert name in listed or name in toml["derive"], name
        if "values" in f and name in listed:
            assert listed[name]["values"] == f["values"]
    assert all(listed[name].get("formula") for name in toml["derive"])  # every derived quantity with its formula
    assert main(["fields", "nope"]) == 2 and "unknown field 'nope'" in capsys.readouterr().err


def test_stable_from_reports_what_was_kept_added_and_removed(tmp_path, capsys):
    from ckspace.cli import main

    base = ["enumerate", "--arch", "gfx950", "--set", "tiny"]
    assert main(base) == 0
    tiny = capsys.readouterr().out.split()
    previous = tiny[:15] + ["grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8"]
    (tmp_path / "prev.txt").write_text("\n".join(previous) + "\n")
    assert main([*base, "--stable-from", str(tmp_path / "prev.txt")]) == 0
    out = capsys.readouterr()
    now = set(out.out.split())
    kept, added, removed = len(set(previous) & now), len(now - set(previous)), len(set(previous) - now)
    assert f"{kept:,} kept, {added:,} added, {removed:,} removed (of {len(previous)} before, {len(now)} now)" in out.err


def test_a_table_in_a_pipe_is_not_cut_to_80_columns() -> None:
    """rich assumes 80 columns off a terminal; ckspace's tables and lines keep their full width in a pipe."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-m", "ckspace", "enumerate", *SMALL, "--format", "table"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout  # no cell cut short
    assert "bwd_data" in proc.stdout and "intrawave" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) > 80


def test_console_lines_are_not_hard_wrapped_in_a_pipe(monkeypatch) -> None:
    from ckspace.cli.console import console

    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()
    path = "/tmp/" + "/".join(["a_rather_long_directory_name"] * 12) + "/unit_0001.o"
    console(file=out).print(f"ckspace: object {path}: no kernel entry point")
    assert out.getvalue() == f"ckspace: object {path}: no kernel entry point\n"
    monkeypatch.setenv("COLUMNS", "60")  # a width the user asks for is kept
    assert console(file=io.StringIO()).width == 60


def _spec_warp_tile_k(c: dict) -> int:
    """spec 3.5, written out independently of fields.toml: the normal formula, or the legacy one for stream-K and
    for bwd_weight wavelet on tiles 64x32x64 and 64x64x64."""
    m, tile_k, fp32 = int(c["warp_tile_m"]), int(c["tile_k"]), c["dtype"] == "fp32"
    tile = (int(c["tile_m"]), int(c["tile_n"]), tile_k)
    if c["streamk"] != "none" or (c["variant"] == "bwd_weight" and c["pipeline"] == "wavelet"
                                  and tile in ((64, 32, 64), (64, 64, 64))):
        return min(8 if m == 32 else 16, tile_k // 4 if fp32 else tile_k)
    k_mfma = (2 if m == 32 else 4) if fp32 else (16 if m == 32 else 32)
    return min(max(4 if tile_k <= 16 else 8, k_mfma), tile_k)


def test_the_data_formats_say_where_warp_tile_k_comes_from(capsys):
    """Issue 14: warp_tile_k's origin. full derives it by spec 3.5's formula (so every full kernel is by_formula);
    CK's profiler configs mostly set the instruction's own k (spec 12.1: 32x32x8, 16x16x16)."""
    from ckspace.cli import main

    seen = set()
    for args in (["--arch", "gfx950", "--variant", "bwd_weight,forward", "--dtype", "fp32,bf16"],
                 ["--arch", "gfx942", "--set", "ck-profiler"]):
        assert main(["enumerate", *args, "--format", "jsonl"]) == 0
        for line in capsys.readouterr().out.splitlines():
            r = json.loads(line)
            if r["variant"] == "forward_depthwise":
                continue
            expected = _spec_warp_tile_k(r)
            assert r["warp_tile_k_full"] == expected, r["name"]
            assert r["warp_tile_k_by_formula"] == (r["warp_tile_k"] == expected), r["name"]
            seen.add((args[-1], r["warp_tile_k_by_formula"]))
    assert ("fp32,bf16", True) in seen and ("fp32,bf16", False) not in seen  # full: always the formula
    assert {("ck-profiler", True), ("ck-profiler", False)} <= seen


@pytest.mark.parametrize("spelling, variant", [("fwd", "forward"), ("bwdd", "bwd_data"), ("BWDW", "bwd_weight"),
                                               ("backward_data", "bwd_data"), ("depthwise", "forward_depthwise")])
def test_ck_spellings_of_a_variant_are_accepted(spelling, variant):
    """CK writes the variants fwd, bwdd and bwdw (names, the dispatcher, ckProfiler): --variant takes them."""
    from ckspace.space import Space

    space = Space(arch="gfx950")
    assert space.count(variant=spelling) == space.count(variant=variant)


def test_a_pasted_name_is_trimmed():
    import subprocess
    import sys

    name = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
    r = subprocess.run([sys.executable, "-m", "ckspace", "explain", f"  {name}\t\n", "--format", "json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert '"status": "valid"' in r.stdout and f'"name": "{name}"' in r.stdout


@pytest.mark.parametrize("command", ["enumerate", "emit", "coverage", "sample", "verify", "problems"])
def test_every_help_of_a_set_option_lists_every_set(command, capsys):
    """Every name --set takes (the catalogs, CK's procedures, the selections) is in the --help of each command."""
    from ckspace.cli.app import build_parser
    from ckspace.spec import set_names

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices[command]
    help_text = " ".join(next(a for a in sub._actions if "--set" in a.option_strings).help.split())
    for name in set_names(list(D.load(None).catalogs)):
        assert name in help_text, (command, name)


def test_names_from_a_file_for_explain_and_emit(tmp_path):
    import subprocess
    import sys

    from ckspace.space import Space

    names = [c["name"] for c in Space(arch="gfx950").select("tiny")][:3]
    listing = tmp_path / "batch.txt"
    listing.write_text("# three kernels\n" + "\n".join(names) + "\n")

    def run(*args, stdin=None):
        return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True, input=stdin)

    r = run("explain", "--names", str(listing), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert [x["name"] for x in json.loads(r.stdout)["results"]] == names
    r = run("explain", "--names", "-", "--format", "json", stdin=listing.read_text())
    assert r.returncode == 0 and len(json.loads(r.stdout)["results"]) == 3
    r = run("explain", str(listing))  # a file where a name goes: one line saying to use --names
    assert r.returncode == 2 and f"explain --names {listing}" in r.stderr and len(r.stderr.splitlines()) == 1
    out = tmp_path / "emitted"
    r = run("emit", "--arch", "gfx950", "--names", str(listing), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(json.loads((out / "manifest.json").read_text())["kernels"]) == sorted(names)
    r = run("emit", "--arch", "gfx950", "--names", str(listing), "--set", "tiny", "-o", str(tmp_path / "x"))
    assert r.returncode == 2 and "--names FILE emits exactly those kernels" in r.stderr
