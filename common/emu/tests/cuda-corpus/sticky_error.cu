// A sticky device fault, kept last and on its own: a correct kernel first (its result checked),
// then a kernel that loads float4 values from an address 4 bytes past a 16-byte boundary. On an
// NVIDIA GPU that is cudaErrorMisalignedAddress, and the context is lost: cudaDeviceSynchronize,
// cudaMemcpy, cudaGetLastError and a second cudaDeviceSynchronize must all report an error.
// Prints "VERSION sticky_error PASS" when the error is reported and stays reported.
// Covers: error handling (cudaGetErrorName/String), sticky errors, asynchronous fault reporting.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(err_));                                               \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

__global__ void add_one(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}

// base + 1 is 4 bytes past a 16-byte boundary: every float4 load from it is misaligned.
__global__ void misaligned_float4(const float* base, float* out, int n4) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    const float4 v = reinterpret_cast<const float4*>(base + 1)[i];
    out[i] = v.x + v.y + v.z + v.w;
  }
}

int main() {
  CHECK(cudaSetDevice(0));
  const int n = 4096, threads = 256;
  std::vector<float> h(n), got(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i % 97);
  float *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_in, (n + 4) * sizeof(float)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  add_one<<<(n + threads - 1) / threads, threads>>>(d_in, d_out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += got[i] != h[i] + 1.0f;
  std::printf("VERSION before_fault %s %d\n", wrong == 0 ? "PASS" : "FAIL", wrong);

  // The fault. The launch itself is valid; the error comes when the kernel runs.
  misaligned_float4<<<(n / 4 + threads - 1) / threads, threads>>>(d_in, d_out, n / 4);
  const cudaError_t launch = cudaGetLastError();  // success, or already the fault
  const cudaError_t sync = cudaDeviceSynchronize();
  const cudaError_t copy = cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
  const cudaError_t last = cudaGetLastError();
  const cudaError_t again = cudaDeviceSynchronize();
  std::printf("  launch %s, synchronize %s, memcpy %s, last error %s, synchronize again %s\n",
              cudaGetErrorName(launch), cudaGetErrorName(sync), cudaGetErrorName(copy), cudaGetErrorName(last),
              cudaGetErrorName(again));
  std::printf("  %s\n", cudaGetErrorString(sync));
  const bool reported = sync != cudaSuccess && copy != cudaSuccess && last != cudaSuccess && again != cudaSuccess;
  std::printf("VERSION sticky_error %s %s\n", reported ? "PASS" : "FAIL", cudaGetErrorName(sync));
  // The context is gone: nothing more to free or check. A failure of the first kernel fails too.
  return reported && wrong == 0 ? 0 : 1;
}
