// A device function compiled without any sanitizer instrumentation: refused.
#include "gpulab/gpu.hpp"
__attribute__((disable_sanitizer_instrumentation, noinline)) __device__ float load(const float* p) { return *p; }
__global__ void strided(const float* in, float* out) { out[threadIdx.x] = load(in + threadIdx.x * 32); }
