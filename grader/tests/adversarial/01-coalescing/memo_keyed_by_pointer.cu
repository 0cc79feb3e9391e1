// Remembers the sums of every matrix it has seen, keyed by the matrix's address and size, and on a
// second call with the same address copies them back instead of summing: a kernel still reads the
// whole matrix (so kernels read every input byte) and one writes the output. Right whenever every
// call gets a buffer of its own, wrong when a buffer is reused for another matrix (the contract: a
// function of its arguments, the values they point to).
// defence: call-order
// expect: lab fail
// expect: correctness fail "row_sum on data set B was wrong when called after row_sum on A"
#include <map>
#include <utility>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

namespace {

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float s = 0.0f;
  for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
  sums[r] = s;
}

// Reads the matrix (a decoy: nothing it sums is kept) and copies the remembered sums out.
__global__ void replay(const float* m, const float* kept, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float s = 0.0f;
  for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
  sums[r] = s == 3.0e38f ? s : kept[r];
}

__global__ void keep(const float* sums, float* kept, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) kept[r] = sums[r];
}

std::map<std::pair<const float*, int>, float*> memo;

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const int blocks = (n + 127) / 128;
  const auto key = std::make_pair(m, n);
  if (const auto it = memo.find(key); it != memo.end()) {
    gpulab::launch(replay, blocks, 128, 0, m, it->second, sums, n);
    return;
  }
  gpulab::launch(rows, blocks, 128, 0, m, sums, n);
  float* kept = static_cast<float*>(gpulab::device_malloc(static_cast<std::size_t>(n) * sizeof(float)));
  gpulab::launch(keep, blocks, 128, 0, sums, kept, n);
  memo[key] = kept;
}
