// SPDX-License-Identifier: MIT
// Copyright (c) 2025, Advanced Micro Devices, Inc. All rights reserved.
// Auto-generated header for grouped conv forward kernels
#pragma once
#include "grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8.hpp"
#include "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_1.hpp"
// Default launcher alias (uses first kernel)
using SelectedConvKernelLauncher = grouped_conv_fwd_depthwise_fp32_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8_Launcher;
