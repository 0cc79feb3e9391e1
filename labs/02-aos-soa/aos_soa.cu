// Lab 02: AoS vs SoA: data layout decides coalescing -- the file you edit.
#include "gpulab/gpu.hpp"
#include "aos_soa.hpp"

// Correct but slow on purpose: one thread walks the whole array, so every warp-level request
// uses 4 of the 32 bytes it moves.
// TODO (the lesson's section "The task"): give each thread its own elements.
__global__ void aos_soa_one_thread(const float* x, float* y, int n) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

void aos_soa(const float* x, float* y, int n) { gpulab::launch(aos_soa_one_thread, 1, 32, 0, x, y, n); }
