// A shared-memory tree reduction without the __syncthreads between its steps.
// expect[emu]: lab fail
// expect[emu]: sanitizer fail "race"
// expect[cuda]: lab fail
// expect[cuda]: sanitizer fail "race"
// expect[cuda]: sanitizer fail "race_missing_syncthreads.cu:"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float buf[256];
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  buf[threadIdx.x] = s;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
    // missing: __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = buf[0];
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 256, 0, m, sums, n); }
