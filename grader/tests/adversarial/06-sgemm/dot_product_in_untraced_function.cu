// The stub's naive SGEMM (row of A and column of B walked per thread, neighbouring threads a row
// of B apart) with its dot product in a device function marked
// [[clang::no_sanitize("coverage")]], which the tracing skips, and a kernel that reads A and B coalesced and keeps
// nothing, so that the kernels read every input byte: the measured loads were coalesced and few.
// The emulator's compiler pass refuses any function of a kernel file that would escape the
// tracing.
// defence: instrumentation
// expect[emu]: lab fail
// expect[emu]: correctness fail "switches the emulator's access tracing off"
#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"

namespace {

__global__ void touch_every_element(const float* a, long long count, float* scratch) {
  float s = 0.0f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    s += a[i];
  if (s == -1.0f) scratch[0] = s;  // (never: keeps the loads)
}

[[clang::no_sanitize("coverage"), gnu::noinline]] __device__ float dot(const float* a, const float* b, int K, int N) {
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * b[static_cast<long long>(k) * N];
  return acc;
}

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const float acc = dot(A + static_cast<long long>(row) * K, B + col, K, N);
  const long long i = static_cast<long long>(row) * N + col;
  C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  gpulab::DeviceBuffer<float> scratch(1);
  touch_every_element<<<256, 256>>>(A, static_cast<long long>(M) * K, scratch.data());
  touch_every_element<<<256, 256>>>(B, static_cast<long long>(K) * N, scratch.data());
  const dim3 block(32, 32);
  const dim3 grid((M + block.x - 1) / block.x, (N + block.y - 1) / block.y);
  sgemm_naive<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
}
