// Lab 05: the grader's own kernels (trusted code, part of the checks, not of the code under test),
// shared by the indirection baseline (indirect_baseline.cu) and the CUB-sort frame (cub_frame.cu).
#pragma once

#include "particle_reorder.hpp"

namespace lab05_baseline {

__device__ inline int coordinate(float x, float inv_h, int cells) {
  const int c = static_cast<int>(x * inv_h);
  return c < cells - 1 ? c : cells - 1;
}

__device__ inline unsigned morton_bits(unsigned v) {
  v &= 0x3ffu;
  v = (v | (v << 16)) & 0x030000ffu;
  v = (v | (v << 8)) & 0x0300f00fu;
  v = (v | (v << 4)) & 0x030c30c3u;
  v = (v | (v << 2)) & 0x09249249u;
  return v;
}

__device__ inline unsigned key(int cx, int cy, int cz, const Grid& g, CellOrder order) {
  if (order == CellOrder::linear) return static_cast<unsigned>(cx + g.gx * (cy + g.gy * cz));
  return morton_bits(cx) | (morton_bits(cy) << 1) | (morton_bits(cz) << 2);
}

/// The density of the particle at sorted position k over the 27 cells around it, each neighbour
/// read either through the sorted index (kThroughIndex: state[sorted_index[j]], the state in its
/// original order) or from the reordered state (state[j]).
template <bool kThroughIndex>
__global__ void density(const float4* __restrict__ state, const int* __restrict__ sorted_index,
                        const unsigned* __restrict__ cell_start, int n, Grid g, CellOrder order,
                        float* __restrict__ out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const float4 p = state[kThroughIndex ? sorted_index[k] : k];
  const float h2 = g.h * g.h;
  const int cx = coordinate(p.x, g.inv_h, g.gx), cy = coordinate(p.y, g.inv_h, g.gy), cz = coordinate(p.z, g.inv_h, g.gz);
  float sum = 0.0f;
  for (int z = cz - 1; z <= cz + 1; ++z)
    for (int y = cy - 1; y <= cy + 1; ++y)
      for (int x = cx - 1; x <= cx + 1; ++x) {
        if (x < 0 || y < 0 || z < 0 || x >= g.gx || y >= g.gy || z >= g.gz) continue;
        const unsigned c = key(x, y, z, g, order);
        for (unsigned j = cell_start[c], end = cell_start[c + 1]; j < end; ++j) {
          const float4 q = state[kThroughIndex ? sorted_index[j] : j];
          const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
          const float d = h2 - (dx * dx + dy * dy + dz * dz);
          if (d > 0.0f) sum += q.w * d * d * d;
        }
      }
  out[k] = g.poly6 * sum;
}

}  // namespace lab05_baseline
