// The input split in two halves, each on its own stream: cudaMemcpyAsync in, an elementwise
// kernel (<<<g, b, 0, stream>>>), a block-sum kernel with dynamic shared memory
// (<<<g, b, shared, stream>>>), cudaMemcpyAsync out, then cudaStreamSynchronize on both. Events
// recorded on the streams time each half (printed, not checked).
// Covers: cudaStreamCreate, four-argument launches, cudaMemcpyAsync, cudaEventRecord on a stream,
// cudaStreamSynchronize, cudaStreamDestroy.
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

__global__ void scale_shift(const float* __restrict__ in, float* __restrict__ out, float a, float b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i] + b;
}

// One sum per block; shared memory: blockDim.x floats, blockDim.x a power of two.
__global__ void block_sums(const float* __restrict__ in, float* __restrict__ sums, int n) {
  extern __shared__ float s[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = s[0];
}

int main() {
  CHECK(cudaSetDevice(0));
  const int n = 1 << 18, half = n / 2, threads = 256;
  const int blocks = (half + threads - 1) / threads;
  const float a = 2.0f, b = 1.0f;
  std::mt19937 gen(2);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> h(n), out(n, 0.0f), sums(2 * blocks, 0.0f);
  for (float& v : h) v = dist(gen);

  float *d_in = nullptr, *d_out = nullptr, *d_sums = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMalloc(&d_sums, 2 * blocks * sizeof(float)));
  cudaStream_t streams[2];
  cudaEvent_t start[2], stop[2];
  for (int s = 0; s < 2; ++s) {
    CHECK(cudaStreamCreate(&streams[s]));
    CHECK(cudaEventCreate(&start[s]));
    CHECK(cudaEventCreate(&stop[s]));
  }
  for (int s = 0; s < 2; ++s) {
    const size_t off = static_cast<size_t>(s) * half;
    CHECK(cudaEventRecord(start[s], streams[s]));
    CHECK(cudaMemcpyAsync(d_in + off, h.data() + off, half * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
    scale_shift<<<blocks, threads, 0, streams[s]>>>(d_in + off, d_out + off, a, b, half);
    CHECK(cudaGetLastError());
    block_sums<<<blocks, threads, threads * sizeof(float), streams[s]>>>(d_out + off, d_sums + s * blocks, half);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(out.data() + off, d_out + off, half * sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
    CHECK(cudaMemcpyAsync(sums.data() + s * blocks, d_sums + s * blocks, blocks * sizeof(float),
                          cudaMemcpyDeviceToHost, streams[s]));
    CHECK(cudaEventRecord(stop[s], streams[s]));
  }
  for (int s = 0; s < 2; ++s) CHECK(cudaStreamSynchronize(streams[s]));

  int failures = 0;
  double err = 0.0;
  for (int i = 0; i < n; ++i) {
    const double e = std::fabs(out[i] - (static_cast<double>(a) * h[i] + b));
    if (std::isnan(e) || e > err) err = e;
  }
  bool ok = err <= 1e-6;  // one float rounding of values below 3
  failures += !ok;
  std::printf("VERSION two_streams_elementwise %s %.3e\n", ok ? "PASS" : "FAIL", err);

  err = 0.0;
  for (int blk = 0; blk < 2 * blocks; ++blk) {
    double want = 0.0, scale = 0.0;
    for (int t = 0; t < threads; ++t) {
      const int i = blk * threads + t;  // the halves are whole blocks
      const double v = static_cast<double>(a) * h[i] + b;
      want += v;
      scale += std::fabs(v);
    }
    const double e = std::fabs(sums[blk] - want) / scale;
    if (std::isnan(e) || e > err) err = e;
  }
  ok = err <= 1e-5;  // relative to sum |v|
  failures += !ok;
  std::printf("VERSION two_streams_block_sums %s %.3e\n", ok ? "PASS" : "FAIL", err);
  for (int s = 0; s < 2; ++s) {
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start[s], stop[s]));
    std::printf("  time stream %d %.3f ms\n", s, ms);
  }

  for (int s = 0; s < 2; ++s) {
    CHECK(cudaEventDestroy(start[s]));
    CHECK(cudaEventDestroy(stop[s]));
    CHECK(cudaStreamDestroy(streams[s]));
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_sums));
  return failures ? 1 : 0;
}
