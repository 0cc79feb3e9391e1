// solutions/06-sgemm/bench/bench_common.hpp - what the SGEMM benchmark and the tuning program
// share: random device matrices, cuBLAS as the row-major reference, GPU-event timing with the
// L2 cache flushed before every timed run, and the relative error of a result.
//
// CUDA only (it calls cuBLAS); built by solutions/06-sgemm/CMakeLists.txt for the cuda
// back-end. Kernels here are launched with gpulab::launch like every kernel of the project.
#pragma once

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

namespace sgemm_bench {

inline void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cuBLAS error %d in %s\n", static_cast<int>(s), what);
    std::exit(2);
  }
}

// ---- random inputs -------------------------------------------------------------------------
/// Uniform values in [-1, 1) from a hash of (seed, index): fast to generate on the device for
/// 8192^2 matrices, different for every seed, never all zeros.
__global__ void fill_uniform_kernel(float* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull;
    x ^= static_cast<unsigned long long>(seed) << 32;
    x ^= x >> 31;  // splitmix64 finaliser
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    p[i] = static_cast<float>(x >> 40) * (1.0f / 8388608.0f) - 1.0f;  // 24 bits -> [-1, 1)
  }
}

inline void fill_uniform(float* p, size_t n, unsigned seed) {
  gpulab::launch(fill_uniform_kernel, 1024, 256, 0, p, n, seed);
}

// ---- relative error ------------------------------------------------------------------------
/// sums[0] += sum (got - ref)^2, sums[1] += sum ref^2, sums[2] += count of non-finite got.
__global__ void error_sums_kernel(const float* got, const float* ref, size_t n, double* sums) {
  __shared__ double part[3][256];
  double d2 = 0, r2 = 0, bad = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const double g = got[i], r = ref[i];
    if (!isfinite(got[i])) bad += 1;
    else d2 += (g - r) * (g - r);
    r2 += r * r;
  }
  const int t = threadIdx.x;
  part[0][t] = d2, part[1][t] = r2, part[2][t] = bad;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {  // tree over the block (blockDim.x == 256)
    if (t < s)
      for (int q = 0; q < 3; ++q) part[q][t] += part[q][t + s];
    __syncthreads();
  }
  if (t == 0)
    for (int q = 0; q < 3; ++q) atomicAdd(&sums[q], part[q][0]);
}

struct ErrorReport {
  double relative = 0;  ///< ||got - ref||_F / ||ref||_F
  long non_finite = 0;
  bool ok(double tolerance) const { return non_finite == 0 && relative <= tolerance; }
};

inline ErrorReport relative_error(const float* got, const float* ref, size_t n) {
  gpulab::DeviceBuffer<double> sums(3);
  GPULAB_CHECK(cudaMemset(sums.data(), 0, 3 * sizeof(double)));
  gpulab::launch(error_sums_kernel, 512, 256, 0, got, ref, n, sums.data());
  const std::vector<double> h = sums.download();
  return {std::sqrt(h[0] / std::max(h[1], 1e-300)), static_cast<long>(h[2])};
}

// ---- cuBLAS, row-major ---------------------------------------------------------------------
/// cuBLAS is column-major. A row-major M x N matrix is the column-major N x M matrix of its
/// transpose, and C^T = B^T A^T, so the row-major C = A B is cuBLAS's column-major
/// C^T (N x M) = B^T (N x K) * A^T (K x M): pass B first, swap M and N, leading dims N, K, N.
/// FP32 math (CUBLAS_COMPUTE_32F): the handle stays in CUBLAS_DEFAULT_MATH, in which
/// cublasSgemm does not use TF32 (that takes CUBLAS_TF32_TENSOR_OP_MATH); make_cublas() also
/// sets NVIDIA_TF32_OVERRIDE=0, which rules TF32 out whatever else asks for it.
inline void cublas_sgemm_row_major(cublasHandle_t h, int M, int N, int K, float alpha,
                                   const float* A, const float* B, float beta, float* C) {
  check_cublas(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N),
               "cublasSgemm");
}

inline cublasHandle_t make_cublas() {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);  // POSIX; before the handle reads its settings
  cublasHandle_t h;
  check_cublas(cublasCreate(&h), "cublasCreate");
  check_cublas(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  return h;
}

// ---- timing --------------------------------------------------------------------------------
/// Evicts the L2 cache by writing a buffer twice its size, so that every timed run starts
/// with its inputs in device memory, as they would be in an application.
class L2Flusher {
 public:
  L2Flusher() : bytes_(std::max<size_t>(2 * gpulab::device_info().l2_bytes, 64u << 20)),
                buffer_(bytes_) {}
  void flush() { GPULAB_CHECK(cudaMemsetAsync(buffer_.data(), flips_++ & 1, bytes_)); }

 private:
  size_t bytes_;
  gpulab::DeviceBuffer<unsigned char> buffer_;
  int flips_ = 0;
};

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  int runs = 0;
};

/// Median time of `fn` (one launch sequence, asynchronous) over timed runs, each preceded by
/// an L2 flush outside the timed region. One warm-up run, one run to estimate the duration,
/// then enough runs to fill `budget_ms` (between min_runs and max_runs).
inline Timing time_gpu(const std::function<void()>& fn, L2Flusher& flusher, double budget_ms,
                       int min_runs, int max_runs) {
  auto one_run = [&](gpulab::Event& start, gpulab::Event& stop) {
    flusher.flush();
    start.record();
    fn();
    stop.record();
  };
  gpulab::Event s0, e0;
  fn();  // warm-up: module load, cuBLAS heuristics, clocks up
  one_run(s0, e0);
  const double estimate = e0.elapsed_ms_since(s0);
  const int runs = std::clamp(static_cast<int>(budget_ms / std::max(estimate, 1e-3)), min_runs,
                              max_runs);
  std::vector<std::unique_ptr<gpulab::Event>> starts, stops;
  for (int r = 0; r < runs; ++r) {
    starts.push_back(std::make_unique<gpulab::Event>());
    stops.push_back(std::make_unique<gpulab::Event>());
    one_run(*starts.back(), *stops.back());
  }
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) ms.push_back(stops[r]->elapsed_ms_since(*starts[r]));
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.runs = runs;
  t.min_ms = ms.front();
  t.median_ms = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
  return t;
}

inline double tflops(int M, int N, int K, double ms) {
  return 2.0 * M * N * static_cast<double>(K) / (ms * 1e-3) / 1e12;
}

/// Problem buffers for one size: inputs A, B (random), the output C and cuBLAS's Cref.
struct Problem {
  int M, N, K;
  gpulab::DeviceBuffer<float> A, B, C, Cref;
  Problem(int m, int n, int k, unsigned seed)
      : M(m), N(n), K(k), A(static_cast<size_t>(m) * k), B(static_cast<size_t>(k) * n),
        C(static_cast<size_t>(m) * n), Cref(static_cast<size_t>(m) * n) {
    fill_uniform(A.data(), A.size(), seed);
    fill_uniform(B.data(), B.size(), seed + 1);
  }
};

}  // namespace sgemm_bench
