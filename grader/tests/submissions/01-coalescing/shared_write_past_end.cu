// A shared-memory reduction whose __shared__ array holds 128 floats, launched with 256 threads:
// threads 128-255 write past its end. The emulator stops the first such store and names the array.
// expect: lab fail
// expect[emu]: correctness fail "shared-out-of-bounds"
// expect[emu]: sanitizer fail "shared-out-of-bounds"
// expect[emu]: sanitizer fail "shared_write_past_end.cu:14: thread (128,0,0) of block (0,0,0) writes 4 bytes at 0 bytes past the end of the 512-byte __shared__ array 'part' (element 128 of 128)"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float part[128];  // too small for the 256 threads launched below
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  part[threadIdx.x] = s;
  __syncthreads();
  for (unsigned stride = 64; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = part[0];
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 256, 0, m, sums, n); }
