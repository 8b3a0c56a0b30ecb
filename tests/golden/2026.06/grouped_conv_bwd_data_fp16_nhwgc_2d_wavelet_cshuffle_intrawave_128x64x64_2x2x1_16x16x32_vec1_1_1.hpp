// SPDX-License-Identifier: MIT
// Auto-generated CK Tile Grouped Convolution kernel: grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1
// Variant: bwd_data
#pragma once
#include <cstdint>
#include <numeric>
#include <functional>
#include "ck_tile/core.hpp"
#include "ck_tile/host/kernel_launch.hpp"
#include "ck_tile/ops/gemm.hpp"
#include "ck_tile/ops/grouped_convolution.hpp"
#include "ck_tile/ops/epilogue.hpp"
#include "ck_tile/ops/grouped_convolution/kernel/grouped_convolution_backward_data_kernel.hpp"
#include "ck_tile/ops/grouped_convolution/pipeline/grouped_conv_universal_pipeline_ag_bg_cr_policy.hpp"
using namespace ck_tile;


// Kernel configuration
struct grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1_Config {
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
static constexpr index_t N_Tile = 64;
static constexpr index_t K_Tile = 64;
static constexpr index_t M_Warp = 2;
static constexpr index_t N_Warp = 2;
static constexpr index_t K_Warp = 1;
static constexpr index_t M_Warp_Tile = 16;
static constexpr index_t N_Warp_Tile = 16;
static constexpr index_t K_Warp_Tile = 32;
// Vector sizes
static constexpr index_t VectorSizeA = 1;
static constexpr index_t VectorSizeB = 1;
static constexpr index_t VectorSizeC = 1;
// Padding
static constexpr bool kPadM = true;
static constexpr bool kPadN = true;
static constexpr bool kPadK = true;
// Pipeline & Epilogue
static constexpr auto Pipeline = GemmPipeline::WAVELET;
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


// Unique namespace for this kernel to avoid conflicts when including multiple kernels
namespace ns_grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1 {
// Bring Config into namespace
using Config = grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1_Config;
// Kernel name for identification
constexpr const char* CONV_BWD_DATA_KERNEL_NAME = "grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1";
// Selected kernel alias
using SelectedConvBwd_DataKernel = Config;
// =============================================================================
// Kernel Launch Implementation (bwd_data)
// =============================================================================
struct grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1_Launcher {
using KernelConfig = Config; // Use the Config alias from namespace
using InDataType = typename Config::InDataType;
using WeiDataType = typename Config::WeiDataType;
using OutDataType = typename Config::OutDataType;
using AccDataType = typename Config::AccDataType;
using InLayout = typename Config::InLayout;
using WeiLayout = typename Config::WeiLayout;
using OutLayout = typename Config::OutLayout;
static constexpr index_t NDimSpatial = Config::NDimSpatial;
// Implicit GEMM shape
using GemmShape = TileGemmShape<
sequence<Config::M_Tile, Config::N_Tile, Config::K_Tile>,
sequence<Config::M_Warp, Config::N_Warp, Config::K_Warp>,
sequence<Config::M_Warp_Tile, Config::N_Warp_Tile, Config::K_Warp_Tile>>;
// Convolution traits
static constexpr auto ConvSpec = ConvolutionSpecialization::Default;
using GroupedConvTraitsType = GroupedConvTraits<
NDimSpatial, ConvSpec, InLayout, WeiLayout, tuple<>, OutLayout,
Config::VectorSizeA, Config::VectorSizeB, Config::VectorSizeC,
Config::NumGroupsToMerge, Config::EnableSplitImage, Config::ExplicitGemm>;
// Tile partitioner
using TilePartitioner = GemmSpatiallyLocalTilePartitioner<
GemmShape,
GroupedConvTraitsType::FixedGemmParams::TilePartitionerGroupNum,
GroupedConvTraitsType::FixedGemmParams::TilePartitionerM01>;
// Universal traits - layout suffix changes per variant
using GemmUniversalTraits = TileGemmUniversalTraits<
GroupedConvTraitsType::FixedGemmParams::kPadM,
GroupedConvTraitsType::FixedGemmParams::kPadN,
GroupedConvTraitsType::FixedGemmParams::kPadK,
Config::DoubleSmemBuffer,
typename GroupedConvTraitsType::AsLayoutBwdData,
typename GroupedConvTraitsType::BsLayoutBwdData,
typename GroupedConvTraitsType::CLayoutBwdData,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
GroupedConvTraitsType::FixedGemmParams::UseStructuredSparsity,
GroupedConvTraitsType::FixedGemmParams::Persistent,
Config::NumWaveGroups>;
// Pipeline problem - data types change per variant
using GemmPipelineProblem = GemmPipelineProblem<
OutDataType, WeiDataType, AccDataType, GemmShape,
typename GroupedConvTraitsType::template GroupedConvImplicitGemmTraitsBwdData<Config::NumWaveGroups>,
OutDataType, WeiDataType,
element_wise::PassThrough, element_wise::PassThrough,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA, GroupedConvTraitsType::VectorSizeB>;
// Base pipeline for tail handling
using BaseGemmPipeline = GemmPipelineAgBgCrWavelet<GemmPipelineProblem>;
static float launch(const GroupedConvBwdDataHostArgs& args, const stream_config& s) {
const index_t gemm_k = args.K_ * std::accumulate(args.filter_spatial_lengths_.begin(), args.filter_spatial_lengths_.end(), 1, std::multiplies<index_t>());
const index_t k_grain = args.k_batch * Config::K_Tile;
const index_t K_split = (gemm_k + k_grain - 1) / k_grain * Config::K_Tile;
const index_t num_loop = TilePartitioner::GetLoopNum(K_split);
const bool has_hot_loop = BaseGemmPipeline::BlockHasHotloop(num_loop);
const TailNumber tail_num = BaseGemmPipeline::GetBlockLoopTailNum(num_loop);
float ave_time{0};
constexpr auto scheduler = Config::Scheduler;
using UniversalGemmProblem = UniversalGemmPipelineProblem<
OutDataType, WeiDataType, AccDataType, GemmShape, GemmUniversalTraits,
scheduler,
element_wise::PassThrough, element_wise::PassThrough,
OutDataType, WeiDataType,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA, GroupedConvTraitsType::VectorSizeB>;
using GemmPipeline = GemmPipelineAgBgCrWavelet<UniversalGemmProblem, GroupedConvUniversalPipelineAgBgCrPolicy, 4>;
using ConvEpilogue = CShuffleEpilogue<CShuffleEpilogueProblem<
OutDataType, WeiDataType, tuple<>, AccDataType, InDataType,
typename GroupedConvTraitsType::ImplicitGemmDsLayout,
typename GroupedConvTraitsType::FixedGemmParams::ELayout,
element_wise::PassThrough,
TilePartitioner::MPerBlock, TilePartitioner::NPerBlock,
Config::M_Warp, Config::N_Warp, Config::M_Warp_Tile,
Config::N_Warp_Tile, Config::K_Warp_Tile,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
Config::NumWaveGroups,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
Config::VectorSizeC, 1, Config::DoubleSmemBuffer>>;
using Kernel = GroupedConvolutionBackwardDataKernel<
GroupedConvTraitsType, TilePartitioner, GemmPipeline, ConvEpilogue>;
const auto Run = [&](const auto has_hot_loop_, const auto tail_number_) {
auto kargs = Kernel::MakeKernelArgs(args);
if (!Kernel::IsSupportedArgument(kargs)) {
throw std::runtime_error("Arguments not supported for grouped conv kernel");
}
const dim3 grids = Kernel::GridSize(kargs);
const dim3 blocks = Kernel::BlockSize();
// Compute zeroing size for split-K atomic accumulation
const std::size_t zeroing_size = std::accumulate(
std::begin(kargs.in_g_n_c_wis_lengths.data),
std::end(kargs.in_g_n_c_wis_lengths.data),
std::size_t{1}, std::multiplies<std::size_t>());
auto preprocess = [&]() {
hip_check_error(hipMemsetAsync(
kargs.in_ptr, 0,
zeroing_size * sizeof(InDataType),
s.stream_id_));
};
ave_time = launch_kernel_time_mask(s, preprocess, make_kernel<Config::kBlockPerCu>(Kernel{}, grids, blocks, 0, kargs));
return ave_time;
};
Run(has_hot_loop, tail_num);
return ave_time;
}
static bool is_supported(const ck_tile::conv::ConvParam& conv_param, int k_batch) {
GroupedConvBwdDataHostArgs args(conv_param,
nullptr, nullptr, {}, nullptr, k_batch);
constexpr auto scheduler = Config::Scheduler;
using UniversalGemmProblem = UniversalGemmPipelineProblem<
OutDataType, WeiDataType, AccDataType, GemmShape, GemmUniversalTraits,
scheduler,
element_wise::PassThrough, element_wise::PassThrough,
OutDataType, WeiDataType,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA, GroupedConvTraitsType::VectorSizeB>;
using GemmPipeline = GemmPipelineAgBgCrWavelet<UniversalGemmProblem, GroupedConvUniversalPipelineAgBgCrPolicy, 4>;
using ConvEpilogue = CShuffleEpilogue<CShuffleEpilogueProblem<
OutDataType, WeiDataType, tuple<>, AccDataType, InDataType,
typename GroupedConvTraitsType::ImplicitGemmDsLayout,
typename GroupedConvTraitsType::FixedGemmParams::ELayout,
element_wise::PassThrough,
TilePartitioner::MPerBlock, TilePartitioner::NPerBlock,
Config::M_Warp, Config::N_Warp, Config::M_Warp_Tile,
Config::N_Warp_Tile, Config::K_Warp_Tile,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
Config::NumWaveGroups,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
Config::VectorSizeC, 1, Config::DoubleSmemBuffer>>;
using Kernel = GroupedConvolutionBackwardDataKernel<
GroupedConvTraitsType, TilePartitioner, GemmPipeline, ConvEpilogue>;
auto kargs = Kernel::MakeKernelArgs(args);
return Kernel::IsSupportedArgument(kargs);
}
#ifdef CK_EXPERIMENTAL_BUILDER
static std::string get_instance_string() {
constexpr auto scheduler = Config::Scheduler;
using UniversalGemmProblem = UniversalGemmPipelineProblem<
OutDataType, WeiDataType, AccDataType, GemmShape, GemmUniversalTraits,
scheduler,
element_wise::PassThrough, element_wise::PassThrough,
OutDataType, WeiDataType,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA, GroupedConvTraitsType::VectorSizeB>;
using GemmPipeline = GemmPipelineAgBgCrWavelet<UniversalGemmProblem, GroupedConvUniversalPipelineAgBgCrPolicy, 4>;
using ConvEpilogue = CShuffleEpilogue<CShuffleEpilogueProblem<
OutDataType, WeiDataType, tuple<>, AccDataType, InDataType,
typename GroupedConvTraitsType::ImplicitGemmDsLayout,
typename GroupedConvTraitsType::FixedGemmParams::ELayout,
element_wise::PassThrough,
TilePartitioner::MPerBlock, TilePartitioner::NPerBlock,
Config::M_Warp, Config::N_Warp, Config::M_Warp_Tile,
Config::N_Warp_Tile, Config::K_Warp_Tile,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
Config::NumWaveGroups,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
Config::VectorSizeC, 1, Config::DoubleSmemBuffer>>;
using Kernel = GroupedConvolutionBackwardDataKernel<
GroupedConvTraitsType, TilePartitioner, GemmPipeline, ConvEpilogue>;
return Kernel{}.GetInstanceString();
}
#endif
};
// Launcher alias for tile_engine compatibility
using SelectedConvBwdDataLauncher = grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1_Launcher;
} // namespace ns_grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1
// Export specific launcher to global namespace
using grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1_Launcher = ns_grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1::grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1_Launcher;
// When used with -include compiler flag, export aliases to global namespace
#ifdef CK_TILE_SINGLE_KERNEL_INCLUDE
using SelectedConvBwdDataLauncher = ns_grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1::SelectedConvBwdDataLauncher;
constexpr const char* CONV_BWD_DATA_KERNEL_NAME = ns_grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1::CONV_BWD_DATA_KERNEL_NAME;
#endif

