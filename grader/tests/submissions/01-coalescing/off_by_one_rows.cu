// Off by one: `r <= n` lets thread n sum "row n", past the end of the matrix, and store sums[n].
// The emulator stops the read past the input (named with its line and distance) at every n. On a
// GPU the row past the end holds whatever lies there, and the store into sums[n] is seen by the
// guard zone after the output, whose fill differs from the output's poison (NaN): a row summed
// from poison-like bytes cannot hide in it.
// expect: lab fail
// expect[emu]: correctness fail "out-of-bounds"
// expect[emu]: correctness fail "off_by_one_rows.cu:18: thread (1,0,0) of block (0,0,0) reads 4 bytes at 0 bytes past the end of a 4-byte device allocation (m)"
// expect[emu]: sanitizer fail "out-of-bounds"
// expect[emu]: sanitizer fail "off_by_one_rows.cu:18: thread (1,0,0) of block (0,0,0) reads 4 bytes at 0 bytes past the end"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r <= n) {
    float s = 0;
    for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
    sums[r] = s;
  }
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, (n + 32) / 32, 32, 0, m, sums, n); }
