// Idiom: dim3 blocks and grids in two dimensions: blocks of 32 x 8 threads, threadIdx.y picks the
// row and threadIdx.x the column, the rows of a block along blockIdx.x and blockIdx.y; the 32
// threads of a row reduce with width-32 shuffles (on 64-lane warps, two rows share a warp).
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kRowThreads = 32;   // threads per row (blockDim.x)
constexpr int kRowsPerBlock = 8;  // rows per block (blockDim.y)
constexpr int kGridX = 1024;      // blocks along x; the rest of the rows along y

__device__ float row_threads_sum(float v) {
  for (int offset = kRowThreads / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset), kRowThreads);
  return v;
}

__device__ int row_of_thread() {
  const int block = blockIdx.y * gridDim.x + blockIdx.x;
  return block * blockDim.y + threadIdx.y;
}

__global__ void row_sum_float4(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const int r = row_of_thread();
  float s = 0.0f;
  if (r < n) {
    const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(r) * n);
    for (int c = threadIdx.x; c < n / 4; c += blockDim.x) {
      const float4 q = row[c];
      s += (q.x + q.y) + (q.z + q.w);
    }
  }
  s = row_threads_sum(s);  // every thread takes part, also in rows past the end
  if (r < n && threadIdx.x == 0) sums[r] = s;
}

__global__ void row_sum_scalar(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const int r = row_of_thread();
  float s = 0.0f;
  if (r < n) {
    const float* row = m + static_cast<long long>(r) * n;
    for (int c = threadIdx.x; c < n; c += blockDim.x) s += row[c];
  }
  s = row_threads_sum(s);
  if (r < n && threadIdx.x == 0) sums[r] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const int blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
  const dim3 grid(blocks < kGridX ? blocks : kGridX, (blocks + kGridX - 1) / kGridX);
  const dim3 block(kRowThreads, kRowsPerBlock);
  if (n % 4 == 0 && reinterpret_cast<unsigned long long>(m) % 16 == 0)
    row_sum_float4<<<grid, block>>>(m, sums, n);
  else
    row_sum_scalar<<<grid, block>>>(m, sums, n);
}
