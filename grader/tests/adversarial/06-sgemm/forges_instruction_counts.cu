// Writes the emulator's instruction counters (the per-thread array the counting pass adds to,
// common/emu/passes/count_pass.cpp) from inside the kernel: each thread takes back what it counted,
// so that the performance model, which grades lab 06 on the emulator, sees a launch that issues
// almost no instructions. The source-text rule refuses a hand-in that names the emulator's
// internals (gpulab_emu_*), before or after preprocessing.
// defence: source-text
// expect[emu]: lab fail
// expect[emu]: correctness fail "rule: source text"
#include <cstdint>

#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

extern "C" __thread std::uint64_t* gpulab_emu_icount;

namespace {

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  std::uint64_t before[10];
  for (int c = 0; c < 10; ++c) before[c] = gpulab_emu_icount[c];
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
    const long long i = static_cast<long long>(row) * N + col;
    C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];
  }
  for (int c = 0; c < 10; ++c) gpulab_emu_icount[c] = before[c];
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  gpulab::launch(sgemm_naive, grid, block, 0, M, N, K, alpha, A, B, beta, C);
}
