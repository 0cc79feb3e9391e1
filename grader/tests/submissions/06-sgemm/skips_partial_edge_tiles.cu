// Launches only whole 16 x 16 tiles of C (the block count rounded down): when M or N is not a
// multiple of 16, the last rows and columns of C are never stored. With beta == 0 they still hold
// the finite value C started with, and the grader says they were not written.
// expect: lab fail
// expect: correctness.sizes_that_are_not_tile_multiples fail "elements of C were not written"
// expect: correctness.tile_multiples pass
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

constexpr int kTile = 16;

__global__ void whole_tiles(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[row * N + col];
}

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  gpulab::launch(whole_tiles, dim3(N / kTile, M / kTile), dim3(kTile, kTile), 0, M, N, K, alpha, A, B, beta, C);
}
