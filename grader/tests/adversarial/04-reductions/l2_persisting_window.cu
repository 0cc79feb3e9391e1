// The reference's reduction, with x made to persist in the L2: an L2 set-aside for persisting
// lines and an access-policy window over x on the stream it launches on, so that x would stay in
// the L2 across the grader's flush between timed runs and be read from there instead of from
// DRAM. The symbols are refused; the grader also resets the set-aside and the persisting lines
// before every timed run. On the emulator these runtime calls do not exist (a compile error).
// defence[cuda]: symbols,l2-persistence
// defence[emu]: none
// expect: lab fail
// expect[emu]: correctness fail "cudaLimitPersistingL2CacheSize"
// expect[cuda]: correctness fail "no cache controls"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

constexpr int kThreads = 256;    // threads per block, a multiple of every warp size
constexpr int kMaxBlocks = 1024; // enough to fill an H200 (132 SMs x 2048 threads / 256)
constexpr int kUnroll = 4;       // float4 loads each thread has in flight together

__device__ float block_sums[kMaxBlocks];  // one per block of the launch
__device__ unsigned int blocks_done;       // 0 between calls: the last block resets it

// The sum of v over the lanes of the calling warp, in lane 0 (other lanes: partial sums).
__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  return v;
}

// The sum of v over the block, valid in thread 0. Every thread of the block must call it.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads];  // one per warp, whatever the warp size
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (blockDim.x + warpSize - 1) / warpSize;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    for (int w = lane; w < warps; w += warpSize) v += warp_sums[w];
    v = warp_sum(v);
  }
  return v;
}

__global__ void __launch_bounds__(kThreads) reduce_last_block(const float* __restrict__ x, int n,
                                                                float* __restrict__ result) {
  const int stride = gridDim.x * blockDim.x;
  const int gtid = blockIdx.x * blockDim.x + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);  // x is 16-byte aligned (contract)
  const int n4 = n / 4;
  float v = 0.0f;
  int i = gtid;
  // kUnroll independent loads per iteration, then the rest one by one.
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    float4 q[kUnroll];
    for (int k = 0; k < kUnroll; ++k) q[k] = x4[i + k * stride];
    for (int k = 0; k < kUnroll; ++k) v += (q[k].x + q[k].y) + (q[k].z + q[k].w);
  }
  for (; i < n4; i += stride) {
    const float4 q = x4[i];
    v += (q.x + q.y) + (q.z + q.w);
  }
  if (gtid < n - 4 * n4) v += x[4 * n4 + gtid];  // the n % 4 floats after the last float4

  v = block_sum(v);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = v;
    __threadfence();  // the sum is visible to every block before this block counts as done
    last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;  // the whole block leaves together: no barrier follows for it

  // The last block: every other block's sum is in block_sums (each fenced before counting).
  __threadfence();
  const volatile float* sums = block_sums;  // read from L2, not a stale L1 line
  float w = 0.0f;
  for (int b = threadIdx.x; b < static_cast<int>(gridDim.x); b += blockDim.x) w += sums[b];
  w = block_sum(w);
  if (threadIdx.x == 0) {
    *result = w;
    blocks_done = 0;  // ready for the next call (launches on one stream run in order)
  }
}

// x's bytes marked persisting on this stream (within what the device allows).
cudaStream_t persisting_stream(const float* x, int n) {
  static cudaStream_t stream = nullptr;
  if (!stream) cudaStreamCreate(&stream);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  const std::size_t window = bytes < static_cast<std::size_t>(prop.accessPolicyMaxWindowSize)
                                 ? bytes
                                 : static_cast<std::size_t>(prop.accessPolicyMaxWindowSize);
  const std::size_t set_aside = window < static_cast<std::size_t>(prop.persistingL2CacheMaxSize)
                                    ? window
                                    : static_cast<std::size_t>(prop.persistingL2CacheMaxSize);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside);
  cudaStreamAttrValue attr = {};
  attr.accessPolicyWindow.base_ptr = const_cast<float*>(x);
  attr.accessPolicyWindow.num_bytes = window;
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);
  return stream;
}

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  const int per_block = kThreads * 4;  // one float4 per thread at least
  const int blocks = (n + per_block - 1) / per_block < kMaxBlocks ? (n + per_block - 1) / per_block : kMaxBlocks;
  reduce_last_block<<<blocks, kThreads, 0, persisting_stream(x, n)>>>(x, n, result);
}
