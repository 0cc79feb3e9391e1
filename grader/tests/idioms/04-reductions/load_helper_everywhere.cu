// Idiom: every global load of x through one inline helper template (load_ro(p) { return *p; }),
// in the float4 loops and in the scalar n % 4 tail alike. The emulator counts all of them at the
// helper's line, so the PTX's loop of float4 loads and the tail's single float load tie there; the
// loop issued far more requests than the tail can (one per warp), so its bytes count.
// expect: lab pass
// Lab 04 reference: one launch, grid-stride float4 loads, warp shuffles sized by warpSize, and
// the last block to finish adds up the blocks' sums (README, "Combining the blocks").
//
// Per call:
//   blocks   = min(1024, ceil(n / 1024)) of 256 threads: at n = 2^28 about eight blocks per SM
//              of an H200, each thread reading 64 float4 (4 at a time, in flight together);
//   a thread: its float4 elements x4[i], i = gtid, gtid + stride, ...; the n % 4 last floats
//             by the first threads of the grid;
//   a block:  __shfl_down_sync inside each warp (offsets warpSize/2 .. 1), one shared word per
//             warp, the first warp adds those: 1 barrier;
//   the grid: each block stores its sum in block_sums[], then counts itself done; the block that
//             counts last reads the sums in block order and writes *result. The order of every
//             addition is fixed, so the result is the same bits on every run (no atomicAdd on
//             floats), and *result is written once, never read.
// Depth: at most 64 x 4 (the loop) + 3 (a float4) + 6 + 4 (the warp trees) + 10 (block sums)
// additions, far below kMaxReductionDepth.
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

constexpr int kThreads = 256;    // threads per block, a multiple of every warp size
constexpr int kMaxBlocks = 1024; // enough to fill an H200 (132 SMs x 2048 threads / 256)
constexpr int kUnroll = 4;       // float4 loads each thread has in flight together

__device__ float block_sums[kMaxBlocks];  // one per block of the launch

// One load helper for every type (float and float4 alike).
template <class T>
__device__ __forceinline__ T load_ro(const T* p) { return *p; }
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
    for (int k = 0; k < kUnroll; ++k) q[k] = load_ro(x4 + i + k * stride);
    for (int k = 0; k < kUnroll; ++k) v += (q[k].x + q[k].y) + (q[k].z + q[k].w);
  }
  for (; i < n4; i += stride) {
    const float4 q = load_ro(x4 + i);
    v += (q.x + q.y) + (q.z + q.w);
  }
  if (gtid < n - 4 * n4) v += load_ro(x + 4 * n4 + gtid);  // the n % 4 floats after the last float4

  v = block_sum(v);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = v;
    // Beyond the lesson, the last-block pattern needs two things the grader cannot check on
    // every run, since a missing one fails only now and then on a real GPU: a fence, so that this
    // block's sum is visible to every block before its atomicAdd counts it as done (without it the
    // last block may read a stale sum), ...
    __threadfence();  // the sum is visible to every block before this block counts as done
    last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;  // the whole block leaves together: no barrier follows for it

  // The last block: every other block's sum is in block_sums (each fenced before counting).
  __threadfence();
  // ... and reads that bypass this SM's L1 (volatile), which may hold a line of block_sums from
  // before the other blocks wrote it (global loads may be cached in L1, which is not coherent
  // across SMs; the L2 is).
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
