// The ladder's step 04 (a 1D register tile: one column of 8 rows per thread), which the
// performance model predicts at about 0.25 of cuBLAS on the H200 (0.31 measured there), with an
// #error that only nvcc sees: nvcc, which gives the model the kernels' registers, cannot compile the
// file, and the grade used to fall back to the memory-traffic rule, which cannot tell this kernel
// from a fast one (0.125 bytes per FMA) and passed it.
// Two defences, each alone: the source-text rule refuses a test of __CUDACC__ (one program for
// every compiler), and a prediction that nvcc's view is denied fails instead of falling back.
// Now, besides, the emulator's grade fails a file that nvcc, here, refuses (gpu-compiler).
// defence: source-text,prediction-required,gpu-compiler
// defence[cuda]: none (on a GPU nvcc's compile is the program: nvcc itself refuses the file)
// needs: nvcc
// expect[emu]: lab fail
// expect[emu]: performance fail
// expect[cuda]: lab fail
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

#ifdef __CUDACC__
#error "the registers of this file are nobody's business"
#endif

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
