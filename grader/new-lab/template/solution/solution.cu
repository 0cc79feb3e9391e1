// Lab @NN@ reference: one element per thread, neighbouring threads on neighbouring elements.
#include "gpulab/gpu.hpp"
#include "@FUNC@.hpp"

__global__ void @FUNC@_coalesced(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

void @FUNC@(const float* x, float* y, int n) {
  const int block = 256;
  gpulab::launch(@FUNC@_coalesced, (n + block - 1) / block, block, 0, x, y, n);
}
