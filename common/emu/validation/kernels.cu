// Validation kernels for the emulator's memory metrics: every kernel is launched once, in source
// order, so that the emulator's per-launch report and Nsight Compute's per-kernel metrics can be
// paired by position (common/emu/validation/compare.py). Runs on every back-end:
//   emu : build/emu/common/emu/validation/gpulab-validation-kernels  (prints the emulator's report;
//         GPULAB_METRICS_TSV=FILE also writes it as a table)
//   cuda: ncu --metrics ... build/cuda/common/emu/validation/gpulab-validation-kernels
// common/emu/validation/validate.sh does both and compares (docs/emulator-metrics.md).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

// Lab 01's own kernels: the stub (thread per row) and the reference (block per row, float4).
namespace stub {
#include "../../../grader/tests/submissions/01-coalescing/stub/row_sum.cu"  // the stub as shipped, not the working copy
}
namespace reference {
#include "../../../solutions/01-coalescing/row_sum.cu"
}

constexpr int kTile = 32;

// Lane i reads element i * stride: a warp spans 32 * stride * 4 bytes.
__global__ void strided_read(const float* in, float* out, int n, int stride) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[static_cast<long long>(i) * stride];
}

// A contiguous read that starts 4 bytes into a sector: 5 sectors for 128 bytes.
__global__ void misaligned_read(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i + 1];
}

struct Particle {  // 64 bytes, as in lab 02
  float x, y, z, vx, vy, vz, mass, charge;
  float pad[8];
};

__global__ void positions_aos(const Particle* p, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p[i].x + p[i].y + p[i].z;
}

__global__ void positions_soa(const float* x, const float* y, const float* z, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i] + z[i];
}

__global__ void transpose_naive(const float* in, float* out, int n) {
  const int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  out[x * n + y] = in[y * n + x];
}

template <int PAD>
__global__ void transpose_shared(const float* in, float* out, int n) {
  __shared__ float tile[kTile][kTile + PAD];
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void copy_float4(const float4* in, float4* out, int n4) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

// Shared memory at 4, 8 and 16 bytes per lane (float, float2, float4): one warp reads or writes
// the element index[lane] of a 16 KiB shared array `reps` times, for each lane pattern of
// kSharedPatterns. How the hardware serves 64- and 128-bit shared accesses (in phases of half and
// quarter warps) is what these launches measure; `zero` (0 at run time) keeps each access inside
// the loop.
inline __device__ float shared_sum(float v) { return v; }
inline __device__ float shared_sum(float2 v) { return v.x + v.y; }
inline __device__ float shared_sum(float4 v) { return v.x + v.y + v.z + v.w; }
inline __device__ void shared_make(float& v, float s) { v = s; }
inline __device__ void shared_make(float2& v, float s) { v = make_float2(s, s + 1); }
inline __device__ void shared_make(float4& v, float s) { v = make_float4(s, s + 1, s + 2, s + 3); }
constexpr int kSharedWords = 4096;

template <typename T>
__global__ void shared_width_load(const int* index, float* out, int reps, int zero) {
  __align__(16) __shared__ float words[kSharedWords];
  for (int i = threadIdx.x; i < kSharedWords; i += blockDim.x) words[i] = static_cast<float>(i);
  __syncthreads();
  const T* s = reinterpret_cast<const T*>(words);
  const int j = index[threadIdx.x];
  float acc = 0;
  for (int r = 0; r < reps; ++r) acc += shared_sum(s[j + r * zero]);
  out[threadIdx.x] = acc;
}

template <typename T>
__global__ void shared_width_store(const int* index, float* out, int reps, int zero) {
  __align__(16) __shared__ float words[kSharedWords];
  T* s = reinterpret_cast<T*>(words);
  const int j = index[threadIdx.x];
  for (int r = 0; r < reps; ++r) {
    T v;
    shared_make(v, static_cast<float>(r));
    s[j + r * zero] = v;
  }
  __syncthreads();
  out[threadIdx.x] = shared_sum(s[j]);
}

struct SharedPattern {
  const char* name;
  int (*element)(int lane);  // the element (of the access's width) lane 0-31 accesses
};
const SharedPattern kSharedPatterns[] = {
    {"contiguous", [](int i) { return i; }},
    {"same", [](int) { return 0; }},
    {"halves_same", [](int i) { return i / 16; }},
    {"quarters_same", [](int i) { return i / 8; }},
    {"eighths_same", [](int i) { return i / 4; }},
    {"pairs_same", [](int i) { return i / 2; }},
    {"mod16", [](int i) { return i % 16; }},
    {"mod8", [](int i) { return i % 8; }},
    {"mod4", [](int i) { return i % 4; }},
    {"stride2", [](int i) { return 2 * i; }},
    {"stride2_mod16", [](int i) { return 2 * (i % 16); }},
    {"stride4", [](int i) { return 4 * i; }},
    {"stride8", [](int i) { return 8 * i; }},
    {"stride32", [](int i) { return 32 * i; }},
    {"reverse", [](int i) { return 31 - i; }},
    {"quarter_pairs", [](int i) { return i % 8 + 8 * (i / 16); }},
    {"quarters_swapped", [](int i) { return i ^ 8; }},
    {"mod8_stride2", [](int i) { return 2 * (i % 8); }},
};

template <typename T>
void launch_shared_widths(const char* width, float* out) {
  const int reps = 64;
  for (const auto& p : kSharedPatterns) {
    std::vector<int> h(32);
    for (int lane = 0; lane < 32; ++lane) h[lane] = p.element(lane);
    gpulab::DeviceBuffer<int> index(h);
    gpulab::launch(shared_width_load<T>, 1, 32, 0, index.data(), out, reps, 0);
    std::printf("launch\tshared %s load %s\n", width, p.name);
    // Stores only where every lane has an element of its own (two lanes storing one word race).
    std::vector<int> sorted = h;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) continue;
    gpulab::launch(shared_width_store<T>, 1, 32, 0, index.data(), out, reps, 0);
    std::printf("launch\tshared %s store %s\n", width, p.name);
  }
}

int main() {
  const int n = 1 << 18, threads = 256, blocks = n / threads;
  std::vector<float> h(static_cast<std::size_t>(n) * 33, 1.0f);
  gpulab::DeviceBuffer<float> big(h), out(n), x(std::vector<float>(n, 1.0f)), y(std::vector<float>(n, 2.0f)),
      z(std::vector<float>(n, 3.0f));
  for (int stride : {1, 2, 4, 8, 32})
    gpulab::launch(strided_read, blocks, threads, 0, big.data(), out.data(), n, stride);
  gpulab::launch(misaligned_read, blocks, threads, 0, big.data(), out.data(), n);
  gpulab::DeviceBuffer<Particle> particles(n);
  gpulab::fill_bytes(particles.data(), 0x3F, particles.bytes());
  gpulab::launch(positions_aos, blocks, threads, 0, particles.data(), out.data(), n);
  gpulab::launch(positions_soa, blocks, threads, 0, x.data(), y.data(), z.data(), out.data(), n);
  const int m = 512;  // matrices: 512 x 512
  const dim3 grid(m / kTile, m / kTile), block(kTile, kTile);
  gpulab::launch(transpose_naive, grid, block, 0, big.data(), out.data(), m);
  gpulab::launch(transpose_shared<0>, grid, block, 0, big.data(), out.data(), m);
  gpulab::launch(transpose_shared<1>, grid, block, 0, big.data(), out.data(), m);
  gpulab::launch(copy_float4, n / 4 / threads, threads, 0, reinterpret_cast<const float4*>(big.data()),
                 reinterpret_cast<float4*>(out.data()), n / 4);
  stub::row_sum(big.data(), out.data(), m);
  reference::row_sum(big.data(), out.data(), m);
  launch_shared_widths<float>("32-bit", out.data());
  launch_shared_widths<float2>("64-bit", out.data());
  launch_shared_widths<float4>("128-bit", out.data());
  gpulab::synchronize();
  std::printf("validation kernels: done\n");
  return 0;
}
