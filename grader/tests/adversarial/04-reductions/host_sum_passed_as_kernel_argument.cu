// Lab 04 done on the host and laundered through kernels: a decoy kernel reads every element of x
// (the coverage rule passes), the host copies x back with the copy API, adds it up, and a
// one-thread kernel writes the host's sum into *result, passed as a kernel argument. Kernels read
// every input byte and wrote every output byte; only the device-to-host copy gives it away.
// On a GPU the same file runs, and its GPU grade takes the emulator's verdict on where the work
// happened (the GPU's own run cannot see host code).
// defence: device-to-host
// defence[cuda]: device-to-host,host-work-on-gpu
// expect: lab fail
// expect[emu]: correctness fail "copied"
// expect[cuda]: correctness fail "on the emulator"
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "reduce.hpp"

namespace {

__global__ void touch_every_element(const float* x, int n, float* sink) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
  if (s == 1.0e38f) *sink = s;  // never true for the grader's inputs
}

__global__ void write_value(float* result, float value) { *result = value; }

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  static gpulab::DeviceBuffer<float> sink(1);
  touch_every_element<<<64, 256>>>(x, n, sink.data());
  std::vector<float> host(static_cast<std::size_t>(n));
  gpulab::copy_to_host(host.data(), x, host.size() * sizeof(float));
  double sum = 0.0;
  for (float v : host) sum += v;
  write_value<<<1, 1>>>(result, static_cast<float>(sum));
}
