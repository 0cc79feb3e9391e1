// Work done on the host, CUDA style: cudaMemcpy the matrix to the host, sum there, cudaMemcpy the
// sums into the output; a decoy <<<>>>-style kernel reads the whole matrix coalesced.
// On a GPU back-end the kit cannot see host copies or which bytes kernels read: the GPU grade takes
// the emulator's verdict on the same hand-in (the copy of device memory to the host) and fails
// correctness; its speed fails it too.
// defence: kernel-outputs,device-to-host
// defence[cuda]: host-work-on-gpu
// expect: lab fail
// expect[emu]: correctness fail "must be written by kernels"
// expect[cuda]: performance fail
// expect[cuda]: correctness fail "on the emulator"
#include <vector>

#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

__global__ void touch_matrix(const float* m, float* sink, long long count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  float s = 0.0f;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += stride) s += m[k];
  if (s == -1.0e30f) *sink = s;
}

void row_sum(const float* m, float* sums, int n) {
  const long long count = static_cast<long long>(n) * n;
  float* sink = nullptr;
  cudaMalloc(&sink, sizeof(float));
  gpulab::launch(touch_matrix, 32, 256, 0, m, sink, count);
  cudaDeviceSynchronize();
  std::vector<float> h(static_cast<std::size_t>(count)), s(static_cast<std::size_t>(n), 0.0f);
  cudaMemcpy(h.data(), m, h.size() * sizeof(float), cudaMemcpyDeviceToHost);
  for (long long k = 0; k < count; ++k) s[static_cast<std::size_t>(k / n)] += h[static_cast<std::size_t>(k)];
  cudaMemcpy(sums, s.data(), s.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaFree(sink);
}
