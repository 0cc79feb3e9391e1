// Idiom: a function object passed to a kernel template by value and called from device code: the
// row reduction is generic in its operation (a functor with a __device__ call operator), and the
// launch deduces the functor's type.
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

struct Plus {
  __device__ float operator()(float a, float b) const { return a + b; }
  static constexpr float identity = 0.0f;
};

// The reduction of v over the block with op, valid in thread 0.
template <class Op>
__device__ float block_reduce(float v, Op op) {
  __shared__ float partial[64];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v = op(v, __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset)));
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? partial[lane] : Op::identity;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
      v = op(v, __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset)));
  }
  return v;
}

template <class Op>
__global__ void row_reduce_float4(const float* __restrict__ m, float* __restrict__ out, int n, Op op) {
  const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(blockIdx.x) * n);
  float s = Op::identity;
  for (int c = threadIdx.x; c < n / 4; c += blockDim.x) {
    const float4 q = row[c];
    s = op(s, op(op(q.x, q.y), op(q.z, q.w)));
  }
  s = block_reduce(s, op);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

template <class Op>
__global__ void row_reduce(const float* __restrict__ m, float* __restrict__ out, int n, Op op) {
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = Op::identity;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s = op(s, row[c]);
  s = block_reduce(s, op);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  if (n % 4 == 0 && reinterpret_cast<unsigned long long>(m) % 16 == 0)
    row_reduce_float4<<<n, kThreads>>>(m, sums, n, Plus{});
  else
    row_reduce<<<n, kThreads>>>(m, sums, n, Plus{});
}
