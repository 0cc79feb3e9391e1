// Lab 04 done on the host through plain memcpy on the device pointers (on the emulator device
// memory was host memory): a decoy kernel reads all of x and writes *result, so kernels read every
// input byte and wrote every output byte; then libc's memcpy (never traced) reads x, the host adds
// it up and memcpy overwrites *result. "Changed bytes <= bytes written by kernels" holds.
// On a GPU a device pointer is no host address: the lab process dies with a segmentation fault.
// defence: host-access
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "host code dereferenced device memory"
// expect[cuda]: correctness fail "signal 11"
#include <cstring>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "reduce.hpp"

namespace {

__global__ void read_all_write_result(const float* x, int n, float* result) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
  if (blockIdx.x == 0 && threadIdx.x == 0) *result = s;  // a partial sum: overwritten below
}

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  read_all_write_result<<<64, 256>>>(x, n, result);
  gpulab::synchronize();
  void* (*volatile copy)(void*, const void*, std::size_t) = std::memcpy;  // a real libc call
  std::vector<float> host(static_cast<std::size_t>(n));
  copy(host.data(), x, host.size() * sizeof(float));
  double sum = 0.0;
  for (float v : host) sum += v;
  const float s = static_cast<float>(sum);
  copy(result, &s, sizeof s);
}
