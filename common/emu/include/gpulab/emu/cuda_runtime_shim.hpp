// gpulab/emu/cuda_runtime_shim.hpp - the CUDA runtime API that standalone CUDA programs use,
// mapped onto the emulator, so that such files build and run on the emu back-end. Included by
// gpulab/gpu.hpp on the emulator (and so by the <cuda_runtime.h> of include/cuda_compat/). New
// code should use gpulab/host.hpp instead. The launch side (cudaFuncSetAttribute, launches that
// return codes) is in cuda_runtime_launch.hpp, which needs gpulab/launch.hpp.
//
// Semantics, as CUDA's:
//   * errors: a kernel fault is sticky (every later call that touches the device returns it, and
//     cudaGetLastError does not clear it; cudaDeviceReset does); other errors are the calling
//     thread's last error, which cudaGetLastError returns and clears (runtime.hpp: cuda_*).
//   * streams are ordered queues; the emulator runs all work synchronously in issue order, which
//     is one valid order for any program that synchronises correctly. Events record host time.
//   * one device, 0, with the emulator's properties (cudaGetDeviceProperties).
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstring>

#include <string>

#include "gpulab/emu/runtime.hpp"
#include "gpulab/emu/watch.hpp"

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorMisalignedAddress = 716,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotSupported = 801,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
/// A stream: an ordered queue of work. The emulator runs every call at once, in issue order.
typedef struct CUstream_st* cudaStream_t;
/// An event: records the host's time when it is recorded (no GPU clock exists here).
typedef struct CUevent_st* cudaEvent_t;
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9
};
enum cudaSharedCarveout { cudaSharedmemCarveoutDefault = -1, cudaSharedmemCarveoutMaxL1 = 0, cudaSharedmemCarveoutMaxShared = 100 };
#define cudaOccupancyDefault 0x00
#define cudaOccupancyDisableCachingOverride 0x01
/// What cudaFuncGetAttributes reports about a kernel. The emulator does not compile for a GPU:
/// registers, local and constant memory are 0, static shared memory is not known (0).
struct cudaFuncAttributes {
  std::size_t sharedSizeBytes;
  std::size_t constSizeBytes;
  std::size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
};
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaStreamLegacy (reinterpret_cast<cudaStream_t>(0x1))
#define cudaStreamPerThread (reinterpret_cast<cudaStream_t>(0x2))

/// The device's properties: the fields programs read (cudaGetDeviceProperties). The emulator's
/// warp size, its workers as multiprocessors, its memory size, the shared-memory limits it
/// checks (48 KiB, 227 KiB opt-in, as an H100/H200), compute capability 9.0. The clock rates are
/// nominal: 1 GHz (clock64() counts nanoseconds, so cycles / clockRate gives milliseconds).
struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  std::size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;  ///< kHz
  std::size_t totalConstMem;
  int major;
  int minor;
  std::size_t textureAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;  ///< kHz
  int memoryBusWidth;   ///< bits
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int cooperativeLaunch;
  std::size_t sharedMemPerBlockOptin;
  int maxBlocksPerMultiProcessor;
  std::size_t reservedSharedMemPerBlock;
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106
};

// ---- errors and the device (common/src/cuda_shim_emu.cpp) --------------------------------
// C linkage, as the CUDA runtime's own functions have: the grader's symbol rules know them by
// their plain names (cuda*).
extern "C" {
const char* cudaGetErrorString(cudaError_t e);
const char* cudaGetErrorName(cudaError_t e);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes);
cudaError_t cudaDeviceReset();
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
/// Milliseconds of host wall time between the two records: the emulator's time, not a GPU's.
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
/// Page-locked host memory is ordinary host memory here.
cudaError_t cudaMallocHost(void** p, std::size_t bytes);
cudaError_t cudaHostAlloc(void** p, std::size_t bytes, unsigned flags);
cudaError_t cudaFreeHost(void* p);
}  // extern "C"
template <class T>
cudaError_t cudaMallocHost(T** p, std::size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void**>(p), bytes);
}
template <class T>
cudaError_t cudaHostAlloc(T** p, std::size_t bytes, unsigned flags) {
  return cudaHostAlloc(reinterpret_cast<void**>(p), bytes, flags);
}

inline cudaError_t cudaGetLastError() {
  return static_cast<cudaError_t>(gpulab::emu::cuda_last_error(true));
}
inline cudaError_t cudaPeekAtLastError() {
  return static_cast<cudaError_t>(gpulab::emu::cuda_last_error(false));
}
/// Work is done when issued: synchronising only reports a kernel's fault (sticky).
inline cudaError_t cudaDeviceSynchronize() {
  return static_cast<cudaError_t>(gpulab::emu::cuda_sticky_error());
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaDeviceSynchronize(); }
/// The emulator follows CUDA 13.0's runtime API (CUDART_VERSION's encoding: 1000 * major + 10 * minor).
inline cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
/// Priorities are accepted and change nothing: every launch runs when issued. The range is a
/// GPU's (greatest priority -5, least 0).
inline cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int) {
  return cudaStreamCreateWithFlags(stream, flags);
}
inline cudaError_t cudaThreadSynchronize() { return cudaDeviceSynchronize(); }

// ---- memory ------------------------------------------------------------------------------
// The trailing file/line parameters default to the caller's location (as in gpulab/host.hpp):
// messages, and the watch's record of host writes into device memory, name the student's line.
// Copies and fills are done by the (untraced) library: inlined into a traced file, a small
// memmove would become loads and stores that look like host code dereferencing device memory.
// After a kernel fault they do nothing and return the sticky error, as on a GPU.

/// Beyond the emulated device's memory (runtime.hpp): cudaErrorMemoryAllocation, as on a GPU,
/// and the reason on stderr.
inline cudaError_t cudaMalloc(void** p, std::size_t bytes, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  if (const int sticky = gpulab::emu::cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  std::string refusal;
  *p = gpulab::emu::device_alloc(bytes, &refusal);
  if (*p) return cudaSuccess;
  std::fprintf(stderr, "[gpulab emu] %s:%d: cudaMalloc of %s\n", file, line, refusal.c_str());
  return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorMemoryAllocation));
}
template <class T>
cudaError_t cudaMalloc(T** p, std::size_t bytes, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes, file, line);
}
inline cudaError_t cudaFree(void* p) {
  gpulab::emu::device_free(p);
  return static_cast<cudaError_t>(gpulab::emu::cuda_sticky_error());
}
/// Stream-ordered allocation (CUDA 11.2): every launch and copy runs when issued here, so the
/// stream's order is the program's, and these are cudaMalloc and cudaFree.
inline cudaError_t cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t, const char* file = __builtin_FILE(),
                                   int line = __builtin_LINE()) {
  return cudaMalloc(p, bytes, file, line);
}
template <class T>
cudaError_t cudaMallocAsync(T** p, std::size_t bytes, cudaStream_t stream, const char* file = __builtin_FILE(),
                            int line = __builtin_LINE()) {
  return cudaMallocAsync(reinterpret_cast<void**>(p), bytes, stream, file, line);
}
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }
namespace gpulab::emu::shim {
/// The sticky error, or cudaErrorInvalidValue (explained on stderr, and left as the last error)
/// when a device side of a copy or fill is not `bytes` inside one device allocation: on a GPU
/// such a copy fails instead of overrunning the allocation.
inline cudaError_t check_transfer(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                                  const char* how, const char* file, int line) {
  if (const int sticky = cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  if (bytes == 0) return cudaSuccess;
  const bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  const char* bad = nullptr;
  const auto on_device = [bytes](const void* p) { return is_device_range(p, bytes) || is_device_symbol_range(p, bytes); };
  if (kind > cudaMemcpyDefault) bad = "the copy kind is not a cudaMemcpyKind";
  else if (dst_device && !on_device(dst))
    bad = "the destination is not that many bytes inside one device allocation or __device__ variable";
  else if (src && src_device && !on_device(src))
    bad = "the source is not that many bytes inside one device allocation or __device__ variable";
  if (!bad) return cudaSuccess;
  std::fprintf(stderr, "[gpulab emu] %s:%d: %s of %zu bytes: %s (cudaErrorInvalidValue)\n", file, line, how, bytes,
               bad);
  return static_cast<cudaError_t>(cuda_record_error(cudaErrorInvalidValue));
}
}  // namespace gpulab::emu::shim

inline cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (const cudaError_t e = gpulab::emu::shim::check_transfer(dst, src, bytes, kind, "cudaMemcpy", file, line))
    return e;
  gpulab::emu::host_copy(dst, src, bytes, "cudaMemcpy", file, line);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t = nullptr, const char* file = __builtin_FILE(),
                                   int line = __builtin_LINE()) {
  if (const cudaError_t e = gpulab::emu::shim::check_transfer(dst, src, bytes, kind, "cudaMemcpyAsync", file, line))
    return e;
  gpulab::emu::host_copy(dst, src, bytes, "cudaMemcpyAsync", file, line);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, std::size_t bytes, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  if (const cudaError_t e =
          gpulab::emu::shim::check_transfer(p, nullptr, bytes, cudaMemcpyHostToDevice, "cudaMemset", file, line))
    return e;
  gpulab::emu::host_fill(p, value, bytes, "cudaMemset", file, line);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t = nullptr,
                                   const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (const cudaError_t e =
          gpulab::emu::shim::check_transfer(p, nullptr, bytes, cudaMemcpyHostToDevice, "cudaMemsetAsync", file, line))
    return e;
  gpulab::emu::host_fill(p, value, bytes, "cudaMemsetAsync", file, line);
  return cudaSuccess;
}

// ---- __device__ and __constant__ variables ("symbols") -------------------------------------
// On the emulator a symbol is the variable itself: the copies read and write it through the
// runtime (host_copy, so the watch sees the write), and its address is what cudaGetSymbolAddress
// gives, which later copies and fills (cudaMemsetAsync) may target (note_device_symbol).
namespace gpulab::emu::shim {
/// cudaErrorInvalidValue (explained on stderr) unless [offset, offset + count) lies in the
/// symbol's `size` bytes and, for a device-to-device copy, `other` (the copy's other side) is
/// device memory; cudaErrorInvalidMemcpyDirection for a kind that does not fit.
inline cudaError_t check_symbol_copy(std::size_t size, std::size_t count, std::size_t offset, cudaMemcpyKind kind,
                                     bool to_symbol, const void* other, const char* how, const char* file, int line) {
  if (const int sticky = cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  const bool host_side = kind == (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
  if (!host_side && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return static_cast<cudaError_t>(cuda_record_error(cudaErrorInvalidMemcpyDirection));
  if (offset > size || count > size - offset) {
    std::fprintf(stderr, "[gpulab emu] %s:%d: %s of %zu bytes at offset %zu: the variable has %zu bytes (cudaErrorInvalidValue)\n",
                 file, line, how, count, offset, size);
    return static_cast<cudaError_t>(cuda_record_error(cudaErrorInvalidValue));
  }
  if (kind == cudaMemcpyDeviceToDevice && count && !is_device_range(other, count) && !is_device_symbol_range(other, count)) {
    std::fprintf(stderr, "[gpulab emu] %s:%d: %s of %zu bytes, device to device: the %s is not device memory (cudaErrorInvalidValue)\n",
                 file, line, how, count, to_symbol ? "source" : "destination");
    return static_cast<cudaError_t>(cuda_record_error(cudaErrorInvalidValue));
  }
  return cudaSuccess;
}
}  // namespace gpulab::emu::shim

template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, std::size_t count, std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice, const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
  namespace emu = gpulab::emu;
  if (const cudaError_t e =
          emu::shim::check_symbol_copy(sizeof(T), count, offset, kind, true, src, "cudaMemcpyToSymbol", file, line))
    return e;
  char* dst = reinterpret_cast<char*>(const_cast<T*>(&symbol)) + offset;
  emu::note_device_symbol(&symbol, sizeof(T));
  emu::host_copy(dst, src, count, "cudaMemcpyToSymbol", file, line);
  return cudaSuccess;
}
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, std::size_t count, std::size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t = nullptr,
                                    const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind, file, line);
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, std::size_t count, std::size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost, const char* file = __builtin_FILE(),
                                 int line = __builtin_LINE()) {
  namespace emu = gpulab::emu;
  if (const cudaError_t e =
          emu::shim::check_symbol_copy(sizeof(T), count, offset, kind, false, dst, "cudaMemcpyFromSymbol", file, line))
    return e;
  emu::note_device_symbol(&symbol, sizeof(T));
  emu::host_copy(dst, reinterpret_cast<const char*>(&symbol) + offset, count, "cudaMemcpyFromSymbol", file, line);
  return cudaSuccess;
}
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, std::size_t count, std::size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t = nullptr,
                                      const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind, file, line);
}
/// The variable's device address: on the emulator, its own.
template <class T>
cudaError_t cudaGetSymbolAddress(void** address, const T& symbol) {
  if (!address) return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorInvalidValue));
  gpulab::emu::note_device_symbol(&symbol, sizeof(T));
  *address = const_cast<void*>(static_cast<const void*>(&symbol));
  return cudaSuccess;
}
template <class T>
cudaError_t cudaGetSymbolSize(std::size_t* size, const T&) {
  if (!size) return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorInvalidValue));
  *size = sizeof(T);
  return cudaSuccess;
}
