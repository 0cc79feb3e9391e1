// Layer normalisation of each row (mean, variance, then gamma * (x - mean) / sqrt(var + eps) +
// beta), two ways: one block per row reducing with cg::reduce over tiles of 32, and one warp
// per row reducing with shuffles sized by the run-time warpSize. gamma and beta go through the
// read-only cache (__ldg).
// Covers: cooperative groups (this_thread_block, tiled_partition<32>, cg::reduce), __ldg,
// a template kernel (block size), run-time warpSize.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(err_));                                               \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

constexpr float kEps = 1e-5f;

// Sum over the block; every thread gets it.
template <int BLOCK>
__device__ float block_sum(cg::thread_block& block, float v) {
  __shared__ float tile_sums[BLOCK / 32];
  auto tile = cg::tiled_partition<32>(block);
  v = cg::reduce(tile, v, cg::plus<float>());
  block.sync();  // tile_sums may still be read by a previous call
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  block.sync();
  float total = 0.0f;
  for (int t = 0; t < BLOCK / 32; ++t) total += tile_sums[t];
  return total;
}

template <int BLOCK>
__global__ void layernorm_block_cg(const float* __restrict__ x, const float* __restrict__ gamma,
                                   const float* __restrict__ beta, float* __restrict__ y, int cols) {
  cg::thread_block block = cg::this_thread_block();
  const float* in = x + static_cast<size_t>(blockIdx.x) * cols;
  float* out = y + static_cast<size_t>(blockIdx.x) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += in[c];
  const float mean = block_sum<BLOCK>(block, s) / cols;
  float q = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) {
    const float d = in[c] - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(block_sum<BLOCK>(block, q) / cols + kEps);
  for (int c = threadIdx.x; c < cols; c += BLOCK)
    out[c] = (in[c] - mean) * rstd * __ldg(gamma + c) + __ldg(beta + c);
}

__device__ float warp_sum_all(float v) {
  const auto lanes = __activemask();
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(lanes, v, offset);
  return v;
}

__global__ void layernorm_warp(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y, int rows, int cols) {
  const int lane = threadIdx.x % warpSize;
  const int r = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
  if (r >= rows) return;
  const float* in = x + static_cast<size_t>(r) * cols;
  float* out = y + static_cast<size_t>(r) * cols;
  float s = 0.0f;
  for (int c = lane; c < cols; c += warpSize) s += in[c];
  const float mean = warp_sum_all(s) / cols;
  float q = 0.0f;
  for (int c = lane; c < cols; c += warpSize) {
    const float d = in[c] - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(warp_sum_all(q) / cols + kEps);
  for (int c = lane; c < cols; c += warpSize)
    out[c] = (in[c] - mean) * rstd * __ldg(gamma + c) + __ldg(beta + c);
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int rows = 256, cols = 768;
  const size_t count = static_cast<size_t>(rows) * cols;
  std::mt19937 gen(2024);
  std::normal_distribution<float> dist(0.5f, 2.0f);
  std::uniform_real_distribution<float> udist(0.5f, 1.5f);
  std::vector<float> h(count), gamma(cols), beta(cols), got(count);
  for (float& v : h) v = dist(gen);
  for (int c = 0; c < cols; ++c) {
    gamma[c] = udist(gen);
    beta[c] = udist(gen) - 1.0f;
  }
  std::vector<double> ref(count);
  for (int r = 0; r < rows; ++r) {
    const float* in = &h[static_cast<size_t>(r) * cols];
    double mean = 0.0, var = 0.0;
    for (int c = 0; c < cols; ++c) mean += in[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += (in[c] - mean) * (in[c] - mean);
    var /= cols;
    const double rstd = 1.0 / std::sqrt(var + kEps);
    for (int c = 0; c < cols; ++c)
      ref[static_cast<size_t>(r) * cols + c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
  }

  float *d_x = nullptr, *d_g = nullptr, *d_b = nullptr, *d_y = nullptr;
  CHECK(cudaMalloc(&d_x, count * sizeof(float)));
  CHECK(cudaMalloc(&d_y, count * sizeof(float)));
  CHECK(cudaMalloc(&d_g, cols * sizeof(float)));
  CHECK(cudaMalloc(&d_b, cols * sizeof(float)));
  CHECK(cudaMemcpy(d_x, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_g, gamma.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, beta.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  int failures = 0;
  const double tol = 1e-4;  // max absolute error; outputs are of order 1 to 10
  for (int version = 0; version < 2; ++version) {
    const char* name = version == 0 ? "block_cg_reduce" : "warp_per_row";
    CHECK(cudaMemset(d_y, 0, count * sizeof(float)));
    CHECK(cudaEventRecord(start));
    if (version == 0) {
      layernorm_block_cg<128><<<rows, 128>>>(d_x, d_g, d_b, d_y, cols);
    } else {
      const int threads = 128, rows_per_block = threads / prop.warpSize;
      layernorm_warp<<<(rows + rows_per_block - 1) / rows_per_block, threads>>>(d_x, d_g, d_b, d_y, rows, cols);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), d_y, count * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (size_t i = 0; i < count; ++i) {
      const double e = std::fabs(got[i] - ref[i]);
      if (std::isnan(e) || e > err) err = e;
    }
    const bool ok = err <= tol;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_y));
  CHECK(cudaFree(d_g));
  CHECK(cudaFree(d_b));
  return failures ? 1 : 0;
}
