// Lab 00: first kernels. Read labs/00-first-kernels/README.md first. This is the file you edit.
//
// Both functions below are correct but slow on purpose: one GPU thread walks the whole array,
// exactly like a CPU loop, while thousands of other threads could be helping. Grade it with
// `./gpulab grade 00`: correctness passes, performance fails. Making performance pass is the lab.
#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

// One thread does all the work: thread 0 of block 0 loops over every element; every other
// thread of the grid returns at once.
__global__ void scale_add_one_thread(int n, float a, const float* x, float* y) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

// TODO(student), lesson sections 1 and 4 ("A kernel is the body of a loop", "Bounds"):
//   write a kernel in which each thread handles ONE element: its global index
//   i = blockIdx.x * blockDim.x + threadIdx.x, and nothing else. Threads whose i is >= n
//   must do nothing. Then launch it below with enough blocks of (say) 256 threads to cover
//   all n elements: round the number of blocks up, not down.
void scale_add(int n, float a, const float* x, float* y) {
  gpulab::launch(scale_add_one_thread, 1, 1, 0, n, a, x, y);
}

// TODO(student), lesson section 5 ("Grid-stride loops"):
//   keep this launch (the contract asks for exactly the caller's grid) but give every thread
//   its share: start at its global index and step by the number of threads in the whole grid
//   (blockDim.x * gridDim.x) until the index reaches n.
void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(scale_add_one_thread, blocks, threads, 0, n, a, x, y);
}
