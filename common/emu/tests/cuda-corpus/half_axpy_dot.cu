// y = a * x + y on __half vectors (scalar __hfma, packed __half2 __hfma2, and the * and +
// operators), then the dot product of two __half vectors accumulated in float (warp shuffles
// sized by the run-time warpSize, one atomicAdd per warp). Tolerances follow from half's 11
// significant bits: rounding is at most 2^-11 of the leading power of two.
// Covers: <cuda_fp16.h>, host and device conversions, half arithmetic, float atomicAdd.
#include <cuda_fp16.h>
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

__global__ void axpy_hfma(__half a, const __half* __restrict__ x, __half* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

__global__ void axpy_hfma2(__half a, const __half2* __restrict__ x, __half2* __restrict__ y, int n2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) y[i] = __hfma2(__half2half2(a), x[i], y[i]);
}

__global__ void axpy_operators(__half a, const __half* __restrict__ x, __half* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void dot_f32_accum(const __half* __restrict__ x, const __half* __restrict__ y, float* result, int n) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v += __half2float(x[i]) * __half2float(y[i]);
  const auto lanes = __activemask();
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(lanes, v, offset);
  if (threadIdx.x % warpSize == 0) atomicAdd(result, v);
}

int main() {
  CHECK(cudaSetDevice(0));
  const int n = (1 << 16) + 2;  // even: __half2 pairs
  const float a = 0.75f;
  std::mt19937 gen(16);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<__half> x(n), y0(n), got(n);
  std::vector<double> ref_fma(n);
  double ref_dot = 0.0, dot_scale = 0.0;
  const __half ah = __float2half(a);
  for (int i = 0; i < n; ++i) {
    x[i] = __float2half(dist(gen));
    y0[i] = __float2half(dist(gen));
    const double xd = __half2float(x[i]), yd = __half2float(y0[i]);
    ref_fma[i] = static_cast<double>(__half2float(ah)) * xd + yd;
    ref_dot += xd * yd;
    dot_scale += std::fabs(xd * yd);
  }
  const size_t bytes = n * sizeof(__half);
  __half *d_x = nullptr, *d_y = nullptr;
  float* d_dot = nullptr;
  CHECK(cudaMalloc(&d_x, bytes));
  CHECK(cudaMalloc(&d_y, bytes));
  CHECK(cudaMalloc(&d_dot, sizeof(float)));
  CHECK(cudaMemcpy(d_x, x.data(), bytes, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  int failures = 0;
  const int threads = 256;
  auto report = [&](const char* name, double err, double tol, float ms) {
    const bool ok = err <= tol;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  };

  // |y| < 1.75: one rounding is at most 2^-11 * 1 = 4.9e-4; the operators round twice.
  const char* names[] = {"half_hfma", "half2_hfma2", "half_operators"};
  const double tols[] = {1e-3, 1e-3, 2e-3};
  for (int version = 0; version < 3; ++version) {
    CHECK(cudaMemcpy(d_y, y0.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(start));
    if (version == 0) {
      axpy_hfma<<<(n + threads - 1) / threads, threads>>>(ah, d_x, d_y, n);
    } else if (version == 1) {
      const int n2 = n / 2;
      axpy_hfma2<<<(n2 + threads - 1) / threads, threads>>>(ah, reinterpret_cast<const __half2*>(d_x),
                                                             reinterpret_cast<__half2*>(d_y), n2);
    } else {
      axpy_operators<<<(n + threads - 1) / threads, threads>>>(ah, d_x, d_y, n);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), d_y, bytes, cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (int i = 0; i < n; ++i) {
      const double e = std::fabs(static_cast<double>(__half2float(got[i])) - ref_fma[i]);
      if (std::isnan(e) || e > err) err = e;
    }
    report(names[version], err, tols[version], ms);
  }
  {
    CHECK(cudaMemcpy(d_y, y0.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_dot, 0, sizeof(float)));
    CHECK(cudaEventRecord(start));
    dot_f32_accum<<<64, threads>>>(d_x, d_y, d_dot, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f, dot = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(&dot, d_dot, sizeof(float), cudaMemcpyDeviceToHost));
    // The products of two halves are exact in float; only the float sums round.
    report("half_dot_f32_accumulate", std::fabs(dot - ref_dot) / dot_scale, 1e-5, ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_y));
  CHECK(cudaFree(d_dot));
  return failures ? 1 : 0;
}
