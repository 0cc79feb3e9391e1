// Lab 04 done on the host through __device__ variables, which on the emulator are host globals:
// a kernel copies x into a __device__ array (every element of x read by kernels), host code waits
// for it, adds the array up directly and stores the sum into a __device__ variable, and a
// one-thread kernel copies that into *result. No copy API moves anything to or from the host and
// kernels wrote every output byte. On a GPU, host code that names a __device__ variable reaches
// only a host copy of it: the sum is of zeros.
// defence: host-access
// defence[cuda]: host-access,host-work-on-gpu
// expect: lab fail
// expect[emu]: correctness fail "host code dereferenced device memory"
// expect[cuda]: correctness fail
#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "reduce.hpp"

namespace {

constexpr int kCapacity = 4194320;  // the emulator's largest n, rounded up to a float4
__device__ float g_copy[kCapacity];
__device__ float g_sum;

__global__ void copy_x(const float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) g_copy[i] = x[i];
}

__global__ void write_sum(float* result) { *result = g_sum; }

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  copy_x<<<256, 256>>>(x, n);
  gpulab::synchronize();
  double sum = 0.0;
  for (int i = 0; i < n && i < kCapacity; ++i) sum += g_copy[i];
  g_sum = static_cast<float>(sum);
  write_sum<<<1, 1>>>(result);
}
