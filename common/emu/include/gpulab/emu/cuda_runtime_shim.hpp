// gpulab/emu/cuda_runtime_shim.hpp - the handful of CUDA runtime calls that kernel files written
// for plain CUDA use on the host side, mapped onto the emulator, so that such files build on the
// emu back-end with only their `<<<>>>` launches replaced by gpulab::launch. Included by
// gpulab/gpu.hpp on the emulator. New code should use gpulab/host.hpp instead.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstring>

#include <string>

#include "gpulab/emu/runtime.hpp"
#include "gpulab/emu/watch.hpp"

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorLaunchFailure = 719 };
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
/// Streams are accepted and ignored: the emulator runs everything synchronously, in order.
typedef struct CUstream_st* cudaStream_t;
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9
};

namespace gpulab::emu::shim {
/// The fault of the last kernel, kept until read (CUDA's sticky error), printed once.
inline cudaError_t take_error() {
  const KernelFault f = take_pending_fault();
  if (f.kind.empty()) return cudaSuccess;
  std::fprintf(stderr, "[gpulab emu] %s\n", f.message.c_str());
  return cudaErrorLaunchFailure;
}
}  // namespace gpulab::emu::shim

// The trailing file/line parameters default to the caller's location (as in gpulab/host.hpp):
// messages, and the watch's record of host writes into device memory, name the student's line.
// Copies and fills are done by the (untraced) library: inlined into a traced file, a small
// memmove would become loads and stores that look like host code dereferencing device memory.

/// Beyond the emulated device's memory (runtime.hpp): cudaErrorMemoryAllocation, as on a GPU,
/// and the reason on stderr.
inline cudaError_t cudaMalloc(void** p, std::size_t bytes, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  std::string refusal;
  *p = gpulab::emu::device_alloc(bytes, &refusal);
  if (*p) return cudaSuccess;
  std::fprintf(stderr, "[gpulab emu] %s:%d: cudaMalloc of %s\n", file, line, refusal.c_str());
  return cudaErrorMemoryAllocation;
}
template <class T>
cudaError_t cudaMalloc(T** p, std::size_t bytes, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes, file, line);
}
inline cudaError_t cudaFree(void* p) {
  gpulab::emu::device_free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind,
                              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  gpulab::emu::host_copy(dst, src, bytes, "cudaMemcpy", file, line);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind,
                                   cudaStream_t = nullptr, const char* file = __builtin_FILE(),
                                   int line = __builtin_LINE()) {
  gpulab::emu::host_copy(dst, src, bytes, "cudaMemcpyAsync", file, line);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, std::size_t bytes, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  gpulab::emu::host_fill(p, value, bytes, "cudaMemset", file, line);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t = nullptr,
                                   const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  gpulab::emu::host_fill(p, value, bytes, "cudaMemsetAsync", file, line);
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return gpulab::emu::shim::take_error(); }
inline cudaError_t cudaDeviceSynchronize() { return gpulab::emu::shim::take_error(); }
inline cudaError_t cudaGetLastError() { return gpulab::emu::shim::take_error(); }
inline cudaError_t cudaPeekAtLastError() {
  return gpulab::emu::fault_pending() ? cudaErrorLaunchFailure : cudaSuccess;
}
inline const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    default: return "unspecified launch failure (the emulator printed the fault)";
  }
}
/// Accepted and ignored: the emulator has no carve-out, and its shared-memory limit is checked
/// at launch.
template <class F>
cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) {
  return cudaSuccess;
}
