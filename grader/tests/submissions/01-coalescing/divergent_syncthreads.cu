// __syncthreads inside a branch only some threads take: undefined on a GPU, a fault on the emulator.
// expect[emu]: lab fail
// expect[emu]: correctness fail "divergent"
// On the H200, compute-sanitizer's synccheck reports it too (two different barriers), and the
// emulator run of a GPU grade finds it.
// expect[cuda]: lab fail
// expect[cuda]: portability fail "divergent"
// expect[cuda]: sanitizer fail "divergent-barrier"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  __shared__ float buf[256];
  float s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  buf[threadIdx.x] = s;
  if (threadIdx.x < 128) {
    __syncthreads();
    buf[threadIdx.x] += buf[threadIdx.x + 128];
  } else {
    __syncthreads();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 128; ++i) t += buf[i];
    sums[blockIdx.x] = t;
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, n, 256, 0, m, sums, n); }
