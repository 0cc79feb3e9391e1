// Sorts with cub::DeviceRadixSort instead of writing the counting sort. CUB is header-only: its
// templates are instantiated in the submission, so no symbol gives it away; the grader refuses its
// headers (rubric: forbidden_libraries). On the emulator CUB's headers are not even on the include
// path, so it does not compile.
// expect: lab fail
// expect[emu]: correctness fail "does not compile"
// expect[cuda]: correctness fail "does not allow the cub library"
#include <cub/device/device_radix_sort.cuh>

#include "particle_reorder.hpp"

namespace {

__global__ void identity(int* index, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) index[i] = i;
}

}  // namespace

void sort_by_cell(const unsigned* cell, int n, int num_keys, unsigned* cell_start, int* sorted_index, int* rank,
                  unsigned* scratch) {
  int* values = reinterpret_cast<int*>(scratch);
  unsigned* sorted_keys = scratch + n;
  identity<<<(n + 255) / 256, 256>>>(values, n);
  std::size_t bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, cell, sorted_keys, values, sorted_index, n);
  cub::DeviceRadixSort::SortPairs(scratch + 2 * n, bytes, cell, sorted_keys, values, sorted_index, n);
  (void)num_keys, (void)cell_start, (void)rank;
}

void compute_cells(const float4*, int, Grid, CellOrder, unsigned*) {}
void reorder_state(const int*, const int*, int, const float4*, const float4*, float4*, float4*) {}
void sph_density(const float4*, const int*, const float4*, const unsigned*, int, Grid, CellOrder, float*) {}
