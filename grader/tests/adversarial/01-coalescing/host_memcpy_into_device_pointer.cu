// Work done on the host, the output written with plain memcpy from host code into the device
// pointer (the emulator's device memory is host memory): no copy API call is recorded; a decoy
// kernel reads the whole matrix.
// On a GPU back-end the GPU itself stops it (an illegal address ends the lab process).
// defence: kernel-outputs,device-to-host,host-access
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "host code wrote the output"
// expect[cuda]: correctness fail "signal 11"
#include <cstring>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

namespace {

__global__ void warm_up(const float* m, int* flag, long long count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  float s = 0.0f;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += stride) s += m[k];
  if (s != s) *flag = 1;  // NaN in the input: never for the grader's matrices
}

std::vector<float> sums_on_host(const float* d_m, int n) {
  std::vector<float> h(static_cast<std::size_t>(n) * n), s(static_cast<std::size_t>(n), 0.0f);
  gpulab::copy_to_host(h.data(), d_m, h.size() * sizeof(float));
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) s[static_cast<std::size_t>(r)] += h[static_cast<std::size_t>(r) * n + c];
  return s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  static gpulab::DeviceBuffer<int> flag(1);
  gpulab::launch(warm_up, 16, 256, 0, m, flag.data(), static_cast<long long>(n) * n);
  const std::vector<float> s = sums_on_host(m, n);
  void* (*volatile copy)(void*, const void*, std::size_t) = std::memcpy;  // a real libc call, never inlined
  copy(sums, s.data(), s.size() * sizeof(float));
}
