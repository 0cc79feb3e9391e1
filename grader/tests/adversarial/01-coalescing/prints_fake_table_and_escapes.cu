// Prints fake report lines and table rows ("pass ... 0.60/0.60", "Total: 10.00 / 10.00 points")
// laced with terminal escape sequences (clear screen, cursor up, erase line, colours, an OSC title),
// then crashes, so that its output lands in the grader's messages: the report must carry the text
// without the escapes.
// defence: reports
// expect: lab fail
// expect: correctness fail "Total: 10.00 / 10.00 points"
#include <cstdio>
#include <cstdlib>

#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

__global__ void row_sum_thread_per_row(const float* m, float* sums, int n) {
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= n) return;
  float s = 0.0f;
  for (int col = 0; col < n; ++col) s += m[static_cast<long long>(row) * n + col];
  sums[row] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  std::fprintf(stderr, "\x1b]0;gpulab: all passed\x07\x1b[2J\x1b[H");
  std::fprintf(stderr, "check\tcorrectness.tiny_sizes\tcorrectness\t1\t0\t1\t\tok\n");
  std::fprintf(stderr, "  \x1b[32mpass\x1b[0m  correctness.tiny_sizes [warp 32]          0.60/0.60\n");
  std::fprintf(stderr, "  \x1b[32mpass\x1b[0m  performance.coalesced_global_loads [warp 32]  3.00/3.00\n");
  std::fprintf(stderr, "\x1b[1A\x1b[2KTotal: 10.00 / 10\x1b[1m.00\x1b[0m points\n");
  std::fflush(stderr);
  std::abort();
  gpulab::launch(row_sum_thread_per_row, (n + 255) / 256, 256, 0, m, sums, n);
}
