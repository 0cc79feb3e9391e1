// Waits for a flag no thread ever sets (a classic attempt at ordering blocks): it never returns.
// The lab process is stopped at its time limit, and the report is still written.
// expect: lab fail
// expect: correctness fail "time limit"
// options: --timeout 8
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n, volatile int* flag) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  while (*flag == 0) {
  }
  if (r < n) sums[r] = m[r];
}

void row_sum(const float* m, float* sums, int n) {
  static gpulab::DeviceBuffer<int> flag(std::vector<int>{0});
  gpulab::launch(rows, (n + 127) / 128, 128, 0, m, sums, n, flag.data());
}
