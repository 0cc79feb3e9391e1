// Lab 04 on the host, with the asynchronous copy API on a stream of its own: cudaMemcpyAsync
// brings x back, cudaStreamSynchronize waits, the host adds it up, and a kernel on that stream
// writes the sum, after a decoy kernel that reads every element.
// defence: device-to-host
// defence[cuda]: device-to-host,host-work-on-gpu
// expect: lab fail
// expect[emu]: correctness fail "cudaMemcpyAsync copied"
// expect[cuda]: correctness fail "on the emulator"
#include <cuda_runtime.h>

#include <vector>

#include "reduce.hpp"

namespace {

__global__ void touch(const float* x, int n, float* result) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
  if (s == 1.0e38f) *result = s;
}

__global__ void store(float* result, double value) { *result = static_cast<float>(value); }

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  static cudaStream_t stream = [] {
    cudaStream_t s;
    cudaStreamCreate(&s);
    return s;
  }();
  touch<<<32, 256, 0, stream>>>(x, n, result);
  std::vector<float> host(static_cast<std::size_t>(n));
  cudaMemcpyAsync(host.data(), x, host.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  double sum = 0.0;
  for (float v : host) sum += v;
  store<<<1, 1, 0, stream>>>(result, sum);
}
