// Lab 06 done on the host, with libc's memcpy straight on the device pointers (on the emulator the
// device's memory is the host's, and libc's copies are not traced): C is read and the product
// computed on the host, then a decoy kernel reads every float of A and B and writes every float of
// C, and the host's result is copied over C. Kernels read all the inputs and wrote all the
// output, so every rule on who wrote what holds; but the kernels the emulator counted did almost
// no arithmetic, and the performance model, given those counts, predicts an SGEMM far faster than
// the GPU's FP32 peak (the issue's "10.3x cuBLAS"). A prediction beyond the modelled GPU's physical
// ceiling is refused as implausible. (Host access to device memory is a defence of its own where
// the emulator maps device memory away from host code.)
// defence: prediction-ceiling
// needs: nvcc
// expect[emu]: lab fail
// expect[emu]: performance fail "the prediction is implausible"
#include <cstring>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"

namespace {

// Reads every float of A and of B once and writes every float of C, neighbouring threads
// neighbouring addresses.
__global__ void touch_everything(const float* A, long long a_count, const float* B, long long b_count, float* C,
                                 long long c_count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (long long k = first; k < a_count; k += stride) s += A[k];
  for (long long k = first; k < b_count; k += stride) s += B[k];
  for (long long k = first; k < c_count; k += stride) C[k] = s;
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const std::size_t a = static_cast<std::size_t>(M) * K, b = static_cast<std::size_t>(K) * N,
                    c = static_cast<std::size_t>(M) * N;
  std::vector<float> ha(a), hb(b), hc(c, 0.0f);
  gpulab::synchronize();
  std::memcpy(ha.data(), A, a * sizeof(float));
  std::memcpy(hb.data(), B, b * sizeof(float));
  if (beta != 0.0f) std::memcpy(hc.data(), C, c * sizeof(float));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) acc += static_cast<double>(ha[static_cast<std::size_t>(i) * K + k]) * hb[static_cast<std::size_t>(k) * N + j];
      float& out = hc[static_cast<std::size_t>(i) * N + j];
      out = static_cast<float>(alpha * acc + (beta != 0.0f ? beta * out : 0.0));
    }
  gpulab::launch(touch_everything, 264, 256, 0, A, static_cast<long long>(a), B, static_cast<long long>(b), C,
                 static_cast<long long>(c));
  gpulab::synchronize();
  std::memcpy(C, hc.data(), c * sizeof(float));
}
