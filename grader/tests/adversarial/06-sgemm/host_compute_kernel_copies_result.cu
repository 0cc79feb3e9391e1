// Lab 06 done on the host and laundered through kernels: the product is computed on the host from
// copy_to_host copies, uploaded into a scratch buffer of its own, and a kernel copies it into C;
// a decoy kernel reads all of A and B once. Kernels read every input byte and write every output
// byte, only API copies touch device memory, and the traffic per FMA is tiny: yet no kernel multiplied.
// On a GPU back-end the kit cannot see host copies or which bytes kernels read: the GPU grade takes
// the emulator's verdict on the same hand-in (the copy of device memory to the host) and fails
// correctness; its speed fails it too.
// defence: kernel-outputs,device-to-host
// defence[cuda]: host-work-on-gpu
// expect: lab fail
// expect[emu]: correctness fail "host"
// expect[cuda]: performance fail
// expect[cuda]: correctness fail "on the emulator"
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"

namespace {

// Reads every float of A and of B once, neighbouring threads neighbouring addresses.
__global__ void read_operands(const float* A, long long a_count, const float* B, long long b_count, float* sink) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  float s = 0.0f;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < a_count; k += stride) s += A[k];
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < b_count; k += stride) s += B[k];
  if (s == 3.0e38f) *sink = s;
}

/// C = alpha A B + beta C on the host (row-major), from host copies of the operands.
std::vector<float> product_on_host(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                   const float* C) {
  std::vector<float> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N),
      c(static_cast<std::size_t>(M) * N, 0.0f);
  gpulab::copy_to_host(a.data(), A, a.size() * sizeof(float));
  gpulab::copy_to_host(b.data(), B, b.size() * sizeof(float));
  if (beta != 0.0f) gpulab::copy_to_host(c.data(), C, c.size() * sizeof(float));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += a[static_cast<std::size_t>(i) * K + k] * b[static_cast<std::size_t>(k) * N + j];
      float& out = c[static_cast<std::size_t>(i) * N + j];
      out = beta == 0.0f ? alpha * acc : alpha * acc + beta * out;
    }
  return c;
}

__global__ void copy(const float* from, float* to, long long count) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) to[i] = from[i];
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  static gpulab::DeviceBuffer<float> sink(1);
  gpulab::launch(read_operands, 64, 256, 0, A, static_cast<long long>(M) * K, B, static_cast<long long>(K) * N,
                 sink.data());
  const std::vector<float> c = product_on_host(M, N, K, alpha, A, B, beta, C);
  static gpulab::DeviceBuffer<float> staged;
  if (staged.size() < c.size()) staged = gpulab::DeviceBuffer<float>(c.size());
  gpulab::copy_to_device(staged.data(), c.data(), c.size() * sizeof(float));
  const long long count = static_cast<long long>(c.size());
  gpulab::launch(copy, static_cast<int>((count + 255) / 256), 256, 0, staged.data(), C, count);
}
