// Work done on the host, laundered through kernels: the matrix is copied to the host and summed
// there, the sums are uploaded into a scratch buffer of its own, and a kernel copies them into the
// output; a decoy kernel reads the whole matrix coalesced. Kernels read every input byte and write
// every output byte, and only API copies touch device memory, yet no kernel computed anything.
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
#include "row_sum.hpp"

namespace {

__global__ void read_all(const float* m, float* sink, long long count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  float s = 0.0f;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += stride) s += m[k];
  if (s == 3.0e38f) *sink = s;
}

__global__ void copy(const float* from, float* to, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) to[i] = from[i];
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const std::size_t count = static_cast<std::size_t>(n) * n;
  gpulab::DeviceBuffer<float> sink(1);
  gpulab::launch(read_all, 64, 256, 0, m, sink.data(), static_cast<long long>(count));
  std::vector<float> h(count), s(static_cast<std::size_t>(n), 0.0f);
  gpulab::copy_to_host(h.data(), m, count * sizeof(float));
  for (std::size_t k = 0; k < count; ++k) s[k / static_cast<std::size_t>(n)] += h[k];
  static gpulab::DeviceBuffer<float> staged;
  if (staged.size() < s.size()) staged = gpulab::DeviceBuffer<float>(s.size());
  gpulab::copy_to_device(staged.data(), s.data(), s.size() * sizeof(float));
  gpulab::launch(copy, (n + 255) / 256, 256, 0, staged.data(), sums, n);
}
