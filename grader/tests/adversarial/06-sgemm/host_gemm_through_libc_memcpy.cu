// Lab 06 done on the host with plain memcpy on the device pointers: a decoy kernel reads A and B
// once and writes every element of C (so kernels read every input byte and wrote every output
// byte, and the traffic per multiply-add looks tiny); then libc's memcpy (never traced) copies A, B
// and C to the host, the host multiplies, and memcpy overwrites C. Before device memory was closed
// to host code, this was graded as a kernel "10x faster than cuBLAS".
// On a GPU a device pointer is no host address: a segmentation fault.
// defence: host-access
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "host code dereferenced device memory"
// expect[cuda]: correctness fail "signal 11"
#include <cstring>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"

namespace {

__global__ void decoy(const float* A, long long a_count, const float* B, long long b_count, float* C,
                      long long c_count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (long long k = first; k < a_count; k += stride) s += A[k];
  for (long long k = first; k < b_count; k += stride) s += B[k];
  for (long long k = first; k < c_count; k += stride) C[k] = C[k] + s * 0.0f;
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const long long a = static_cast<long long>(M) * K, b = static_cast<long long>(K) * N, c = static_cast<long long>(M) * N;
  decoy<<<128, 256>>>(A, a, B, b, C, c);
  gpulab::synchronize();
  void* (*volatile copy)(void*, const void*, std::size_t) = std::memcpy;  // a real libc call
  std::vector<float> ha(static_cast<std::size_t>(a)), hb(static_cast<std::size_t>(b)), hc(static_cast<std::size_t>(c));
  copy(ha.data(), A, ha.size() * sizeof(float));
  copy(hb.data(), B, hb.size() * sizeof(float));
  copy(hc.data(), C, hc.size() * sizeof(float));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += ha[static_cast<std::size_t>(i) * K + k] * hb[static_cast<std::size_t>(k) * N + j];
      float& out = hc[static_cast<std::size_t>(i) * N + j];
      out = beta == 0.0f ? alpha * acc : alpha * acc + beta * out;
    }
  copy(C, hc.data(), hc.size() * sizeof(float));
}
