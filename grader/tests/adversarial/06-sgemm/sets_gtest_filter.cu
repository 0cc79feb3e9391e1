// Sets GTEST_FILTER (and GTEST_BRIEF, GTEST_FAIL_FAST) from a static initializer, before the lab
// process reads its options, so that only the checks its naive kernel passes would run.
// defence: symbols
// expect: lab fail
// expect: correctness fail "no environment variables"
#include <cstdlib>

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

const bool filtered = [] {
  setenv("GTEST_FILTER", "correctness.*:sanitizer.*", 1);
  setenv("GTEST_BRIEF", "1", 1);
  setenv("GTEST_FAIL_FAST", "0", 1);
  return true;
}();

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  launch_naive(M, N, K, alpha, A, B, beta, C);
}
