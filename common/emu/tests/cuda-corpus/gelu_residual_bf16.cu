// y = x + gelu(x * w + b) on bfloat16 tensors (tanh form of GELU), three ways: bf16 storage with
// float arithmetic, bf16 arithmetic (__hfma, operator+) with GELU in float, and packed pairs
// (__nv_bfloat162, __hfma2, __hadd2). Tolerances follow from bf16's 8 significant bits (one unit
// in the last place is 2^-7 of the leading power of two, rounding is half of it).
// Covers: <cuda_bf16.h>, host and device conversions, bf16 arithmetic, vector types.
#include <cuda_bf16.h>
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

__device__ float gelu(float x) {
  const float k = 0.7978845608f;  // sqrt(2 / pi)
  return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_residual_f32_math(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                       const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xf = __bfloat162float(x[i]);
  const float t = xf * __bfloat162float(w[i]) + __bfloat162float(b[i]);
  y[i] = __float2bfloat16(xf + gelu(t));
}

__global__ void gelu_residual_bf16_math(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                        const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __nv_bfloat16 t = __hfma(x[i], w[i], b[i]);
  const __nv_bfloat16 g = __float2bfloat16(gelu(__bfloat162float(t)));
  y[i] = x[i] + g;
}

// n2 pairs.
__global__ void gelu_residual_bf162(const __nv_bfloat162* __restrict__ x, const __nv_bfloat162* __restrict__ w,
                                    const __nv_bfloat162* __restrict__ b, __nv_bfloat162* __restrict__ y, int n2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n2) return;
  const __nv_bfloat162 t = __hfma2(x[i], w[i], b[i]);
  const float2 tf = __bfloat1622float2(t);
  const __nv_bfloat162 g = __floats2bfloat162_rn(gelu(tf.x), gelu(tf.y));
  y[i] = __hadd2(x[i], g);
}

int main() {
  CHECK(cudaSetDevice(0));
  const int n = 1 << 16;
  std::mt19937 gen(8);
  std::uniform_real_distribution<float> dx(-3.0f, 3.0f), dw(-1.0f, 1.0f);
  std::vector<__nv_bfloat16> x(n), w(n), b(n), got(n);
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) {
    x[i] = __float2bfloat16(dx(gen));
    w[i] = __float2bfloat16(dw(gen));
    b[i] = __float2bfloat16(dw(gen));
    const double xd = __bfloat162float(x[i]);
    const double t = xd * __bfloat162float(w[i]) + __bfloat162float(b[i]);
    ref[i] = xd + 0.5 * t * (1.0 + std::tanh(0.7978845608028654 * (t + 0.044715 * t * t * t)));
  }
  const size_t bytes = n * sizeof(__nv_bfloat16);
  __nv_bfloat16 *d_x = nullptr, *d_w = nullptr, *d_b = nullptr, *d_y = nullptr;
  CHECK(cudaMalloc(&d_x, bytes));
  CHECK(cudaMalloc(&d_w, bytes));
  CHECK(cudaMalloc(&d_b, bytes));
  CHECK(cudaMalloc(&d_y, bytes));
  CHECK(cudaMemcpy(d_x, x.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_w, w.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  int failures = 0;
  const int threads = 256;
  // |y - ref| / max(1, |ref|). Float math rounds once: at most half a unit, 2^-8 of the value
  // (0.0039). bf16 math also rounds the fma and the GELU, values up to about 4 before x and
  // GELU(t) may cancel: about 0.04 in the worst case.
  const char* names[] = {"bf16_storage_f32_math", "bf16_math", "bf16x2_math"};
  const double tols[] = {8e-3, 6e-2, 6e-2};
  for (int version = 0; version < 3; ++version) {
    CHECK(cudaMemset(d_y, 0, bytes));
    CHECK(cudaEventRecord(start));
    if (version == 0) {
      gelu_residual_f32_math<<<(n + threads - 1) / threads, threads>>>(d_x, d_w, d_b, d_y, n);
    } else if (version == 1) {
      gelu_residual_bf16_math<<<(n + threads - 1) / threads, threads>>>(d_x, d_w, d_b, d_y, n);
    } else {
      const int n2 = n / 2;
      gelu_residual_bf162<<<(n2 + threads - 1) / threads, threads>>>(
          reinterpret_cast<const __nv_bfloat162*>(d_x), reinterpret_cast<const __nv_bfloat162*>(d_w),
          reinterpret_cast<const __nv_bfloat162*>(d_b), reinterpret_cast<__nv_bfloat162*>(d_y), n2);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), d_y, bytes, cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (int i = 0; i < n; ++i) {
      const double e = std::fabs(static_cast<double>(__bfloat162float(got[i])) - ref[i]) / std::fmax(1.0, std::fabs(ref[i]));
      if (std::isnan(e) || e > err) err = e;
    }
    const bool ok = err <= tols[version];
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", names[version], ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", names[version], ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_w));
  CHECK(cudaFree(d_b));
  CHECK(cudaFree(d_y));
  return failures ? 1 : 0;
}
