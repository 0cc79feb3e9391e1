// Idiom: kernel parameters gathered in a struct passed by value (a "params" struct with its own
// member functions), filled on the host and read by every thread.
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

struct RowSumParams {
  const float* matrix;
  float* sums;
  int n;
  bool vectors;  // rows read as float4

  __device__ const float* row(int r) const { return matrix + static_cast<long long>(r) * n; }
};

__device__ float block_sum(float v) {
  __shared__ float warp_sums[64];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_sums[lane] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
      v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  }
  return v;
}

__global__ void row_sum_kernel(const RowSumParams p) {
  const float* first = p.row(blockIdx.x);
  float s = 0.0f;
  if (p.vectors) {
    const float4* row = reinterpret_cast<const float4*>(first);
    for (int c = threadIdx.x; c < p.n / 4; c += blockDim.x) {
      const float4 q = row[c];
      s += (q.x + q.y) + (q.z + q.w);
    }
  } else {
    for (int c = threadIdx.x; c < p.n; c += blockDim.x) s += first[c];
  }
  s = block_sum(s);
  if (threadIdx.x == 0) p.sums[blockIdx.x] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  RowSumParams params{};
  params.matrix = m;
  params.sums = sums;
  params.n = n;
  params.vectors = n % 4 == 0 && reinterpret_cast<unsigned long long>(m) % 16 == 0;
  row_sum_kernel<<<n, kThreads>>>(params);
}
