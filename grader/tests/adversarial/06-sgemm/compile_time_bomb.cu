// A compile-time bomb: a template whose instantiations double at every level (2^40 distinct ones,
// recursion depth only 40, so no depth limit stops it): the build must stop at the time limit
// with a message, and the grader must go on to report.
// defence: none (the build time limit holds in every isolation mode)
// options: --timeout 10
// expect: lab fail
// expect: correctness fail "did not finish within"
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace {

template <int Level, unsigned long long Path>
struct Tree {
  static constexpr unsigned long long value = Tree<Level - 1, 2 * Path>::value + Tree<Level - 1, 2 * Path + 1>::value;
};
template <unsigned long long Path>
struct Tree<0, Path> {
  static constexpr unsigned long long value = Path % 7;
};

// "Precomputed tile schedule".
constexpr unsigned long long kSchedule = Tree<40, 1>::value;

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
  const long long i = static_cast<long long>(row) * N + col;
  C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const dim3 block(32, 8 + static_cast<unsigned>(kSchedule % 2) * 0);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  gpulab::launch(sgemm_naive, grid, block, 0, M, N, K, alpha, A, B, beta, C);
}
