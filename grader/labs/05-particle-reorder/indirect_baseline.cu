// Lab 05: the grader's density kernel that reads every neighbour through the sorted index
// (position[sorted_index[j]]), run in the same process as the submission's sph_density: on the
// emulator its memory traffic, on a GPU its time, is what the submission is compared with.
#include "baseline_kernels.cuh"

void lab05_indirect_density(const float4* position, const int* sorted_index, const unsigned* cell_start, int n,
                            Grid grid, CellOrder order, float* density) {
  lab05_baseline::density<true><<<(n + 255) / 256, 256>>>(position, sorted_index, cell_start, n, grid, order, density);
}
