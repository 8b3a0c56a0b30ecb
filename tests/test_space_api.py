"""The Space facade: every command's power from Python, keyword-only, with runnable docstrings."""

from __future__ import annotations

import doctest

import pytest

from ckspace.errors import LeftOutWarning

import ckspace.space
from ckspace import Space
from ckspace.errors import KernelNameError, UsageError
from ckspace.rules.check import breaks
from ckspace.rules.names import parse_name

VALID = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
TILE_96 = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8"


@pytest.fixture(scope="module")
def space() -> Space:
    return Space(arch="gfx950")


@pytest.mark.slow
def test_docstring_examples_run() -> None:
    result = doctest.testmod(ckspace.space, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 30 and result.failed == 0  # every public method has a run example


def test_check_takes_names_and_configs(space: Space) -> None:
    assert space.check(VALID) == []
    by_name = space.check(TILE_96)
    assert [v.rule for v in by_name] == [v.rule for v in space.check(parse_name(TILE_96))]
    # the oracle: each reported rule is broken by the plain check of its own expression
    rules = {r.id: r for r in space.model.rules}
    cfg = parse_name(TILE_96)
    assert by_name and all(breaks(rules[v.rule], cfg, space.model) for v in by_name)
    v = by_name[0]
    assert v.rule == "arch.tile-m-divisible" and "96" in v.message and v.rationale and v.source
    assert str(v) == f"{v.rule}: {v.message}" and "Node" not in repr(v)  # no rule tree in a printed verdict


def test_a_partial_config_raises_and_names_are_accepted(space: Space) -> None:
    from ckspace.errors import IncompleteConfigError

    with pytest.raises(IncompleteConfigError) as exc:
        space.check({"variant": "forward", "tile_m": 96})
    assert "tile_n" in exc.value.missing and "tile_m" not in exc.value.missing and "\n" not in str(exc.value)
    with pytest.raises(IncompleteConfigError) as exc:
        space.check({})
    assert exc.value.missing[0] == "variant"
    # a whole config with a value outside a field's domain is a verdict of the model, not an error
    cfg = space.parse(VALID)
    cfg["tile_m"] = 7
    rules = [v.rule for v in space.check(cfg)]
    assert rules[0] == "model.domain-tile_m" and "arch.tile-m-divisible" in rules
    # every broken rule, as explain lists the enabled ones (issue 28: check said 1 where explain said 7)
    shown = space.explainer().explain_config(cfg, neighbours=0)
    assert set(rules) == {v.rule for v in shown.reasons if v.enabled}
    assert space.check(VALID) == [] and space.check(space.parse(VALID)) == []


def test_parse_and_malformed_names(space: Space) -> None:
    assert space.parse(VALID)["tile_m"] == 128
    with pytest.raises(KernelNameError) as exc:
        space.parse(VALID.replace("cshuffle", "cshufle"))
    assert exc.value.suggestion == VALID


def test_sets_coverage_sample_explain(space: Space) -> None:
    tiny = space.select("tiny")
    assert len(tiny) == 22  # README: tiny is 22 kernels on gfx950
    configs, sel = space.selection("tiny")
    assert [c["name"] for c in configs] == [c["name"] for c in tiny] and sel is not None
    assert sel.stats["size"] == 22
    report = space.coverage([c["name"] for c in tiny], objective="tiny")
    assert report.covered == report.total == 86  # README: tiny covers 86/86 items
    picked = space.sample(5, seed=7, set_name="tiny")
    assert len(picked) == 5 and {c["name"] for c in picked} <= {c["name"] for c in tiny}
    assert space.sample(5, seed=7, set_name="tiny") == picked
    exp = space.explain(TILE_96, neighbours=1)
    assert not exp.valid and exp.neighbours and len(exp.neighbours) == 1
    assert space.explain(VALID).valid


def test_parameters_are_keyword_only(space: Space) -> None:
    with pytest.raises(TypeError):
        Space("gfx950")  # type: ignore[misc]
    with pytest.raises(TypeError):
        space.enumerate("forward")  # type: ignore[misc]
    with pytest.raises(TypeError):
        space.count("forward", 2)  # type: ignore[misc]


def test_the_facade_takes_listed_catalogs_and_a_users_configs() -> None:
    # Sizes from CK's files (tests/test_ck_configs_catalog.py checks them against an independent reading) and from
    # spec 5 (CK's full-tests: 2,805 kernels on gfx950).
    from pathlib import Path

    assert sum(1 for _ in Space(arch="gfx942", catalog="ck-tests").enumerate()) == 576
    assert len(Space(arch="gfx950").select("ck-full-tests")) == 2805
    users = Path(__file__).resolve().parent / "fixtures" / "ck-configs-user"
    space = Space(arch="gfx950", ck_config=users)
    with pytest.warns(LeftOutWarning, match=r"1 listed config\(s\) break a fact of gfx950 .*arch\.warp-tile") as seen:
        assert sum(1 for _ in space.enumerate()) == 7
    assert [r.verdict.rule for r in space.rejected] == ["arch.warp-tile"]
    assert [Path(w.filename).name for w in seen] == ["test_space_api.py"]  # the caller's line, not ckspace's


def test_the_cli_reports_left_out_configs_once_in_its_own_words() -> None:
    """A process of its own: Python prints warnings to stderr there (pytest would capture them)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    users = root / "tests" / "fixtures" / "ck-configs-user"
    proc = subprocess.run([sys.executable, "-m", "ckspace", "enumerate", "--arch", "gfx950", "--ck-config",
                           str(users), "--no-cache"], capture_output=True, text=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0 and len(proc.stdout.split()) == 7
    assert "ckspace: warning: ck-config: 1 listed config breaks a fact of gfx950" in proc.stderr
    assert "LeftOutWarning" not in proc.stderr and "Warning:" not in proc.stderr


# -- what the command line can do, from Python (the oracles: plain counting over the listed kernels, fields.toml) --
def test_count_by_counts_what_a_plain_counter_counts(space: Space) -> None:
    from collections import Counter

    configs = space.select(variant="bwd_data", ndim=2)
    want = Counter((c["pipeline"], c["scheduler"]) for c in configs)
    got = space.count_by("pipeline, scheduler", variant="bwd_data", ndim=2)
    assert dict(got) == dict(want) and sum(n for _, n in got) == len(configs)
    # in the order of the fields' values (fields.toml), not of the counts
    order = list(space.data.fields["pipeline"].values)
    assert [k[0] for k, _ in got] == sorted((k[0] for k, _ in got), key=order.index)
    # a derived quantity counts by its formula: threads = lanes × waves (64 lanes on gfx950)
    threads = space.count_by(["threads"], configs=configs)
    assert dict(threads) == dict(Counter((64 * c["wave_m"] * c["wave_n"] * c["wave_k"],) for c in configs))
    with pytest.raises(UsageError, match="unknown field 'pipline'"):
        space.count_by("pipline")


def test_strata_counts_and_sample_totals(space: Space) -> None:
    from collections import Counter

    tiny = space.select("tiny")
    counts = space.strata_counts(tiny)
    assert {(s.variant, s.ndim, s.dtype): n for s, n in counts.items() if n} == \
        dict(Counter((c["variant"], c["ndim"], c["dtype"]) for c in tiny))
    picked, total = space.sample_of(4, seed=3, variant="forward", ndim=3, dtype="bf16")
    assert total == len(space.select(variant="forward", ndim=3, dtype="bf16")) and len(picked) == 4


def test_fields_lists_fields_toml(space: Space) -> None:
    import tomllib
    from pathlib import Path

    doc = tomllib.loads((Path(__file__).resolve().parent.parent / "constraints" / "fields.toml").read_text())
    rows = space.fields()
    listed = [r["name"] for r in rows if r["what"] == "field"]
    assert listed == list(doc["field"])  # in the data's order
    derived = {r["name"] for r in rows if r["what"] == "derived"}
    assert derived == set(doc["derive"]) - set(listed)


def test_rules_is_what_ckspace_rules_prints(space: Space, capsys) -> None:
    import json

    from ckspace.cli import main

    book = space.rules()
    assert main(["rules", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in printed["rules"]] == [d.id for d in book.rules]
    assert set(printed["families"]) == set(book.families)


def test_open_or_not(space: Space) -> None:
    assert not space.may_be_open() and Space(arch="gfx950", rules="-ck-curation").may_be_open()
    with pytest.raises(UsageError, match="the list"):
        Space(arch="gfx950", rules="-ck-curation").listed("the list")


def test_results_render_as_text_when_printed():
    """Issue 28: an explanation and a coverage report print as the commands print them."""
    space = Space(arch="gfx950")
    exp = space.explain(VALID, neighbours=0)
    assert str(exp) == exp.text() and "✓ valid" in str(exp)
    report = space.coverage(set_name="tiny", objective="tiny")
    assert str(report) == report.text() and "tiny" in str(report)


def test_results_render_through_rich_as_the_commands_print_them():
    """__rich__: rich.print of an explanation or a coverage report shows the command's text, styled (on a console
    as wide as its longest line: a narrower one wraps it, as it wraps any rich text)."""
    import io

    from rich.console import Console

    space = Space(arch="gfx950")

    def printed(obj) -> tuple[str, str]:
        plain, ansi = io.StringIO(), io.StringIO()
        Console(file=plain, width=2000, color_system=None).print(obj)
        Console(file=ansi, width=2000, color_system="truecolor", force_terminal=True).print(obj)
        return plain.getvalue(), ansi.getvalue()

    exp = space.explain("grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_100x128x64_2x2x1_32x32x16",
                        neighbours=0)
    plain, ansi = printed(exp)
    assert plain.rstrip("\n") == exp.text().rstrip("\n") and "✗ rejected" in plain
    assert "\x1b[" in ansi  # styled: the verdict in colour
    report = space.coverage(set_name="tiny", objective="tiny")
    plain, _ = printed(report)
    assert plain.rstrip("\n") == report.text().rstrip("\n")
