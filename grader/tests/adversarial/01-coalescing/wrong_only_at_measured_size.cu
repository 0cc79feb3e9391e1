// Right where correctness is checked, wrong but perfectly coalesced at n = 512 and n = 16384, the
// sizes of the measured run on the emulator and on a GPU (rubric: performance.emu size, sizes):
// there each warp reads rows in one sweep and every
// thread keeps only its own column's values.
// defence: timed-outputs
// expect: lab fail
// expect[emu]: performance fail "measured run"
// expect[cuda]: performance fail "(timed run, n = 16384)"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

// Correct, one thread per row (slow: a warp's loads are n floats apart).
__global__ void per_row(const float* m, float* sums, int n) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= n) return;
  float s = 0.0f;
  for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
  sums[r] = s;
}

// Coalesced, but thread t adds column t of every row: column sums, not row sums.
__global__ void per_column(const float* m, float* sums, int n) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= n) return;
  float s = 0.0f;
  for (int r = 0; r < n; ++r) s += m[static_cast<long long>(r) * n + c];
  sums[c] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  if (n == 512 || n == 16384)
    gpulab::launch(per_column, (n + 127) / 128, 128, 0, m, sums, n);
  else
    gpulab::launch(per_row, (n + 127) / 128, 128, 0, m, sums, n);
}
