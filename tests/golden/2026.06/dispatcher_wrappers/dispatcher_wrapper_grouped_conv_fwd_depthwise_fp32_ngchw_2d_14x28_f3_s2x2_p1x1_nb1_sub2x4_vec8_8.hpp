// SPDX-License-Identifier: MIT
// Auto-generated dispatcher wrapper for: grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8
#pragma once
#include "ck_tile/dispatcher.hpp"
#include "ck_tile/dispatcher/grouped_conv_utils.hpp"
#include "../grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8.hpp"
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
inline GroupedConvKernelInstancePtr make_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8(const std::string& gfx_arch = "gfx942") {
GroupedConvKernelKey key;
key.signature.dtype_in = DataType::FP32;
key.signature.dtype_wei = DataType::FP32;
key.signature.dtype_out = DataType::FP32;
key.signature.dtype_acc = DataType::FP32;
key.signature.layout = "ngchw";
key.signature.conv_type = "forward";
key.signature.num_dims = 2;
key.signature.groups = 1;
 // Depthwise kernels have no GEMM tile parameters
key.algorithm.tile_shape = {0, 0, 0};
key.algorithm.wave_shape = {0, 0, 0};
key.algorithm.warp_tile_shape = {0, 0, 0};
key.algorithm.epilogue = Epilogue::None;
key.gfx_arch = gfx_arch;
// Create kernel instance that wraps the launcher
return std::make_shared<GroupedConvKernelInstance>(
key,
"grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8",
[](GroupedConvFwdHostArgs<>& args, const stream_config& cfg) -> float {
return grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8_Launcher::launch(args, cfg);
}
);
}
} // namespace generated
} // namespace dispatcher
} // namespace ck_tile
// Export launcher alias to global namespace for direct use
using SelectedConvKernelLauncher = grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8_Launcher;
