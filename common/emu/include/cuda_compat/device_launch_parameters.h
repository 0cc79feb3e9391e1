// <device_launch_parameters.h> for the gpulab emulator: threadIdx, blockIdx, blockDim, gridDim and
// warpSize come with the kernel vocabulary; including this header is harmless.
#pragma once

#include "cuda_runtime.h"
