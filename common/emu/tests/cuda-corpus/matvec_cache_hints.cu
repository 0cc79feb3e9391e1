// y = A x for a rows x cols row-major float matrix, then z = alpha * y + beta * w, with cache
// hints: one thread per row reading x through the read-only cache (__ldg); one warp per row
// streaming A (__ldcs: read once, evict first), x through __ldg, y stored with __stcs; and the
// update loading with __ldcg and __ldcs and storing with __stcg (cache in L2 only).
// Covers: __ldg, __ldcs, __ldcg, __stcs, __stcg, run-time warpSize, cudaGetDeviceProperties.
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

__global__ void matvec_thread_per_row(const float* __restrict__ A, const float* __restrict__ x,
                                      float* __restrict__ y, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0.0f;
  for (int c = 0; c < cols; ++c) acc += A[static_cast<size_t>(r) * cols + c] * __ldg(x + c);
  y[r] = acc;
}

__global__ void matvec_warp_per_row(const float* __restrict__ A, const float* __restrict__ x,
                                    float* __restrict__ y, int rows, int cols) {
  const int lane = threadIdx.x % warpSize;
  const int r = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
  if (r >= rows) return;  // the whole warp
  const float* row = A + static_cast<size_t>(r) * cols;
  float acc = 0.0f;
  for (int c = lane; c < cols; c += warpSize) acc += __ldcs(row + c) * __ldg(x + c);
  const auto lanes = __activemask();
  for (int offset = warpSize / 2; offset > 0; offset /= 2) acc += __shfl_down_sync(lanes, acc, offset);
  if (lane == 0) __stcs(y + r, acc);
}

__global__ void update_l2_only(float alpha, const float* __restrict__ y, float beta, const float* __restrict__ w,
                               float* __restrict__ z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __stcg(z + i, alpha * __ldcg(y + i) + beta * __ldcs(w + i));
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int rows = 1024, cols = 1000;
  const size_t count = static_cast<size_t>(rows) * cols;
  const float alpha = 0.5f, beta = -2.0f;
  std::mt19937 gen(123);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> A(count), x(cols), w(rows), got(rows);
  for (float& v : A) v = dist(gen);
  for (float& v : x) v = dist(gen);
  for (float& v : w) v = dist(gen);
  std::vector<double> ref(rows), scale(rows);
  for (int r = 0; r < rows; ++r) {
    double s = 0.0, a = 0.0;
    for (int c = 0; c < cols; ++c) {
      const double p = static_cast<double>(A[static_cast<size_t>(r) * cols + c]) * x[c];
      s += p;
      a += std::fabs(p);
    }
    ref[r] = s;
    scale[r] = a;
  }
  float *d_A = nullptr, *d_x = nullptr, *d_y = nullptr, *d_w = nullptr, *d_z = nullptr;
  CHECK(cudaMalloc(&d_A, count * sizeof(float)));
  CHECK(cudaMalloc(&d_x, cols * sizeof(float)));
  CHECK(cudaMalloc(&d_y, rows * sizeof(float)));
  CHECK(cudaMalloc(&d_w, rows * sizeof(float)));
  CHECK(cudaMalloc(&d_z, rows * sizeof(float)));
  CHECK(cudaMemcpy(d_A, A.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_x, x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_w, w.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  int failures = 0;
  const int threads = 256;
  const double tol = 1e-5;  // per row, relative to sum |a x| (worst case cols * eps = 6e-5 is never near)
  auto check = [&](const char* name, float ms, bool update) {
    CHECK(cudaMemcpy(got.data(), update ? d_z : d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (int r = 0; r < rows; ++r) {
      const double want = update ? alpha * ref[r] + beta * static_cast<double>(w[r]) : ref[r];
      const double denom = update ? std::fabs(alpha) * scale[r] + std::fabs(beta * w[r]) : scale[r];
      const double e = std::fabs(got[r] - want) / (denom + 1e-30);
      if (std::isnan(e) || e > err) err = e;
    }
    const bool ok = err <= tol;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  };
  float ms = 0.0f;

  CHECK(cudaMemset(d_y, 0, rows * sizeof(float)));
  CHECK(cudaEventRecord(start));
  matvec_thread_per_row<<<(rows + threads - 1) / threads, threads>>>(d_A, d_x, d_y, rows, cols);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  check("thread_per_row_ldg", ms, false);

  CHECK(cudaMemset(d_y, 0, rows * sizeof(float)));
  const int rows_per_block = threads / prop.warpSize;
  CHECK(cudaEventRecord(start));
  matvec_warp_per_row<<<(rows + rows_per_block - 1) / rows_per_block, threads>>>(d_A, d_x, d_y, rows, cols);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  check("warp_per_row_ldcs_stcs", ms, false);

  CHECK(cudaEventRecord(start));
  update_l2_only<<<(rows + threads - 1) / threads, threads>>>(alpha, d_y, beta, d_w, d_z, rows);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  check("update_ldcg_stcg", ms, true);

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_A));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_y));
  CHECK(cudaFree(d_w));
  CHECK(cudaFree(d_z));
  return failures ? 1 : 0;
}
