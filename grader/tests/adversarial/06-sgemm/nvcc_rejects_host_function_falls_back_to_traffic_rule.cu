// The ladder's step 04 (a 1D register tile, predicted at about 0.25 of cuBLAS, 0.31 measured on
// the H200) with one call nvcc refuses in device code: std::max is a constexpr host function, which
// clang runs in a kernel and nvcc does not (without --expt-relaxed-constexpr; a GPU build refuses
// it too). No macro: the file is the same for every compiler, but nvcc's registers and PTX cannot be
// had, and the grade used to fall back to the memory-traffic rule, which passed the kernel. Now a
// prediction the hand-in denies fails, saying why.
// And the emulator's grade now fails a file that nvcc, here, refuses (a GPU build would), before it
// runs (gpu-compiler); without that, the prediction the hand-in denies fails (prediction-required).
// defence: prediction-required,gpu-compiler
// defence[cuda]: none (on a GPU nvcc's compile is the program: nvcc itself refuses the file)
// needs: nvcc
// expect[emu]: lab fail
// expect[emu]: correctness fail "does not compile for a GPU"
// expect[cuda]: correctness fail "does not compile"
#include <algorithm>

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
  for (int k0 = 0; k0 < std::max(K, 0); k0 += kBK) {
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
