// A 256-bin histogram of bytes with a skewed distribution (many collisions), two ways: atomicAdd
// straight into global memory, and per-block private histograms in dynamic shared memory merged
// with one global atomicAdd per bin. Also the largest byte with atomicMax and the number of zero
// bytes with atomicAdd on an unsigned long long. Counts: the check is exact.
// Covers: atomicAdd (global and shared, unsigned int and unsigned long long), atomicMax,
// extern __shared__, cudaMemset.
#include <cuda_runtime.h>

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

constexpr int kBins = 256;

__global__ void histogram_global(const unsigned char* __restrict__ data, unsigned int* bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[data[i]], 1u);
}

// Shared memory: kBins unsigned ints.
__global__ void histogram_shared(const unsigned char* __restrict__ data, unsigned int* bins, int n) {
  extern __shared__ unsigned int local[];
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&bins[b], local[b]);
}

__global__ void max_and_zeros(const unsigned char* __restrict__ data, int* max_value,
                              unsigned long long* zeros, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int v = data[i];
    atomicMax(max_value, v);
    if (v == 0) atomicAdd(zeros, 1ull);
  }
}

int main() {
  CHECK(cudaSetDevice(0));
  const int n = (1 << 18) + 3;
  std::vector<unsigned char> h(n);
  std::mt19937 gen(777);
  std::normal_distribution<float> dist(60.0f, 20.0f);
  for (auto& v : h) {
    const float x = dist(gen);
    v = static_cast<unsigned char>(x < 0.0f ? 0 : x > 250.0f ? 250 : static_cast<int>(x));
  }
  std::vector<unsigned int> ref(kBins, 0), got(kBins);
  int ref_max = 0;
  unsigned long long ref_zeros = 0;
  for (unsigned char v : h) {
    ++ref[v];
    if (v > ref_max) ref_max = v;
    ref_zeros += v == 0;
  }
  unsigned char* d_data = nullptr;
  unsigned int* d_bins = nullptr;
  int* d_max = nullptr;
  unsigned long long* d_zeros = nullptr;
  CHECK(cudaMalloc(&d_data, n));
  CHECK(cudaMalloc(&d_bins, kBins * sizeof(unsigned int)));
  CHECK(cudaMalloc(&d_max, sizeof(int)));
  CHECK(cudaMalloc(&d_zeros, sizeof(unsigned long long)));
  CHECK(cudaMemcpy(d_data, h.data(), n, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  int failures = 0;
  const int threads = 256, blocks = 48;
  for (int version = 0; version < 2; ++version) {
    const char* name = version == 0 ? "global_atomics" : "shared_private_bins";
    CHECK(cudaMemset(d_bins, 0, kBins * sizeof(unsigned int)));
    CHECK(cudaEventRecord(start));
    if (version == 0)
      histogram_global<<<blocks, threads>>>(d_data, d_bins, n);
    else
      histogram_shared<<<blocks, threads, kBins * sizeof(unsigned int)>>>(d_data, d_bins, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), d_bins, kBins * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    long long err = 0;
    for (int b = 0; b < kBins; ++b) {
      const long long e = static_cast<long long>(got[b]) - static_cast<long long>(ref[b]);
      if ((e < 0 ? -e : e) > err) err = e < 0 ? -e : e;
    }
    const bool ok = err == 0;
    failures += !ok;
    std::printf("VERSION %s %s %lld\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  }
  {
    CHECK(cudaMemset(d_max, 0, sizeof(int)));
    CHECK(cudaMemset(d_zeros, 0, sizeof(unsigned long long)));
    max_and_zeros<<<blocks, threads>>>(d_data, d_max, d_zeros, n);
    CHECK(cudaGetLastError());
    int got_max = -1;
    unsigned long long got_zeros = 0;
    CHECK(cudaMemcpy(&got_max, d_max, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&got_zeros, d_zeros, sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    const long long err = (got_max > ref_max ? got_max - ref_max : ref_max - got_max) +
                          (got_zeros > ref_zeros ? got_zeros - ref_zeros : ref_zeros - got_zeros);
    const bool ok = err == 0;
    failures += !ok;
    std::printf("VERSION atomic_max_and_count %s %lld\n", ok ? "PASS" : "FAIL", err);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_data));
  CHECK(cudaFree(d_bins));
  CHECK(cudaFree(d_max));
  CHECK(cudaFree(d_zeros));
  return failures ? 1 : 0;
}
