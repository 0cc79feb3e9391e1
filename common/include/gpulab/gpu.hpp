// gpulab/gpu.hpp - the one header a kernel file includes.
//
// The same .cu source compiles under three back-ends:
//   * nvcc        (CUDA, NVIDIA GPUs)          -> GPULAB_BACKEND_CUDA
//   * hipcc       (HIP, AMD GPUs)              -> GPULAB_BACKEND_HIP
//   * clang++/g++ (the gpulab CPU emulator)    -> GPULAB_BACKEND_EMU
//
// Kernel code keeps CUDA spelling (__global__, threadIdx, __shared__, __syncthreads,
// __shfl_down_sync, atomicAdd, float4, ...). Host code launches kernels with
// gpulab::launch(kernel, grid, block, shared_bytes, args...) instead of <<<...>>>, so that
// the host part of the file also compiles everywhere.
//
// Rules that keep a kernel portable:
//   * warpSize is a run-time value (ROCm 7 and the emulator make it one): never assume 32.
//   * lane masks are 64 bits wide (gpulab::lanemask_t); use gpulab::full_mask() for "all lanes".
//   * dynamic shared memory comes from gpulab::dynamic_shared<T>(), not `extern __shared__`.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GPULAB_BACKEND_CUDA 1
#include <cuda_runtime.h>
#elif defined(__HIPCC__) || defined(__HIP__)
#define GPULAB_BACKEND_HIP 1
#include <hip/hip_runtime.h>
#else
#define GPULAB_BACKEND_EMU 1
#include "gpulab/emu/cuda_runtime_shim.hpp"
#include "gpulab/emu/kernel.hpp"
#endif

namespace gpulab {

/// A set of lanes of one warp (bit i = lane i). 64 bits so that AMD wavefronts of 64 fit.
using lanemask_t = unsigned long long;

#if defined(GPULAB_BACKEND_EMU)
inline constexpr const char* backend_id = "emu";
#elif defined(GPULAB_BACKEND_CUDA)
inline constexpr const char* backend_id = "cuda";
#else
inline constexpr const char* backend_id = "rocm";
#endif

/// Mask naming every lane of a warp, whatever warpSize is (32 on NVIDIA, 32 or 64 on AMD
/// and in the emulator).
__device__ inline lanemask_t full_mask() {
  return warpSize >= 64 ? ~0ull : ((1ull << warpSize) - 1ull);
}

/// This thread's lane within its warp (threadIdx linearised x-fastest, as on hardware).
__device__ inline int lane_id() {
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return static_cast<int>(linear % static_cast<unsigned>(warpSize));
}

/// This thread's warp index within its block.
__device__ inline int warp_id() {
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return static_cast<int>(linear / static_cast<unsigned>(warpSize));
}

/// The block's dynamic shared memory (the `shared_bytes` argument of gpulab::launch), typed.
/// Replaces `extern __shared__ T name[];`, which cannot be written portably. 16-byte aligned.
template <class T>
__device__ inline T* dynamic_shared() {
#if defined(GPULAB_BACKEND_EMU)
  return static_cast<T*>(::gpulab::emu::dynamic_shared_base());
#else
  extern __shared__ __align__(16) unsigned char gpulab_dynamic_shared_[];
  return reinterpret_cast<T*>(gpulab_dynamic_shared_);
#endif
}

}  // namespace gpulab

// ---------------------------------------------------------------------------------------
// HIP before 6.2 has no *_sync warp functions: map them onto the mask-less HIP intrinsics.
// An AMD wavefront executes in lock-step, so the mask only documents the participants.
#if defined(GPULAB_BACKEND_HIP) && (HIP_VERSION < 60200000)
template <class T>
__device__ inline T __shfl_sync(unsigned long long, T v, int src, int width = warpSize) {
  return __shfl(v, src, width);
}
template <class T>
__device__ inline T __shfl_up_sync(unsigned long long, T v, unsigned d, int width = warpSize) {
  return __shfl_up(v, d, width);
}
template <class T>
__device__ inline T __shfl_down_sync(unsigned long long, T v, unsigned d, int width = warpSize) {
  return __shfl_down(v, d, width);
}
template <class T>
__device__ inline T __shfl_xor_sync(unsigned long long, T v, int m, int width = warpSize) {
  return __shfl_xor(v, m, width);
}
__device__ inline unsigned long long __ballot_sync(unsigned long long mask, int pred) {
  return __ballot(pred) & mask;
}
__device__ inline int __any_sync(unsigned long long mask, int pred) {
  return (__ballot(pred) & mask) != 0;
}
__device__ inline int __all_sync(unsigned long long mask, int pred) {
  return (__ballot(pred) & mask) == (mask & __ballot(1));
}
__device__ inline unsigned long long __activemask() { return __ballot(1); }
__device__ inline void __syncwarp(unsigned long long = ~0ull) { __builtin_amdgcn_wave_barrier(); }
#endif

#include "gpulab/launch.hpp"
#if defined(GPULAB_BACKEND_EMU)
#include "gpulab/emu/cuda_runtime_launch.hpp"
#endif
