// Validation kernels for the emulator's memory metrics: every kernel is launched once, in source
// order, so that the emulator's per-launch report and Nsight Compute's per-kernel metrics can be
// paired by position (tools/validation/compare.py). Runs on every back-end:
//   emu : build/emu/tools/validation/gpulab-validation-kernels  (prints the emulator's report;
//         GPULAB_METRICS_TSV=FILE also writes it as a table)
//   cuda: ncu --metrics ... build/cuda/tools/validation/gpulab-validation-kernels
// tools/validation/validate.sh does both and compares (docs/emulator-metrics.md).
#include <cstdio>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

// Lab 01's own kernels: the stub (thread per row) and the reference (block per row, float4).
namespace stub {
#include "../../labs/01-coalescing/row_sum.cu"
}
namespace reference {
#include "../../solutions/01-coalescing/row_sum.cu"
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
  gpulab::synchronize();
  std::printf("validation kernels: done\n");
  return 0;
}
