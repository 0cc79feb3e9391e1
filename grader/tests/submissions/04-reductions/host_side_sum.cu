// Copies x to the host, adds it up there in double, and copies the sum back: right, but not a
// GPU reduction (and it synchronises). The emulator sees the host copy into the output.
// expect: lab fail
// expect[emu]: correctness fail "must be computed by kernels on the device"
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "reduce.hpp"

void reduce_sum(const float* x, int n, float* result) {
  std::vector<float> h(static_cast<std::size_t>(n));
  gpulab::copy_to_host(h.data(), x, h.size() * sizeof(float));
  double s = 0;
  for (float v : h) s += v;
  const float f = static_cast<float>(s);
  gpulab::copy_to_device(result, &f, sizeof f);
}
