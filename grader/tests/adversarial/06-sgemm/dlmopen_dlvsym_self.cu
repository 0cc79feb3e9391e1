// Dynamic loading in its rarer forms: dlmopen of the process's own libraries in a new namespace and
// dlvsym of a versioned symbol, looking for the emulator's counters to reset (a second copy of the
// library, and no such version: nothing is found, and it falls back to a naive kernel).
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

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  static void* emu = dlmopen(LM_ID_NEWLM, "libgpulab_emu.so", RTLD_NOW | RTLD_LOCAL);
  if (emu) {
    if (auto reset = reinterpret_cast<void (*)()>(dlvsym(emu, "_ZN6gpulab3emu13reset_metricsEv", "GPULAB_1"))) reset();
  }
  launch_naive(M, N, K, alpha, A, B, beta, C);
}
