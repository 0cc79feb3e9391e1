// Ends the process in the middle of the checks with status 0: the checks it never let finish
// must fail, not vanish.
// expect: lab fail
// expect: correctness fail "references exit"
#include <cstdlib>

#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float s = 0;
  for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
  sums[r] = s;
}

void row_sum(const float* m, float* sums, int n) {
  static int calls = 0;
  if (++calls == 3) std::exit(0);
  gpulab::launch(rows, (n + 127) / 128, 128, 0, m, sums, n);
}
