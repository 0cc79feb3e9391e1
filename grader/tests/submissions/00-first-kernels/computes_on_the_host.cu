// scale_add copies x and y to the host, computes there, and copies y back: right, but no kernel
// does the work, and the copies back to the host wait for the device (the contract: launch only).
// The emulator sees the copies during the call.
// expect: lab fail
// expect[emu]: correctness fail "during the call: the function must only launch work"
// expect[emu]: correctness fail "must be computed by kernels on the device"
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "first_kernels.hpp"

__global__ void strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

void scale_add(int n, float a, const float* x, float* y) {
  std::vector<float> hx(static_cast<std::size_t>(n)), hy(static_cast<std::size_t>(n));
  gpulab::copy_to_host(hx.data(), x, hx.size() * sizeof(float));
  gpulab::copy_to_host(hy.data(), y, hy.size() * sizeof(float));
  for (std::size_t i = 0; i < hy.size(); ++i) hy[i] = a * hx[i] + hy[i];
  gpulab::copy_to_device(y, hy.data(), hy.size() * sizeof(float));
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(strided, blocks, threads, 0, n, a, x, y);
}
