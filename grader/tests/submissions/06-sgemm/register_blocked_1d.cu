// Correct for every size, and economical with memory: a 64 x 64 tile of C per block, K in steps
// of 8 through shared memory, each thread 8 rows of one column (one B value in a register feeds
// 8 FMAs) - the ladder's step 04 (solutions/06-sgemm/steps/04_register_1d.cu) as a hand-in. Its
// global bytes per FMA (0.125) are those of a fast kernel, and the emulator's earlier traffic rule
// passed it. On the H200 the ladder's step 04 reached 33% of cuBLAS at 4096^3
// (docs/results/sgemm-h200.md): one column per thread leaves the FMA units waiting on shared
// loads, and the GPU grade (0.75 of cuBLAS) fails it. The emulator's grade is now the performance
// model's prediction for the H200 (about 0.25 of cuBLAS, bound by latency), and fails it too.
// expect: correctness pass
// expect: lab fail
// expect[emu]: performance fail "predicted"
// needs: nvcc (the emulator's verdict is the model's, which needs the kernels' registers)
// expect[cuda]: performance fail "of cuBLAS"
// (the cuda lines: graded on the H200 on 2026-12-01, 0.309 of cuBLAS at 4096^3; docs/results/verdicts-h200.tsv)
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace {

constexpr int kBM = 64, kBN = 64, kBK = 8, kTM = 8;
constexpr int kThreads = kBM * kBN / kTM;  // 512

__global__ void sgemm_1d(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  __shared__ float As[kBM][kBK];
  __shared__ float Bs[kBK][kBN];
  const int t = threadIdx.x;
  const int col = t % kBN, rows = (t / kBN) * kTM;  // this thread: rows rows..rows+7 of column col
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  float acc[kTM] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    {  // one element of each tile per thread; zeros outside the matrices
      const int ar = t / kBK, ac = t % kBK;
      As[ar][ac] = row0 + ar < M && k0 + ac < K ? A[static_cast<long long>(row0 + ar) * K + k0 + ac] : 0.0f;
      const int br = t / kBN, bc = t % kBN;
      Bs[br][bc] = k0 + br < K && col0 + bc < N ? B[static_cast<long long>(k0 + br) * N + col0 + bc] : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < kBK; ++k) {
      const float b = Bs[k][col];
      for (int i = 0; i < kTM; ++i) acc[i] += As[rows + i][k] * b;
    }
    __syncthreads();
  }
  const int c = col0 + col;
  if (c >= N) return;
  for (int i = 0; i < kTM; ++i) {
    const int r = row0 + rows + i;
    if (r >= M) break;
    float& out = C[static_cast<long long>(r) * N + c];
    out = beta == 0.0f ? alpha * acc[i] : alpha * acc[i] + beta * out;
  }
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
  gpulab::launch(sgemm_1d, grid, kThreads, 0, M, N, K, alpha, A, B, beta, C);
}
