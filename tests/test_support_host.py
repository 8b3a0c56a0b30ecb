"""CK's own code as the oracle of the support rules (issue 27, item 4): the host side of emitted units, compiled
with the registry toolchain (CK Tile 2025.11 headers) and called through ctypes, says for random problems which
kernels run them; the rules of constraints/support.toml must say the same, problem by problem."""

from __future__ import annotations

import random

import pytest

from ckspace.rules import support as S
from ckspace.rules.names import parse_name
from ckspace.rules.problem import parse_problem, random_problem
from ckspace.space import Space
from test_build import _toolchain

# Kernels of gfx942's full set under CK API 2025.11 that between them meet every 2025.11 support rule: the three
# specializations, merged groups, an odd and an even vec_c for split-K, a two-stage kernel with and without an
# atomic of its width, a 3D kernel.
KERNELS = [
    "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8",
    "grouped_conv_fwd_fp16_nhwgc_2d_compv1_cshuffle_interwave_128x128x64_2x2x1_16x16x32_vec8_8_8_filter1x1_pad0",
    "grouped_conv_fwd_fp16_nhwgc_2d_compv1_cshuffle_interwave_128x128x64_2x2x1_16x16x32_vec8_8_8_filter1x1_stride1_pad0",
    "grouped_conv_fwd_bf16_nhwgc_2d_compv1_cshuffle_interwave_128x32x32_2x1x1_32x32x16_vec1_1_8_gm8_filter3x3",
    "grouped_conv_fwd_bf16_nhwgc_3d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_1",
    "grouped_conv_bwd_data_fp16_nhwgc_2d_compv1_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec8_8_8",
    "grouped_conv_bwd_weight_fp16_nhwgc_2d_compv1_cshuffle_intrawave_128x32x32_1x1x1_32x32x16_vec8_8_1",
    "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_intrawave_128x32x32_1x1x1_32x32x16_vec8_8_2_gm8_2stage",
]
# Problems that reach each rule's boundary, besides the random ones.
EDGES = [
    "2 1 4 64 64 1 1 14 14 1 1 1 1 0 0 0 0", "2 1 4 64 64 1 1 14 14 2 2 1 1 0 0 0 0",
    "2 8 4 64 1 3 3 14 14 1 1 1 1 1 1 1 1", "2 1 1 64 64 16 16 64 64 12 12 1 1 0 0 0 0",
    "2 1 1 64 64 16 16 64 64 11 11 1 1 0 0 0 0", "2 8 4 64 64 3 3 14 14 1 1 1 1 1 1 1 1 k_batch=2",
    "2 4 4 64 64 3 3 14 14 1 1 1 1 1 1 1 1 k_batch=2", "3 1 2 32 16 3 1 1 8 16 16 1 2 2 1 1 1 1 0 0 1 0 0",
]


@pytest.mark.compile
def test_the_rules_agree_with_ck_host_code_on_every_problem(tmp_path, monkeypatch):
    _toolchain(monkeypatch)
    space = Space(arch="gfx942", ck_api="2025.11", toolchain="registry")
    configs = [{**parse_name(n), "name": n} for n in KERNELS]
    for c in configs:
        assert space.check(c["name"]) == [], c["name"]  # kernels the revision builds
    lib = space.host_check(configs, tmp_path, revision="2025.11", jobs=2)
    rules = S.rules_for(space.data, "2025.11")
    rng = random.Random(3)
    problems = [parse_problem(t) for t in EDGES] + [random_problem(rng, rng.choice((2, 2, 3))) for _ in range(300)]
    disagree, ran = [], 0
    for p in problems:
        for i, c in enumerate(configs):
            if c["ndim"] != p.ndim:
                continue  # CK's dispatcher matches NDimSpatial first (support.ndim); is_supported would read past
                # the ends of the problem's lengths
            ck = lib.supports(i, p)
            ran += ck
            ours = not S.verdicts(rules, p, c, space.model.resolve)
            if ck != ours:
                disagree.append((c["name"], p.text(), ck))
    assert not disagree, disagree[:5]
    assert ran > 60  # the problems reach kernels that run them, not only refusals


@pytest.mark.compile
def test_the_chosen_test_problems_run_where_ck_says(tmp_path, monkeypatch):
    """`ckspace problems --set tiny`: for every chosen problem, the kernels listed as running it are exactly the
    kernels of the set whose host-compiled is_supported says yes (CK's own code), and every kernel runs one."""
    _toolchain(monkeypatch)
    space = Space(arch="gfx942", ck_api="2025.11", toolchain="registry")
    kernels = space.select("tiny")
    result = space.problems("tiny")
    lib = space.host_check(kernels, tmp_path, revision="2025.11", jobs=2)
    exercised = set()
    for chosen in result.problems:
        ck = {k["name"] for i, k in enumerate(kernels)
              if k["ndim"] == chosen.problem.ndim and lib.supports(i, chosen.problem)}
        assert set(chosen.kernels) == ck, chosen.problem.text()
        exercised |= ck
    assert exercised == {k["name"] for k in kernels}
