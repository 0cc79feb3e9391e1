// DRAM fetch granule of one GPU: kernels that read 16 bytes out of every S bytes of a 1 GiB array
// (S = 16: all of it, 32, 64, 128, 256), each 16-byte read its own thread's. Prints the driver's
// cudaLimitMaxL2FetchGranularity and, per stride, the time and the bytes read per useful byte the
// time implies at the dense read's bandwidth; run under Nsight Compute (dram__bytes_read.sum) the
// same kernels give the DRAM's bytes directly. The roofline of gpulab/grade/perfmodel.hpp moves a
// call's touched bytes in granules of this size.
//   nvcc -O3 -std=c++17 -arch=sm_90 docs/results/perfmodel/probes/granule.cu -o granule && ./granule
#include <cuda_runtime.h>

#include <cstdio>

#include "../../probes/cuda_check.hpp"

__global__ void read_strided(const float4* in, long long count, int stride_elems, float* sink) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float4 v = in[i * stride_elems];
  const float s = v.x + v.y + v.z + v.w;
  if (s == 12345.0f) sink[0] = s;  // never true for the zero-filled input: keeps the load
}

int main() {
  const size_t bytes = size_t{1} << 30;
  float4* in;
  float* sink;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  CHECK(cudaMemset(in, 0, bytes));
  size_t granule = 0;
  CHECK(cudaDeviceGetLimit(&granule, cudaLimitMaxL2FetchGranularity));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("# %s, cudaLimitMaxL2FetchGranularity = %zu bytes\n", p.name, granule);
  std::printf("stride_bytes\tuseful_bytes\tms\tuseful_gbps\ttime_per_useful_byte_over_dense\n");
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  double dense_ns_per_byte = 0;
  for (int stride : {16, 32, 64, 128, 256}) {
    const long long count = static_cast<long long>(bytes / stride);
    const int threads = 256;
    const unsigned blocks = static_cast<unsigned>((count + threads - 1) / threads);
    float best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
      CHECK(cudaEventRecord(a));
      read_strided<<<blocks, threads>>>(in, count, stride / 16, sink);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (ms < best) best = ms;
    }
    const double useful = 16.0 * count;
    const double ns_per_byte = best * 1e6 / useful;
    if (stride == 16) dense_ns_per_byte = ns_per_byte;
    std::printf("%d\t%.0f\t%.4f\t%.1f\t%.2f\n", stride, useful, best, useful / (best * 1e-3) / 1e9,
                ns_per_byte / dense_ns_per_byte);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(sink));
  return 0;
}
