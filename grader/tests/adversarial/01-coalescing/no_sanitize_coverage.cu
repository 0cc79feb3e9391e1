// The stub's thread-per-row kernel marked [[clang::no_sanitize("coverage")]], which makes
// the compiler's access tracing skip it, and a kernel that reads the matrix coalesced so that the
// kernels read every input byte: only the decoy's coalesced loads were measured. The emulator's
// compiler pass refuses any function of a kernel file that would escape the tracing.
// defence: instrumentation
// expect[emu]: lab fail
// expect[emu]: correctness fail "switches the emulator's access tracing off"
#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

namespace {

__global__ void touch_every_element(const float* m, long long count, float* scratch) {
  float s = 0.0f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    s += m[i];
  if (s == -1.0f) scratch[0] = s;  // (never: keeps the loads)
}

[[clang::no_sanitize("coverage")]] __global__ void row_sum_thread_per_row(const float* m, float* sums, int n) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  float s = 0.0f;
  for (int col = 0; col < n; ++col) s += m[static_cast<long long>(row) * n + col];
  sums[row] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  gpulab::DeviceBuffer<float> scratch(1);
  touch_every_element<<<256, 256>>>(m, static_cast<long long>(n) * n, scratch.data());
  row_sum_thread_per_row<<<(n + 255) / 256, 256>>>(m, sums, n);
}
