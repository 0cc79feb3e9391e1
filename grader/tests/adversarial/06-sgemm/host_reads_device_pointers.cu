// Multiplies on the host by reading A and B straight through the device pointers (legal on the
// emulator, an illegal address on a GPU), uploads the product into a scratch buffer and lets a
// kernel copy it into C; a decoy kernel reads A and B once.
// On a GPU back-end the GPU itself stops it (an illegal address ends the lab process).
// defence: host-access
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "host code dereferenced device memory"
// expect[cuda]: correctness fail "signal 11"
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"

namespace {

__global__ void read_operands(const float* A, long long a_count, const float* B, long long b_count, float* sink) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  float s = 0.0f;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < a_count; k += stride) s += A[k];
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < b_count; k += stride) s += B[k];
  if (s == 3.0e38f) *sink = s;
}

__global__ void scale_into(const float* product, float alpha, float beta, float* C, long long count) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) C[i] = beta == 0.0f ? alpha * product[i] : alpha * product[i] + beta * C[i];
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  static gpulab::DeviceBuffer<float> sink(1);
  gpulab::launch(read_operands, 64, 256, 0, A, static_cast<long long>(M) * K, B, static_cast<long long>(K) * N,
                 sink.data());
  std::vector<float> product(static_cast<std::size_t>(M) * N, 0.0f);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const float a = A[static_cast<long long>(i) * K + k];
      for (int j = 0; j < N; ++j) product[static_cast<std::size_t>(i) * N + j] += a * B[static_cast<long long>(k) * N + j];
    }
  gpulab::DeviceBuffer<float> d_product(product);
  const long long count = static_cast<long long>(product.size());
  gpulab::launch(scale_into, static_cast<int>((count + 255) / 256), 256, 0, d_product.data(), alpha, beta, C, count);
  gpulab::synchronize();
}
