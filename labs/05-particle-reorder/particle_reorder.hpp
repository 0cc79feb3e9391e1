// Lab 05 contract: one frame of an SPH particle code, with the particles sorted by grid cell.
// Do not edit: the grader is written against this header only.
//
// The frame (what the grader calls, in this order):
//
//   compute_cells(position, n, grid, order, cell)                     a cell key per particle
//   sort_by_cell(cell, n, num_keys, cell_start, sorted_index, rank, scratch)
//                                                                     counting sort by key
//   reorder_state(sorted_index, rank, n, position, velocity, sorted_position, sorted_velocity)
//                                                                     the state in sorted order
//   sph_density(position, sorted_index, sorted_position, cell_start, n, grid, order, density)
//                                                                     SPH density, 27 cells
//
// The grader checks every function on its own, on inputs it computed itself (fresh, random,
// seeded): keys and cell starts exactly, the sorted index as a permutation grouped by key, the
// reordered state bit for bit, densities against a double-precision sum. On the emulator it
// measures the memory traffic of each function (README: "What the emulator shows"); on a GPU,
// the density kernel's time against the grader's own kernel that reads through the sorted index,
// the reorder's bandwidth against a copy kernel, and the whole frame against the same frame built
// on CUB's radix sort.
#pragma once

// float4: from the back-end's kernel header in kernel files and on the emulator; the grader's
// checks, compiled by the host compiler on a GPU back-end, take it from the vendor's runtime header.
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__) || !(defined(GPULAB_BUILD_BACKEND_CUDA) || defined(GPULAB_BUILD_BACKEND_ROCM))
#include "gpulab/gpu.hpp"
#elif defined(GPULAB_BUILD_BACKEND_CUDA)
#include <cuda_runtime.h>
#else
#include <hip/hip_runtime.h>
#endif

/// The uniform grid over the box [0, gx*h] x [0, gy*h] x [0, gz*h]: cells are cubes of side h,
/// the SPH smoothing radius, so every neighbour of a particle (distance <= h) lies in one of the
/// 27 cells around the particle's own cell.
struct Grid {
  float h;       ///< smoothing radius = cell size (> 0)
  float inv_h;   ///< 1 / h rounded to float: cell coordinates use it (see below)
  int gx, gy, gz;  ///< cells along x, y, z; each in [1, 1024]
  float poly6;   ///< 315 / (64 pi h^9), rounded to float: the poly6 kernel's factor
};

/// The order of the cells, i.e. how a cell's coordinates (cx, cy, cz) become its key.
enum class CellOrder : int {
  /// key = cx + cy*gx + cz*gx*gy. Keys 0 .. gx*gy*gz - 1.
  linear = 0,
  /// Morton (Z-order) code: bit b of cx goes to bit 3b of the key, bit b of cy to bit 3b+1, bit b
  /// of cz to bit 3b+2. With B = the bits of the largest of gx-1, gy-1, gz-1 (B = 0 for a
  /// 1x1x1 grid), keys are 0 .. 8^B - 1; keys of coordinates outside the grid are never used.
  morton = 1,
};

/// Number of keys of a grid in an order: the size of the key space (cell_start has one more).
inline int num_keys(const Grid& g, CellOrder order) {
  if (order == CellOrder::linear) return g.gx * g.gy * g.gz;
  int largest = g.gx - 1;
  if (g.gy - 1 > largest) largest = g.gy - 1;
  if (g.gz - 1 > largest) largest = g.gz - 1;
  int bits = 0;
  while ((1 << bits) <= largest) ++bits;
  return 1 << (3 * bits);
}

/// Unsigned ints sort_by_cell may use in `scratch` for `num_keys` keys.
inline long long sort_scratch_elements(int num_keys) { return 2LL * num_keys + 2048; }

/// Common rules for every function below.
///
/// - `n` is the number of particles, any n >= 1 (not only multiples of a block size), at most
///   2^26. Keys fit in 24 bits: num_keys(grid, order) <= 2^24.
/// - Positions: `position[i]` = (x, y, z, mass) with 0 <= x <= gx*h, 0 <= y <= gy*h,
///   0 <= z <= gz*h (a particle may lie exactly on a wall or on a cell face) and mass > 0.
///   The cell coordinates of a particle are, computed in float exactly so:
///       cx = min((int)(x * inv_h), gx - 1)      (likewise cy with y, gy and cz with z, gz)
///   A single float product is correctly rounded, so every implementation (and the grader's
///   reference) puts every particle in the same cell.
/// - Inputs are not modified. Outputs may hold anything (NaN, 0xFFFFFFFF) before the call and
///   must not be read before they are written. Input and output buffers never overlap. Device
///   allocations are 256-byte aligned.
/// - Each function only launches kernels and returns without synchronising (the caller does).
///   The work must be done by kernels (the emulator checks that kernels wrote the outputs; fill
///   with a kernel, not with cudaMemset). No library algorithms: CUB, hipCUB, rocPRIM, Thrust,
///   cuBLAS ... (the grader refuses their headers, and the vendor libraries' symbols).

/// A cell key per particle: cell[i] = the key of particle i's cell in `order`.
///
/// @param position  n particles (x, y, z, mass); only x, y, z are used
/// @param cell      device array of n unsigned ints (output)
void compute_cells(const float4* position, int n, Grid grid, CellOrder order, unsigned* cell);

/// Counting sort of the particles by key.
///
/// Outputs, for keys in [0, num_keys):
///   cell_start[c]  = the number of particles whose key is < c, for c = 0 .. num_keys
///                    (so cell_start[num_keys] = n, and the particles of key c are
///                    sorted_index[cell_start[c]] .. sorted_index[cell_start[c+1] - 1]);
///   sorted_index[k] = the particle at position k of the sorted order: a permutation of 0..n-1
///                    in which keys never decrease (within one key, any order);
///   rank[i]        = the position of particle i in the sorted order (rank[sorted_index[k]] = k).
///
/// @param cell        n keys, each < num_keys
/// @param num_keys    num_keys(grid, order) of the grid the keys came from
/// @param cell_start  device array of num_keys + 1 unsigned ints (output)
/// @param sorted_index, rank  device arrays of n ints (outputs)
/// @param scratch     device array of sort_scratch_elements(num_keys) unsigned ints: yours to use
///                    during the call (its content before and after is not looked at)
void sort_by_cell(const unsigned* cell, int n, int num_keys, unsigned* cell_start, int* sorted_index, int* rank,
                  unsigned* scratch);

/// The state in sorted order: sorted_position[k] = position[sorted_index[k]] and
/// sorted_velocity[k] = velocity[sorted_index[k]], bit for bit (all four components).
/// `rank` is the inverse permutation (position[i] goes to sorted_position[rank[i]]): use
/// whichever you like. This is the double buffer of the state: the sorted copy is written to
/// new arrays, never in place.
void reorder_state(const int* sorted_index, const int* rank, int n, const float4* position, const float4* velocity,
                   float4* sorted_position, float4* sorted_velocity);

/// SPH density of every particle, in sorted order: density[k] is the density of particle
/// i = sorted_index[k] (the particle at sorted_position[k]):
///
///     density_i = poly6 * sum over j with r_ij^2 <= h^2 of  mass_j * (h^2 - r_ij^2)^3
///
/// where r_ij is the distance between particles i and j, j = i included (it adds
/// mass_i * h^6), and neighbours are searched in the 27 cells around i's cell (fewer at the
/// walls; the cell of a particle as in the common rules). The state is given twice, describing the
/// same particles: in the original order with the sorted index (particle of sorted position k:
/// position[sorted_index[k]]) and reordered (sorted_position[k]): read whichever you like, and
/// only what you need. On the grader's inputs each particle has about 84 neighbours on average.
///
/// The grader compares with a double-precision sum and a tolerance from error analysis: any
/// order of summation, fused multiply-adds, and either way of deciding a neighbour at distance
/// exactly h (its term is 0) are accepted.
///
/// @param cell_start  as sort_by_cell wrote it for `order`
/// @param density     device array of n floats (output), in sorted order
void sph_density(const float4* position, const int* sorted_index, const float4* sorted_position,
                 const unsigned* cell_start, int n, Grid grid, CellOrder order, float* density);
