// Reads every row with float4 loads, also when n is not a multiple of 4: the rows then do not
// start on 16-byte boundaries (a misaligned-address error on a GPU), and the tail is missed.
// expect: lab fail
// expect[emu]: correctness fail "misaligned"
// On a GPU the fault is sticky: the checks after it say where the context was lost.
// expect[cuda]: correctness fail "misaligned"
// expect[cuda]: correctness fail "not run: the GPU context was lost in correctness.tiny_sizes"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float partial[256];
  const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(blockIdx.x) * n);
  float s = 0;
  for (int c = threadIdx.x; c < n / 4; c += blockDim.x) {
    const float4 q = row[c];
    s += q.x + q.y + q.z + q.w;
  }
  partial[threadIdx.x] = s;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 256, 0, m, sums, n); }
