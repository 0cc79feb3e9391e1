// Idiom: the block scan of the counting sort written with cooperative groups' tile scans
// (cg::inclusive_scan, cg::exclusive_scan over thread_block_tile<32>, <cooperative_groups/scan.h>).
// Lab 05 reference: counting sort with a parallel scan, one gather kernel for the whole state, and
// a density loop over the reordered positions that walks each row of three neighbouring cells as
// one contiguous range (linear order). See labs/05-particle-reorder/README.md.
// expect: lab pass
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>

#include "particle_reorder.hpp"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;
constexpr int kScanItems = 1024;    // elements scanned by one block
constexpr int kScanThreads = 512;   // two elements per thread

int blocks_for(long long items, int per_block) { return static_cast<int>((items + per_block - 1) / per_block); }

// ---- cell keys --------------------------------------------------------------------------------

__device__ int cell_coordinate(float x, float inv_h, int cells) {
  const int c = static_cast<int>(x * inv_h);  // x >= 0: truncation is the floor
  return c < cells - 1 ? c : cells - 1;
}

// The low 10 bits of v moved to every third bit (bit b -> bit 3b).
__device__ unsigned spread_bits(unsigned v) {
  v &= 0x3ffu;
  v = (v | (v << 16)) & 0x030000ffu;
  v = (v | (v << 8)) & 0x0300f00fu;
  v = (v | (v << 4)) & 0x030c30c3u;
  v = (v | (v << 2)) & 0x09249249u;
  return v;
}

__device__ unsigned cell_key(int cx, int cy, int cz, const Grid& g, CellOrder order) {
  if (order == CellOrder::linear) return static_cast<unsigned>(cx + g.gx * (cy + g.gy * cz));
  return spread_bits(cx) | (spread_bits(cy) << 1) | (spread_bits(cz) << 2);
}

__global__ void cells_kernel(const float4* __restrict__ position, int n, Grid g, CellOrder order,
                             unsigned* __restrict__ cell) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 p = position[i];
  cell[i] = cell_key(cell_coordinate(p.x, g.inv_h, g.gx), cell_coordinate(p.y, g.inv_h, g.gy),
                     cell_coordinate(p.z, g.inv_h, g.gz), g, order);
}

// ---- counting sort ----------------------------------------------------------------------------

__global__ void fill(unsigned* __restrict__ a, int count, unsigned value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) a[i] = value;
}

// The histogram: one atomic per particle on its key's counter.
__global__ void count_keys(const unsigned* __restrict__ cell, int n, unsigned* counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[cell[i]], 1u);
}

// Exclusive scan of each block's kScanItems elements in place, with cooperative groups' tile
// scans (<cooperative_groups/scan.h>); the block's total goes to sums[blockIdx.x]. Thread t holds
// element t of each half of the block's range (coalesced loads and stores); each 32-thread tile
// scans its 32 elements of each half with cg::inclusive_scan, and the first tile scans the 32 tile
// totals (16 per half, first half first) with cg::exclusive_scan.
constexpr int kTileSize = 32;
constexpr int kTiles = kScanThreads / kTileSize;  // 16 tiles per half: 32 tile totals in all
static_assert(2 * kTiles == kTileSize, "one tile scans the tile totals of both halves");

__global__ void scan_blocks(unsigned* data, int count, unsigned* __restrict__ sums) {
  __shared__ unsigned tile_offset[2 * kTiles];
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<kTileSize> tile = cg::tiled_partition<kTileSize>(block);
  const int t = static_cast<int>(block.thread_rank());
  const int w = static_cast<int>(tile.meta_group_rank()), lane = static_cast<int>(tile.thread_rank());
  const long long base = static_cast<long long>(blockIdx.x) * kScanItems;
  const long long e0 = base + t, e1 = base + kScanThreads + t;
  const unsigned v0 = e0 < count ? data[e0] : 0u, v1 = e1 < count ? data[e1] : 0u;
  const unsigned in0 = cg::inclusive_scan(tile, v0), in1 = cg::inclusive_scan(tile, v1);
  if (lane == kTileSize - 1) {
    tile_offset[w] = in0;
    tile_offset[kTiles + w] = in1;
  }
  block.sync();
  if (w == 0) {
    const unsigned total = tile_offset[lane];
    const unsigned before = cg::exclusive_scan(tile, total);
    tile_offset[lane] = before;  // each lane reads and writes its own entry
    if (lane == kTileSize - 1) sums[blockIdx.x] = before + total;
  }
  block.sync();
  if (e0 < count) data[e0] = tile_offset[w] + in0 - v0;
  if (e1 < count) data[e1] = tile_offset[kTiles + w] + in1 - v1;
}

__global__ void add_block_offsets(unsigned* __restrict__ data, int count, const unsigned* __restrict__ offsets) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < count) data[e] += offsets[e / kScanItems];
}

// Exclusive scan of count elements in place; `scratch` holds the block totals of every level.
void exclusive_scan(unsigned* data, int count, unsigned* scratch) {
  const int blocks = blocks_for(count, kScanItems);
  scan_blocks<<<blocks, kScanThreads>>>(data, count, scratch);
  if (blocks == 1) return;
  exclusive_scan(scratch, blocks, scratch + blocks);
  add_block_offsets<<<blocks_for(count, kThreads), kThreads>>>(data, count, scratch);
}

// The scatter of the counting sort: each particle takes the next free slot of its key. The slot
// within a key depends on the atomics' order (the contract allows any order within a key).
__global__ void place_particles(const unsigned* __restrict__ cell, int n, unsigned* cursor,
                                int* __restrict__ sorted_index, int* __restrict__ rank) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int slot = static_cast<int>(atomicAdd(&cursor[cell[i]], 1u));
  sorted_index[slot] = i;
  rank[i] = slot;
}

__global__ void copy_counts(const unsigned* __restrict__ from, unsigned* __restrict__ to, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) to[i] = from[i];
}

// ---- reorder ----------------------------------------------------------------------------------

// Gather: thread k writes slot k of both sorted arrays (coalesced stores) and reads the particle
// the index names (scattered loads, which only fetch what they need); the index is read once.
__global__ void gather_state(const int* __restrict__ sorted_index, int n, const float4* __restrict__ position,
                             const float4* __restrict__ velocity, float4* __restrict__ sorted_position,
                             float4* __restrict__ sorted_velocity) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const int i = sorted_index[k];
  sorted_position[k] = position[i];
  sorted_velocity[k] = velocity[i];
}

// ---- density ----------------------------------------------------------------------------------

// Adds the poly6 terms of the particles first .. last-1 (reordered: contiguous in memory).
__device__ float add_range(const float4* __restrict__ sp, unsigned first, unsigned last, float4 p, float h2,
                           float sum) {
  for (unsigned j = first; j < last; ++j) {
    const float4 q = sp[j];
    const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    const float d = h2 - (dx * dx + dy * dy + dz * dz);
    if (d > 0.0f) sum += q.w * d * d * d;
  }
  return sum;
}

__global__ void density_reordered(const float4* __restrict__ sp, const unsigned* __restrict__ cell_start, int n,
                                  Grid g, CellOrder order, float* __restrict__ density) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const float4 p = sp[k];
  const float h2 = g.h * g.h;
  const int cx = cell_coordinate(p.x, g.inv_h, g.gx), cy = cell_coordinate(p.y, g.inv_h, g.gy),
            cz = cell_coordinate(p.z, g.inv_h, g.gz);
  const int x0 = cx > 0 ? cx - 1 : 0, x1 = cx < g.gx - 1 ? cx + 1 : cx;
  float sum = 0.0f;
  for (int z = cz - 1; z <= cz + 1; ++z) {
    if (z < 0 || z >= g.gz) continue;
    for (int y = cy - 1; y <= cy + 1; ++y) {
      if (y < 0 || y >= g.gy) continue;
      if (order == CellOrder::linear) {
        // Cells x0..x1 of a row have consecutive keys: their particles are one range.
        sum = add_range(sp, cell_start[cell_key(x0, y, z, g, order)], cell_start[cell_key(x1, y, z, g, order) + 1],
                        p, h2, sum);
      } else {
        for (int x = x0; x <= x1; ++x) {
          const unsigned key = cell_key(x, y, z, g, order);
          sum = add_range(sp, cell_start[key], cell_start[key + 1], p, h2, sum);
        }
      }
    }
  }
  density[k] = g.poly6 * sum;
}

}  // namespace

void compute_cells(const float4* position, int n, Grid grid, CellOrder order, unsigned* cell) {
  cells_kernel<<<blocks_for(n, kThreads), kThreads>>>(position, n, grid, order, cell);
}

void sort_by_cell(const unsigned* cell, int n, int num_keys, unsigned* cell_start, int* sorted_index, int* rank,
                  unsigned* scratch) {
  const int entries = num_keys + 1;  // the last counter stays 0, so its prefix is n
  fill<<<blocks_for(entries, kThreads), kThreads>>>(cell_start, entries, 0u);
  count_keys<<<blocks_for(n, kThreads), kThreads>>>(cell, n, cell_start);
  exclusive_scan(cell_start, entries, scratch + num_keys);
  copy_counts<<<blocks_for(num_keys, kThreads), kThreads>>>(cell_start, scratch, num_keys);
  place_particles<<<blocks_for(n, kThreads), kThreads>>>(cell, n, scratch, sorted_index, rank);
}

void reorder_state(const int* sorted_index, const int* rank, int n, const float4* position, const float4* velocity,
                   float4* sorted_position, float4* sorted_velocity) {
  (void)rank;
  gather_state<<<blocks_for(n, kThreads), kThreads>>>(sorted_index, n, position, velocity, sorted_position,
                                                      sorted_velocity);
}

void sph_density(const float4* position, const int* sorted_index, const float4* sorted_position,
                 const unsigned* cell_start, int n, Grid grid, CellOrder order, float* density) {
  (void)position;
  (void)sorted_index;
  density_reordered<<<blocks_for(n, kThreads), kThreads>>>(sorted_position, cell_start, n, grid, order, density);
}
