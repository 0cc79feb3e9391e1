// Remembers the first answer for each n and returns it again: fails on fresh inputs.
// expect: lab fail
// expect: correctness fail "row sums are wrong"
#include <map>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

__global__ void rows(const float* m, float* sums, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float s = 0;
  for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
  sums[r] = s;
}

void row_sum(const float* m, float* sums, int n) {
  static std::map<int, std::vector<float>> cache;
  auto it = cache.find(n);
  if (it != cache.end()) {
    gpulab::copy_to_device(sums, it->second.data(), n * sizeof(float));
    return;
  }
  gpulab::launch(rows, (n + 127) / 128, 128, 0, m, sums, n);
  std::vector<float> h(n);
  gpulab::copy_to_host(h.data(), sums, n * sizeof(float));
  cache[n] = h;
}
