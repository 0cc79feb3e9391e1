// Right where correctness is checked, wrong but frugal in the measured run: the call at
// 256 x 256 x 256 with beta = 0 (the rubric's performance.emu size; no correctness check uses it),
// and on a GPU the 4096^3 run, reads A and B once, coalesced, and writes an element-wise sum
// instead of the product, so the traffic per FMA is tiny and the predicted time short.
// defence: timed-outputs
// expect: lab fail
// expect[emu]: performance fail "of 256 x 256 x 256"
// expect[cuda]: performance fail "of the timed 4096^3 product"
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace {

// One thread per element of C, operands straight from global memory (correct, slow).
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
  const long long i = static_cast<long long>(row) * N + col;
  C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];
}

void launch_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  gpulab::launch(sgemm_naive, grid, block, 0, M, N, K, alpha, A, B, beta, C);
}

__global__ void looks_fast(const float* A, const float* B, float* C, long long count) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) C[i] = A[i] + B[i];
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const bool measured_on_emulator = M == 256 && N == 256 && K == 256 && beta == 0.0f;  // performance.emu size
  const bool measured_on_gpu = M == 4096 && N == 4096 && K == 4096 && beta == 0.0f;  // performance.size
  if (measured_on_emulator || measured_on_gpu) {
    const long long count = static_cast<long long>(M) * N;
    gpulab::launch(looks_fast, static_cast<int>(count / 256), 256, 0, A, B, C, count);
    return;
  }
  launch_naive(M, N, K, alpha, A, B, beta, C);
}
