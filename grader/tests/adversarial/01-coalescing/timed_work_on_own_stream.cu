// The stub's thread-per-row kernel (slow: 32 sectors per request), launched on a non-blocking
// stream of its own, and row_sum returns at once: an event recorded on the default stream after
// the call marks the end of the launch, not of the work. The grader's timed region ends when the
// whole device is idle, so the work is timed as the slow kernel it is.
// defence[cuda]: device-sync
// defence[emu]: none
// expect: lab fail
// expect: correctness pass
// expect[emu]: performance fail "32 sectors per request"
// expect[cuda]: performance fail "below 0.5 of the copy bandwidth"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

__global__ void row_sum_thread_per_row(const float* m, float* sums, int n) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  float s = 0.0f;
  for (int col = 0; col < n; ++col) s += m[static_cast<long long>(row) * n + col];
  sums[row] = s;
}

cudaStream_t own_stream() {
  static cudaStream_t stream = nullptr;
  if (!stream) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  return stream;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const int threads = 256;
  row_sum_thread_per_row<<<(n + threads - 1) / threads, threads, 0, own_stream()>>>(m, sums, n);
}
