// A tree reduction that reads one element past its __shared__ array: the step's partner index is
// threadIdx.x + stride + 1. The emulator stops the read (not a "not device memory" finding) and
// names the array, its size and the element.
// expect: lab fail
// expect[emu]: correctness fail "shared-out-of-bounds"
// expect[emu]: sanitizer fail "shared-out-of-bounds"
// expect[emu]: sanitizer fail "shared_read_past_end.cu:18: thread (127,0,0) of block (0,0,0) reads 4 bytes at 0 bytes past the end of the 512-byte __shared__ array 'part' (element 128 of 128)"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float part[128];
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x < 64) part[threadIdx.x] += part[threadIdx.x + 64];
  if (threadIdx.x == 127) s = part[threadIdx.x + 1];  // one past the end
  __syncthreads();
  for (unsigned stride = 32; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = part[0] + 0 * s;
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 128, 0, m, sums, n); }
