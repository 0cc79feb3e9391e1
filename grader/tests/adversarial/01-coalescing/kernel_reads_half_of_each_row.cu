// A kernel that reads only part of the input: it sums the left half of each row (coalesced), and
// the host adds the right halves, which it fetched with copy_to_host, through a scratch buffer.
// On a GPU back-end the kit cannot see host uploads or which bytes kernels read: there the
// correctness checks pass, and it is the GPU's speed that fails it (performance).
// defence: input-coverage
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "of the input m"
// expect[cuda]: performance fail
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 128;

__global__ void left_halves(const float* m, const float* right, float* sums, int n) {
  __shared__ float part[kThreads];
  const int t = static_cast<int>(threadIdx.x);
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
  for (int c = t; c < n / 2; c += kThreads) s += row[c];
  part[t] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = part[0] + right[blockIdx.x];
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  std::vector<float> h(static_cast<std::size_t>(n) * n), right(static_cast<std::size_t>(n), 0.0f);
  gpulab::copy_to_host(h.data(), m, h.size() * sizeof(float));
  for (int r = 0; r < n; ++r)
    for (int c = n / 2; c < n; ++c) right[static_cast<std::size_t>(r)] += h[static_cast<std::size_t>(r) * n + c];
  gpulab::DeviceBuffer<float> d_right(right);
  gpulab::launch(left_halves, n, kThreads, 0, m, d_right.data(), sums, n);
  gpulab::synchronize();
}
