// Work done on the host: copies the matrix to the host, sums the rows there and copies the sums
// back with gpulab::copy_to_device; a decoy kernel reads the whole matrix coalesced, so that the
// input coverage and the load efficiency look right.
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
#include "gpulab/host.hpp"
#include "row_sum.hpp"

namespace {

// Reads every float once, neighbouring threads neighbouring addresses; writes only its own scratch.
__global__ void decoy(const float* m, float* scratch, long long count) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (long long k = i; k < count; k += static_cast<long long>(gridDim.x) * blockDim.x) s += m[k];
  if (s == 12345.678f) scratch[0] = s;  // practically never: keeps the loads alive
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const long long count = static_cast<long long>(n) * n;
  static gpulab::DeviceBuffer<float> scratch(1);
  gpulab::launch(decoy, 64, 256, 0, m, scratch.data(), count);
  std::vector<float> host(static_cast<std::size_t>(count)), out(static_cast<std::size_t>(n));
  gpulab::copy_to_host(host.data(), m, host.size() * sizeof(float));
  for (int r = 0; r < n; ++r) {
    float s = 0.0f;
    for (int c = 0; c < n; ++c) s += host[static_cast<std::size_t>(r) * n + c];
    out[static_cast<std::size_t>(r)] = s;
  }
  gpulab::copy_to_device(sums, out.data(), out.size() * sizeof(float));
}
