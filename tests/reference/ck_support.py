"""CK Tile's IsSupportedArgument for grouped convolution, re-implemented from CK's C++ as plain Python, independently
of ckspace's support rules (constraints/support.toml): the tests compare the two on random kernels and problems.

A problem here is CK's ConvParam as plain values: ndim, G, N, K, C and the per-dimension lists filter, input,
strides, dilations, left and right pads, and k_batch. A kernel is a config dict of ckspace's fields.

2025.11: amd-aiter 0.1.7.post2.dev18's ck_tile/ops/grouped_convolution/kernel/ (forward :594-716, backward data
:590-716, backward weight :505-640), plus the launcher of templates/2025.11/kernel_gemm.hpp.j2 (is_supported: no
k_batch > 1 where the split-K atomics have no vector width). 2026.06: ROCm/rocm-libraries
projects/composablekernel/include/ck_tile/ops/grouped_convolution/kernel/ (forward @937543e2 :879-1158, backward data
@3dd9e98a :794-925, backward weight @7cd53015 :648-911).
"""

from __future__ import annotations

from math import gcd, prod


def output_lengths(p: dict) -> list[int]:
    return [(i + pl + pr - d * (f - 1) - 1) // s + 1 for i, f, s, d, pl, pr in
            zip(p["input"], p["filter"], p["stride"], p["dilation"], p["pad_left"], p["pad_right"])]


def _specialization_ok(k: dict, p: dict) -> bool:
    spec = k["specialization"]
    dims = range(p["ndim"])
    if spec == "filter1x1_stride1_pad0":
        return all(p["filter"][i] == 1 and p["stride"][i] == 1 and p["pad_left"][i] == 0 and p["pad_right"][i] == 0
                   for i in dims)
    if spec == "filter1x1_pad0":
        return all(p["filter"][i] == 1 and p["pad_left"][i] == 0 and p["pad_right"][i] == 0 for i in dims)
    if spec == "filter3x3":
        return p["c"] == 1 and all(p["filter"][i] == 3 for i in dims)
    return True


def _bwd_data_gemms(p: dict) -> int:
    # the kernel-args constructor's loops: one GEMM per tilde offset whose every DotSlice is positive
    count = 1
    for s, d, x in zip(p["stride"], p["dilation"], p["filter"]):
        tilde = s // gcd(s, d)
        count *= sum(1 for i in range(tilde) if -(-(x - i) // tilde) > 0)
    return count


def supported(k: dict, p: dict, revision: str, arch: str) -> bool:
    """Would CK's `<kernel>_is_supported(conv_param, k_batch)` say yes?"""
    if k["ndim"] != p["ndim"]:
        return False
    if k["variant"] == "forward_depthwise":
        return revision == "2026.06" and _depthwise(k, p)
    kb, g, c, kk = p["k_batch"], p["g"], p["c"], p["k"]
    variant, vec_a, vec_b, vec_c, ngm = k["variant"], k["vec_a"], k["vec_b"], k["vec_c"], k["num_groups_to_merge"]
    narrow = k["dtype"] in ("fp16", "bf16")
    async_pipeline = k["pipeline"] in ("comp_async", "basic_async_v1")
    if revision == "2026.06" and async_pipeline and arch != "gfx950":
        return False
    if variant == "forward":
        if kb != 1 or not _specialization_ok(k, p):
            return False
        if revision == "2026.06":
            if k["explicit_gemm"] and k["specialization"] != "filter1x1_stride1_pad0":
                return False
            if ngm == 1 and c % vec_a:
                return False
            if ngm > 1 and (c != 1 or g % ngm):
                return False
            if c % vec_b:
                return False
            if kk % vec_c and not (ngm > 1 and g % ngm == 0 and g % vec_c == 0):
                return False
            return True
        return c % vec_a == 0 and c % vec_b == 0 and kk % vec_c == 0
    if variant == "bwd_data":
        if revision == "2025.11" and kb != 1:
            return False
        if revision == "2026.06" and kb != 1 and vec_c % 2 and narrow:
            return False
        if _bwd_data_gemms(p) > 128 or not _specialization_ok(k, p):
            return False
        return c % vec_b == 0 and c % vec_c == 0 and kk % vec_a == 0
    # bwd_weight
    two_stage = k["two_stage"]
    gemm_k = p["n"] * prod(output_lengths(p))
    if revision == "2025.11" and kb != 1:
        floats = two_stage or k["dtype"] == "fp32"
        if vec_c not in ((1, 2, 4) if floats else (2, 4, 8)):
            return False  # the launcher: no atomic of that width
    if revision == "2026.06":
        streamk = k["streamk"] != "none"
        if streamk and (arch not in ("gfx90a", "gfx942", "gfx950") or kb != 1):
            return False
        if k["pipeline"] == "compv6" and -(-gemm_k // (kb * k["tile_k"])) < 4:
            return False
        if not two_stage and narrow and kb > 128:
            return False
    if not two_stage and narrow and vec_c % 2 and kb != 1:
        return False
    if revision == "2026.06" and k["streamk"] == "none" and -(-gemm_k // k["warp_tile_k"]) < kb:
        return False
    if not _specialization_ok(k, p):
        return False
    if revision == "2026.06" and k["explicit_gemm"] and k["specialization"] != "filter1x1_stride1_pad0":
        return False
    if c % vec_b or c % vec_c or kk % vec_a:
        return False
    return not (ngm > 1 and g % ngm)


def _depthwise(k: dict, p: dict) -> bool:
    if p["k"] != 1 or p["c"] != 1:
        return False
    if p["filter"] != [k["filter_size"]] * 2 or p["stride"] != [k["stride_h"], k["stride_w"]]:
        return False
    if p["dilation"] != [1, 1] or p["pad_left"] != [k["pad_h"], k["pad_w"]]:
        return False
    if p["n"] % k["nbatch"]:
        return False
    subtiles = -(-k["dw_tile_h"] // k["sub_h"]) * -(-k["dw_tile_w"] // k["sub_w"])
    tile_per_wave = 64 // subtiles  # BlockSize 64 (the dispatcher's depthwise kernels)
    ho, wo = output_lengths(p)
    return tile_per_wave == 1 or (ho <= k["dw_tile_h"] and wo <= k["dw_tile_w"])
