// compute_cells divides by h on the z axis only (x and y use the contract's x * inv_h): wrong only
// for positions within a rounding of a z face, which the grader's crafted positions hold on every
// axis in every run. (The other functions are left out: only the keys matter here.)
// defence: crafted-inputs
// expect: lab fail
// expect: correctness fail "crafted positions"
#include "particle_reorder.hpp"

namespace {

__device__ unsigned spread_bits(unsigned v) {  // bit b -> bit 3b, for the low 10 bits
  unsigned out = 0;
  for (int b = 0; b < 10; ++b) out |= ((v >> b) & 1u) << (3 * b);
  return out;
}

__global__ void cells_kernel(const float4* position, int n, Grid g, CellOrder order, unsigned* cell) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 p = position[i];
  const int cx = static_cast<int>(p.x * g.inv_h), cy = static_cast<int>(p.y * g.inv_h), cz = static_cast<int>(p.z / g.h);
  const int x = cx < g.gx - 1 ? cx : g.gx - 1, y = cy < g.gy - 1 ? cy : g.gy - 1, z = cz < g.gz - 1 ? cz : g.gz - 1;
  cell[i] = order == CellOrder::linear ? static_cast<unsigned>(x + g.gx * (y + g.gy * z))
                                       : spread_bits(x) | (spread_bits(y) << 1) | (spread_bits(z) << 2);
}

}  // namespace

void compute_cells(const float4* position, int n, Grid grid, CellOrder order, unsigned* cell) {
  cells_kernel<<<(n + 255) / 256, 256>>>(position, n, grid, order, cell);
}

void sort_by_cell(const unsigned*, int, int, unsigned*, int*, int*, unsigned*) {}

void reorder_state(const int*, const int*, int, const float4*, const float4*, float4*, float4*) {}

void sph_density(const float4*, const int*, const float4*, const unsigned*, int, Grid, CellOrder, float*) {}
