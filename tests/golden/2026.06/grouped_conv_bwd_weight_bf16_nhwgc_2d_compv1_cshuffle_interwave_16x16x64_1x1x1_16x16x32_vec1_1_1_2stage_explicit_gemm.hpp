// SPDX-License-Identifier: MIT
// Auto-generated CK Tile Grouped Convolution kernel: grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm
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
#include "ck_tile/ops/elementwise.hpp"
using namespace ck_tile;


// Kernel configuration
struct grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm_Config {
// Data types
using InDataType = bf16_t;
using WeiDataType = bf16_t;
using AccDataType = float;
using OutDataType = bf16_t;
// Layouts
using InLayout = tensor_layout::convolution::NHWGC;
using WeiLayout = tensor_layout::convolution::GKYXC;
using OutLayout = tensor_layout::convolution::NHWGK;
// Tile shape
static constexpr index_t M_Tile = 16;
static constexpr index_t N_Tile = 16;
static constexpr index_t K_Tile = 64;
static constexpr index_t M_Warp = 1;
static constexpr index_t N_Warp = 1;
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
static constexpr auto Pipeline = GemmPipeline::BASIC_V1;
static constexpr auto Scheduler = GemmPipelineScheduler::Interwave;
static constexpr bool DoubleSmemBuffer = false;
static constexpr bool UseCShuffleEpilogue = true;
// Other params
static constexpr int kBlockPerCu = 2;
static constexpr index_t NumWaveGroups = 1;
static constexpr index_t NumGroupsToMerge = 1;
static constexpr bool EnableSplitImage = false;
static constexpr bool ExplicitGemm = true;
static constexpr index_t NDimSpatial = 2;
// Target architecture
static constexpr const char* TargetArch = "gfx950";
};


namespace ns_grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm {
using Config = grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm_Config;
constexpr const char* CONV_BWD_WEIGHT_KERNEL_NAME = "grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm";
using SelectedConvBwd_WeightKernel = Config;
struct grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm_Launcher {
using KernelConfig = Config;
using InDataType = typename Config::InDataType;
using WeiDataType = typename Config::WeiDataType;
using OutDataType = typename Config::OutDataType;
using AccDataType = typename Config::AccDataType;
using InLayout = typename Config::InLayout;
using WeiLayout = typename Config::WeiLayout;
using OutLayout = typename Config::OutLayout;
using WorkspaceDataType = float;
static constexpr index_t NDimSpatial = Config::NDimSpatial;
using GemmShape = TileGemmShape<
sequence<Config::M_Tile, Config::N_Tile, Config::K_Tile>,
sequence<Config::M_Warp, Config::N_Warp, Config::K_Warp>,
sequence<Config::M_Warp_Tile, Config::N_Warp_Tile, Config::K_Warp_Tile>>;
static constexpr auto ConvSpec = ConvolutionSpecialization::Default;
using GroupedConvTraitsType = GroupedConvTraits<
NDimSpatial, ConvSpec, InLayout, WeiLayout, tuple<>, OutLayout,
Config::VectorSizeA, Config::VectorSizeB, Config::VectorSizeC,
Config::NumGroupsToMerge, Config::EnableSplitImage, Config::ExplicitGemm>;
using TilePartitioner = GemmSpatiallyLocalTilePartitioner<
GemmShape,
GroupedConvTraitsType::FixedGemmParams::TilePartitionerGroupNum,
GroupedConvTraitsType::FixedGemmParams::TilePartitionerM01>;
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
using GemmPipelineProblem = GemmPipelineProblem<
OutDataType, InDataType, AccDataType, GemmShape,
typename GroupedConvTraitsType::template GroupedConvImplicitGemmTraitsBwdWeight<Config::NumWaveGroups>,
OutDataType, InDataType,
element_wise::PassThrough, element_wise::PassThrough,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA, GroupedConvTraitsType::VectorSizeB>;
using BaseGemmPipeline = BaseGemmPipelineAGmemBGmemCRegV1<GemmPipelineProblem>;
static float launch(const GroupedConvBwdWeightHostArgs& args, const stream_config& s) {
float ave_time{0};
constexpr auto scheduler = Config::Scheduler;
using UniversalGemmProblem = UniversalGemmPipelineProblem<
OutDataType, InDataType, AccDataType, GemmShape, GemmUniversalTraits,
scheduler,
element_wise::PassThrough, element_wise::PassThrough,
OutDataType, InDataType,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA, GroupedConvTraitsType::VectorSizeB>;
using GemmPipeline = GemmPipelineAGmemBGmemCRegV1<UniversalGemmProblem, GroupedConvUniversalPipelineAgBgCrPolicy>;
// Epilogue writes to fp32 workspace (not fp16 output)
using ConvEpilogue = CShuffleEpilogue<CShuffleEpilogueProblem<
OutDataType, InDataType, tuple<>, AccDataType, WorkspaceDataType,
typename GroupedConvTraitsType::ImplicitGemmDsLayout,
typename GroupedConvTraitsType::FixedGemmParams::ELayout,
element_wise::PassThrough,
TilePartitioner::MPerBlock, TilePartitioner::NPerBlock,
Config::M_Warp, Config::N_Warp, Config::M_Warp_Tile,
Config::N_Warp_Tile, Config::K_Warp_Tile,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
Config::NumWaveGroups,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeC>>;
using Kernel = GroupedConvolutionBackwardWeightKernel<
GroupedConvTraitsType, TilePartitioner, GemmPipeline, ConvEpilogue>;
// ElementWise kernel: fp32 workspace -> fp16/bf16 output
using XElementwiseOp = element_wise::UnaryConvert;
using EwBlockTile = sequence<2048>;
using EwBlockWarps = sequence<8>;
using EwWarpTile = sequence<64>;
using EwShape = ElementWiseShape<EwBlockWarps, EwBlockTile, EwWarpTile, WorkspaceDataType>;
using EwProblem = ElementWisePipelineProblem<
WorkspaceDataType, WorkspaceDataType, WeiDataType, EwShape, XElementwiseOp>;
using EwKernel = ElementWiseKernel<EwProblem, ElementWiseDefaultPolicy>;
// Workspace: G * K * C * product(filter_spatial) elements in fp32
const index_t spatial_accum = std::accumulate(
args.filter_spatial_lengths_.begin(), args.filter_spatial_lengths_.end(),
1, std::multiplies<index_t>());
DeviceMem ws_buf(args.G_ * args.K_ * args.C_ * spatial_accum * sizeof(WorkspaceDataType));
GroupedConvBwdWeightHostArgs ws_args(args);
auto* c_ptr = ws_args.wei_ptr;
ws_args.wei_ptr = ws_buf.GetDeviceBuffer();
auto kargs = Kernel::MakeKernelArgs(ws_args);
if(!Kernel::IsSupportedArgument(kargs)) {
throw std::runtime_error("Arguments not supported for two-stage bwd_weight kernel");
}
const dim3 grids = Kernel::GridSize(kargs);
const dim3 blocks = Kernel::BlockSize();
// ElementWise kernel setup
const index_t ew_block_size = EwKernel::BlockSize();
const index_t total_elems = args.G_ * args.K_ * args.C_ * spatial_accum;
constexpr index_t elems_per_block = EwBlockTile::at(number<0>{});
const index_t ew_grid_size = (total_elems + elems_per_block - 1) / elems_per_block;
auto ew_shape = make_tuple(args.G_ * args.K_,
args.C_ * spatial_accum);
auto ew_inputs = make_tuple(static_cast<WorkspaceDataType*>(ws_args.wei_ptr));
if(!EwKernel::IsSupportedArgument(ew_shape)) {
throw std::runtime_error("ElementWise arguments not supported for two-stage convert");
}
auto preprocess = [&]() {
if(kargs.k_batch > 1)
hip_check_error(hipMemsetAsync(
ws_args.wei_ptr, 0,
total_elems * sizeof(WorkspaceDataType),
s.stream_id_));
};
ave_time = launch_kernel_time_mask(
s, preprocess,
make_kernel<Config::kBlockPerCu>(Kernel{}, grids, blocks, 0, kargs),
make_kernel<Config::kBlockPerCu>(
EwKernel{}, ew_grid_size, ew_block_size, 0,
ew_shape,
make_tuple(args.C_ * spatial_accum, 1),
make_tuple(args.C_ * spatial_accum, 1),
ew_inputs,
static_cast<WeiDataType*>(c_ptr)));
return ave_time;
}
static bool is_supported(const ck_tile::conv::ConvParam& conv_param, int k_batch) {
GroupedConvBwdWeightHostArgs args(conv_param,
nullptr, nullptr, {}, nullptr, k_batch);
constexpr auto scheduler = Config::Scheduler;
using UniversalGemmProblem = UniversalGemmPipelineProblem<
OutDataType, InDataType, AccDataType, GemmShape, GemmUniversalTraits,
scheduler,
element_wise::PassThrough, element_wise::PassThrough,
OutDataType, InDataType,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA, GroupedConvTraitsType::VectorSizeB>;
using GemmPipeline = GemmPipelineAGmemBGmemCRegV1<UniversalGemmProblem, GroupedConvUniversalPipelineAgBgCrPolicy>;
// Epilogue writes to fp32 workspace (not fp16 output)
using ConvEpilogue = CShuffleEpilogue<CShuffleEpilogueProblem<
OutDataType, InDataType, tuple<>, AccDataType, WorkspaceDataType,
typename GroupedConvTraitsType::ImplicitGemmDsLayout,
typename GroupedConvTraitsType::FixedGemmParams::ELayout,
element_wise::PassThrough,
TilePartitioner::MPerBlock, TilePartitioner::NPerBlock,
Config::M_Warp, Config::N_Warp, Config::M_Warp_Tile,
Config::N_Warp_Tile, Config::K_Warp_Tile,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
Config::NumWaveGroups,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeC>>;
using Kernel = GroupedConvolutionBackwardWeightKernel<
GroupedConvTraitsType, TilePartitioner, GemmPipeline, ConvEpilogue>;
auto kargs = Kernel::MakeKernelArgs(args);
return Kernel::IsSupportedArgument(kargs);
}
#ifdef CK_EXPERIMENTAL_BUILDER
static std::string get_instance_string() {
constexpr auto scheduler = Config::Scheduler;
using UniversalGemmProblem = UniversalGemmPipelineProblem<
OutDataType, InDataType, AccDataType, GemmShape, GemmUniversalTraits,
scheduler,
element_wise::PassThrough, element_wise::PassThrough,
OutDataType, InDataType,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeA, GroupedConvTraitsType::VectorSizeB>;
using GemmPipeline = GemmPipelineAGmemBGmemCRegV1<UniversalGemmProblem, GroupedConvUniversalPipelineAgBgCrPolicy>;
// Two-stage: epilogue writes to fp32 workspace
using ConvEpilogue = CShuffleEpilogue<CShuffleEpilogueProblem<
OutDataType, InDataType, tuple<>, AccDataType, WorkspaceDataType,
typename GroupedConvTraitsType::ImplicitGemmDsLayout,
typename GroupedConvTraitsType::FixedGemmParams::ELayout,
element_wise::PassThrough,
TilePartitioner::MPerBlock, TilePartitioner::NPerBlock,
Config::M_Warp, Config::N_Warp, Config::M_Warp_Tile,
Config::N_Warp_Tile, Config::K_Warp_Tile,
GroupedConvTraitsType::FixedGemmParams::TransposeC,
Config::NumWaveGroups,
GroupedConvTraitsType::FixedGemmParams::FixedVectorSize,
GroupedConvTraitsType::VectorSizeC>>;
using Kernel = GroupedConvolutionBackwardWeightKernel<
GroupedConvTraitsType, TilePartitioner, GemmPipeline, ConvEpilogue>;
return Kernel{}.GetInstanceString();
}
#endif
};
using SelectedConvBwdWeightLauncher = grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm_Launcher;
} // namespace ns_grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm
using grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm_Launcher = ns_grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm::grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm_Launcher;
#ifdef CK_TILE_SINGLE_KERNEL_INCLUDE
using SelectedConvBwdWeightLauncher = ns_grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm::SelectedConvBwdWeightLauncher;
constexpr const char* CONV_BWD_WEIGHT_KERNEL_NAME = ns_grouped_conv_bwd_weight_bf16_nhwgc_2d_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec1_1_1_2stage_explicit_gemm::CONV_BWD_WEIGHT_KERNEL_NAME;
#endif

