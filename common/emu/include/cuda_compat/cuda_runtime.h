// <cuda_runtime.h> for the gpulab emulator: a standalone CUDA file compiled as C++ by the emu
// back-end finds this header first. It brings the kernel vocabulary (gpulab/emu/kernel.hpp) and
// the runtime API the emulator implements (gpulab/emu/cuda_runtime_shim.hpp and
// cuda_runtime_launch.hpp); docs/architecture.md lists what is supported.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "gpulab/gpu.hpp"
