// CUDA idioms that standalone programs and hand-ins use, on the emulator: kernel templates whose
// arguments a <<<>>> launch deduces (and overloaded kernels it chooses between), __constant__ and
// __device__ variables through the symbol API, the occupancy API and atomicInc / atomicDec.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

template <class T>
__global__ void scale(T* data, int n, T factor) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) data[i] *= factor;
}

template <int kAdd, class T>
__global__ void add_constant(T* data, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) data[i] += kAdd;
}

// Two kernels of one name: the launch's arguments choose, as a call's would.
__global__ void mark(int* data) { data[threadIdx.x] = 1; }
__global__ void mark(float* data) { data[threadIdx.x] = 2.0f; }

__global__ void store_null_check(int* out, const int* maybe) { *out = maybe == nullptr ? 7 : 8; }

__constant__ float c_coefficients[4];
__device__ int d_counter;

__global__ void weigh(const float* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = in[i] * c_coefficients[i % 4];
}

__global__ void count_into_symbol(int n) {
  if (static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) < n) atomicAdd(&d_counter, 1);
}

__global__ void tickets(unsigned* counter, unsigned* seen, unsigned limit) {
  seen[threadIdx.x] = atomicInc(counter, limit);
}
__global__ void countdown(unsigned* counter, unsigned* seen, unsigned limit) {
  seen[threadIdx.x] = atomicDec(counter, limit);
}

__global__ void uses_dynamic_shared(int* out) {
  extern __shared__ int scratch[];
  scratch[threadIdx.x] = 1;
  __syncthreads();
  if (threadIdx.x == 0) *out = scratch[blockDim.x - 1];
}

template <class T>
__global__ void templated_dynamic_shared(T* out) {
  extern __shared__ int scratch[];
  scratch[threadIdx.x] = 3;
  __syncthreads();
  if (threadIdx.x == 0) *out = static_cast<T>(scratch[0]);
}

class CudaIdioms : public ::testing::Test {
 protected:
  void SetUp() override { cudaDeviceReset(); }
  void TearDown() override { cudaDeviceReset(); }
};

template <class T>
std::vector<T> download(const T* d, int n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

TEST_F(CudaIdioms, LaunchDeducesTheKernelTemplatesArguments) {
  const int n = 300;
  std::vector<double> h(n, 1.5);
  double* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d, h.data(), n * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
  scale<<<(n + 127) / 128, 128>>>(d, n, 2.0);   // scale<double>
  add_constant<3><<<(n + 127) / 128, 128>>>(d, n);  // add_constant<3, double>: the rest deduced
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (double v : download(d, n)) ASSERT_EQ(v, 6.0);
  cudaFree(d);
}

TEST_F(CudaIdioms, LaunchChoosesAmongOverloadedKernels) {
  int* di = nullptr;
  float* df = nullptr;
  ASSERT_EQ(cudaMalloc(&di, 32 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&df, 32 * sizeof(float)), cudaSuccess);
  mark<<<1, 32>>>(di);
  mark<<<1, 32>>>(df);
  EXPECT_EQ(download(di, 32)[31], 1);
  EXPECT_EQ(download(df, 32)[31], 2.0f);
  cudaFree(di);
  cudaFree(df);
}

TEST_F(CudaIdioms, ArgumentsConvertToTheParametersOfAKnownKernel) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(int)), cudaSuccess);
  store_null_check<<<1, 1>>>(d, 0);  // a literal 0 is a null pointer, as in a call
  EXPECT_EQ(download(d, 1)[0], 7);
  cudaFree(d);
}

TEST_F(CudaIdioms, ADeducedLaunchIsCheckedAndMayUseGrantedSharedMemory) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(int)), cudaSuccess);
  scale<<<1, 2048>>>(d, 1, 2);  // too many threads: a launch error, nothing runs
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  // The templated launch has no kernel address: it may use what cudaFuncSetAttribute gave
  // the specialization (and any kernel), not more than the device's opt-in limit.
  ASSERT_EQ(cudaFuncSetAttribute(templated_dynamic_shared<int>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 64 * 1024),
            cudaSuccess);
  templated_dynamic_shared<<<1, 64, 64 * 1024>>>(d);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(download(d, 1)[0], 3);
  templated_dynamic_shared<<<1, 64, 300 * 1024>>>(d);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  cudaFree(d);
}

TEST_F(CudaIdioms, ConstantMemoryThroughTheSymbolApi) {
  const int n = 64;
  const float coefficients[4] = {1, 2, 3, 4};
  ASSERT_EQ(cudaMemcpyToSymbol(c_coefficients, coefficients, sizeof coefficients), cudaSuccess);
  float back[4] = {};
  ASSERT_EQ(cudaMemcpyFromSymbol(back, c_coefficients, sizeof back), cudaSuccess);
  EXPECT_EQ(back[3], 4.0f);
  // An offset, and a copy that does not fit: cudaErrorInvalidValue.
  const float two[2] = {10, 20};
  ASSERT_EQ(cudaMemcpyToSymbol(c_coefficients, two, sizeof two, 2 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemcpyToSymbol(c_coefficients, two, sizeof two, 3 * sizeof(float)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyToSymbol(c_coefficients, two, sizeof two, 0, cudaMemcpyDeviceToHost),
            cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
  std::vector<float> h(n, 1.0f);
  float *in = nullptr, *out = nullptr;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  weigh<<<1, n>>>(in, out, n);
  const std::vector<float> got = download(out, n);
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[2], 10.0f);
  EXPECT_EQ(got[7], 20.0f);
  // Device to device, from a device buffer into the symbol.
  ASSERT_EQ(cudaMemcpyToSymbol(c_coefficients, in, 4 * sizeof(float), 0, cudaMemcpyDeviceToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpyFromSymbol(back, c_coefficients, sizeof back), cudaSuccess);
  EXPECT_EQ(back[2], 1.0f);
  cudaFree(in);
  cudaFree(out);
}

TEST_F(CudaIdioms, DeviceVariableAddressTakesFillsAndCopies) {
  void* address = nullptr;
  std::size_t size = 0;
  ASSERT_EQ(cudaGetSymbolAddress(&address, d_counter), cudaSuccess);
  ASSERT_EQ(cudaGetSymbolSize(&size, d_counter), cudaSuccess);
  EXPECT_EQ(size, sizeof(int));
  ASSERT_EQ(cudaMemsetAsync(address, 0, sizeof(int), nullptr), cudaSuccess);
  count_into_symbol<<<4, 64>>>(200);
  int count = -1;
  ASSERT_EQ(cudaMemcpy(&count, address, sizeof count, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(count, 200);
  // Past the variable: not device memory.
  EXPECT_EQ(cudaMemset(address, 0, 2 * sizeof(int)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST_F(CudaIdioms, OccupancyFromTheDevicesLimits) {
  int blocks = 0;
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, 256, 0), cudaSuccess);
  EXPECT_EQ(blocks, 8);  // 2048 threads per multiprocessor
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, 32, 0), cudaSuccess);
  EXPECT_EQ(blocks, 32);  // at most 32 blocks
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, 128, 40 * 1024), cudaSuccess);
  EXPECT_EQ(blocks, 5);  // (227 + 1) KiB / (40 + 1) KiB
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, 128, 100 * 1024), cudaSuccess);
  EXPECT_EQ(blocks, 0);  // beyond the kernel's 48 KiB without cudaFuncSetAttribute
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, 2048, 0), cudaSuccess);
  EXPECT_EQ(blocks, 0);
  int min_grid = 0, block = 0;
  ASSERT_EQ(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, uses_dynamic_shared, 0, 0), cudaSuccess);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_EQ(block, 1024);
  EXPECT_EQ(min_grid, 2 * prop.multiProcessorCount);
  ASSERT_EQ(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, uses_dynamic_shared, 0, 200), cudaSuccess);
  EXPECT_LE(block, 200);
  EXPECT_EQ(block % prop.warpSize, 0);
  // Shared memory that grows with the block (200 bytes per thread): the size chosen keeps at least
  // as many threads resident as any other multiple of the warp size.
  const auto bytes_for = [](int threads) { return static_cast<std::size_t>(threads) * 200; };
  ASSERT_EQ(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&min_grid, &block, uses_dynamic_shared, bytes_for),
            cudaSuccess);
  ASSERT_GT(block, 0);
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, block, bytes_for(block)),
            cudaSuccess);
  EXPECT_EQ(min_grid, blocks * prop.multiProcessorCount);
  for (int size = prop.warpSize; size <= 1024; size += prop.warpSize) {
    int other = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&other, uses_dynamic_shared, size, bytes_for(size));
    EXPECT_LE(other * size, blocks * block) << size;
  }
  cudaFuncAttributes attributes;
  ASSERT_EQ(cudaFuncGetAttributes(&attributes, uses_dynamic_shared), cudaSuccess);
  EXPECT_EQ(attributes.maxThreadsPerBlock, 1024);
  EXPECT_EQ(attributes.maxDynamicSharedSizeBytes, 48 * 1024);
}

TEST_F(CudaIdioms, AtomicIncAndDecWrapAtTheLimit) {
  unsigned *counter = nullptr, *seen = nullptr;
  ASSERT_EQ(cudaMalloc(&counter, sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&seen, 64 * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(counter, 0, sizeof(unsigned)), cudaSuccess);
  tickets<<<1, 64>>>(counter, seen, 15);  // 64 tickets of 0..15: four rounds, back to 0
  EXPECT_EQ(download(counter, 1)[0], 0u);
  std::vector<unsigned> s = download(seen, 64);
  std::vector<int> times(16);
  for (unsigned v : s) ++times.at(v);
  for (int t : times) EXPECT_EQ(t, 4);
  countdown<<<1, 3>>>(counter, seen, 5);  // 0 -> 5 -> 4 -> 3
  EXPECT_EQ(download(counter, 1)[0], 3u);
  cudaFree(counter);
  cudaFree(seen);
}

}  // namespace
