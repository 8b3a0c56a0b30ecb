"""Convolution problems (issue 27's first step): CK's ConvParam order and the keyword form, the output lengths and
each variant's implicit GEMM. Expected values are worked out by hand from CK's ConvParam formulas."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckspace.errors import CkspaceError
from ckspace.rules.problem import Problem, ProblemError, parse_problem

ISSUE_EXAMPLE = "2 1 32 128 64 3 3 28 28 1 1 1 1 1 1 1 1"  # issue 27, as ckProfiler takes it


def test_the_issues_example_in_both_spellings() -> None:
    p = parse_problem(ISSUE_EXAMPLE)
    assert p == Problem(2, 1, 32, 128, 64, (3, 3), (28, 28), (1, 1), (1, 1), (1, 1), (1, 1))
    assert p.output == (28, 28)  # (28 + 1 + 1 - 1·2 - 1) // 1 + 1
    assert parse_problem("g=1,n=32,k=128,c=64,y=3,x=3,hi=28,wi=28,stride=1,pad=1") == p
    assert parse_problem(ISSUE_EXAMPLE + " k_batch=4").k_batch == 4
    assert parse_problem("n=32, k=128, c=64, y=3, x=3, hi=28, wi=28, pad=1, k_batch=2") == \
        Problem(2, 1, 32, 128, 64, (3, 3), (28, 28), (1, 1), (1, 1), (1, 1), (1, 1), 2)


def test_strides_dilations_pads_and_3d() -> None:
    p = parse_problem("g=2,n=4,k=16,c=8,y=3,x=3,hi=28,wi=27,stride=2,pad=1")
    assert p.output == (14, 14)  # (28 + 2 - 2 - 1) // 2 + 1 = 14; (27 + 2 - 2 - 1) // 2 + 1 = 14
    q = parse_problem("g=1,n=1,k=8,c=8,y=3,x=3,hi=10,wi=10,dilation=2,pad_left_w=2,pad_right_w=0")
    assert q.output == (6, 8)  # h: (10 - 2·2 - 1) + 1 = 6; w: (10 + 2 - 4 - 1) + 1 = 8
    r = parse_problem("3 1 2 32 16 3 1 1 8 16 16 1 2 2 1 1 1 1 0 0 1 0 0")
    assert (r.ndim, r.filter, r.input, r.stride, r.pad_left, r.pad_right) == \
        (3, (3, 1, 1), (8, 16, 16), (1, 2, 2), (1, 0, 0), (1, 0, 0))
    assert r.output == (8, 8, 8)
    assert parse_problem("g=1,n=2,k=32,c=16,z=3,y=1,x=1,di=8,hi=16,wi=16,stride_h=2,stride_w=2,pad_d=1") == r


def test_the_implicit_gemm_of_each_variant() -> None:
    p = parse_problem(ISSUE_EXAMPLE)
    assert p.gemm("forward") == (32 * 28 * 28, 128, 64 * 9)
    assert p.gemm("bwd_data") == (32 * 28 * 28, 64, 128 * 9)
    assert p.gemm("bwd_weight") == (128, 64 * 9, 32 * 28 * 28)
    s = parse_problem("g=1,n=2,k=4,c=4,y=1,x=1,hi=8,wi=8,stride=2")
    assert s.output == (4, 4) and s.gemm("forward") == (2 * 16, 4, 4) and s.gemm("bwd_data") == (2 * 64, 4, 4)


@pytest.mark.parametrize("text, message", [
    ("", "needs a problem"),
    ("2 1 32 128 64 3 3 28 28", "a 2D problem is 17 integers"),
    ("4 1 1 1 1", "NDimSpatial must be 2 or 3"),
    ("2 1 1 1 1 5 5 3 3 1 1 1 1 0 0 0 0", "output length -1 in spatial dimension 0"),
    ("2 0 32 128 64 3 3 28 28 1 1 1 1 1 1 1 1", "G must be between 1"),
    ("2 1 32 128 64 3 3 28 28 0 1 1 1 1 1 1 1", "a stride length must be between 1"),
    ("2 1 32 128 64 3 3 28 28 1 1 1 1 -1 1 1 1", "a left pad length must be between 0"),
    ("g=1,n=32,k=128,c=64,y=3,x=3,hi=28", "wi= is missing"),
    ("g=1,n=32,k=128,c=64,y=3,x=3,hi=28,wi=28,padding=1", "unknown key 'padding'"),
    ("n=1,n=2", "n given twice"),
    ("2 1 32 128 64 3 3 28 28 1 1 1 1 1 1 1 1 n=3", "not both"),
    ("n=x", "n must be an integer"),
])
def test_a_malformed_or_impossible_problem_is_one_line(text: str, message: str) -> None:
    with pytest.raises(ProblemError) as caught:
        parse_problem(text)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" ,=0123456789-abcdeghiknprswxyz_", max_size=80))
def test_any_text_is_a_problem_or_one_error_line(text: str) -> None:
    try:
        p = parse_problem(text)
    except CkspaceError as exc:
        assert "\n" not in str(exc)
        return
    assert all(o > 0 for o in p.output)


dims = st.integers(1, 64)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([2, 3]), st.data())
def test_the_printed_problem_reads_back_and_its_output_is_cks(ndim: int, data) -> None:
    def lengths(strategy):
        return tuple(data.draw(strategy) for _ in range(ndim))

    inp, filt = lengths(st.integers(1, 64)), lengths(st.integers(1, 7))
    stride, dilation = lengths(st.integers(1, 3)), lengths(st.integers(1, 3))
    pl, pr = lengths(st.integers(0, 3)), lengths(st.integers(0, 3))
    words = [ndim, 1, 2, 8, 4, *filt, *inp, *stride, *dilation, *pl, *pr]
    text = " ".join(map(str, words))
    out = [(i + a + b - d * (f - 1) - 1) // s + 1 for i, f, s, d, a, b in zip(inp, filt, stride, dilation, pl, pr)]
    if min(out) <= 0:
        with pytest.raises(ProblemError, match="output length"):
            parse_problem(text)
        return
    p = parse_problem(text)
    assert p.output == tuple(out)
    assert parse_problem(p.text()) == p
