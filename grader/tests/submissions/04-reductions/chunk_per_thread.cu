// Each thread sums a contiguous chunk of its own (x[t*k .. t*k+k)): natural on a CPU, but in
// each step of the loop the 32 lanes of a warp read 32 addresses k floats apart, 32 sectors per
// request with 4 useful bytes in each.
// expect: lab fail
// expect: correctness pass
// expect[emu]: performance fail "sectors per load request"
// expect[cuda]: performance fail "of the vendor library's speed"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void zero_result(float* result) { *result = 0.0f; }

__device__ float block_sum(float v) {
  __shared__ float warp_sums[256];
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, offset);
  if (threadIdx.x % warpSize == 0) warp_sums[threadIdx.x / warpSize] = v;
  __syncthreads();
  float t = 0.0f;
  if (threadIdx.x == 0)
    for (int w = 0; w < static_cast<int>(blockDim.x / warpSize); ++w) t += warp_sums[w];
  return t;
}

__global__ void reduce_chunks(const float* x, int n, float* result) {
  const int threads = gridDim.x * blockDim.x;
  const int chunk = (n + threads - 1) / threads;
  const long long begin = static_cast<long long>(blockIdx.x * blockDim.x + threadIdx.x) * chunk;
  float v = 0.0f;
  for (long long i = begin; i < begin + chunk && i < n; ++i) v += x[i];
  v = block_sum(v);
  if (threadIdx.x == 0) atomicAdd(result, v);
}

void reduce_sum(const float* x, int n, float* result) {
  zero_result<<<1, 1>>>(result);
  const int blocks = (n + 16383) / 16384 < 256 ? (n + 16383) / 16384 : 256;
  reduce_chunks<<<blocks, 256>>>(x, n, result);
}
