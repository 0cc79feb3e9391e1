// Reads a __shared__ array that no thread writes (the partial sums go to the wrong array). The
// compiler would fold the reads to 0 (the array is zero-initialised C++ storage, never stored
// to); the emulator keeps them, poisons the array and reports the read. On a GPU it is garbage.
// expect: lab fail
// expect[emu]: correctness fail "row sums are wrong"
// expect[emu]: sanitizer fail "uninitialized-shared"
// expect[emu]: sanitizer fail "shared_never_written.cu:20: thread (0,0,0) of block (0,0,0) reads a shared-memory word that no thread of its block has written"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float partial[128];
  __shared__ float unused[128];
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0;
    for (int k = 0; k < 128; ++k) total += unused[k];  // should be partial[k]
    sums[blockIdx.x] = total;
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 128, 0, m, sums, n); }
