// SPDX-License-Identifier: MIT
// Auto-generated dispatcher wrapper for: grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree
#pragma once
#include "ck_tile/dispatcher.hpp"
#include "ck_tile/dispatcher/grouped_conv_utils.hpp"
#include "../grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree.hpp"
namespace ck_tile {
namespace dispatcher {
namespace generated {
using ::ck_tile::dispatcher::GroupedConvKernelInstancePtr;
using ::ck_tile::dispatcher::GroupedConvKernelKey;
using ::ck_tile::dispatcher::DataType;
using ::ck_tile::dispatcher::LayoutTag;
using ::ck_tile::dispatcher::Pipeline;
using ::ck_tile::dispatcher::Scheduler;
using ::ck_tile::dispatcher::Epilogue;
using Priority = ::ck_tile::dispatcher::GroupedConvRegistry::Priority;
// Factory function to create kernel instance for registry
inline GroupedConvKernelInstancePtr make_grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree(const std::string& gfx_arch = "gfx942") {
GroupedConvKernelKey key;
key.signature.dtype_in = DataType::FP16;
key.signature.dtype_wei = DataType::FP16;
key.signature.dtype_out = DataType::FP16;
key.signature.dtype_acc = DataType::FP32;
key.signature.layout = "nhwgc";
key.signature.conv_type = "bwd_weight";
key.signature.num_dims = 2;
key.signature.groups = 1;
 key.algorithm.tile_shape = {128, 32, 32};
key.algorithm.wave_shape = {1, 1, 1};
key.algorithm.warp_tile_shape = {32, 32, 8};
key.algorithm.pipeline = Pipeline::Basic_async_v1;
key.algorithm.scheduler = Scheduler::Intrawave;
key.algorithm.epilogue = Epilogue::CShuffle;
key.gfx_arch = gfx_arch;
// Create kernel instance that wraps the launcher
return std::make_shared<GroupedConvKernelInstance>(
key,
"grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree",
[](GroupedConvBwdWeightHostArgs& args, const stream_config& cfg) -> float {
return grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree_Launcher::launch(args, cfg);
}
);
}
} // namespace generated
} // namespace dispatcher
} // namespace ck_tile
// Export launcher alias to global namespace for direct use
using SelectedConvBwdWeightLauncher = grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree_Launcher;
