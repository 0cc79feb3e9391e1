// Idiom: a kernel template whose first argument (the block size) is given and whose element type
// is deduced from the launch's arguments: reduce_last_block<kThreads><<<blocks, kThreads>>>(x, n,
// result) instantiates reduce_last_block<256, float>.
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;
constexpr int kUnroll = 4;

template <class T>
struct Vector4;
template <>
struct Vector4<float> {
  using type = float4;
};

__device__ float block_sums[kMaxBlocks];
__device__ unsigned int blocks_done;

template <class T>
__device__ T warp_sum(T v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  return v;
}

template <int kBlock, class T>
__device__ T block_sum(T v) {
  __shared__ T warp_sums[kBlock];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (kBlock + warpSize - 1) / warpSize;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = T(0);
  if (warp == 0) {
    for (int w = lane; w < warps; w += warpSize) v += warp_sums[w];
    v = warp_sum(v);
  }
  return v;
}

template <int kBlock, class T>
__global__ void __launch_bounds__(kBlock) reduce_last_block(const T* __restrict__ x, int n, T* __restrict__ result) {
  using V = typename Vector4<T>::type;
  const int stride = gridDim.x * kBlock;
  const int gtid = blockIdx.x * kBlock + threadIdx.x;
  const V* x4 = reinterpret_cast<const V*>(x);
  const int n4 = n / 4;
  T v = T(0);
  int i = gtid;
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    V q[kUnroll];
    for (int k = 0; k < kUnroll; ++k) q[k] = x4[i + k * stride];
    for (int k = 0; k < kUnroll; ++k) v += (q[k].x + q[k].y) + (q[k].z + q[k].w);
  }
  for (; i < n4; i += stride) {
    const V q = x4[i];
    v += (q.x + q.y) + (q.z + q.w);
  }
  if (gtid < n - 4 * n4) v += x[4 * n4 + gtid];

  v = block_sum<kBlock>(v);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const volatile T* sums = block_sums;
  T w = T(0);
  for (int b = threadIdx.x; b < static_cast<int>(gridDim.x); b += kBlock) w += sums[b];
  w = block_sum<kBlock>(w);
  if (threadIdx.x == 0) {
    *result = w;
    blocks_done = 0;
  }
}

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  const int per_block = kThreads * 4;
  const int needed = (n + per_block - 1) / per_block;
  const int blocks = needed < kMaxBlocks ? needed : kMaxBlocks;
  reduce_last_block<kThreads><<<blocks, kThreads>>>(x, n, result);
}
