// A kernel that reads far before the matrix (an illegal address), then a second launch in the same
// call. The second launch takes the fault as CUDA's sticky error (a launch after a fault fails and
// returns it), and the code goes on: the fault must still be the call's, named with its file:line,
// and the sanitizer row must give the finding (it used to say "ran no kernel" and that this
// emulator "traces no memory accesses").
// expect: lab fail
// expect[emu]: correctness fail "fault_then_another_launch.cu:18"
// expect[emu]: correctness fail "not-device-memory"
// expect[emu]: sanitizer fail "not-device-memory"
// expect[cuda]: correctness fail "illegal"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void reads_before_the_matrix(const float* m, float* sums, int n) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  const long long far_before = static_cast<long long>(row) * n - (1LL << 40);
  sums[row] = m[far_before];
}

__global__ void fill(float* sums, int n) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) sums[row] = 1.0f;
}

void row_sum(const float* m, float* sums, int n) {
  reads_before_the_matrix<<<(n + 255) / 256, 256>>>(m, sums, n);
  fill<<<(n + 255) / 256, 256>>>(sums, n);
}
