// Kernels for the block-loop tests (tools/perfmodel/twin_pass.cpp): compiled in a traced kernel
// file (test_block_loops.cu) and in a plain C++ file (block_loops_plain.cpp), each with its own
// copy (internal linkage).
#pragma once

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

namespace {

#if defined(__clang__) || defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

// ---- kernels with a block loop: no barrier, no warp collective, no call ----

/// A thread per element, guarded.
__global__ void bl_affine(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3.0f * in[i] + 1.0f;
}

/// Every index variable in three dimensions, and threads that return early.
__global__ void bl_three_d(int* out) {
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
  if (threadIdx.y == 1 && threadIdx.x == 2) return;
  out[b * per_block + t] = static_cast<int>(t * 1000 + b * 7 + threadIdx.z);
}

/// A local array (each thread's own) and a loop.
__global__ void bl_local_array(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float window[8];
  for (int k = 0; k < 8; ++k) window[k] = in[(i + k) % n] * static_cast<float>(k + 1);
  float s = 0;
  for (int k = 7; k >= 0; --k) s = s * 0.5f + window[k];
  out[i] = s;
}

/// Shared memory without a barrier: each thread its own slot (poisoned before the block).
__global__ void bl_shared_own_slot(const float* in, float* out, int n) {
  __shared__ float slot[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  slot[threadIdx.x] = in[i] * in[i];
  out[i] = slot[threadIdx.x] - 1.0f;
}

/// C math functions, and a product and a sum in one expression (a*b+c: contracted or not, the
/// block loop must round as the threads do).
__global__ void bl_math(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = expf(in[i] * 0.01f) + sqrtf(fabsf(in[i])) * in[i] + 0.1f;
}

/// Guards the block loop may find true (or false) for a whole block, and one it must not: an early
/// return, a lower bound, an unsigned index that wraps past 2^32 inside a block (where `offset` is
/// large: the comparison is then not monotone in the thread), and a decreasing index.
__global__ void bl_guards(const float* in, float* out, int n, unsigned offset, unsigned limit) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  if (i > n / 3) v += 1.0f;
  const unsigned u = blockIdx.x * blockDim.x + threadIdx.x + offset;
  if (u < limit) v *= 2.0f;
  const int j = n - 1 - i;
  if (j < n / 2) v -= 3.0f;
  out[i] = v;
}

/// A store guarded by `u < limit && i < n`, u an unsigned index that may wrap past 2^32 inside
/// every block (where `offset` is large).
__global__ void bl_wrapping_guard(float* out, int n, unsigned offset, unsigned limit) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned u = threadIdx.x + offset;
  if (u < limit && i < n) out[i] = 1.0f + static_cast<float>(i);
}

/// A parameter passed by value in memory (over 16 bytes), written by each thread: every thread
/// has its own copy, also in a block loop.
struct BlTaps {
  float taps[7];
  int n;
};
__global__ void bl_by_value(BlTaps f, const float* in, float* out, int len) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= len) return;
  for (int k = 0; k < f.n; ++k) f.taps[k] *= 0.5f;
  float acc = 0;
  for (int k = 0; k < f.n; ++k) acc += in[(i + k) % len] * f.taps[k];
  out[i] = acc;
}

/// `__restrict__` holds within each thread; the caller passes in == out, so that thread t reads
/// what thread t-1 wrote (a race on a GPU; on the emulator, threads run one after another).
__global__ void bl_restrict_chain(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t + 1 < n) out[t + 1] = in[t] + 1.0f;
}

/// A grid-stride loop.
__global__ void bl_grid_stride(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i] * 0.5f;
}

// ---- kernels without one ----

__global__ void bl_barrier(float* out) {
  __shared__ float v[256];
  v[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[(threadIdx.x + 1) % blockDim.x];
}

__global__ void bl_shuffle(float* out) {
  const float v = __shfl_down_sync(gpulab::full_mask(), static_cast<float>(threadIdx.x), 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void bl_atomic(int* counter) { atomicAdd(counter, 1); }

__device__ __noinline__ int bl_helper(int x) { return x * 7 + static_cast<int>(threadIdx.x); }
__global__ void bl_calls(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = bl_helper(3); }

/// A local array of a run-time size: in a block loop the threads' arrays would pile up.
__global__ void bl_runtime_sized_local(float* out, int m) {
  float* buf = static_cast<float*>(__builtin_alloca(sizeof(float) * static_cast<unsigned>(m)));
  for (int k = 0; k < m; ++k) buf[k] = static_cast<float>(k * threadIdx.x);
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[m - 1];
}

/// Writes an index variable (the emulator's are variables): no block loop.
__global__ void bl_writes_index(int* out) {
  threadIdx.x += 1;
  out[blockIdx.x * blockDim.x + threadIdx.x - 1] = static_cast<int>(threadIdx.x);
}

/// The same work in every thread: reads no threadIdx (nothing to gain).
__global__ void bl_no_thread_index(int* out) { out[blockIdx.x] = static_cast<int>(blockDim.x); }

}  // namespace
