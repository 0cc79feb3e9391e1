// The portability layer on the back-end it was built for: the same test file runs on the
// emulator, on NVIDIA GPUs (cuda preset) and on AMD GPUs (rocm preset). Only behaviour that every
// back-end shares is tested here; the emulator's diagnostics are tested in common/emu/tests.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

using gpulab::DeviceBuffer;
using gpulab::launch;

namespace {

__global__ void linear_ids(int* out) {
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[b * (blockDim.x * blockDim.y * blockDim.z) + t] = static_cast<int>(b * 1000 + t);
}

__global__ void warp_sums(const int* in, int* out, int* lanes) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(o));
  int x = in[i];
  for (int m = warpSize / 2; m > 0; m /= 2) x += __shfl_xor_sync(gpulab::full_mask(), x, m);
  const unsigned long long ballot = __ballot_sync(gpulab::full_mask(), in[i] > 0);
  if (gpulab::lane_id() == 0) {
    out[3 * (i / warpSize)] = v;
    out[3 * (i / warpSize) + 1] = x;
    out[3 * (i / warpSize) + 2] = __popcll(ballot);
  }
  if (i == 0) *lanes = warpSize;
}

__global__ void atomics(int* i, float* f) {
  atomicAdd(&i[0], 1);
  atomicMax(&i[1], static_cast<int>(threadIdx.x));
  atomicCAS(&i[2], 0, 5);
  atomicExch(&i[3], 9);
  atomicAdd(f, 0.25f);
}

__global__ void block_reverse_dynamic(const float4* in, float4* out) {
  float4* tile = gpulab::dynamic_shared<float4>();
  tile[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

__global__ void bit_and_math(int* out, float* fout) {
  out[0] = __popc(0xF0F0u);
  out[1] = __clz(1);
  out[2] = __ffs(8);
  out[3] = __float_as_int(1.0f);
  out[4] = min(3, 7) + max(3, 7);
  fout[0] = rsqrtf(4.0f);
  fout[1] = fmaf(2.0f, 3.0f, 1.0f);
  fout[2] = __int_as_float(0x40000000);
}

}  // namespace

TEST(Portability, IndexBuiltinsIn3D) {
  const dim3 grid(2, 3, 2), block(4, 2, 3);
  DeviceBuffer<int> out(12 * 24);
  launch(linear_ids, grid, block, 0, out.data());
  const auto h = out.download();
  for (int b = 0; b < 12; ++b)
    for (int t = 0; t < 24; ++t) EXPECT_EQ(h[b * 24 + t], b * 1000 + t);
}

TEST(Portability, WarpCollectivesAtTheDevicesWarpSize) {
  const int threads = 256;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = i % 5 - 1;
  DeviceBuffer<int> d_in(in), out(3 * threads), lanes(1);
  launch(warp_sums, 1, threads, 0, d_in.data(), out.data(), lanes.data());
  const int ws = lanes.download()[0];
  EXPECT_EQ(ws, gpulab::device_info().warp_size);
  const auto h = out.download();
  for (int w = 0; w < threads / ws; ++w) {
    const int sum = std::accumulate(in.begin() + w * ws, in.begin() + (w + 1) * ws, 0);
    int positive = 0;
    for (int l = 0; l < ws; ++l) positive += in[w * ws + l] > 0;
    EXPECT_EQ(h[3 * w], sum) << "__shfl_down_sync, warp " << w;
    EXPECT_EQ(h[3 * w + 1], sum) << "__shfl_xor_sync, warp " << w;
    EXPECT_EQ(h[3 * w + 2], positive) << "__ballot_sync, warp " << w;
  }
}

TEST(Portability, Atomics) {
  DeviceBuffer<int> i(std::vector<int>{0, -1, 0, 0});
  DeviceBuffer<float> f(std::vector<float>{0.0f});
  launch(atomics, 3, 128, 0, i.data(), f.data());
  const auto h = i.download();
  EXPECT_EQ(h[0], 384);
  EXPECT_EQ(h[1], 127);
  EXPECT_EQ(h[2], 5);
  EXPECT_EQ(h[3], 9);
  EXPECT_FLOAT_EQ(f.download()[0], 96.0f);
}

TEST(Portability, DynamicSharedMemoryAndTheOptInBeyond48KiB) {
  const int threads = 1024, blocks = 2;  // 1024 float4 = 16 KiB used; 64 KiB asked for
  std::vector<float> h(4 * threads * blocks);
  std::iota(h.begin(), h.end(), 0.0f);
  DeviceBuffer<float> in(h), out(h.size());
  const auto* in4 = reinterpret_cast<const float4*>(in.data());
  auto* out4 = reinterpret_cast<float4*>(out.data());
  launch(block_reverse_dynamic, blocks, threads, threads * sizeof(float4), in4, out4);
  EXPECT_THROW(launch(block_reverse_dynamic, blocks, threads, 64 * 1024, in4, out4), gpulab::Error);
  gpulab::set_max_dynamic_shared(block_reverse_dynamic, 64 * 1024);
  launch(block_reverse_dynamic, blocks, threads, 64 * 1024, in4, out4);
  const auto r = out.download();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t)
      for (int c = 0; c < 4; ++c)
        ASSERT_EQ(r[4 * (b * threads + t) + c], h[4 * (b * threads + threads - 1 - t) + c]);
}

TEST(Portability, BitAndMathFunctions) {
  DeviceBuffer<int> i(5);
  DeviceBuffer<float> f(3);
  launch(bit_and_math, 1, 1, 0, i.data(), f.data());
  EXPECT_EQ(i.download(), (std::vector<int>{8, 31, 4, 0x3F800000, 10}));
  const auto h = f.download();
  EXPECT_NEAR(h[0], 0.5f, 1e-6f);
  EXPECT_EQ(h[1], 7.0f);
  EXPECT_EQ(h[2], 2.0f);
}

TEST(Portability, InvalidLaunchNamesTheLine) {
  DeviceBuffer<int> out(4);
  const int line = __LINE__ + 2;
  try {
    launch(linear_ids, 1, dim3(64, 64), 0, out.data());
    FAIL() << "a 4096-thread block must be refused";
  } catch (const gpulab::Error& e) {
    EXPECT_NE(std::string(e.what()).find("test_portability.cu:" + std::to_string(line)), std::string::npos) << e.what();
  }
}

TEST(Portability, DeviceInfoAndEvents) {
  const gpulab::DeviceInfo d = gpulab::device_info();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.multiprocessors, 0);
  EXPECT_TRUE(d.warp_size == 32 || d.warp_size == 64);
  EXPECT_GE(d.shared_per_block, 48u * 1024);
  gpulab::Event a, b;
  DeviceBuffer<int> out(1 << 20);
  a.record();
  launch(linear_ids, 1 << 12, 256, 0, out.data());
  b.record();
  EXPECT_GE(b.elapsed_ms_since(a), 0.0f);
  gpulab::synchronize();
}
