// The CUDA runtime shim's device, event and stream functions on the emulator
// (gpulab/emu/cuda_runtime_shim.hpp). The error state lives in the emulator library
// (common/emu/src/cuda_status.cpp).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

struct CUevent_st {
  std::chrono::steady_clock::time_point when{};
  bool recorded = false;
};
struct CUstream_st {
  unsigned flags = 0;
};

namespace {
cudaError_t fail(cudaError_t e) { return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(e)); }
cudaError_t sticky() { return static_cast<cudaError_t>(gpulab::emu::cuda_sticky_error()); }
}  // namespace

extern "C" {

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidSymbol: return "cudaErrorInvalidSymbol";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchTimeout: return "cudaErrorLaunchTimeout";
    case cudaErrorMisalignedAddress: return "cudaErrorMisalignedAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorUnknown: return "cudaErrorUnknown";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorMisalignedAddress: return "misaligned address";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorUnknown: return "unknown error";
  }
  return "unrecognized error code";
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return fail(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  if (!device) return fail(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!prop) return fail(cudaErrorInvalidValue);
  if (device != 0) return fail(cudaErrorInvalidDevice);
  const gpulab::DeviceInfo d = gpulab::device_info();
  std::memset(prop, 0, sizeof *prop);
  std::strncpy(prop->name, d.name.c_str(), sizeof prop->name - 1);
  prop->totalGlobalMem = d.global_bytes;
  prop->sharedMemPerBlock = d.shared_per_block;
  prop->sharedMemPerBlockOptin = d.shared_per_block_optin;
  prop->reservedSharedMemPerBlock = 1024;
  prop->sharedMemPerMultiprocessor = static_cast<int>(d.shared_per_block_optin + 1024);
  prop->regsPerBlock = 65536;
  prop->regsPerMultiprocessor = 65536;
  prop->warpSize = d.warp_size;
  prop->memPitch = 2147483647;
  prop->maxThreadsPerBlock = d.max_threads_per_block;
  prop->maxThreadsDim[0] = 1024;
  prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = 65535;
  prop->maxGridSize[2] = 65535;
  prop->clockRate = 1000000;  // nominal 1 GHz: clock64() counts nanoseconds
  prop->memoryClockRate = 1000000;
  prop->memoryBusWidth = 64;
  prop->totalConstMem = 65536;
  prop->major = 9;
  prop->minor = 0;
  prop->textureAlignment = 512;
  prop->deviceOverlap = 1;
  prop->multiProcessorCount = d.multiprocessors;
  prop->canMapHostMemory = 0;
  prop->concurrentKernels = 1;
  prop->asyncEngineCount = 1;
  prop->unifiedAddressing = 1;
  prop->l2CacheSize = static_cast<int>(d.l2_bytes);
  prop->maxThreadsPerMultiProcessor = 2048;
  prop->maxBlocksPerMultiProcessor = 32;
  prop->cooperativeLaunch = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!value) return fail(cudaErrorInvalidValue);
  cudaDeviceProp p;
  if (const cudaError_t e = cudaGetDeviceProperties(&p, device); e != cudaSuccess) return e;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); break;
    case cudaDevAttrTotalConstantMemory: *value = static_cast<int>(p.totalConstMem); break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = p.clockRate; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrMemoryClockRate: *value = p.memoryClockRate; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(p.sharedMemPerBlockOptin); break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
    default: return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  if (const cudaError_t e = sticky(); e != cudaSuccess) return e;
  const std::size_t total = gpulab::emu::device_memory_bytes(), used = gpulab::emu::device_memory_used();
  if (free_bytes) *free_bytes = total > used ? total - used : 0;
  if (total_bytes) *total_bytes = total;
  return cudaSuccess;
}

cudaError_t cudaDeviceReset() {
  gpulab::emu::cuda_reset_errors();
  return cudaSuccess;
}

// ---- events: host wall time ---------------------------------------------------------------
cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  if (!event) return fail(cudaErrorInvalidValue);
  *event = new (std::nothrow) CUevent_st;
  return *event ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  if (const cudaError_t e = sticky(); e != cudaSuccess) return e;
  event->when = std::chrono::steady_clock::now();  // all work issued before it is done
  event->recorded = true;
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  return sticky();
}
cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  return sticky();
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return fail(cudaErrorInvalidValue);
  if (!start || !end) return fail(cudaErrorInvalidResourceHandle);
  if (const cudaError_t e = sticky(); e != cudaSuccess) return e;
  if (!start->recorded || !end->recorded) return fail(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

// ---- streams: ordered queues, run at once -------------------------------------------------
cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (!stream) return fail(cudaErrorInvalidValue);
  *stream = new (std::nothrow) CUstream_st{flags};
  return *stream ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == cudaStreamLegacy || stream == cudaStreamPerThread) return fail(cudaErrorInvalidResourceHandle);
  delete stream;  // nullptr (the default stream): nothing
  return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t) { return sticky(); }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t event, unsigned) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  return sticky();
}

// ---- page-locked host memory: ordinary host memory ----------------------------------------
cudaError_t cudaMallocHost(void** p, std::size_t bytes) { return cudaHostAlloc(p, bytes, cudaHostAllocDefault); }
cudaError_t cudaHostAlloc(void** p, std::size_t bytes, unsigned) {
  if (!p) return fail(cudaErrorInvalidValue);
  *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096 + (bytes == 0 ? 4096 : 0));
  return *p ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaFreeHost(void* p) {
  std::free(p);
  return cudaSuccess;
}

}  // extern "C"
