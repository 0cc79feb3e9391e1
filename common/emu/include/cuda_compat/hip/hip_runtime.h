// <hip/hip_runtime.h> for the gpulab emulator: HIP's spelling of the same runtime. Every hip*
// name maps onto its cuda* twin of the emulator's CUDA shim (same codes, same sticky errors), and
// hipLaunchKernelGGL launches through gpulab::launch's checks, returning nothing (the launch's
// error is left for hipGetLastError, as in HIP).
#pragma once

#include "../cuda_runtime.h"

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaDeviceProp hipDeviceProp_t;
typedef cudaMemcpyKind hipMemcpyKind;
typedef cudaDeviceAttr hipDeviceAttribute_t;
typedef cudaFuncAttribute hipFuncAttribute;

#define hipSuccess cudaSuccess
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipErrorMemoryAllocation cudaErrorMemoryAllocation
#define hipErrorInvalidConfiguration cudaErrorInvalidConfiguration
#define hipErrorInvalidDevice cudaErrorInvalidDevice
#define hipErrorInvalidResourceHandle cudaErrorInvalidResourceHandle
#define hipErrorNotReady cudaErrorNotReady
#define hipErrorIllegalAddress cudaErrorIllegalAddress
#define hipErrorLaunchFailure cudaErrorLaunchFailure
#define hipErrorMisalignedAddress cudaErrorMisalignedAddress
#define hipMemcpyHostToHost cudaMemcpyHostToHost
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemcpyDefault cudaMemcpyDefault
#define hipStreamDefault cudaStreamDefault
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipEventDefault cudaEventDefault
#define hipEventDisableTiming cudaEventDisableTiming
#define hipHostMallocDefault cudaHostAllocDefault
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipDeviceAttributeMaxThreadsPerBlock cudaDevAttrMaxThreadsPerBlock
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeMaxSharedMemoryPerBlock cudaDevAttrMaxSharedMemoryPerBlock

#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipHostMalloc(p, bytes, flags) cudaHostAlloc(p, bytes, flags)
#define hipHostFree cudaFreeHost
#define hipMallocHost cudaMallocHost
#define hipFreeHost cudaFreeHost
#define hipMemGetInfo cudaMemGetInfo
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipDeviceReset cudaDeviceReset
#define hipSetDevice cudaSetDevice
#define hipGetDevice cudaGetDevice
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipEventCreate cudaEventCreate
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventQuery cudaEventQuery
#define hipEventElapsedTime cudaEventElapsedTime
#define hipStreamCreate cudaStreamCreate
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamQuery cudaStreamQuery
#define hipStreamWaitEvent cudaStreamWaitEvent
#define hipFuncSetAttribute(kernel, attr, value) cudaFuncSetAttribute(kernel, attr, value)

#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

/// A kernel template's name with commas: hipLaunchKernelGGL(HIP_KERNEL_NAME(k<8, float>), ...).
#define HIP_KERNEL_NAME(...) __VA_ARGS__
/// hipLaunchKernelGGL(kernel, grid, block, shared_bytes, stream, args...).
#define hipLaunchKernelGGL(kernel, grid, block, shared_bytes, stream, ...) \
  ((void)::gpulab::emu::launch_with_status(kernel, grid, block, shared_bytes, stream, ##__VA_ARGS__))

// HIP's mask-less warp functions (an AMD wavefront runs in lock-step): over the lanes active here.
template <class T>
T __shfl(T v, int src, int width = warpSize, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return __shfl_sync(__activemask(file, line), v, src, width, file, line);
}
template <class T>
T __shfl_up(T v, unsigned delta, int width = warpSize, const char* file = __builtin_FILE(),
            int line = __builtin_LINE()) {
  return __shfl_up_sync(__activemask(file, line), v, delta, width, file, line);
}
template <class T>
T __shfl_down(T v, unsigned delta, int width = warpSize, const char* file = __builtin_FILE(),
              int line = __builtin_LINE()) {
  return __shfl_down_sync(__activemask(file, line), v, delta, width, file, line);
}
template <class T>
T __shfl_xor(T v, int lane_mask, int width = warpSize, const char* file = __builtin_FILE(),
             int line = __builtin_LINE()) {
  return __shfl_xor_sync(__activemask(file, line), v, lane_mask, width, file, line);
}
inline unsigned long long __ballot(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return __ballot_sync(__activemask(file, line), pred, file, line);
}
