// Lab 04 on the host through memory both sides reach: a kernel copies x into pinned host memory
// (cudaMallocHost; on a GPU with unified addressing kernels may write it), the host adds it up
// and a one-thread kernel stores the sum. No device-to-host copy, no host access of device memory:
// the data left through the kernel itself. A lab function has no use for host memory the device
// can reach, so the symbol rules refuse the API.
// defence: symbols
// expect: lab fail
// expect: correctness fail "no memory shared by host and device"
#include <cuda_runtime.h>

#include "reduce.hpp"

namespace {

__global__ void copy_out(const float* x, int n, float* host_visible) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) host_visible[i] = x[i];
}

__global__ void store(float* result, float value) { *result = value; }

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  float* pinned = nullptr;
  cudaMallocHost(&pinned, static_cast<std::size_t>(n) * sizeof(float));
  copy_out<<<64, 256>>>(x, n, pinned);
  cudaDeviceSynchronize();
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += pinned[i];
  store<<<1, 1>>>(result, static_cast<float>(sum));
  cudaFreeHost(pinned);
}
