// Correct for every size, and as simple as it gets: one thread per element of C, each walking a
// row of A and a column of B in global memory: about 5 bytes of sectors per FMA. The emulator's
// model predicts about 0.12 of cuBLAS on the H200 (fails there); on the H200 the ladder's naive
// step reached 1% of cuBLAS (docs/results/sgemm-h200.md), this hand-in 0.10.
// expect: correctness pass
// expect: lab fail
// expect[emu]: performance fail "predicted"
// needs: nvcc (the emulator's verdict is the model's, which needs the kernels' registers)
// expect[cuda]: performance fail "of cuBLAS"
// (the cuda lines: graded on the H200 on 2026-12-01, 0.104 of cuBLAS at 4096^3; docs/results/verdicts-h200.tsv)
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace {

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
  if (c >= N || r >= M) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[static_cast<long long>(r) * K + k] * B[static_cast<long long>(k) * N + c];
  float& out = C[static_cast<long long>(r) * N + c];
  out = beta == 0.0f ? alpha * acc : alpha * acc + beta * out;
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  gpulab::launch(sgemm_naive, dim3((N + 127) / 128, M), 128, 0, M, N, K, alpha, A, B, beta, C);
}
