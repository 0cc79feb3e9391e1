// Idiom: plain CUDA headers and cooperative groups: <cuda_runtime.h> and <cooperative_groups.h>
// only (no gpulab header), the block as cg::thread_block, 32-thread tiles from cg::tiled_partition
// reducing with tile.shfl_down, block.sync() for the barrier.
// expect: lab pass
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "row_sum.hpp"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32;  // a tile is a warp of 32 lanes, or half of a 64-lane one

__device__ float tile_sum(const cg::thread_block_tile<kTile>& tile, float v) {
  for (int offset = kTile / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  return v;
}

__device__ float block_sum(const cg::thread_block& block, float v) {
  __shared__ float tile_sums[kThreads / kTile];
  const cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);
  v = tile_sum(tile, v);
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? tile_sums[tile.thread_rank()] : 0.0f;
    v = tile_sum(tile, v);
  }
  return v;
}

__global__ void row_sum_float4(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const cg::thread_block block = cg::this_thread_block();
  const float4* row = reinterpret_cast<const float4*>(m + static_cast<long long>(block.group_index().x) * n);
  float s = 0.0f;
  for (int c = block.thread_rank(); c < n / 4; c += block.size()) {
    const float4 q = row[c];
    s += (q.x + q.y) + (q.z + q.w);
  }
  s = block_sum(block, s);
  if (block.thread_rank() == 0) sums[block.group_index().x] = s;
}

__global__ void row_sum_scalar(const float* __restrict__ m, float* __restrict__ sums, int n) {
  const cg::thread_block block = cg::this_thread_block();
  const float* row = m + static_cast<long long>(block.group_index().x) * n;
  float s = 0.0f;
  for (int c = block.thread_rank(); c < n; c += block.size()) s += row[c];
  s = block_sum(block, s);
  if (block.thread_rank() == 0) sums[block.group_index().x] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  if (n % 4 == 0 && reinterpret_cast<unsigned long long>(m) % 16 == 0)
    row_sum_float4<<<n, kThreads>>>(m, sums, n);
  else
    row_sum_scalar<<<n, kThreads>>>(m, sums, n);
}
