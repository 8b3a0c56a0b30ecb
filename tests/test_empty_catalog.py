"""A catalog with no kernel on the arch under the chosen rules is said so, once, with why and where to look instead
(cli/empty.py); a filter that leaves nothing is the user's doing and gets no note.

The expected figures come from listing (enumerate's names, one per line), not from the counts the note uses, and
the reason from the rule's own text: CK's full rule set on RDNA is depthwise kernels alone, and CK Tile 2025.11 has
no depthwise pipeline (ck-api-2025.11.depthwise)."""

from __future__ import annotations

import json
import re

import pytest

from ckspace.cli import main

pytestmark = pytest.mark.slow  # each note counts every catalog on the arch: seconds


def names(capsys, *argv: str) -> list[str]:
    assert main(["enumerate", *argv]) == 0
    return capsys.readouterr().out.split()


def notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("ckspace: note:")]


def test_an_empty_tiny_on_rdna_names_the_revision_rule_and_the_catalogs_with_kernels(capsys, tmp_path) -> None:
    full = names(capsys, "--arch", "gfx1201", "--set", "full")  # no revision's facts
    assert full and all("_depthwise_" in n for n in full)
    counts = {c: len(names(capsys, "--arch", "gfx1201", "--set", c, "--ck-api", "2025.11"))
              for c in ("ck-default", "ck-rdna", "ck-profiler", "ck-tests")}
    assert counts["ck-default"] == 0 and counts["ck-rdna"] > 0

    assert main(["emit", "--arch", "gfx1201", "--set", "tiny", "--ck-api", "2025.11", "-o", str(tmp_path / "e")]) == 0
    captured = capsys.readouterr()
    assert "emitted 0 kernels" in captured.out
    [note] = notes(captured.err)
    assert note.startswith("ckspace: note: full has no kernel on gfx1201 under CK API 2025.11 ")
    assert f"({len(full)} without CK API 2025.11's facts; rejecting all {len(full)}: " \
           f"ck-api-2025.11.depthwise {len(full)})" in note
    shown = dict((m[0], int(m[1].replace(",", ""))) for m in re.findall(r"([a-z-]+) \(([\d,]+)\)", note))
    assert shown == {c: n for c, n in counts.items() if n}, note
    assert "--over CATALOG" in note


def test_enumerate_sample_and_coverage_note_it_and_verify_folds_it_into_its_one_error_line(capsys) -> None:
    for argv in (["enumerate", "--arch", "gfx1100", "--set", "tiny", "--ck-api", "2025.11"],
                 ["enumerate", "--arch", "gfx1100", "--ck-api", "2025.11", "--count"],
                 ["sample", "--arch", "gfx1100", "--ck-api", "2025.11", "-n", "3"],
                 ["coverage", "--arch", "gfx1100", "--set", "tiny", "--ck-api", "2025.11"]):
        assert main(argv) == 0, argv
        captured = capsys.readouterr()
        [note] = notes(captured.err)
        assert "full has no kernel on gfx1100 under CK API 2025.11" in note and "ck-rdna (" in note, argv
    assert main(["verify", "--arch", "gfx1100", "--set", "tiny", "--ck-api", "2025.11", "--toolchain", "none"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ckspace: error: no kernel to verify: the set and filters leave none; "
                                               "full has no kernel on gfx1100 under CK API 2025.11"), err


def test_no_note_when_a_filter_empties_the_catalog_or_kernels_come_out(capsys) -> None:
    assert names(capsys, "--arch", "gfx1201", "--set", "full", "--variant", "bwd_data") == []
    assert not notes(capsys.readouterr().err)
    assert main(["enumerate", "--arch", "gfx1201", "--set", "ck-rdna", "--ck-api", "2025.11"]) == 0
    captured = capsys.readouterr()
    assert captured.out.split() and not notes(captured.err)
    assert main(["coverage", "--arch", "gfx1201", "--set", "tiny", "--format", "json"]) == 0  # tiny has kernels
    captured = capsys.readouterr()
    assert json.loads(captured.out)["names"]["read"] > 0 and not notes(captured.err)


def test_a_catalog_empty_with_no_revision_says_so_without_one(capsys) -> None:
    """ck-default has no kernel on gfx1201 whatever the revision: the note names no revision and no rule."""
    others = {c: len(names(capsys, "--arch", "gfx1201", "--set", c)) for c in ("full", "ck-rdna", "ck-tests")}
    assert main(["enumerate", "--arch", "gfx1201", "--set", "ck-default"]) == 0
    [note] = notes(capsys.readouterr().err)
    assert note.startswith("ckspace: note: ck-default has no kernel on gfx1201; catalogs with kernels there: "), note
    for catalog, n in others.items():
        assert f"{catalog} ({n:,})" in note, (catalog, note)
    assert main(["coverage", "--arch", "gfx1201", "--set", "ck-default"]) == 0  # a catalog's coverage: the same
    assert notes(capsys.readouterr().err) == [note]
