// The stub's scatter (dst[rank[i]] = src[i]), its 16-byte stores written as four atomicExch each:
// the emulator's reorder check counted plain stores only, so a scatter made of atomics showed no
// store traffic at all and passed. An atomic reads and writes its sectors: it counts as traffic of
// both kinds, and the scattered atomics need 8x the sectors their bytes do.
// defence: atomic-traffic
// expect[emu]: performance.reorder_stores_coalesced fail "the sectors the stored bytes need"
// expect[emu]: correctness pass
// expect[emu]: sanitizer pass
#include "particle_reorder.hpp"

namespace {

constexpr int kThreads = 256;

int blocks_for(long long items) { return static_cast<int>((items + kThreads - 1) / kThreads); }

__device__ int cell_coordinate(float x, float inv_h, int cells) {
  const int c = static_cast<int>(x * inv_h);  // x >= 0: truncation is the floor
  return c < cells - 1 ? c : cells - 1;
}

// Bit b of v goes to bit 3b of the result (one bit at a time: clear, if not fast).
__device__ unsigned interleave_by_three(unsigned v) {
  unsigned out = 0;
  for (int b = 0; b < 10; ++b) out |= ((v >> b) & 1u) << (3 * b);
  return out;
}

__device__ unsigned key_of(int cx, int cy, int cz, const Grid& g, CellOrder order) {
  if (order == CellOrder::linear) return static_cast<unsigned>(cx + g.gx * (cy + g.gy * cz));
  return interleave_by_three(cx) | (interleave_by_three(cy) << 1) | (interleave_by_three(cz) << 2);
}

__global__ void keys(const float4* position, int n, Grid g, CellOrder order, unsigned* cell) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 p = position[i];
  cell[i] = key_of(cell_coordinate(p.x, g.inv_h, g.gx), cell_coordinate(p.y, g.inv_h, g.gy),
                   cell_coordinate(p.z, g.inv_h, g.gz), g, order);
}

__global__ void zero(unsigned* a, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) a[i] = 0u;
}

__global__ void histogram(const unsigned* cell, int n, unsigned* counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[cell[i]], 1u);
}

// TODO (README: "The sort itself"): one thread walks all the counters, and a second copy of them
// becomes the cursors of the scatter. Scan in parallel: blocks scan their part in shared memory,
// then add the scanned block totals.
__global__ void scan_one_thread(unsigned* counts, int entries, unsigned* cursor) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  unsigned running = 0;
  for (int c = 0; c < entries; ++c) {
    const unsigned count = counts[c];
    counts[c] = running;
    if (c + 1 < entries) cursor[c] = running;
    running += count;
  }
}

__global__ void place(const unsigned* cell, int n, unsigned* cursor, int* sorted_index, int* rank) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int slot = static_cast<int>(atomicAdd(&cursor[cell[i]], 1u));
  sorted_index[slot] = i;
  rank[i] = slot;
}

// TODO (README: "Gather vs scatter"): thread i reads particle i (coalesced) and stores it at its
// rank: neighbouring threads store 16 bytes to places far apart. Gather instead.
__global__ void scatter_state(const int* rank, int n, const float4* position, const float4* velocity,
                              float4* sorted_position, float4* sorted_velocity) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int k = rank[i];
  const float4 p = position[i], v = velocity[i];
  float* sp = reinterpret_cast<float*>(&sorted_position[k]);
  float* sv = reinterpret_cast<float*>(&sorted_velocity[k]);
  atomicExch(sp + 0, p.x);
  atomicExch(sp + 1, p.y);
  atomicExch(sp + 2, p.z);
  atomicExch(sp + 3, p.w);
  atomicExch(sv + 0, v.x);
  atomicExch(sv + 1, v.y);
  atomicExch(sv + 2, v.z);
  atomicExch(sv + 3, v.w);
}

// TODO (README: "The cost of indirection"): every neighbour is read as position[sorted_index[j]]:
// an extra load per neighbour, and the neighbours of one cell are scattered over the array.
// Read the reordered copy, sorted_position[j], instead.
__global__ void density_through_index(const float4* position, const int* sorted_index, const unsigned* cell_start,
                                      int n, Grid g, CellOrder order, float* density) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const float4 p = position[sorted_index[k]];
  const float h2 = g.h * g.h;
  const int cx = cell_coordinate(p.x, g.inv_h, g.gx), cy = cell_coordinate(p.y, g.inv_h, g.gy),
            cz = cell_coordinate(p.z, g.inv_h, g.gz);
  float sum = 0.0f;
  for (int z = cz - 1; z <= cz + 1; ++z)
    for (int y = cy - 1; y <= cy + 1; ++y)
      for (int x = cx - 1; x <= cx + 1; ++x) {
        if (x < 0 || y < 0 || z < 0 || x >= g.gx || y >= g.gy || z >= g.gz) continue;
        const unsigned key = key_of(x, y, z, g, order);
        for (unsigned j = cell_start[key]; j < cell_start[key + 1]; ++j) {
          const float4 q = position[sorted_index[j]];
          const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
          const float d = h2 - (dx * dx + dy * dy + dz * dz);
          if (d > 0.0f) sum += q.w * d * d * d;
        }
      }
  density[k] = g.poly6 * sum;
}

}  // namespace

void compute_cells(const float4* position, int n, Grid grid, CellOrder order, unsigned* cell) {
  keys<<<blocks_for(n), kThreads>>>(position, n, grid, order, cell);
}

void sort_by_cell(const unsigned* cell, int n, int num_keys, unsigned* cell_start, int* sorted_index, int* rank,
                  unsigned* scratch) {
  zero<<<blocks_for(num_keys + 1), kThreads>>>(cell_start, num_keys + 1);
  histogram<<<blocks_for(n), kThreads>>>(cell, n, cell_start);
  scan_one_thread<<<1, 1>>>(cell_start, num_keys + 1, scratch);
  place<<<blocks_for(n), kThreads>>>(cell, n, scratch, sorted_index, rank);
}

void reorder_state(const int* sorted_index, const int* rank, int n, const float4* position, const float4* velocity,
                   float4* sorted_position, float4* sorted_velocity) {
  (void)sorted_index;
  scatter_state<<<blocks_for(n), kThreads>>>(rank, n, position, velocity, sorted_position, sorted_velocity);
}

void sph_density(const float4* position, const int* sorted_index, const float4* sorted_position,
                 const unsigned* cell_start, int n, Grid grid, CellOrder order, float* density) {
  (void)sorted_position;
  density_through_index<<<blocks_for(n), kThreads>>>(position, sorted_index, cell_start, n, grid, order, density);
}
