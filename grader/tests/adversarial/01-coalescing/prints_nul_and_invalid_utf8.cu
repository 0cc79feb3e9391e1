// Prints NUL bytes, bytes that are not UTF-8 (0xFF, 0xFE, an overlong '/', a lone continuation
// byte, a UTF-16 surrogate) and an 8-bit CSI sequence, then crashes, so that they land in the grader's
// messages: the JSON report must stay valid, with the bad bytes dropped or replaced.
// defence: reports
// expect: lab fail
// expect: correctness fail "nul <> end of output"
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
  const char bytes[] = "bytes <\xff\xfe\xc0\xaf\x80\xed\xa0\x80\xc2\x9b" "1m> nul <\0\0> end of output\n";
  std::fwrite(bytes, 1, sizeof bytes - 1, stderr);
  std::fflush(stderr);
  std::abort();
  gpulab::launch(row_sum_thread_per_row, (n + 255) / 256, 256, 0, m, sums, n);
}
