// Lab 04, step 3 (a variant, not the reference): the reference's design (one launch, grid-stride
// float4 loads, warp shuffles, the last block combining) with 512 threads per block, 8 float4
// loads in flight per thread, evict-first loads (__ldcs: each byte is read once, so it need not
// stay in L1/L2), and up to 1056 blocks (8 per SM of an H200).
// A standalone probe measured this shape at 1.016 of CUB at 2^28 where the reference's measured
// 1.001 (docs/results/probes/reduce_variants.cu, docs/results/lab04-h200.md). The grader did not confirm
// it: graded on the H200 on 2026-12-01 (`./gpulab grade 04 --submission` of this file, queue phase
// grade:04:FILE of docs/results/gpu-queue.sh) it passed 11 / 11 at 0.955 of CUB at 2^28 (262 us
// against 251 us) and 1.06 at 2^16, below the reference's 0.987 at 2^28, so the reference was
// kept. It stays here as the measured counter-example. Variants of the reference graded the same
// way (docs/results/lab04-h200.md, "Closing the last 1% to CUB") point to the evict-first loads:
// alone they cost 4% (0.947), while 8 loads in flight alone change nothing (0.989); 512 threads and
// 1056 blocks were not tried alone.
// Depth at n = 2^28: 125 float4 per thread (the loop) + 2 (a float4) + 5 + 4 (the warp trees) +
// 3 + 9 (the 1056 block sums) additions, far below kMaxReductionDepth.
// expect[emu]: lab pass
// expect[emu]: performance pass
// expect[cuda]: lab pass
// expect[cuda]: performance pass
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

constexpr int kThreads = 512;    // threads per block, a multiple of every warp size
constexpr int kMaxBlocks = 1056; // 8 per SM of an H200 (132 SMs)
constexpr int kUnroll = 8;       // float4 loads each thread has in flight together

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
    for (int k = 0; k < kUnroll; ++k) q[k] = __ldcs(&x4[i + k * stride]);
    for (int k = 0; k < kUnroll; ++k) v += (q[k].x + q[k].y) + (q[k].z + q[k].w);
  }
  for (; i < n4; i += stride) {
    const float4 q = __ldcs(&x4[i]);
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

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  const int per_block = kThreads * 4;  // one float4 per thread at least
  const int blocks = (n + per_block - 1) / per_block < kMaxBlocks ? (n + per_block - 1) / per_block : kMaxBlocks;
  reduce_last_block<<<blocks, kThreads>>>(x, n, result);
}
