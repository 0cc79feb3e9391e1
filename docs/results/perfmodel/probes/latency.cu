// Load latency of one GPU, by pointer chasing: one thread follows a random cycle of 128-byte lines
// through an array, each load's address the previous load's value, and clock64() times the walk.
// The performance model (docs/results/perfmodel/model.py) takes its L2 latency from this probe's output
// for the GPU it predicts; nothing here is fitted to the kernels it predicts.
//   nvcc -O3 -std=c++17 -arch=sm_90 docs/results/perfmodel/probes/latency.cu -o latency && ./latency
// Prints one TSV row per case: array bytes, cache operator, cycles per load (median of 5 walks).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "../../probes/cuda_check.hpp"

// mode 0: default loads (L1 and L2), 1: __ldcg (L2 only, the L1 is bypassed)
__global__ void chase(const unsigned* next, int steps, int mode, unsigned* sink, long long* cycles) {
  unsigned j = 0;
  for (int i = 0; i < steps; ++i) j = mode ? __ldcg(next + j) : next[j];  // warm the caches
  const long long t0 = clock64();
  for (int i = 0; i < steps; ++i) j = mode ? __ldcg(next + j) : next[j];
  const long long t1 = clock64();
  *sink = j;
  *cycles = t1 - t0;
}

int main() {
  const int stride = 32;  // unsigned per 128-byte line
  unsigned* sink;
  long long* cycles;
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMalloc(&cycles, sizeof(long long)));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("# %s, L2 %d MB\nbytes\tloads\tcycles_per_load\n", p.name, p.l2CacheSize >> 20);
  struct Case {
    size_t bytes;
    int mode;
  };
  const Case cases[] = {{64 << 10, 0}, {8 << 20, 1}, {16 << 20, 1}, {1ull << 30, 1}};
  std::mt19937 rng(20261201);
  for (const Case& c : cases) {
    const size_t lines = c.bytes / 128;
    std::vector<unsigned> order(lines);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin() + 1, order.end(), rng);
    std::vector<unsigned> next(lines * stride, 0);
    for (size_t i = 0; i < lines; ++i) next[order[i] * stride] = order[(i + 1) % lines] * stride;
    unsigned* d;
    CHECK(cudaMalloc(&d, next.size() * sizeof(unsigned)));
    CHECK(cudaMemcpy(d, next.data(), next.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
    const int steps = static_cast<int>(std::min<size_t>(lines, 200000));
    std::vector<double> per;
    for (int r = 0; r < 5; ++r) {
      chase<<<1, 1>>>(d, steps, c.mode, sink, cycles);
      CHECK(cudaGetLastError());
      long long h;
      CHECK(cudaMemcpy(&h, cycles, sizeof h, cudaMemcpyDeviceToHost));
      per.push_back(static_cast<double>(h) / steps);
    }
    std::sort(per.begin(), per.end());
    std::printf("%zu\t%s\t%.1f\n", c.bytes, c.mode ? "ldcg" : "default", per[2]);
    CHECK(cudaFree(d));
  }
  return 0;
}
