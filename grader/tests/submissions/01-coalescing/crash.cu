// Stores through a null pointer. On a GPU the process gets an illegal-address error; on the
// emulator the store is stopped before it happens and named; either way the grader carries on.
// expect: lab fail
// expect[emu]: correctness fail "not-device-memory"
// expect[emu]: correctness fail "crash.cu:13: thread (0,0,0) of block (0,0,0) writes 4 bytes at address 0x0, which is not device memory"
// expect[cuda]: correctness fail "illegal"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n, float* volatile* where) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  float* volatile target = *where;  // null, read through volatile so it cannot be folded away
  if (r < n) target[r] = m[r];
  if (r < n) sums[r] = 0;
}

void row_sum(const float* m, float* sums, int n) {
  static float* volatile null_pointer = nullptr;
  gpulab::launch(rows, (n + 127) / 128, 128, 0, m, sums, n, const_cast<float* volatile*>(&null_pointer));
}
