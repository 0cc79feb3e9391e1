// The stub's thread-per-row sum, reading a copy of the matrix that a coalesced kernel made in a
// __device__ array first. The emulator traced device allocations only: the copy's coalesced loads
// were the call's only global loads, and the thread-per-row reads of the static copy (a row apart
// from lane to lane, 32 sectors per request) were not seen. A kernel file's static data is device
// memory: its accesses are global traffic in every metric.
// defence: static-data
// expect[emu]: performance.coalesced_global_loads fail "32 sectors per request"
// expect[emu]: correctness pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr long long kCapacity = 2048LL * 2048;
__device__ float g_copy[kCapacity];

__global__ void copy_matrix(const float* m, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    g_copy[i] = m[i];
}

__global__ void row_sum_of_the_copy(float* sums, int n) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  float s = 0.0f;
  for (int col = 0; col < n; ++col) s += g_copy[static_cast<long long>(row) * n + col];
  sums[row] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const long long count = static_cast<long long>(n) * n;
  if (count > kCapacity) return;  // (never at the emulator's sizes)
  copy_matrix<<<256, 256>>>(m, count);
  row_sum_of_the_copy<<<(n + 255) / 256, 256>>>(sums, n);
}
