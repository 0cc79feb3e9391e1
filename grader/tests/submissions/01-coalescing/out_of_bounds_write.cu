// No bound check on the store: the threads of the last block write past sums[n-1].
// expect: lab fail
// expect: correctness fail "past its last element"
// expect[emu]: sanitizer fail "out-of-bounds"
// expect[cuda]: sanitizer fail "out-of-bounds"
// expect[cuda]: sanitizer fail "out_of_bounds_write.cu:"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  if (r < n)
    for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
  sums[r] = s;
}

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, (n + 31) / 32, 32, 0, m, sums, n); }
