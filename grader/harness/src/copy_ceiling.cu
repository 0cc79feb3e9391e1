// The copy kernel whose bandwidth is the ceiling of memory-bound labs: 16-byte loads and
// stores, coalesced, a grid-stride loop over a grid that fills the device.
#include "gpulab/gpu.hpp"
#include "gpulab/grade/timing.hpp"
#include "gpulab/host.hpp"

namespace {
__global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride)
    out[i] = in[i];
}
}  // namespace

namespace gpulab::grade {
double copy_bandwidth(std::size_t bytes_read_and_written) {
  const long long n = static_cast<long long>(bytes_read_and_written / 2 / sizeof(float4));
  DeviceBuffer<float4> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  fill_bytes(in.data(), 0x3C, in.bytes());  // a float pattern, not zeros
  const int blocks = device_info().multiprocessors * 8;
  const Timing t = time_device("copy_ceiling", [&](int) {
    launch(copy_float4, blocks, 256, 0, in.data(), out.data(), n);
  });
  return 2.0 * static_cast<double>(n) * sizeof(float4) / (t.median_ms * 1e-3);
}
}  // namespace gpulab::grade
