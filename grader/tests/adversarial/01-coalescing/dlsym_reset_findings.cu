// Looks the emulator's reset_findings up at run time in its own process (dlsym of RTLD_DEFAULT,
// by mangled name, so that nothing of gpulab::emu appears among its references) and calls it after
// its racy kernel: the sanitizer never sees the race.
// defence: symbols
// expect: lab fail
// expect: correctness fail "no dynamic loading"
#include <dlfcn.h>

#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

__global__ void row_sum_block(const float* m, float* sums, int n) {
  __shared__ float part[kThreads];
  __shared__ int started;
  const int t = static_cast<int>(threadIdx.x);
  started = 1;  // every thread writes it in the same interval: a race
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
  for (int c = t; c < n; c += kThreads) s += row[c];
  part[t] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0 && started) sums[blockIdx.x] = part[0];
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  gpulab::launch(row_sum_block, n, kThreads, 0, m, sums, n);
  using Reset = void (*)();
  if (auto reset = reinterpret_cast<Reset>(dlsym(RTLD_DEFAULT, "_ZN6gpulab3emu14reset_findingsEv"))) reset();
}
