// Shared-memory tiling without the barrier after the tiles are loaded: threads read tile
// elements other threads have not written yet. The emulator's sanitizer reports the race.
// expect[emu]: lab fail
// expect[emu]: sanitizer fail "race"
// expect[cuda]: lab fail
// expect[cuda]: sanitizer fail "race"
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

constexpr int kTile = 16;

__global__ void tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    As[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? A[row * K + k0 + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = col < N && k0 + threadIdx.y < K ? B[(k0 + threadIdx.y) * N + col] : 0.0f;
    // missing: __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = alpha * acc + (beta == 0.0f ? 0.0f : beta * C[row * N + col]);
}

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  gpulab::launch(tiled, dim3((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), dim3(kTile, kTile), 0, M, N, K, alpha,
                 A, B, beta, C);
}
