// A 1-D stencil of radius R (weights 1 / (1 + |k|), zero outside the array), each block staging
// its chunk plus halo in dynamic shared memory: small chunks (about 1 KiB of shared memory), then
// chunks of 16384 outputs (64 KiB + halo), which need cudaFuncSetAttribute to go past the default
// 48 KiB. The program also checks that the big launch fails before the attribute is set, and that
// this launch error is not sticky.
// Covers: extern __shared__, > 48 KiB dynamic shared memory, cudaFuncSetAttribute,
// sharedMemPerBlockOptin, a template kernel, a non-sticky launch error.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
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

constexpr int kRadius = 8;

// Shared memory: (chunk + 2 R) floats.
template <int R>
__global__ void stencil_chunk(const float* __restrict__ in, float* __restrict__ out, int n, int chunk) {
  extern __shared__ float buf[];
  const int base = blockIdx.x * chunk;
  for (int i = threadIdx.x; i < chunk + 2 * R; i += blockDim.x) {
    const int g = base - R + i;
    buf[i] = (g >= 0 && g < n) ? in[g] : 0.0f;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < chunk && base + i < n; i += blockDim.x) {
    float acc = 0.0f;
#pragma unroll
    for (int k = -R; k <= R; ++k) acc += buf[i + R + k] / static_cast<float>(1 + (k < 0 ? -k : k));
    out[base + i] = acc;
  }
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("shared memory per block: %zu bytes, opt-in %zu bytes\n", prop.sharedMemPerBlock,
              prop.sharedMemPerBlockOptin);
  const int n = (1 << 17) + 5;
  std::vector<float> h(n), got(n);
  std::vector<double> ref(n), scale(n);
  std::mt19937 gen(31337);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : h) v = dist(gen);
  for (int i = 0; i < n; ++i) {
    double s = 0.0, a = 0.0;
    for (int k = -kRadius; k <= kRadius; ++k) {
      const int g = i + k;
      const double x = (g >= 0 && g < n) ? h[g] : 0.0;
      s += x / (1 + std::abs(k));
      a += std::fabs(x) / (1 + std::abs(k));
    }
    ref[i] = s;
    scale[i] = a;
  }
  float *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  int failures = 0;
  const double tol = 1e-5;  // per element, relative to sum |w x|
  const int threads = 256;

  auto run_and_check = [&](const char* name, int chunk) {
    const size_t shared = (chunk + 2 * kRadius) * sizeof(float);
    CHECK(cudaMemset(d_out, 0, n * sizeof(float)));
    CHECK(cudaEventRecord(start));
    stencil_chunk<kRadius><<<(n + chunk - 1) / chunk, threads, shared>>>(d_in, d_out, n, chunk);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (int i = 0; i < n; ++i) {
      const double e = std::fabs(got[i] - ref[i]) / (scale[i] + 1e-30);
      if (std::isnan(e) || e > err) err = e;
    }
    const bool ok = err <= tol;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms (%zu bytes of shared memory)\n", name, ms, shared);
  };

  run_and_check("small_chunk_shared", 256);

  const int big_chunk = 16384;
  const size_t big_shared = (big_chunk + 2 * kRadius) * sizeof(float);  // 65600 bytes
  {
    // Without the attribute the launch must be refused, and the error must clear.
    stencil_chunk<kRadius><<<(n + big_chunk - 1) / big_chunk, threads, big_shared>>>(d_in, d_out, n, big_chunk);
    const cudaError_t launch = cudaGetLastError();
    const cudaError_t after = cudaGetLastError();
    const cudaError_t sync = cudaDeviceSynchronize();
    const bool ok = launch != cudaSuccess && after == cudaSuccess && sync == cudaSuccess;
    failures += !ok;
    std::printf("VERSION big_shared_refused_without_attribute %s %s\n", ok ? "PASS" : "FAIL",
                cudaGetErrorName(launch));
  }
  if (prop.sharedMemPerBlockOptin < big_shared) {
    ++failures;
    std::printf("VERSION big_chunk_shared_optin FAIL opt-in limit %zu < %zu\n", prop.sharedMemPerBlockOptin,
                big_shared);
  } else {
    CHECK(cudaFuncSetAttribute(stencil_chunk<kRadius>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(big_shared)));
    run_and_check("big_chunk_shared_optin", big_chunk);
  }

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  return failures ? 1 : 0;
}
