// Names the device in the report: during its first call it writes an "info" event (the kind the
// kit sends once at start-up: device, driver, warp size) saying the run was on an H200, through
// stderr's FILE with its descriptor swapped for the record channel's (found without naming the
// FILE's members: the int that is 2 in stderr's FILE and 1 in stdout's). On a GPU grade the same
// event made a report claim "NVIDIA H200 (forged ...)". The reduction itself is correct.
// What stops it: the event carries no tag of the run's key (record-mac), and an info event after
// the checks began is out of the kit's order (record); either way the whole record is rejected.
// defence: record,record-mac
// expect: lab fail
// expect: correctness fail "the record was tampered with"
// expect: absent "forged by the hand-in"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpulab/gpu.hpp"
#include "reduce.hpp"

namespace {

int g_channel = -1;

[[gnu::constructor]] void find_channel(int argc, char** argv, char**) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--channel") g_channel = std::atoi(argv[i + 1]);
}

void append_text(std::vector<std::uint8_t>& b, const std::string& s) {  // a CBOR text string (< 256 bytes)
  b.push_back(0x78);
  b.push_back(static_cast<std::uint8_t>(s.size()));
  b.insert(b.end(), s.begin(), s.end());
}

void forge_device_name() {
  std::vector<std::uint8_t> e{0xa3};  // a map of 3 pairs
  for (const char* s : {"type", "info", "key", "device", "value", "NVIDIA H200 (forged by the hand-in)"}) append_text(e, s);
  int* descriptor = nullptr;
  for (int i = 0; i < 64 && !descriptor; ++i)
    if (reinterpret_cast<int*>(stderr)[i] == 2 && reinterpret_cast<int*>(stdout)[i] == 1)
      descriptor = reinterpret_cast<int*>(stderr) + i;
  if (!descriptor || g_channel < 0) return;
  const std::uint64_t size = e.size(), tag = 0x5eed5eed5eed5eedull;
  std::fflush(stderr);
  *descriptor = g_channel;
  std::fwrite(&size, sizeof size, 1, stderr);
  std::fwrite(e.data(), 1, e.size(), stderr);
  std::fwrite(&tag, sizeof tag, 1, stderr);
  std::fflush(stderr);
  *descriptor = 2;
}

__device__ float block_sums[1024];
__device__ unsigned int blocks_done;

__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(gpulab::full_mask(), v, offset);
  return v;
}

__device__ float block_sum(float v) {
  __shared__ float warp_sums[256];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    for (int w = lane; w < static_cast<int>(blockDim.x / warpSize); w += warpSize) v += warp_sums[w];
    v = warp_sum(v);
  }
  return v;
}

__global__ void reduce(const float* x, int n, float* result) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  v = block_sum(v);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  float w = 0.0f;
  for (int b = threadIdx.x; b < static_cast<int>(gridDim.x); b += blockDim.x) w += ((volatile float*)block_sums)[b];
  w = block_sum(w);
  if (threadIdx.x == 0) {
    *result = w;
    blocks_done = 0;
  }
}

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  static bool forged = false;
  if (!forged) forge_device_name();
  forged = true;
  const int blocks = (n + 1023) / 1024 < 1024 ? (n + 1023) / 1024 : 1024;
  reduce<<<blocks, 256>>>(x, n, result);
}
