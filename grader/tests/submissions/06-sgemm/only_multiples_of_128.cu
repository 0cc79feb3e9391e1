// Correct only when M, N and K are multiples of 128: the edge tiles are never computed.
// expect: lab fail
// expect: correctness fail "elements are wrong"
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

constexpr int kTile = 32;

__global__ void tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K / 128 * 128; k0 += kTile) {
    As[threadIdx.y][threadIdx.x] = A[row * K + k0 + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * N + col] = alpha * acc + (beta == 0.0f ? 0.0f : beta * C[row * N + col]);
}

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  if (M < 128 || N < 128) return;
  gpulab::launch(tiled, dim3(N / 128 * 128 / kTile, M / 128 * 128 / kTile), dim3(kTile, kTile), 0, M, N, K, alpha, A,
                 B, beta, C);
}
