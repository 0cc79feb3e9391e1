// The stub's thread-per-row sum, each thread copying its row into a local buffer with memcpy, 64
// floats at a time, and a kernel that reads the whole matrix coalesced (and keeps nothing) so
// that the kernels read every input byte. memcpy was a libc call the tracing did not see: the
// decoy's coalesced loads were the only ones measured. In a kernel it is traced now, piece by
// piece at its line: each lane reads its own row, 32 sectors per request.
// defence: device-calls
// expect[emu]: performance.coalesced_global_loads fail "memcpy_rows_in_kernel.cu:"
// expect[emu]: correctness pass
#include <cstring>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kChunk = 64;

__global__ void touch_every_element(const float* m, long long count, float* scratch) {
  float s = 0.0f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    s += m[i];
  if (s == -1.0f) scratch[0] = s;  // (never: keeps the loads)
}

__global__ void row_sum_by_memcpy(const float* m, float* sums, int n) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  float chunk[kChunk];
  float s = 0.0f;
  for (int col = 0; col < n; col += kChunk) {
    const int k = n - col < kChunk ? n - col : kChunk;
    std::memcpy(chunk, m + static_cast<long long>(row) * n + col, sizeof(float) * static_cast<unsigned>(k));
    for (int c = 0; c < k; ++c) s += chunk[c];
  }
  sums[row] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  gpulab::DeviceBuffer<float> scratch(1);
  touch_every_element<<<256, 256>>>(m, static_cast<long long>(n) * n, scratch.data());
  row_sum_by_memcpy<<<(n + 255) / 256, 256>>>(m, sums, n);
}
