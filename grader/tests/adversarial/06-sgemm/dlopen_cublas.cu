// Loads cuBLAS at run time (dlopen + dlsym of cublasCreate_v2 / cublasSgemm_v2) and lets it do the
// work; where the library is missing it falls back to a naive kernel.
// defence: symbols
// expect: lab fail
// expect: correctness fail "no dynamic loading"
#include <dlfcn.h>

#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace {

// One thread per element of C, operands straight from global memory (correct, slow).
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
  const long long i = static_cast<long long>(row) * N + col;
  C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];
}

void launch_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  gpulab::launch(sgemm_naive, grid, block, 0, M, N, K, alpha, A, B, beta, C);
}

using Create = int (*)(void**);
using Gemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                     const float*, float*, int);

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  static void* lib = dlopen("libcublas.so.12", RTLD_NOW);
  static Gemm gemm = lib ? reinterpret_cast<Gemm>(dlsym(lib, "cublasSgemm_v2")) : nullptr;
  static void* handle = nullptr;
  if (gemm && !handle) reinterpret_cast<Create>(dlsym(lib, "cublasCreate_v2"))(&handle);
  if (gemm && handle) {
    gemm(handle, 0, 0, N, M, K, &alpha, B, N, A, K, &beta, C, N);  // row-major through column-major
    return;
  }
  launch_naive(M, N, K, alpha, A, B, beta, C);
}
