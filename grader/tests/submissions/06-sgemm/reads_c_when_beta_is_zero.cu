// Computes beta * C even when beta == 0. Only beta_zero_does_not_read_c starts C as NaN (0 * NaN
// = NaN); the other checks start it with a finite value, so this contract detail costs that one
// check and nothing else. Performance fails for the naive kernel's traffic, not for C.
// expect: lab fail
// expect: correctness.beta_zero_does_not_read_c fail "C must not be read"
// expect: correctness.tiny_and_degenerate_sizes pass
// expect: correctness.sizes_that_are_not_tile_multiples pass
// expect: correctness.tile_multiples pass
// expect: correctness.random_sizes_alpha_beta pass
// expect[emu]: sanitizer pass
// expect[emu]: performance fail "predicted"
// needs: nvcc (the emulator's verdict is the model's, which needs the kernels' registers)
// expect[cuda]: performance fail "of cuBLAS"
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
