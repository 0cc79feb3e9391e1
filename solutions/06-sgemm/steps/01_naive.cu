// Step 01 - naive: one thread per element of C, operands straight from global memory.
//
// What it is: the lab's starting point (the same kernel as labs/06-sgemm/sgemm.cu). Each
// thread reads a whole row of A and a whole column of B: 2K loads for 2K FLOPs.
// Why it is slow: threadIdx.x picks the ROW of C, so the 32 threads of a warp read A from 32
// rows K floats apart and write C 32 rows apart: each warp-wide load or store touches 32
// separate 32-byte sectors instead of 4. Correct for every size.
// Measured on the H200 (4096^3, docs/results/sgemm-h200.md): 0.50 TFLOP/s, 1% of cuBLAS.
#include "gpulab/gpu.hpp"
#include "steps.hpp"

namespace {

__global__ void naive_kernel(int M, int N, int K, float alpha, const float* A, const float* B,
                             float beta, float* C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  const int i = row * N + col;
  C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];  // beta == 0: never read C
}

}  // namespace

void sgemm_step01_naive(int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C) {
  const dim3 block(32, 32);
  const dim3 grid((M + 31) / 32, (N + 31) / 32);
  gpulab::launch(naive_kernel, grid, block, 0, M, N, K, alpha, A, B, beta, C);
}
