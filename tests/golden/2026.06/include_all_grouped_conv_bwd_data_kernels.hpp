// SPDX-License-Identifier: MIT
// Copyright (c) 2025, Advanced Micro Devices, Inc. All rights reserved.
// Auto-generated header for grouped conv backward data kernels
#pragma once
#include "grouped_conv_bwd_data_bf16_nhwgc_3d_compv1_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec8_8_8.hpp"
#include "grouped_conv_bwd_data_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x64x64_2x2x1_16x16x32_vec1_1_1.hpp"
// Default launcher alias (uses first kernel)
using SelectedConvBwdDataLauncher = grouped_conv_bwd_data_bf16_nhwgc_3d_compv1_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec8_8_8_Launcher;
