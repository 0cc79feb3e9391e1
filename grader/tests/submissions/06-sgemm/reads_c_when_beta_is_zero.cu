// Computes beta * C even when beta == 0: C holds NaN then, and 0 * NaN = NaN.
// expect: lab fail
// expect: correctness fail "beta == 0"
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

__global__ void naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
  if (col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  gpulab::launch(naive, dim3((N + 127) / 128, M), dim3(128), 0, M, N, K, alpha, A, B, beta, C);
}
