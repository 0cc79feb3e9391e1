// A kernel marked so that SanitizerCoverage skips it: refused.
#include "gpulab/gpu.hpp"
__attribute__((no_sanitize("coverage"))) __global__ void untraced(const float* in, float* out) {
  out[threadIdx.x] = in[threadIdx.x * 32];
}
