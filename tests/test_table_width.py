"""Kernel tables put the name first and fit the terminal: the name folds, whole, and the columns that do not fit
beside it are left out and named in the caption (issue 28)."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings, strategies as st
from rich.console import Console

from ckspace.cli.output import TABLE_COLUMNS, write_table
from ckspace.space import Space

TINY = Space(arch="gfx950").select("tiny")


def _render(configs, width: int) -> list[str]:
    out = io.StringIO()
    write_table(iter(configs), Console(file=out, width=width, force_terminal=False, color_system=None), "t")
    return out.getvalue().splitlines()


def _name_column(lines: list[str]) -> list[str]:
    """The names as the table shows them: the first cell of the body rows, folded lines joined."""
    body = [line for line in lines if line.startswith("│")]
    names: list[str] = []
    for line in body:
        cell = line.split("│")[1].strip()
        if cell.startswith("grouped_conv_"):
            names.append(cell)
        elif cell and names:
            names[-1] += cell
    return names


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=60, max_value=260), st.integers(min_value=1, max_value=len(TINY)))
def test_every_name_is_whole_and_no_line_is_wider_than_the_terminal(width, n) -> None:
    configs = TINY[:n]
    lines = _render(configs, width)
    table_lines = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert all(len(line) <= width for line in table_lines), max(map(len, table_lines))
    assert _name_column(lines)[:n] == [c["name"] for c in configs]
    header = next(line for line in lines if line.startswith("┃"))
    assert header.split("┃")[1].strip() == "name"  # the name comes first


def test_at_80_columns_the_shape_stays_and_the_rest_is_named() -> None:
    lines = _render(TINY, 80)
    header = [c.strip() for c in next(line for line in lines if line.startswith("┃")).split("┃")[1:-1]]
    assert header[0] == "name" and {"tile", "wave"} <= set(header)
    left_out = [c for c in TABLE_COLUMNS if c not in header]
    caption = " ".join(line.strip() for line in lines if line.strip() and line[:1] not in "┏┃┡│└├")
    assert left_out and "left out to fit 80 columns" in caption and all(c in caption for c in left_out)


@pytest.mark.parametrize("width", [400])
def test_a_wide_terminal_shows_every_column(width) -> None:
    header = next(line for line in _render(TINY, width) if line.startswith("┃"))
    assert [c.strip() for c in header.split("┃")[1:-1]] == ["name", *TABLE_COLUMNS]
