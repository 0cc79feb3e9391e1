// Bytes in flight against DRAM bandwidth on one GPU (Little's law): a streaming read of 1 GiB in
// which each thread issues K independent loads of W bytes per loop trip (the trips themselves are
// not unrolled), with B blocks of 256 threads per SM on all SMs. Bytes in flight per SM, at most
// B x 256 x K x W, set against the bandwidth reached: the term the performance model lacks for
// lab 04's one-4-byte-load-per-trip reductions and lab 02's one-16-byte-access-per-thread kernels
// (docs/results/perfmodel.md).
//   nvcc -O3 -std=c++17 -arch=sm_90 docs/results/perfmodel/probes/inflight.cu -o inflight && ./inflight
#include <cuda_runtime.h>

#include <cstdio>

#include "../../probes/cuda_check.hpp"

template <int K, class V>
__global__ void stream_read(const V* in, long long count, float* sink) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  float acc = 0.0f;
#pragma unroll 1
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += K * stride) {
    V v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const long long j = i + k * stride;
      v[k] = j < count ? in[j] : V{};
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if constexpr (sizeof(V) == 16) acc += v[k].x + v[k].y + v[k].z + v[k].w;
      else acc += v[k];
    }
  }
  if (acc == 12345.0f) sink[0] = acc;  // never true for the zero-filled input: keeps the loads
}

template <int K, class V>
void run(const void* buf, std::size_t bytes, int sms, float* sink, double peak_hint) {
  const long long count = static_cast<long long>(bytes / sizeof(V));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int per_sm : {1, 2, 4, 8}) {
    const int threads = 256;
    const int blocks = sms * per_sm;
    float best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
      CHECK(cudaEventRecord(a));
      stream_read<K, V><<<blocks, threads>>>(static_cast<const V*>(buf), count, sink);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (ms < best) best = ms;
    }
    const double gbps = bytes / (best * 1e-3) / 1e9;
    std::printf("%zu\t%d\t%d\t%d\t%d\t%.4f\t%.1f\t%.3f\n", sizeof(V), K, per_sm, per_sm * threads,
                per_sm * threads * K * static_cast<int>(sizeof(V)), best, gbps, gbps / peak_hint);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
}

int main() {
  const std::size_t bytes = std::size_t{1} << 30;
  void* buf;
  float* sink;
  CHECK(cudaMalloc(&buf, bytes));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  CHECK(cudaMemset(buf, 0, bytes));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  const double peak = 4800.0;  // GB/s, the H200's HBM3e (datasheet); the last column divides by it
  std::printf("# %s, %d SMs; 1 GiB read once per run, best of 5; last column: GB/s / %.0f\n", p.name,
              p.multiProcessorCount, peak);
  std::printf("load_bytes\tloads_per_trip\tblocks_per_sm\tthreads_per_sm\tbytes_in_flight_per_sm\tms\tgbps\tof_peak\n");
  const int sms = p.multiProcessorCount;
  run<1, float>(buf, bytes, sms, sink, peak);
  run<2, float>(buf, bytes, sms, sink, peak);
  run<4, float>(buf, bytes, sms, sink, peak);
  run<8, float>(buf, bytes, sms, sink, peak);
  run<1, float4>(buf, bytes, sms, sink, peak);
  run<2, float4>(buf, bytes, sms, sink, peak);
  run<4, float4>(buf, bytes, sms, sink, peak);
  CHECK(cudaFree(buf));
  CHECK(cudaFree(sink));
  return 0;
}
