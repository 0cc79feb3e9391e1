// Block sums and a block maximum with cooperative groups: this_thread_block, tiled_partition<32>
// with shfl_down, cg::reduce with cg::plus and cg::greater. Tiles of 32 threads are legal at any
// hardware warp size, so nothing here depends on it.
// Covers: <cooperative_groups.h>, <cooperative_groups/reduce.h>, extern __shared__ sized by the
// launch, float atomicAdd, atomicMax, cudaEvent timing.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <algorithm>
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

// One sum per block into out[blockIdx.x]; shared memory: one float per 32-thread tile.
__global__ void block_sum_shfl(const float* __restrict__ in, float* __restrict__ out, int n) {
  extern __shared__ float tile_sums[];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  float v = 0.0f;
  for (int i = blockIdx.x * block.size() + block.thread_rank(); i < n; i += gridDim.x * block.size())
    v += in[i];
  for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? tile_sums[tile.thread_rank()] : 0.0f;
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
    if (tile.thread_rank() == 0) out[blockIdx.x] = v;
  }
}

// The whole sum into *total: cg::reduce per tile, then one atomicAdd per tile.
__global__ void total_sum_cg_reduce(const float* __restrict__ in, float* total, int n) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(block);
  float v = 0.0f;
  for (int i = blockIdx.x * block.size() + block.thread_rank(); i < n; i += gridDim.x * block.size())
    v += in[i];
  v = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) atomicAdd(total, v);
}

// The maximum of integer keys: cg::reduce with cg::greater, then atomicMax.
__global__ void max_cg_reduce(const int* __restrict__ keys, int* result, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  const int i = blockIdx.x * block.size() + block.thread_rank();
  int v = i < n ? keys[i] : -2147483647 - 1;
  v = cg::reduce(tile, v, cg::greater<int>());
  if (tile.thread_rank() == 0) atomicMax(result, v);
}

int main() {
  CHECK(cudaSetDevice(0));
  const int n = 200003;
  const int threads = 256;
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> idist(-1000000, 1000000);
  std::vector<float> h(n);
  std::vector<int> keys(n);
  double ref = 0.0, scale = 0.0;
  for (int i = 0; i < n; ++i) {
    h[i] = dist(gen);
    keys[i] = idist(gen);
    ref += h[i];
    scale += std::fabs(h[i]);
  }
  const int ref_max = *std::max_element(keys.begin(), keys.end());

  const int blocks = 64;
  float *d_in = nullptr, *d_partial = nullptr, *d_total = nullptr;
  int *d_keys = nullptr, *d_max = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
  CHECK(cudaMalloc(&d_partial, blocks * sizeof(float)));
  CHECK(cudaMalloc(&d_total, sizeof(float)));
  CHECK(cudaMalloc(&d_max, sizeof(int)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  int failures = 0;
  auto report = [&](const char* name, double err, double tol, float ms) {
    const bool ok = err <= tol;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  };
  const double tol = 1e-5;  // relative to sum |x|

  // 1. tiled_partition<32> + shfl_down, two launches (blocks, then the partial sums).
  {
    const size_t shared = (threads / 32) * sizeof(float);
    CHECK(cudaEventRecord(start));
    block_sum_shfl<<<blocks, threads, shared>>>(d_in, d_partial, n);
    CHECK(cudaGetLastError());
    block_sum_shfl<<<1, threads, shared>>>(d_partial, d_total, blocks);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f, sum = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(&sum, d_total, sizeof(float), cudaMemcpyDeviceToHost));
    report("tile_shfl_down", std::fabs(sum - ref) / scale, tol, ms);
  }
  // 2. cg::reduce + atomicAdd.
  {
    CHECK(cudaMemset(d_total, 0, sizeof(float)));
    CHECK(cudaEventRecord(start));
    total_sum_cg_reduce<<<blocks, threads>>>(d_in, d_total, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f, sum = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(&sum, d_total, sizeof(float), cudaMemcpyDeviceToHost));
    report("cg_reduce_plus", std::fabs(sum - ref) / scale, tol, ms);
  }
  // 3. cg::reduce with cg::greater + atomicMax: exact.
  {
    const int lowest = -2147483647 - 1;
    CHECK(cudaMemcpy(d_max, &lowest, sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(start));
    max_cg_reduce<<<(n + threads - 1) / threads, threads>>>(d_keys, d_max, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    int got = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(&got, d_max, sizeof(int), cudaMemcpyDeviceToHost));
    report("cg_reduce_greater", std::fabs(static_cast<double>(got) - ref_max), 0.0, ms);
  }

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_keys));
  CHECK(cudaFree(d_partial));
  CHECK(cudaFree(d_total));
  CHECK(cudaFree(d_max));
  return failures ? 1 : 0;
}
