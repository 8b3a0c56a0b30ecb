// SPDX-License-Identifier: MIT
// Auto-generated CK Tile Depthwise Convolution kernel: grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8
// Variant: forward_depthwise
#pragma once
#include <cstdint>
#include <numeric>
#include <functional>
#include "ck_tile/core.hpp"
#include "ck_tile/host/kernel_launch.hpp"
#include "ck_tile/ops/gemm.hpp"
#include "ck_tile/ops/grouped_convolution.hpp"
#include "ck_tile/ops/grouped_convolution/pipeline/grouped_convolution_forward_depthwise_pipeline.hpp"
#include "ck_tile/ops/elementwise/unary_element_wise_operation.hpp"
using namespace ck_tile;


// Kernel configuration and type definitions
namespace ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8 {
using InDataType = float;
using WeiDataType = float;
using AccDataType = float;
using OutDataType = float;
// Depthwise convolution traits
using DwTraits = DepthwiseConvFwdTraits<
InDataType, WeiDataType, AccDataType, OutDataType,
64, // BlockSize
14, // TileH
28, // TileW
3, // FilterH
3, // FilterW
2, // StrideH
2, // StrideW
1, // DilationH
1, // DilationW
1, // PadH
1, // PadW
1, // NBatch
2, // SubTileH
4, // SubTileW
8, // InVec
8>; // OutVec
// Depthwise pipeline
using DwPipeline = DepthwiseConvFwdPipeline<DwTraits>;
// Grouped convolution traits (depthwise specialization)
using ConvTraitsType = GroupedConvTraits<
2, // NDimSpatial
ConvolutionSpecialization::Default, // ConvSpec
void, // InLayout (unused for depthwise)
void, // WeiLayout (unused for depthwise)
tuple<>, // DsLayout
void, // OutLayout (unused for depthwise)
8, // VectorSizeA
8, // VectorSizeB
8, // VectorSizeC
1, // NumGroupsToMerge
false, // EnableSplitImage
false, // ExplicitGemm
DwTraits>; // DepthwiseTraits
// Null epilogue for depthwise (no shuffle needed)
struct DepthwiseNullEpilogue {
using DsLayout = tuple<>;
using DsDataType = tuple<>;
using ODataType = OutDataType;
using AccDataType = float;
using CDElementwise = element_wise::PassThrough;
};
// Complete kernel type
using Kernel = GroupedConvolutionForwardKernel<
ConvTraitsType, void, DwPipeline, DepthwiseNullEpilogue>;


constexpr const char* CONV_FWD_KERNEL_NAME = "grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8";
struct grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8_Launcher {
using KernelConfig = DwTraits;
using InDataType = ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8::InDataType;
using WeiDataType = ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8::WeiDataType;
using OutDataType = ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8::OutDataType;
using AccDataType = ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8::AccDataType;
static constexpr index_t NDimSpatial = 2;
static float launch(const GroupedConvFwdHostArgs<>& args, const stream_config& s) {
auto kargs = Kernel::MakeKernelArgs(args);
if (!Kernel::IsSupportedArgument(kargs)) {
throw std::runtime_error("Arguments not supported for depthwise conv kernel");
}
const dim3 grids = Kernel::GridSize(kargs);
const dim3 blocks = Kernel::BlockSize();
float ave_time = launch_kernel(s, make_kernel(Kernel{}, grids, blocks, 0, kargs));
return ave_time;
}
static bool is_supported(const ck_tile::conv::ConvParam& conv_param, int k_batch) {
GroupedConvFwdHostArgs<> args(conv_param,
nullptr, nullptr, {}, nullptr, k_batch);
auto kargs = Kernel::MakeKernelArgs(args);
return Kernel::IsSupportedArgument(kargs);
}
#ifdef CK_EXPERIMENTAL_BUILDER
static std::string get_instance_string() {
return Kernel{}.GetInstanceString();
}
#endif
};
using SelectedConvKernelLauncher = grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8_Launcher;
} // namespace ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8
using grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8_Launcher = ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8::grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8_Launcher;
#ifdef CK_TILE_SINGLE_KERNEL_INCLUDE
using SelectedConvKernelLauncher = ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8::SelectedConvKernelLauncher;
constexpr const char* CONV_FWD_KERNEL_NAME = ns_grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8::CONV_FWD_KERNEL_NAME;
#endif

