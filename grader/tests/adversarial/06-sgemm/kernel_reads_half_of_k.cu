// A kernel that reads only part of the inputs: it accumulates the first half of each dot product
// (k < K/2) and the host adds the second half, computed from copy_to_host copies of A and B and
// passed in through a scratch buffer, so C is right while kernels read half of A and of B.
// On a GPU back-end the kit cannot see host uploads or which bytes kernels read: there the
// correctness checks pass, and it is the GPU's speed that fails it (performance).
// defence: input-coverage
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "of the input A"
// expect[cuda]: performance fail
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"

namespace {

__global__ void first_half(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                           const float* rest, float* C) {
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (row >= M || col >= N) return;
  const long long i = static_cast<long long>(row) * N + col;
  float acc = rest[i];
  for (int k = 0; k < K / 2; ++k) acc += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
  C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  std::vector<float> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N),
      rest(static_cast<std::size_t>(M) * N, 0.0f);
  gpulab::copy_to_host(a.data(), A, a.size() * sizeof(float));
  gpulab::copy_to_host(b.data(), B, b.size() * sizeof(float));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = K / 2; k < K; ++k)
        rest[static_cast<std::size_t>(i) * N + j] += a[static_cast<std::size_t>(i) * K + k] * b[static_cast<std::size_t>(k) * N + j];
  gpulab::DeviceBuffer<float> d_rest(rest);
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  gpulab::launch(first_half, grid, block, 0, M, N, K, alpha, A, B, beta, d_rest.data(), C);
  gpulab::synchronize();
}
