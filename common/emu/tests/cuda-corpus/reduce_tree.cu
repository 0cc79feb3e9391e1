// Sum of a float array, three ways: a shared-memory tree with a compile-time block size, the
// same tree over dynamic shared memory, and warp shuffles sized by the run-time warpSize.
// Covers: <<<grid, block>>> and <<<grid, block, shared>>> launches, a template kernel,
// extern __shared__, cudaGetDeviceProperties, cudaEvent timing.
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

constexpr int kBlock = 256;  // a multiple of 64: whole warps at warp size 32 and 64

template <int BLOCK>
__global__ void reduce_static(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float s[BLOCK];
  const int tid = threadIdx.x;
  float v = 0.0f;
  for (int i = blockIdx.x * BLOCK + tid; i < n; i += gridDim.x * BLOCK) v += in[i];
  s[tid] = v;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// blockDim.x must be a power of two; the launch gives blockDim.x floats of shared memory.
__global__ void reduce_dynamic(const float* __restrict__ in, float* __restrict__ out, int n) {
  extern __shared__ float sdata[];
  const int tid = threadIdx.x;
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) v += in[i];
  sdata[tid] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) sdata[tid] += sdata[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

__device__ float warp_sum(float v) {
  const auto lanes = __activemask();  // every lane of the warp is here: all of them, 32 or 64
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(lanes, v, offset);
  return v;
}

// blockDim.x: a multiple of warpSize, at most 1024.
__global__ void reduce_shuffle(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float warp_sums[32];  // 1024 threads / 32 lanes at most
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  const int lane = threadIdx.x % warpSize;
  const int warp = threadIdx.x / warpSize;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / warpSize;
    v = lane < warps ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) out[blockIdx.x] = v;
  }
}

int main() {
  int device = 0;
  CHECK(cudaSetDevice(device));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("device %s, %d SMs, warp size %d\n", prop.name, prop.multiProcessorCount, prop.warpSize);

  const int n = (1 << 18) + 77;
  std::vector<float> h(n);
  std::mt19937 gen(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  double ref = 0.0, scale = 0.0;
  for (float& x : h) {
    x = dist(gen);
    ref += x;
    scale += std::fabs(x);
  }

  int blocks = prop.multiProcessorCount * 2;
  if (blocks < 1) blocks = 1;
  if (blocks > 1024) blocks = 1024;
  float *d_in = nullptr, *d_partial = nullptr, *d_sum = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_partial, blocks * sizeof(float)));
  CHECK(cudaMalloc(&d_sum, sizeof(float)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  int failures = 0;
  const double tol = 1e-5;  // |sum - ref| relative to sum |x|
  for (int version = 0; version < 3; ++version) {
    const char* name = version == 0 ? "tree_static" : version == 1 ? "tree_dynamic" : "warp_shuffle";
    CHECK(cudaMemset(d_sum, 0, sizeof(float)));
    CHECK(cudaEventRecord(start));
    if (version == 0) {
      reduce_static<kBlock><<<blocks, kBlock>>>(d_in, d_partial, n);
      CHECK(cudaGetLastError());
      reduce_static<kBlock><<<1, kBlock>>>(d_partial, d_sum, blocks);
    } else if (version == 1) {
      reduce_dynamic<<<blocks, kBlock, kBlock * sizeof(float)>>>(d_in, d_partial, n);
      CHECK(cudaGetLastError());
      reduce_dynamic<<<1, kBlock, kBlock * sizeof(float)>>>(d_partial, d_sum, blocks);
    } else {
      reduce_shuffle<<<blocks, kBlock>>>(d_in, d_partial, n);
      CHECK(cudaGetLastError());
      reduce_shuffle<<<1, kBlock>>>(d_partial, d_sum, blocks);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    float sum = 0.0f;
    CHECK(cudaMemcpy(&sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost));
    const double err = std::fabs(sum - ref) / scale;
    const bool ok = err <= tol;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  }

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_partial));
  CHECK(cudaFree(d_sum));
  return failures ? 1 : 0;
}
