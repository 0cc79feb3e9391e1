// Lab 04 probe: variants of the reference's one-launch reduction (grid-stride float4 loads, warp
// shuffles, the last block combining) against cub::DeviceReduce::Sum on the same input, in one
// run, at n = 2^28 (DRAM-bound) and n = 2^16 (latency-bound). It decides which block count,
// block size, loads in flight and load flavour the lab's reference should use (the goal: at least
// CUB's speed at both sizes). Every variant's sum is checked against a double-precision sum.
//   nvcc -O3 -std=c++17 -arch=sm_90 docs/results/probes/reduce_variants.cu -o reduce_variants
//   ./reduce_variants            (one line per variant and size: us, GB/s, / CUB)
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cuda_check.hpp"

namespace {

constexpr int kMaxBlocks = 8192;
__device__ float g_block_sums[kMaxBlocks];
__device__ unsigned int g_blocks_done;

__device__ float warp_sum(float v) {
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

template <int kThreads>
__device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads / 32];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    for (int w = lane; w < kThreads / 32; w += warpSize) v += warp_sums[w];
    v = warp_sum(v);
  }
  return v;
}

// kStreaming: loads with the evict-first hint (__ldcs) instead of the read-only path (__ldg).
template <int kThreads, int kUnroll, bool kStreaming>
__global__ void __launch_bounds__(kThreads) reduce_variant(const float* __restrict__ x, int n, float* __restrict__ result) {
  const int stride = gridDim.x * kThreads;
  const int gtid = blockIdx.x * kThreads + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const int n4 = n / 4;
  float v = 0.0f;
  int i = gtid;
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    float4 q[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) q[k] = kStreaming ? __ldcs(x4 + i + k * stride) : __ldg(x4 + i + k * stride);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) v += (q[k].x + q[k].y) + (q[k].z + q[k].w);
  }
  for (; i < n4; i += stride) {
    const float4 q = x4[i];
    v += (q.x + q.y) + (q.z + q.w);
  }
  if (gtid < n - 4 * n4) v += x[4 * n4 + gtid];
  v = block_sum<kThreads>(v);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    g_block_sums[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(&g_blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const volatile float* sums = g_block_sums;
  float w = 0.0f;
  for (int b = threadIdx.x; b < static_cast<int>(gridDim.x); b += kThreads) w += sums[b];
  w = block_sum<kThreads>(w);
  if (threadIdx.x == 0) {
    *result = w;
    g_blocks_done = 0;
  }
}

struct Variant {
  std::string name;
  std::function<void(const float*, int, float*, int)> launch;  // (x, n, result, blocks)
  int threads;
  int max_blocks_per_sm;  // occupancy of the kernel, for "per SM" block counts
};

template <int T, int U, bool S>
Variant make(const char* name) {
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_variant<T, U, S>, T, 0));
  return {name, [](const float* x, int n, float* r, int b) { reduce_variant<T, U, S><<<b, T>>>(x, n, r); }, T, per_sm};
}

float median_us(const std::function<void()>& call, int reps) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  call();  // warm-up
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(a));
    call();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.0f);
  }
  std::sort(t.begin(), t.end());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d SMs\n", prop.name, sms);
  std::printf("# variant\tblocks\tn\tus\tGB/s\tvs_cub\trel_error\n");
  const std::vector<Variant> variants = {
      make<256, 4, false>("256 threads, 4 float4 in flight (the reference's shape)"),
      make<256, 8, false>("256 threads, 8 float4 in flight"),
      make<512, 4, false>("512 threads, 4 float4 in flight"),
      make<256, 4, true>("256 threads, 4 float4, evict-first loads"),
      make<512, 8, true>("512 threads, 8 float4, evict-first loads"),
      make<1024, 4, false>("1024 threads, 4 float4 in flight"),
  };
  float* d_result = nullptr;
  CHECK(cudaMalloc(&d_result, sizeof(float)));
  for (const int n : {1 << 28, 1 << 16}) {
    std::vector<float> h(static_cast<std::size_t>(n));
    std::mt19937 rng(20261130u + static_cast<unsigned>(n));
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    double exact = 0, mag = 0;
    for (float& v : h) {
      v = d(rng);
      exact += v;
      mag += std::fabs(v);
    }
    float* d_x = nullptr;
    CHECK(cudaMalloc(&d_x, h.size() * sizeof(float)));
    CHECK(cudaMemcpy(d_x, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::size_t scratch_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, scratch_bytes, d_x, d_result, n));
    void* scratch = nullptr;
    CHECK(cudaMalloc(&scratch, scratch_bytes));
    const int reps = n > (1 << 20) ? 21 : 201;
    const float cub_us = median_us([&] { cub::DeviceReduce::Sum(scratch, scratch_bytes, d_x, d_result, n); }, reps);
    const double bytes = 4.0 * n;
    std::printf("CUB\t-\t%d\t%.2f\t%.0f\t1.000\t-\n", n, cub_us, bytes / cub_us * 1e-3);
    for (const Variant& v : variants) {
      const int per_call = (n + v.threads * 4 - 1) / (v.threads * 4);  // one float4 per thread at least
      for (const int per_sm : {1, 2, 4, 8, 16}) {
        if (per_sm > 2 * v.max_blocks_per_sm) continue;
        const int blocks = std::min({sms * per_sm, per_call, kMaxBlocks});
        const float us = median_us([&] { v.launch(d_x, n, d_result, blocks); }, reps);
        float got = 0;
        CHECK(cudaMemcpy(&got, d_result, sizeof(float), cudaMemcpyDeviceToHost));
        std::printf("%s\t%d (%d per SM)\t%d\t%.2f\t%.0f\t%.3f\t%.2e\n", v.name.c_str(), blocks, per_sm, n, us,
                    bytes / us * 1e-3, cub_us / us, std::fabs(got - exact) / mag);
        if (blocks == per_call) break;  // more blocks than elements: the rest are the same launch
      }
    }
    CHECK(cudaFree(scratch));
    CHECK(cudaFree(d_x));
  }
  CHECK(cudaFree(d_result));
  return 0;
}
