// Includes the grader's own headers (grader/common is on the include path of the lab build) to
// build on the checks' helpers: here the kit's guard size and the protocol's escaping.
// Two defences, each alone: the include vetting refuses the grader's headers, and nvcc, whose
// include path has no grader headers (a GPU build's neither: the vetting refuses them there too),
// does not compile the file (gpu-compiler).
// defence: includes,gpu-compiler
// expect: lab fail
// expect: correctness fail "gpulab/grade/kit.hpp"
#include "gpulab/grade/kit.hpp"
#include "gpulab/grade/protocol.hpp"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;
// The checks poison kGuard elements after the output: a kernel may not touch them.
static_assert(gpulab::grade::kit::kGuard >= 1, "the grader's guard zone");

__global__ void row_sum_block(const float* m, float* sums, int n) {
  __shared__ float part[kThreads];
  const int t = static_cast<int>(threadIdx.x);
  const float* row = m + static_cast<long long>(blockIdx.x) * n;
  float s = 0.0f;
  for (int c = t; c < n; c += kThreads) s += row[c];
  part[t] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = part[0];
}

}  // namespace

void row_sum(const float* m, float* sums, int n) { gpulab::launch(row_sum_block, n, kThreads, 0, m, sums, n); }
