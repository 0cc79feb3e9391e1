// Lab 04's lesson probes, a plain CUDA program (no grader): it prints the tables the README quotes.
//   1. "32 lanes on 64": a block reduction whose shuffle offsets start at 16 (written for 32
//      lanes), and the classic volatile warp-synchronous tail, against the exact sum of
//      integer-valued inputs, for many n. Run it at both warp sizes on the emulator:
//        ./gpulab run solutions/04-reductions/tools/probe.cu --warp-size 64 warp
//   2. "Determinism": the same input summed `runs` times by a shuffle reduction that combines the
//      blocks with atomicAdd, and by one whose last block adds the blocks' sums in order:
//        ./gpulab run solutions/04-reductions/tools/probe.cu determinism 4194304 20
//      and on a GPU: nvcc -O3 -arch=sm_90 probe.cu -o probe && ./probe determinism 268435456 100
// Output: tab-separated rows after a '#' header line, for docs/results/lab04-emu.sh.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <vector>

namespace {

constexpr int kThreads = 256;

__device__ unsigned long long all_lanes() { return warpSize >= 64 ? ~0ull : (1ull << warpSize) - 1ull; }

__device__ float warp_sum(float v, int first_offset) {
  for (int offset = first_offset; offset > 0; offset /= 2) v += __shfl_down_sync(all_lanes(), v, offset);
  return v;
}

// Block sum with warp shuffles; `first_offset` = warpSize / 2 is right, 16 is 32-lane code.
__device__ float block_sum(float v, int first_offset) {
  __shared__ float warp_sums[kThreads];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  v = warp_sum(v, first_offset);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    for (int w = lane; w < static_cast<int>(blockDim.x / warpSize); w += warpSize) v += warp_sums[w];
    v = warp_sum(v, first_offset);
  }
  return v;
}

__global__ void zero(float* r) { *r = 0.0f; }

// Grid-stride sum, block sum by shuffles, one atomicAdd per block (order: whoever comes first).
__global__ void sum_atomic(const float* x, int n, float* r, int thirty_two_lanes) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  v = block_sum(v, thirty_two_lanes ? 16 : warpSize / 2);
  if (threadIdx.x == 0) atomicAdd(r, v);
}

// The classic tree down to 64 values, then the first 32 threads without barriers (volatile).
__global__ void sum_volatile_tail(const float* x, int n, float* r) {
  __shared__ float p[kThreads];
  const int tid = threadIdx.x;
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) v += x[i];
  p[tid] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 32; s /= 2) {
    if (tid < s) p[tid] += p[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    volatile float* q = p;
    q[tid] += q[tid + 32]; q[tid] += q[tid + 16]; q[tid] += q[tid + 8];
    q[tid] += q[tid + 4]; q[tid] += q[tid + 2]; q[tid] += q[tid + 1];
  }
  if (tid == 0) atomicAdd(r, p[0]);
}

// Deterministic: each block stores its sum; the last block to finish adds them in block order.
__device__ unsigned int done;
__global__ void sum_last_block(const float* x, int n, float* sums, float* r) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  v = block_sum(v, warpSize / 2);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    sums[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(&done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  float w = 0.0f;
  for (int b = threadIdx.x; b < static_cast<int>(gridDim.x); b += blockDim.x) w += ((volatile float*)sums)[b];
  w = block_sum(w, warpSize / 2);
  if (threadIdx.x == 0) {
    *r = w;
    done = 0;
  }
}

int blocks_for(int n) { return std::max(1, std::min(1024, (n + 4 * kThreads - 1) / (4 * kThreads))); }

float run(int kind, const float* dx, int n, float* dsums, float* dr) {
  const int blocks = blocks_for(n);
  if (kind == 2) {
    sum_last_block<<<blocks, kThreads>>>(dx, n, dsums, dr);
  } else {
    zero<<<1, 1>>>(dr);
    if (kind == 3) sum_volatile_tail<<<blocks, kThreads>>>(dx, n, dr);
    else sum_atomic<<<blocks, kThreads>>>(dx, n, dr, kind);
  }
  float r = NAN;
  cudaMemcpy(&r, dr, sizeof r, cudaMemcpyDeviceToHost);
  return r;
}

struct Device {
  float *x = nullptr, *sums = nullptr, *r = nullptr;
  explicit Device(const std::vector<float>& h) {
    cudaMalloc(&x, h.size() * sizeof(float));
    cudaMalloc(&sums, 1024 * sizeof(float));
    cudaMalloc(&r, sizeof(float));
    cudaMemcpy(x, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
  }
  ~Device() { cudaFree(x); cudaFree(sums); cudaFree(r); }
};

void warp_table() {
  int warp = 0;
  cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0);
  std::mt19937 gen(4);
  std::uniform_int_distribution<int> d(1, 4);
  std::printf("# warp_size\tn\texact\tshuffles_from_16\tshuffles_from_16_error_pct\tvolatile_tail\tvolatile_tail_error_pct\n");
  for (int n : {1, 16, 32, 33, 34, 40, 48, 63, 64, 65, 96, 100, 128, 255, 256, 1000, 4096, 65536, 1 << 20}) {
    std::vector<float> h(n);
    double exact = 0;
    for (float& v : h) exact += v = static_cast<float>(d(gen));
    Device dev(h);
    const float a = run(1, dev.x, n, dev.sums, dev.r), b = run(3, dev.x, n, dev.sums, dev.r);
    std::printf("%d\t%d\t%.0f\t%.0f\t%.2f\t%.0f\t%.2f\n", warp, n, exact, a, 100 * (a - exact) / exact, b,
                100 * (b - exact) / exact);
  }
}

void determinism(int n, int runs) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> h(n);
  double exact = 0;
  for (float& v : h) exact += v = d(gen);
  Device dev(h);
  std::printf("# version\tn\truns\tdistinct_results\tmin\tmax\tspread_ulps\texact\n");
  for (int kind : {0, 2}) {
    std::set<float> seen;
    float lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < runs; ++k) {
      const float r = run(kind, dev.x, n, dev.sums, dev.r);
      seen.insert(r);
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
    const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(lo), std::fabs(hi))) - 23);
    std::printf("%s\t%d\t%d\t%zu\t%.9g\t%.9g\t%.0f\t%.9g\n", kind == 0 ? "atomicAdd per block" : "last block, in order",
                n, runs, seen.size(), lo, hi, (hi - lo) / ulp, exact);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "warp";
  if (std::strcmp(what, "warp") == 0) warp_table();
  else determinism(argc > 2 ? std::atoi(argv[2]) : 1 << 22, argc > 3 ? std::atoi(argv[3]) : 20);
  return 0;
}
