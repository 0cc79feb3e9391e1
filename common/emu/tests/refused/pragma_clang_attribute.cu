// The same attribute applied to every function by a pragma: refused.
#include "gpulab/gpu.hpp"
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)
__global__ void untraced(const float* in, float* out) { out[threadIdx.x] = in[threadIdx.x * 32]; }
#pragma clang attribute pop
