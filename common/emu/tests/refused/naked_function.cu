// A naked function (a body of assembly only): refused.
#include "gpulab/gpu.hpp"
__attribute__((naked, noinline)) void nothing() {}
__global__ void calls_it(float* out) {
  nothing();
  out[threadIdx.x] = 1.0f;
}
