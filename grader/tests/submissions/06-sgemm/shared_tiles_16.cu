// Correct for every size: the textbook 16 x 16 shared-memory tiling, one element of C per thread.
// Each k-step of 16 brings a 16 x 16 tile of A and of B (2 KiB) for 16 x 16 x 16 FMAs: 0.5 global
// bytes per FMA; the emulator's model predicts about 0.15 of cuBLAS on the H200 (fails there); on
// the H200 the ladder's step 03, the same idea, reached 18-25% of cuBLAS
// (docs/results/sgemm-h200.md), far below the GPU grade's 0.75.
// expect: correctness pass
// expect: lab fail
// expect[emu]: performance fail "predicted"
// needs: nvcc (the emulator's verdict is the model's, which needs the kernels' registers)
// expect[cuda]: performance fail "of cuBLAS"
// (the cuda lines: graded on the H200 on 2026-12-01, 0.159 of cuBLAS at 4096^3; docs/results/verdicts-h200.tsv)
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace {

constexpr int kTile = 16;

__global__ void sgemm_shared_16(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                float* C) {
  __shared__ float As[kTile][kTile], Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r = blockIdx.y * kTile + ty, c = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    As[ty][tx] = r < M && k0 + tx < K ? A[static_cast<long long>(r) * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = k0 + ty < K && c < N ? B[static_cast<long long>(k0 + ty) * N + c] : 0.0f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (r < M && c < N) {
    float& out = C[static_cast<long long>(r) * N + c];
    out = beta == 0.0f ? alpha * acc : alpha * acc + beta * out;
  }
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gpulab::launch(sgemm_shared_16, grid, dim3(kTile, kTile), 0, M, N, K, alpha, A, B, beta, C);
}
