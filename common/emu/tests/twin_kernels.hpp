// Kernels compiled twice: once with the emulator's access tracing (a kernel file) and once without
// (a plain C++ file), to show that tracing does not change what a kernel computes, and to measure
// what it costs. Internal linkage: each translation unit keeps its own copy.
#pragma once

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

namespace {

constexpr int kTwinTile = 32;

// Each test file uses some of these kernels; on the emulator they have internal linkage.
#if defined(__clang__) || defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

__global__ void twin_transpose(const float* in, float* out, int n) {
  __shared__ float tile[kTwinTile][kTwinTile + 1];
  int x = blockIdx.x * kTwinTile + threadIdx.x, y = blockIdx.y * kTwinTile + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  x = blockIdx.y * kTwinTile + threadIdx.x;
  y = blockIdx.x * kTwinTile + threadIdx.y;
  out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void twin_reduce(const float* in, float* out, int n) {
  __shared__ float partial[64];
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i] * 1.0001f;
  for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_xor_sync(gpulab::full_mask(), s, o);
  if (gpulab::lane_id() == 0) partial[gpulab::warp_id()] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x) / warpSize; ++w) t += partial[w];
    out[blockIdx.x] = t;
  }
}

__global__ void twin_barriers(float* out, int rounds) {
  __shared__ float v[1024];
  v[threadIdx.x] = static_cast<float>(threadIdx.x);
  for (int r = 0; r < rounds; ++r) {
    __syncthreads();
    const float mine = v[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
    v[threadIdx.x] = mine;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[threadIdx.x];
}

__global__ void twin_shuffles(float* out, int rounds) {
  float v = static_cast<float>(threadIdx.x);
  for (int r = 0; r < rounds; ++r) v = __shfl_down_sync(gpulab::full_mask(), v, 1) + 1.0f;
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}


// A shared-memory tree over 256 threads (sequential addressing), one partial sum per block.
__global__ void twin_block_reduce(const float* in, float* out, int n) {
  __shared__ float v[256];
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
  v[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) v[threadIdx.x] += v[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = v[0];
}

// One thread per element, nothing else: what a lab 01/02 kernel's launch costs per thread.
__global__ void twin_scale(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}
// C = A B, n x n row-major, one thread per element of C, no shared memory.
__global__ void twin_sgemm_naive(const float* a, const float* b, float* c, int n) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= n || col >= n) return;
  float acc = 0;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}

constexpr int kTwinGemmTile = 16;

// The same with 16 x 16 tiles of A and B staged in shared memory (n a multiple of 16).
__global__ void twin_sgemm_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[kTwinGemmTile][kTwinGemmTile], tb[kTwinGemmTile][kTwinGemmTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * kTwinGemmTile + tx, row = blockIdx.y * kTwinGemmTile + ty;
  float acc = 0;
  for (int k0 = 0; k0 < n; k0 += kTwinGemmTile) {
    ta[ty][tx] = a[row * n + k0 + tx];
    tb[ty][tx] = b[(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < kTwinGemmTile; ++k) acc += ta[ty][k] * tb[k][tx];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

}  // namespace

/// Runs the twin kernels of one translation unit (traced or plain).
struct TwinKernels {
  void (*transpose)(const float* in, float* out, int n);
  void (*reduce)(const float* in, float* out, int n, int blocks);
  void (*barriers)(float* out, int blocks, int threads, int rounds);
  void (*shuffles)(float* out, int blocks, int threads, int rounds);
  void (*block_reduce)(const float* in, float* out, int n, int blocks);
  void (*sgemm_naive)(const float* a, const float* b, float* c, int n);
  void (*sgemm_tiled)(const float* a, const float* b, float* c, int n);
  void (*scale)(const float* in, float* out, int n);
};
TwinKernels traced_kernels();
TwinKernels plain_kernels();

#define GPULAB_DEFINE_TWINS(NAME)                                                                              \
  TwinKernels NAME() {                                                                                         \
    return {[](const float* in, float* out, int n) {                                                           \
              gpulab::launch(twin_transpose, dim3(n / kTwinTile, n / kTwinTile), dim3(kTwinTile, kTwinTile), 0, \
                             in, out, n);                                                                      \
            },                                                                                                 \
            [](const float* in, float* out, int n, int blocks) {                                              \
              gpulab::launch(twin_reduce, blocks, 256, 0, in, out, n);                                         \
            },                                                                                                 \
            [](float* out, int blocks, int threads, int rounds) {                                              \
              gpulab::launch(twin_barriers, blocks, threads, 0, out, rounds);                                  \
            },                                                                                                 \
            [](float* out, int blocks, int threads, int rounds) {                                              \
              gpulab::launch(twin_shuffles, blocks, threads, 0, out, rounds);                                  \
            },                                                                                                 \
            [](const float* in, float* out, int n, int blocks) {                                              \
              gpulab::launch(twin_block_reduce, blocks, 256, 0, in, out, n);                                   \
            },                                                                                                 \
            [](const float* a, const float* b, float* c, int n) {                                             \
              gpulab::launch(twin_sgemm_naive, dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16), 0, a, b, c, n); \
            },                                                                                                 \
            [](const float* a, const float* b, float* c, int n) {                                             \
              gpulab::launch(twin_sgemm_tiled, dim3(n / kTwinGemmTile, n / kTwinGemmTile),                     \
                             dim3(kTwinGemmTile, kTwinGemmTile), 0, a, b, c, n);                               \
            },                                                                                                 \
            [](const float* in, float* out, int n) {                                                           \
              gpulab::launch(twin_scale, (n + 255) / 256, 256, 0, in, out, n);                                 \
            }};                                                                                                \
  }
