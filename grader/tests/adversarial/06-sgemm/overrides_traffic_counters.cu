// Defines the emulator's traffic counters in the submission (gpulab::emu::kernel_load_sectors and
// kernel_store_sectors), which the lab kit reads to judge the traffic per FMA: the naive kernel
// then looks like a perfectly tiled one.
// defence: symbols
// expect: lab fail
// expect: correctness fail "no overriding the emulator or the grader"
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace gpulab::emu {
long long kernel_load_sectors() { return 1; }
long long kernel_store_sectors() { return 1; }
}  // namespace gpulab::emu

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

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  launch_naive(M, N, K, alpha, A, B, beta, C);
}
