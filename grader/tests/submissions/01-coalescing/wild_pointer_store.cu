// Stores through a pointer far from any device allocation (an index computed in the wrong units):
// on the emulator the store is stopped before it happens and reported with its line, thread and
// the distance to the nearest allocation; the process survives, so every other check still runs.
// expect: lab fail
// expect[emu]: correctness fail "not-device-memory"
// expect[emu]: correctness fail "wild_pointer_store.cu:16: thread (1,0,0) of block (0,0,0) writes 4 bytes at address 0x"
// expect[emu]: sanitizer fail "not-device-memory"
// expect[emu]: sanitizer fail "wild_pointer_store.cu:16: thread (1,0,0) of block (0,0,0) writes 4 bytes at address 0x"
// expect[emu]: sanitizer fail "ends 4 TB"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    sums[static_cast<long long>(r) << 40] = 0;  // r == 0 is sums[0]; every other r is far away
    float s = 0;
    for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
    sums[r] = s;
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, (n + 31) / 32, 32, 0, m, sums, n); }
