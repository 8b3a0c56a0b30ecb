// SPDX-License-Identifier: MIT
// Copyright (c) 2025, Advanced Micro Devices, Inc. All rights reserved.
// Auto-generated master registration header for grouped conv kernels
#pragma once
#include "ck_tile/dispatcher.hpp"
#include "ck_tile/dispatcher/grouped_conv_utils.hpp"
#include "dispatcher_wrapper_grouped_conv_bwd_data_bf16_nhwgc_3d_compv1_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec8_8_8.hpp"
#include "dispatcher_wrapper_grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1.hpp"
#include "dispatcher_wrapper_grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm.hpp"
#include "dispatcher_wrapper_grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree.hpp"
#include "dispatcher_wrapper_grouped_conv_bwd_weight_fp16_nhwgc_2d_mem_cshuffle_intrawave_128x16x64_2x1x1_16x16x32_vec8_1_1.hpp"
#include "dispatcher_wrapper_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8.hpp"
#include "dispatcher_wrapper_grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_1.hpp"
namespace ck_tile {
namespace dispatcher {
using Priority = GroupedConvRegistry::Priority;
inline void register_all_grouped_conv_fwd_kernels(
const std::string& gfx_arch = "gfx942",
Priority priority = Priority::Normal)
{
auto& registry = GroupedConvRegistry::instance();
registry.register_kernel(generated::make_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8(gfx_arch), priority);
 registry.register_kernel(generated::make_grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_1(gfx_arch), priority);
}
inline void register_all_grouped_conv_bwd_data_kernels(
const std::string& gfx_arch = "gfx942",
Priority priority = Priority::Normal)
{
auto& registry = GroupedConvRegistry::instance();
registry.register_kernel(generated::make_grouped_conv_bwd_data_bf16_nhwgc_3d_compv1_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec8_8_8(gfx_arch), priority);
 registry.register_kernel(generated::make_grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1(gfx_arch), priority);
}
inline void register_all_grouped_conv_bwd_weight_kernels(
const std::string& gfx_arch = "gfx942",
Priority priority = Priority::Normal)
{
auto& registry = GroupedConvRegistry::instance();
registry.register_kernel(generated::make_grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm(gfx_arch), priority);
 registry.register_kernel(generated::make_grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree(gfx_arch), priority);
 registry.register_kernel(generated::make_grouped_conv_bwd_weight_fp16_nhwgc_2d_mem_cshuffle_intrawave_128x16x64_2x1x1_16x16x32_vec8_1_1(gfx_arch), priority);
}
inline void register_all_grouped_conv_kernels(
const std::string& gfx_arch = "gfx942",
Priority priority = Priority::Normal)
{
register_all_grouped_conv_fwd_kernels(gfx_arch, priority);
register_all_grouped_conv_bwd_data_kernels(gfx_arch, priority);
register_all_grouped_conv_bwd_weight_kernels(gfx_arch, priority);
}
inline std::size_t get_grouped_conv_fwd_kernel_count() { return 2; }
inline std::size_t get_grouped_conv_bwd_data_kernel_count() { return 2; }
inline std::size_t get_grouped_conv_bwd_weight_kernel_count() { return 3; }
inline std::size_t get_grouped_conv_kernel_count() { return 7; }
} // namespace dispatcher
} // namespace ck_tile
