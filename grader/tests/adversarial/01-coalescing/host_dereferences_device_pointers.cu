// Work done on the host by dereferencing the device pointers in a loop (legal on the emulator, an
// illegal address on a GPU); a decoy kernel reads the whole matrix coalesced.
// On a GPU back-end the GPU itself stops it (an illegal address ends the lab process).
// defence: host-access,kernel-outputs
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "host code dereferenced device memory"
// expect[cuda]: correctness fail "signal 11"
#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

namespace {

__global__ void prefetch(const float* m, float* sink, long long count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  float s = 0.0f;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += stride) s += m[k];
  if (s == 1.0e38f) *sink = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  static gpulab::DeviceBuffer<float> sink(1);
  gpulab::launch(prefetch, 32, 256, 0, m, sink.data(), static_cast<long long>(n) * n);
  for (int r = 0; r < n; ++r) {
    float s = 0.0f;
    for (int c = 0; c < n; ++c) s += m[static_cast<long long>(r) * n + c];
    sums[r] = s;
  }
}
