// SPDX-License-Identifier: MIT
// Auto-generated CK Tile Grouped Convolution kernel: grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree
// Variant: bwd_weight
#pragma once
#include <cstdint>
#include <numeric>
#include <functional>
#include "ck_tile/core.hpp"
#include "ck_tile/host/kernel_launch.hpp"
#include "ck_tile/ops/gemm.hpp"
#include "ck_tile/ops/grouped_convolution.hpp"
#include "ck_tile/ops/epilogue.hpp"
#include "ck_tile/ops/grouped_convolution/kernel/grouped_convolution_backward_weight_kernel.hpp"
#include "ck_tile/ops/grouped_convolution/pipeline/grouped_conv_universal_pipeline_ag_bg_cr_policy.hpp"
#include "ck_tile/ops/gemm/kernel/streamk_gemm/streamk_gemm_tile_partitioner.hpp"
using namespace ck_tile;


// Kernel configuration
struct grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree_Config {
// Data types
using InDataType = half_t;
using WeiDataType = half_t;
using AccDataType = float;
using OutDataType = half_t;
// Layouts
using InLayout = tensor_layout::convolution::NHWGC;
using WeiLayout = tensor_layout::convolution::GKYXC;
using OutLayout = tensor_layout::convolution::NHWGK;
// Tile shape
static constexpr index_t M_Tile = 128;
static constexpr index_t N_Tile = 32;
static constexpr index_t K_Tile = 32;
static constexpr index_t M_Warp = 1;
static constexpr index_t N_Warp = 1;
static constexpr index_t K_Warp = 1;
static constexpr index_t M_Warp_Tile = 32;
static constexpr index_t N_Warp_Tile = 32;
static constexpr index_t K_Warp_Tile = 8;
// Vector sizes
static constexpr index_t VectorSizeA = 8;
static constexpr index_t VectorSizeB = 2;
static constexpr index_t VectorSizeC = 2;
// Padding
static constexpr bool kPadM = true;
static constexpr bool kPadN = true;
static constexpr bool kPadK = true;
// Pipeline & Epilogue
static constexpr auto Pipeline = GemmPipeline::BASIC_ASYNC_V1;
static constexpr auto Scheduler = GemmPipelineScheduler::Intrawave;
static constexpr bool DoubleSmemBuffer = false;
static constexpr bool UseCShuffleEpilogue = true;
// Other params
static constexpr int kBlockPerCu = 2;
static constexpr index_t NumWaveGroups = 1;
static constexpr index_t NumGroupsToMerge = 1;
static constexpr bool EnableSplitImage = false;
static constexpr bool ExplicitGemm = false;
static constexpr index_t NDimSpatial = 2;
// Target architecture
static constexpr const char* TargetArch = "gfx950";
};


namespace ns_grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree {
using Config = grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree_Config;
constexpr const char* CONV_BWD_WEIGHT_KERNEL_NAME = "grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree";
using SelectedConvBwd_Weight_Kernel = Config;
struct grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree_Launcher {
using KernelConfig = Config;
using InDataType = typename Config::InDataType;
using WeiDataType = typename Config::WeiDataType;
using OutDataType = typename Config::OutDataType;
using AccDataType = typename Config::AccDataType;
using InLayout = typename Config::InLayout;
using WeiLayout = typename Config::WeiLayout;
using OutLayout = typename Config::OutLayout;
static constexpr index_t NDimSpatial = Config::NDimSpatial;
using GemmShape = TileGemmShape<
sequence<Config::M_Tile, Config::N_Tile, Config::K_Tile>,
sequence<Config::M_Warp, Config::N_Warp, Config::K_Warp>,
sequence<Config::M_Warp_Tile, Config::N_Warp_Tile, Config::K_Warp_Tile>>;
static constexpr auto ConvSpec = ConvolutionSpecialization::Filter1x1Stride1Pad0;
using GroupedConvTraitsType = GroupedConvTraits<
NDimSpatial,
ConvSpec,
InLayout,
WeiLayout,
tuple<>,
OutLayout,
Config::VectorSizeA,
Config::VectorSizeB,
Config::VectorSizeC,
Config::NumGroupsToMerge,
Config::EnableSplitImage,
Config::ExplicitGemm>;
using TilePartitioner = StreamKTilePartitioner<GemmShape, StreamKReductionStrategy::Tree, false>;
using GemmUniversalTraits = TileGemmUniversalTraits<
GroupedConvTraitsType::FixedGemmParams::kPadM,
GroupedConvTraitsType::FixedGemmParams::kPadN,
GroupedConvTraitsType::FixedGemmParams::kPadK,
Config::DoubleSmemBuffer,
typename GroupedConvTraitsType::AsLayoutBwdWeight,
typename GroupedConvTraitsType::BsLayoutBwdWeight,
typename GroupedConvTraitsType::CLayoutBwdWeight,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
GroupedConvTraitsType::FixedGemmParams::UseStructuredSparsity,
GroupedConvTraitsType::FixedGemmParams::Persistent,
Config::NumWaveGroups>;
using UniversalGemmProblem = UniversalGemmPipelineProblem<
OutDataType,
InDataType,
AccDataType,
GemmShape,
GemmUniversalTraits,
Config::Scheduler,
element_wise::PassThrough,
element_wise::PassThrough,
OutDataType,
InDataType,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA,
GroupedConvTraitsType::VectorSizeB>;
using EpilogueProblem = CShuffleEpilogueProblem<
OutDataType,
InDataType,
tuple<>,
AccDataType,
WeiDataType,
typename GroupedConvTraitsType::ImplicitGemmDsLayout,
typename GroupedConvTraitsType::FixedGemmParams::ELayout,
element_wise::PassThrough,
TilePartitioner::MPerBlock,
TilePartitioner::NPerBlock,
Config::M_Warp,
Config::N_Warp,
Config::M_Warp_Tile,
Config::N_Warp_Tile,
Config::K_Warp_Tile,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
Config::NumWaveGroups,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
Config::VectorSizeC>;
using ConvEpilogue =
std::conditional_t<Config::Pipeline == ck_tile::GemmPipeline::COMPUTE_TDM_V1 ||
Config::Pipeline == ck_tile::GemmPipeline::COMPUTE_TDM_V2,
ck_tile::TdmEpilogue<EpilogueProblem>,
ck_tile::CShuffleEpilogue<EpilogueProblem>>;
using GemmPipeline = GemmPipelineAGmemBGmemCRegAsyncV1<UniversalGemmProblem>;
using Kernel = GroupedConvolutionBackwardWeightKernel<
GroupedConvTraitsType, TilePartitioner, GemmPipeline, ConvEpilogue>;
static float launch(const GroupedConvBwdWeightHostArgs& args, const stream_config& s) {
float ave_time{0};
auto kargs = Kernel::MakeKernelArgs(args);
if (!Kernel::IsSupportedArgument(kargs)) {
throw std::runtime_error("Arguments not supported for stream-K bwd_weight kernel");
}
// Stream-K workspace allocation
auto ws_size = Kernel::GetWorkSpaceSize(kargs);
DeviceMem workspace_dev(ws_size);
Kernel::SetWorkSpacePointer(kargs, workspace_dev.GetDeviceBuffer());
const dim3 grids = Kernel::GridSize(kargs);
const dim3 blocks = Kernel::BlockSize();
auto preprocess = [&]() {
// Stream-K: zero workspace flags before each kernel launch
if(ws_size > 0) {
hip_check_error(
hipMemsetAsync(workspace_dev.GetDeviceBuffer(), 0, ws_size, s.stream_id_));
}
};
ave_time = launch_kernel_time_mask(
s, preprocess,
make_kernel<Config::kBlockPerCu>(Kernel{}, grids, blocks, 0, kargs));
return ave_time;
}
static bool is_supported(const ck_tile::conv::ConvParam& conv_param, int k_batch) {
GroupedConvBwdWeightHostArgs args(conv_param, nullptr, nullptr, {}, nullptr, k_batch);
auto kargs = Kernel::MakeKernelArgs(args);
return Kernel::IsSupportedArgument(kargs);
}
#ifdef CK_EXPERIMENTAL_BUILDER
static std::string get_instance_string() {
return Kernel{}.GetInstanceString();
}
#endif
};
using SelectedConvBwdWeightLauncher = grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree_Launcher;
} // namespace ns_grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree
using grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree_Launcher = ns_grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree::grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree_Launcher;
#ifdef CK_TILE_SINGLE_KERNEL_INCLUDE
using SelectedConvBwdWeightLauncher = ns_grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree::SelectedConvBwdWeightLauncher;
constexpr const char* CONV_BWD_WEIGHT_KERNEL_NAME = ns_grouped_conv_bwd_weight_fp16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_1x1x1_32x32x8_vec8_2_2_filter1x1_stride1_pad0_streamk_tree::CONV_BWD_WEIGHT_KERNEL_NAME;
#endif

