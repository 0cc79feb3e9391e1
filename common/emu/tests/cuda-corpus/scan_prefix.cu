// Inclusive prefix sum of n integers across many blocks: each block scans its part (Hillis-Steele
// over a double buffer in dynamic shared memory, or warp shuffles sized by the run-time warpSize
// plus a scan of the warp totals), a single block scans the block totals, and a third kernel adds
// each block's offset. Integers: the check is exact.
// Covers: extern __shared__, <<<g, b, shared>>>, __shfl_up_sync with warpSize, a template kernel
// on the block-scan method, multi-kernel pipelines.
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

enum class Method { hillis_steele, warp_shuffle };

// Inclusive scan of v over the block. Hillis-Steele: shared memory of 2 * blockDim.x ints.
// Warp shuffle: shared memory of blockDim.x / warpSize ints (at most warpSize warps).
template <Method M>
__device__ int block_inclusive_scan(int v, int* smem) {
  const int tid = threadIdx.x;
  if constexpr (M == Method::hillis_steele) {
    int* src = smem;
    int* dst = smem + blockDim.x;
    src[tid] = v;
    __syncthreads();
    for (int offset = 1; offset < static_cast<int>(blockDim.x); offset *= 2) {
      dst[tid] = tid >= offset ? src[tid] + src[tid - offset] : src[tid];
      __syncthreads();
      int* t = src;
      src = dst;
      dst = t;
    }
    return src[tid];
  } else {
    const int lane = tid % warpSize, warp = tid / warpSize;
    const auto lanes = __activemask();
    for (int offset = 1; offset < warpSize; offset *= 2) {
      const int up = __shfl_up_sync(lanes, v, offset);
      if (lane >= offset) v += up;
    }
    if (lane == warpSize - 1) smem[warp] = v;
    __syncthreads();
    if (warp == 0) {
      const int warps = blockDim.x / warpSize;
      int t = lane < warps ? smem[lane] : 0;
      for (int offset = 1; offset < warpSize; offset *= 2) {
        const int up = __shfl_up_sync(lanes, t, offset);
        if (lane >= offset) t += up;
      }
      if (lane < warps) smem[lane] = t;
    }
    __syncthreads();
    return warp > 0 ? v + smem[warp - 1] : v;
  }
}

// Scans blockDim.x elements per block; writes the block's total to totals (if not null).
template <Method M>
// In place is allowed (in == out): each thread reads its element before the block scan's barriers.
__global__ void scan_blocks(const int* in, int* out, int* totals, int n) {
  extern __shared__ int smem[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = block_inclusive_scan<M>(i < n ? in[i] : 0, smem);
  if (i < n) out[i] = v;
  if (totals != nullptr && threadIdx.x == blockDim.x - 1) totals[blockIdx.x] = v;
}

__global__ void add_offsets(int* data, const int* __restrict__ scanned_totals, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x > 0 && i < n) data[i] += scanned_totals[blockIdx.x - 1];
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int n = 100000, threads = 256;
  const int blocks = (n + threads - 1) / threads;  // 391: one block of 512 scans their totals
  const int total_threads = 512;
  std::vector<int> h(n), ref(n), got(n);
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> dist(0, 9);
  for (int& v : h) v = dist(gen);
  for (int i = 0, s = 0; i < n; ++i) ref[i] = s += h[i];
  int *d_in = nullptr, *d_out = nullptr, *d_totals = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * sizeof(int)));
  CHECK(cudaMalloc(&d_totals, blocks * sizeof(int)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  int failures = 0;
  for (int version = 0; version < 2; ++version) {
    const char* name = version == 0 ? "hillis_steele_shared" : "warp_shuffle";
    CHECK(cudaMemset(d_out, 0, n * sizeof(int)));
    CHECK(cudaEventRecord(start));
    if (version == 0) {
      scan_blocks<Method::hillis_steele><<<blocks, threads, 2 * threads * sizeof(int)>>>(d_in, d_out, d_totals, n);
      CHECK(cudaGetLastError());
      scan_blocks<Method::hillis_steele><<<1, total_threads, 2 * total_threads * sizeof(int)>>>(
          d_totals, d_totals, nullptr, blocks);
    } else {
      const size_t shared = (total_threads / prop.warpSize) * sizeof(int);
      scan_blocks<Method::warp_shuffle><<<blocks, threads, shared>>>(d_in, d_out, d_totals, n);
      CHECK(cudaGetLastError());
      scan_blocks<Method::warp_shuffle><<<1, total_threads, shared>>>(d_totals, d_totals, nullptr, blocks);
    }
    CHECK(cudaGetLastError());
    add_offsets<<<blocks, threads>>>(d_out, d_totals, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    long long err = 0;
    for (int i = 0; i < n; ++i) {
      const long long e = got[i] > ref[i] ? got[i] - ref[i] : ref[i] - got[i];
      if (e > err) err = e;
    }
    const bool ok = err == 0;
    failures += !ok;
    std::printf("VERSION %s %s %lld\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_totals));
  return failures ? 1 : 0;
}
