"""Kernel-name grammar: round trips, generated field dicts, fuzzing and error messages."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ckspace.errors import KernelNameError
from ckspace.rules.names import KNOWN_PIPELINES, SPECIALIZATIONS, format_name, parse_name

G = "grouped_conv_"
HEAD = G + "fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32"

REAL_NAMES = [
    HEAD,
    HEAD + "_vec8_8_8_filter1x1_pad0",
    HEAD + "_filter1x1_stride1_pad0",
    G + "fwd_bf16_nhwgc_2d_compv3_cshuffle_intrawave_64x64x64_2x2x1_16x16x32_filter3x3",
    G + "fwd_fp32_nhwgc_3d_compv4_cshuffle_intrawave_256x128x32_4x1x1_32x32x8_vec4_4_4_dsb",
    G + "fwd_fp16_nhwgc_2d_mem_cshuffle_interwave_128x64x32_2x2x1_32x32x16_vec8_8_8",
    G + "fwd_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_64x64x64_2x2x1_16x16x32",
    G + "fwd_fp16_nhwgc_2d_compv1_cshuffle_intrawave_64x64x32_2x2x1_16x16x16_large_tensor",
    G + "fwd_fp32_nhwgc_2d_compv1_cshuffle_intrawave_256x128x16_4x1x1_32x32x4_vec4_4_4_large_tensor",
    G + "fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_64x16x16_4x1x1_16x16x16_vec8_8_8_gm8",
    G + "fwd_bf16_nhwgc_3d_compv3_cshuffle_intrawave_64x16x16_4x1x1_16x16x16_gm16_filter1x1_pad0",
    G + "fwd_fp16_nhwgc_2d_compv5_cshuffle_intrawave_128x128x32_2x2x1_32x32x8_vec2_2_2",
    G + "fwd_fp16_nhwgc_2d_compv6_cshuffle_intrawave_128x128x32_2x2x1_32x32x16",
    G + "fwd_fp16_nhwgc_2d_comp_async_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_dsb",
    G + "fwd_fp16_nhwgc_2d_preshufflev2_default_intrawave_128x128x64_2x2x1_16x16x32",
    G + "fwd_fp16_nhwgc_2d_basic_v2_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_wg2",
    G + "fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_pad001",
    G + "fwd_fp16_ndhwgc_3d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_wg2_gm4_pad110",
    G + "bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_256x32x64_4x1x1_32x32x16_vec8_8_2_gm32",
    G + "bwd_data_fp32_nhwgc_3d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x8_vec4_4_4"
    "_filter1x1_stride1_pad0",
    G + "bwd_data_bf16_nhwgc_2d_compv4_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_dsb",
    G + "bwd_weight_fp16_nhwgc_2d_compv3_cshuffle_intrawave_16x16x64_1x1x1_16x16x32_vec1_1_8_explicit_gemm",
    G + "bwd_weight_fp16_nhwgc_2d_compv3_cshuffle_intrawave_16x16x64_1x1x1_16x16x32_2stage_explicit_gemm",
    G + "bwd_weight_bf16_nhwgc_3d_compv3_cshuffle_intrawave_16x16x64_1x1x1_16x16x32_2stage_filter1x1_stride1_pad0"
    "_explicit_gemm",
    G + "bwd_weight_fp16_nhwgc_2d_mem_cshuffle_interwave_32x64x32_1x2x1_16x16x16_vec2_2_8_gm2_2stage",
    G + "bwd_weight_bf16_nhwgc_3d_basic_async_v1_cshuffle_intrawave_64x16x64_2x1x1_16x16x32_vec1_1_8_gm2_streamk_tree_persistent",
    G + "bwd_weight_fp32_nhwgc_2d_basic_async_v1_cshuffle_intrawave_64x64x64_2x2x1_16x16x8_vec4_4_4_streamk_tree",
    G + "bwd_weight_fp16_nhwgc_2d_compv1_cshuffle_intrawave_128x32x32_2x2x1_16x16x16_streamk_linear_persistent",
    G + "bwd_weight_fp16_nhwgc_2d_basic_v1_cshuffle_intrawave_16x32x64_1x1x1_16x16x32_gm2",
    G + "bwd_weight_fp16_nhwgc_3d_compv4_cshuffle_intrawave_64x64x64_2x2x1_16x16x32_vec8_8_8_wg2_gm8_dsb_2stage"
    "_filter1x1_stride1_pad0_explicit_gemm_streamk_linear_persistent_large_tensor_pad000",
    G + "fwd_depthwise_fp32_ngchw_2d_16x16_f3_s2x2_p1x1_nb2_sub1x4_vec8_8",
    G + "fwd_depthwise_fp16_ngchw_2d_8x8_f5_s1x1_p2x2_nb1_sub1x1_vec1_1",
    G + "fwd_depthwise_bf16_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8",
    G + "fwd_depthwise_fp16_ngchw_2d_32x32_f5_s1x1_p2x2_nb4_sub4x4_vec8_8",
    # Well-formed but not valid kernels: the parser accepts them, the model explains why they are invalid.
    G + "fwd_fp8_ndhwgc_3d_compv5_cshuffle_intrawave_96x64x32_2x2x1_16x16x32_vec6_6_6",
    G + "fwd_fp16_nhwgc_2d_compv9_default_interwave_0x0x0_0x0x0_0x0x0",
    G + "bwd_data_fp16_nhwgc_2d_my_new_pipe_cshuffle_intrawave_64x64x64_2x2x1_16x16x32_wg0_gm0",
]


@pytest.mark.parametrize("name", REAL_NAMES)
def test_real_names_round_trip(name: str) -> None:
    fields = parse_name(name)
    assert format_name(fields) == name
    assert format_name({**fields, "name": "ignored", "block_per_cu": 2}) == name


def test_parsed_fields() -> None:
    f = parse_name(REAL_NAMES[25])
    assert f["kind"] == "gemm" and f["variant"] == "bwd_weight" and f["ndim"] == 3
    assert f["pipeline"] == "basic_async_v1" and (f["vec_a"], f["vec_b"], f["vec_c"]) == (1, 1, 8)
    assert f["num_groups_to_merge"] == 2 and f["streamk"] == "tree" and f["streamk_persistent"] is True
    assert f["specialization"] == "default" and f["pad_m"] is f["pad_n"] is f["pad_k"] is True
    d = parse_name(REAL_NAMES[30])
    assert d == {
        "kind": "depthwise", "variant": "forward_depthwise", "dtype": "fp32", "layout": "ngchw", "ndim": 2,
        "dw_tile_h": 16, "dw_tile_w": 16, "filter_size": 3, "stride_h": 2, "stride_w": 2, "pad_h": 1, "pad_w": 1,
        "nbatch": 2, "sub_h": 1, "sub_w": 4, "in_vec": 8, "out_vec": 8,
    }
    every = parse_name(REAL_NAMES[29])
    assert every["split_image"] and every["two_stage"] and every["explicit_gemm"] and every["double_smem_buffer"]
    assert (every["pad_m"], every["pad_n"], every["pad_k"]) == (False, False, False)
    assert every["num_wave_groups"] == 2 and every["streamk"] == "linear"


def test_reference_full_set_round_trips() -> None:
    """Every name of the reference `full` set parses into the reference config's own fields."""
    ref = pytest.importorskip("tests.reference.ck_full")
    common = pytest.importorskip("tests.reference.ck_common")
    for cfg in ref.full_configs("gfx950"):
        depthwise = cfg["variant"] == "forward_depthwise"
        name = common.depthwise_name(cfg) if depthwise else common.gemm_name(cfg)
        fields = parse_name(name)
        assert format_name(fields) == name
        assert all(cfg[k] == v for k, v in fields.items() if k in cfg), name


# ---- generated field dicts -------------------------------------------------------------------------------------

words = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
nums = st.integers(0, 4096)
pipelines = st.one_of(st.sampled_from(KNOWN_PIPELINES), words.filter(lambda w: w not in ("cshuffle", "default")))


@st.composite
def gemm_fields(draw: st.DrawFn) -> dict[str, object]:
    f: dict[str, object] = {
        "kind": "gemm", "variant": draw(st.sampled_from(["forward", "bwd_data", "bwd_weight"])),
        "dtype": draw(st.one_of(st.sampled_from(["fp16", "bf16", "fp32", "fp8"]), words)),
        "layout": draw(st.one_of(st.sampled_from(["nhwgc", "ndhwgc", "ngchw"]), words)),
        "ndim": draw(st.integers(0, 4)), "pipeline": draw(pipelines),
        "epilogue": draw(st.sampled_from(["cshuffle", "default"])),
        "scheduler": draw(st.sampled_from(["intrawave", "interwave"])),
        "specialization": draw(st.sampled_from(["default", *SPECIALIZATIONS])),
        "streamk": draw(st.sampled_from(["none", "tree", "linear"])),
    }
    assume(not (f["variant"] == "forward" and f["dtype"] == "depthwise"))
    for key in ("tile_m", "tile_n", "tile_k", "wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n",
                "warp_tile_k", "vec_a", "vec_b", "vec_c", "num_wave_groups", "num_groups_to_merge"):
        f[key] = draw(st.one_of(st.sampled_from([1, 4, 8]), nums))
    for key in ("double_smem_buffer", "two_stage", "explicit_gemm", "split_image", "pad_m", "pad_n", "pad_k"):
        f[key] = draw(st.booleans())
    f["streamk_persistent"] = f["streamk"] != "none" and draw(st.booleans())
    return f


@st.composite
def depthwise_fields(draw: st.DrawFn) -> dict[str, object]:
    f: dict[str, object] = {"kind": "depthwise", "variant": "forward_depthwise", "dtype": draw(words),
                            "layout": draw(words), "ndim": draw(st.integers(0, 4))}
    for key in ("dw_tile_h", "dw_tile_w", "filter_size", "stride_h", "stride_w", "pad_h", "pad_w", "nbatch",
                "sub_h", "sub_w", "in_vec", "out_vec"):
        f[key] = draw(nums)
    return f


@settings(max_examples=400, deadline=None)
@given(st.one_of(gemm_fields(), depthwise_fields()))
def test_generated_fields_round_trip(fields: dict[str, object]) -> None:
    name = format_name(fields)
    assert parse_name(name) == fields
    assert format_name(parse_name(name)) == name


# ---- fuzzing ---------------------------------------------------------------------------------------------------

def check_total(text: str) -> None:
    """parse_name either returns fields that format back to the text, or raises KernelNameError whose
    suggestion, if any, is a different canonical name."""
    try:
        fields = parse_name(text)
    except KernelNameError as err:
        assert err.part and err.expected and str(err)
        if err.suggestion is not None:
            assert err.suggestion != text
            assert format_name(parse_name(err.suggestion)) == err.suggestion
        return
    assert format_name(fields) == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_fuzz_arbitrary_text(text: str) -> None:
    check_total(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="_x0123456789dgcpfsvbnmwkeilortu", max_size=60))
def test_fuzz_grammar_alphabet(text: str) -> None:
    check_total(G + "fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_" + text)
    check_total(G + "fwd_depthwise_fp16_ngchw_2d_" + text)


CHARS = "_x0123456789abcdefgilmnprstvwAXZ -"


@st.composite
def mutated_names(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(REAL_NAMES))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "split", "join", "swap", "dup", "drop", "upper"]))
        tokens = name.split("_")
        i = draw(st.integers(0, max(len(name) - 1, 0)))
        t = draw(st.integers(0, len(tokens) - 1))
        u = draw(st.integers(0, len(tokens) - 1))
        if op == "insert":
            name = name[:i] + draw(st.sampled_from(CHARS)) + name[i:]
        elif op == "delete":
            name = name[:i] + name[i + 1:]
        elif op == "replace":
            name = name[:i] + draw(st.sampled_from(CHARS)) + name[i + 1:]
        elif op == "split":
            name = name[:i] + "_" + name[i:]
        elif op == "join":
            name = "_".join(tokens[:t]) + ("_" if t else "") + "".join(tokens[t:t + 2]) + \
                   ("_" if t + 2 < len(tokens) else "") + "_".join(tokens[t + 2:])
        elif op == "swap":
            tokens[t], tokens[u] = tokens[u], tokens[t]
            name = "_".join(tokens)
        elif op == "dup":
            name = "_".join(tokens[:t + 1] + tokens[t:])
        elif op == "drop":
            name = "_".join(tokens[:t] + tokens[t + 1:])
        else:
            name = name[:i] + name[i:].upper()
    return name


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_names())
def test_fuzz_mutated_real_names(name: str) -> None:
    check_total(name)


# ---- error messages --------------------------------------------------------------------------------------------

def error(name: str) -> KernelNameError:
    with pytest.raises(KernelNameError) as info:
        parse_name(name)
    return info.value


def test_bad_tile() -> None:
    err = error(G + "fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x12x_2x2x1_16x16x32")
    assert err.part == "tile" and err.expected == "MxNxK, three integers" and err.got == "128x12x"
    assert "tile: expected MxNxK, three integers" in str(err)


def test_two_numbers_where_three_are_needed_has_no_suggestion() -> None:
    err = error(G + "fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128_2x2x1_16x16x32")
    assert err.part == "tile" and err.suggestion is None


def test_unknown_trailing_suffix_lists_the_suffixes_in_order() -> None:
    err = error(HEAD + "_vec8_8_8_foo")
    assert err.part == "suffix" and err.got == "foo" and "'foo'" in str(err)
    order = ["_vec", "_wg", "_gm", "_dsb", "_2stage", "_filter1x1_pad0", "_explicit_gemm", "_streamk", "_large_tensor",
             "_pad{m}"]
    positions = [err.expected.index(s) for s in order]
    assert positions == sorted(positions)


@pytest.mark.parametrize("name", [
    G + "fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1",
    G + "fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_vec8_8_8",
])
def test_missing_warp_tile(name: str) -> None:
    err = error(name)
    assert err.part == "warp_tile" and "missing" in err.expected


@pytest.mark.parametrize("bad, part, good", [
    (HEAD[len(G):], "prefix", HEAD),
    ("conv_" + HEAD[len(G):], "prefix", HEAD),
    (HEAD.replace("_fwd_", "_forward_"), "variant", HEAD),
    (HEAD.upper(), "prefix", HEAD),
    (HEAD.replace("fp16", "FP16"), "dtype", HEAD),
    (HEAD + " ", "warp_tile", HEAD),
    (HEAD.replace("128x128x64", "128x0128x64"), "tile", HEAD),
    (HEAD + "_vec4_8_8", "vec", HEAD),
    (HEAD + "_gm1", "gm", HEAD),
    (HEAD + "_wg1", "wg", HEAD),
    (HEAD + "_pad111", "pad", HEAD),
    (HEAD + "_default", "specialization", HEAD),
    (HEAD + "_bpc2", "suffix", HEAD),
    (HEAD + "_dsb_dsb", "suffix", HEAD + "_dsb"),
    (HEAD + "_filter1x1_pad0_vec8_8_8", "suffix", HEAD + "_vec8_8_8_filter1x1_pad0"),
    (HEAD + "_pad011_gm2_dsb", "suffix", HEAD + "_gm2_dsb_pad011"),
    (HEAD + "_persistent_streamk_tree", "suffix", HEAD + "_streamk_tree_persistent"),
    (HEAD + "_gm4_vec4_8_8", "vec", HEAD + "_gm4"),
    (REAL_NAMES[30] + "_dsb", "suffix", REAL_NAMES[30]),
    ("GROUPED_CONV_FWD_DEPTHWISE_FP32_NGCHW_2D_16X16_F3_S2X2_P1X1_NB2_SUB1X4_VEC8_8", "prefix", REAL_NAMES[30]),
])
def test_errors_suggest_the_canonical_name(bad: str, part: str, good: str) -> None:
    err = error(bad)
    assert err.part == part
    assert err.suggestion == good
    assert repr(good) in str(err)


@pytest.mark.parametrize("tail, part", [
    ("_2d_compv3_cshufle_intrawave_128x128x64_2x2x1_16x16x32", "epilogue"),
    ("_2d_compv3_cshuffle_intrawav_128x128x64_2x2x1_16x16x32", "scheduler"),
    ("_2d_cshuffle_intrawave_128x128x64_2x2x1_16x16x32", "pipeline"),
    ("_2d_compv3_cshuffle_intrawave_128x128x64_2xx1_16x16x32", "wave"),
    ("_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8", "vec"),
    ("_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_gm2_gm4", "gm"),
    ("_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_wgx", "wg"),
    ("_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_filter1x1_stride1", "specialization"),
    ("_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_streamk_fast", "streamk"),
    ("_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_persistent", "streamk"),
    ("_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_pad2", "pad"),
    ("_xd_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32", "ndim"),
])
def test_gemm_error_parts(tail: str, part: str) -> None:
    assert error(G + "fwd_fp16_nhwgc" + tail).part == part


@pytest.mark.parametrize("name, part", [
    (G + "bwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32", "variant"),
    (G + "fwd_fp16_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32", "layout"),
    (G + "fwd_16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32", "dtype"),
    (G + "fwd_depthwise_fp32_ngchw_2d_16x16x1_f3_s2x2_p1x1_nb2_sub1x4_vec8_8", "tile"),
    (G + "fwd_depthwise_fp32_ngchw_2d_16x16_f3x3_s2x2_p1x1_nb2_sub1x4_vec8_8", "filter"),
    (G + "fwd_depthwise_fp32_ngchw_2d_16x16_f3_s2_p1x1_nb2_sub1x4_vec8_8", "stride"),
    (G + "fwd_depthwise_fp32_ngchw_2d_16x16_f3_s2x2_p1_nb2_sub1x4_vec8_8", "pad"),
    (G + "fwd_depthwise_fp32_ngchw_2d_16x16_f3_s2x2_p1x1_n2_sub1x4_vec8_8", "nbatch"),
    (G + "fwd_depthwise_fp32_ngchw_2d_16x16_f3_s2x2_p1x1_nb2_sub1_vec8_8", "sub"),
    (G + "fwd_depthwise_fp32_ngchw_2d_16x16_f3_s2x2_p1x1_nb2_sub1x4_vec8_8_8", "vec"),
    (G + "fwd_depthwise_fp32_ngchw_2d_16x16_f3_s2x2_p1x1_nb2_sub1x4", "vec"),
])
def test_other_error_parts(name: str, part: str) -> None:
    assert error(name).part == part


def test_huge_numbers_are_a_name_error() -> None:
    assert error(HEAD.replace("128x128x64", "1" * 5000 + "x1x1")).part == "tile"


def test_non_str_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse_name(None)  # type: ignore[arg-type]


def test_format_rejects_fields_that_cannot_read_back() -> None:
    fields = parse_name(HEAD)
    for key, value in (("pipeline", "x_cshuffle_intrawave_y"), ("tile_m", -1), ("dtype", "FP16"),
                       ("streamk_persistent", True), ("specialization", "filter5x5")):
        with pytest.raises(ValueError):
            format_name({**fields, key: value})
