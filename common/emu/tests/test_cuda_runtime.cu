// The CUDA runtime API of standalone CUDA programs on the emulator: error codes (sticky after a
// kernel fault, cleared by cudaGetLastError otherwise), launches that return codes instead of
// throwing, the device's properties, events, streams and host memory.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "emu_test_util.hpp"

namespace emu = gpulab::emu;

__global__ void add_one(int* data, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) data[i] += 1;
}

__global__ void write_past_the_end(int* data, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  data[i + n] = 1;  // every thread: n elements too far
}

__global__ void exit_before_barrier(int* data, int n) {
  if (static_cast<int>(threadIdx.x) >= n) return;
  data[threadIdx.x] = 1;
  __syncthreads();
}

/// Uses `bytes` of dynamic shared memory: fills it and writes its sum.
__global__ void fill_dynamic_shared(int* out, int bytes) {
  int* buf = gpulab::dynamic_shared<int>();
  const int n = bytes / 4;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) buf[i] = 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < n; ++i) s += buf[i];
    *out = s;
  }
}

/// Every test starts and ends with a clean error state (the sticky error lasts for the process).
class CudaRuntime : public ::testing::Test {
 protected:
  void SetUp() override { cudaDeviceReset(); }
  void TearDown() override { cudaDeviceReset(); }
};

TEST_F(CudaRuntime, MallocMemcpyLaunchRoundTrip) {
  const int n = 1000;
  std::vector<int> host(n);
  for (int i = 0; i < n; ++i) host[i] = i;
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d, host.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(emu::launch_with_status(add_one, (n + 255) / 256, 256, 0, nullptr, d, n), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(host.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], i + 1);
  EXPECT_EQ(cudaMemset(d, 0, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(host.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[7], 0);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

TEST_F(CudaRuntime, StreamOrderedAllocationIsDeviceMemory) {
  const int n = 300;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  int* d = nullptr;
  ASSERT_EQ(cudaMallocAsync(&d, n * sizeof(int), stream), cudaSuccess);
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(cudaMemsetAsync(d, 0, n * sizeof(int), stream), cudaSuccess);
  EXPECT_EQ(emu::launch_with_status(add_one, (n + 255) / 256, 256, 0, stream, d, n), cudaSuccess);
  std::vector<int> host(n, -1);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, stream), cudaSuccess);
  EXPECT_EQ(cudaFreeAsync(d, stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 1) << i;
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(CudaRuntime, PreferencesVersionsAndPrioritiesAreAccepted) {
  // What older or more detailed CUDA programs call before their launches: each succeeds and the
  // launch after them runs.
  EXPECT_EQ(cudaFuncSetCacheConfig(add_one, cudaFuncCachePreferShared), cudaSuccess);
  EXPECT_EQ(cudaFuncSetSharedMemConfig(add_one, cudaSharedMemBankSizeEightByte), cudaSuccess);
  EXPECT_EQ(cudaDeviceSetCacheConfig(cudaFuncCachePreferL1), cudaSuccess);
  EXPECT_EQ(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeFourByte), cudaSuccess);
  int runtime = 0, driver = 0, least = 1, greatest = 1;
  EXPECT_EQ(cudaRuntimeGetVersion(&runtime), cudaSuccess);
  EXPECT_EQ(cudaDriverGetVersion(&driver), cudaSuccess);
  EXPECT_GE(runtime, 12000);
  EXPECT_GE(driver, runtime);
  EXPECT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  EXPECT_LE(greatest, least);  // numerically lower is a greater priority
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest), cudaSuccess);
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0, 64 * sizeof(int)), cudaSuccess);
  EXPECT_EQ(emu::launch_with_status(add_one, 1, 64, 0, stream, d, 64), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<int> host(64);
  ASSERT_EQ(cudaMemcpy(host.data(), d, 64 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[63], 1);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

TEST_F(CudaRuntime, CopyBeyondAnAllocationIsInvalidValueNotACrash) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 16 * sizeof(int)), cudaSuccess);
  std::vector<int> host(1 << 20, 3);
  EXPECT_EQ(cudaMemcpy(d, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host.data(), d, host.size() * sizeof(int), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(d, 0, 17 * sizeof(int)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "not sticky";
  EXPECT_EQ(cudaMemcpy(d, host.data(), 16 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, host.data(), 16 * sizeof(int), cudaMemcpyDefault), cudaSuccess);
  cudaFree(d);
}

TEST_F(CudaRuntime, KernelFaultIsStickyForTheRestOfTheProcess) {
  const int n = 256;
  int *d = nullptr, *other = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&other, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(other, 0, n * sizeof(int)), cudaSuccess);
  // The launch itself is valid; the kernel's fault surfaces at the next call that synchronises.
  EXPECT_EQ(emu::launch_with_status(write_past_the_end, 1, 256, 0, nullptr, d, 1 << 24), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  // cudaGetLastError does not clear a sticky error: every later call returns it.
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorIllegalAddress);
  std::vector<int> host(n, -5);
  EXPECT_EQ(cudaMemcpy(host.data(), other, n * sizeof(int), cudaMemcpyDeviceToHost), cudaErrorIllegalAddress);
  EXPECT_EQ(host[0], -5) << "a copy after the fault must not happen";
  int* more = nullptr;
  EXPECT_EQ(cudaMalloc(&more, 64), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaErrorIllegalAddress);
  // A later launch does not run.
  EXPECT_EQ(emu::launch_with_status(add_one, 1, 256, 0, nullptr, other, n), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_STREQ(cudaGetErrorName(cudaDeviceSynchronize()), "cudaErrorIllegalAddress");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorIllegalAddress), "an illegal memory access was encountered");
  // cudaDeviceReset ends it (a fresh context).
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(emu::launch_with_status(add_one, 1, 256, 0, nullptr, other, n), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(host.data(), other, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[0], 1);
  cudaFree(d);
  cudaFree(other);
}

TEST_F(CudaRuntime, BarrierFaultIsALaunchFailure) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  // A block of 64 threads on data of 40: threads 40..63 return, the others wait at a barrier.
  EXPECT_EQ(emu::launch_with_status(exit_before_barrier, 1, 64, 0, nullptr, d, 40), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  cudaFree(d);
}

TEST_F(CudaRuntime, InvalidLaunchIsAnErrorCodeClearedByGetLastError) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4), cudaSuccess);
  // 2048 threads per block: cudaErrorInvalidConfiguration, not an exception.
  EXPECT_EQ(emu::launch_with_status(add_one, 1, 2048, 0, nullptr, d, 1), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "a launch error is not sticky";
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "cudaGetLastError clears a non-sticky error";
  // An empty grid.
  EXPECT_EQ(emu::launch_with_status(add_one, 0, 32, 0, nullptr, d, 1), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  // More dynamic shared memory than the default 48 KiB: cudaErrorInvalidValue.
  EXPECT_EQ(emu::launch_with_status(fill_dynamic_shared, 1, 128, 64 * 1024, nullptr, d, 64 * 1024),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaFree(d);
}

TEST_F(CudaRuntime, FuncSetAttributeRaisesTheDynamicSharedLimit) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4), cudaSuccess);
  const int bytes = 100 * 1024;
  ASSERT_EQ(cudaFuncSetAttribute(fill_dynamic_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
            cudaSuccess);
  EXPECT_EQ(emu::launch_with_status(fill_dynamic_shared, 1, 128, bytes, nullptr, d, bytes), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  int sum = 0;
  ASSERT_EQ(cudaMemcpy(&sum, d, 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(sum, bytes / 4);
  // Beyond the device's opt-in limit (227 KiB): cudaErrorInvalidValue.
  EXPECT_EQ(cudaFuncSetAttribute(fill_dynamic_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFuncSetAttribute(fill_dynamic_shared, cudaFuncAttributePreferredSharedMemoryCarveout, 100),
            cudaSuccess);
  cudaFree(d);
}

TEST_F(CudaRuntime, LaunchKernelTakesArgumentAddresses) {
  int* d = nullptr;
  const int n = 64;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0, n * sizeof(int)), cudaSuccess);
  int count = n;
  void* args[] = {&d, &count};
  EXPECT_EQ(cudaLaunchKernel(add_one, dim3(1), dim3(64), args, 0, nullptr), cudaSuccess);
  std::vector<int> host(n);
  ASSERT_EQ(cudaMemcpy(host.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[n - 1], 1);
  cudaFree(d);
}

TEST_F(CudaRuntime, DevicePropertiesAreTheEmulators) {
  int count = 0, device = -1;
  EXPECT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_NE(std::strstr(prop.name, "emulator"), nullptr) << prop.name;
  EXPECT_EQ(prop.warpSize, emu::warp_size());
  EXPECT_EQ(prop.sharedMemPerBlock, 48u * 1024);
  EXPECT_EQ(prop.sharedMemPerBlockOptin, 227u * 1024);
  EXPECT_EQ(prop.maxThreadsPerBlock, 1024);
  EXPECT_EQ(prop.multiProcessorCount, 132);  // fixed: not the worker threads (host_emu.cpp)
  EXPECT_EQ(prop.totalGlobalMem, emu::device_memory_bytes());
  EXPECT_GT(prop.clockRate, 0);
  EXPECT_EQ(prop.major, 9);
  int ws = 0, smem = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&ws, cudaDevAttrWarpSize, 0), cudaSuccess);
  EXPECT_EQ(ws, emu::warp_size());
  EXPECT_EQ(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
  EXPECT_EQ(smem, 227 * 1024);
  std::size_t free_bytes = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  EXPECT_EQ(total, emu::device_memory_bytes());
  EXPECT_LE(free_bytes, total);
}

TEST_F(CudaRuntime, EventsMeasureHostTimeAndStreamsRunInOrder) {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  float ms = -1;
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaErrorInvalidResourceHandle) << "not recorded yet";
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  const int n = 512;
  int* host = nullptr;
  ASSERT_EQ(cudaMallocHost(&host, n * sizeof(int)), cudaSuccess);
  for (int i = 0; i < n; ++i) host[i] = 2 * i;
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(int)), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(start, stream), cudaSuccess);
  EXPECT_EQ(cudaMemsetAsync(d, 0, n * sizeof(int), stream), cudaSuccess);
  EXPECT_EQ(cudaMemcpyAsync(d, host, n * sizeof(int), cudaMemcpyHostToDevice, stream), cudaSuccess);
  EXPECT_EQ(emu::launch_with_status(add_one, 2, 256, 0, stream, d, n), cudaSuccess);
  EXPECT_EQ(cudaMemcpyAsync(host, d, n * sizeof(int), cudaMemcpyDeviceToHost, stream), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(stop, stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(host[10], 21);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(stop), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(host), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

TEST_F(CudaRuntime, ErrorNamesAndStrings) {
  EXPECT_STREQ(cudaGetErrorString(cudaSuccess), "no error");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidConfiguration), "cudaErrorInvalidConfiguration");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorLaunchFailure), "unspecified launch failure");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorMisalignedAddress), "cudaErrorMisalignedAddress");
}
