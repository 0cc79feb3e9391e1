// Lab 02 reference: one element per thread, neighbouring threads on neighbouring elements.
#include "gpulab/gpu.hpp"
#include "aos_soa.hpp"

__global__ void aos_soa_coalesced(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

void aos_soa(const float* x, float* y, int n) {
  const int block = 256;
  gpulab::launch(aos_soa_coalesced, (n + block - 1) / block, block, 0, x, y, n);
}
