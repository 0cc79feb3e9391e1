// A playground example: `./gpulab run docs/examples/transpose.cu`. Three transposes of a 256 x 256
// matrix; the emulator's report shows why the tiled one with a padded tile is the one to write.
#include <cstdio>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

constexpr int kTile = 32;

// Reads rows, writes columns: each warp's store touches 32 different sectors.
__global__ void transpose_naive(const float* in, float* out, int n) {
  const int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  out[x * n + y] = in[y * n + x];
}

// Through a shared tile: both global accesses coalesced. With PAD = 0 the column read of the
// tile hits one bank 32 times (32 wavefronts); PAD = 1 spreads it over all 32 banks.
template <int PAD>
__global__ void transpose_tiled(const float* in, float* out, int n) {
  __shared__ float tile[kTile][kTile + PAD];
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

int main() {
  const int n = 256;
  std::vector<float> h(n * n);
  for (int i = 0; i < n * n; ++i) h[i] = static_cast<float>(i);
  gpulab::DeviceBuffer<float> in(h), out(h.size());
  const dim3 grid(n / kTile, n / kTile), block(kTile, kTile);
  gpulab::launch(transpose_naive, grid, block, 0, in.data(), out.data(), n);
  gpulab::launch(transpose_tiled<0>, grid, block, 0, in.data(), out.data(), n);
  gpulab::launch(transpose_tiled<1>, grid, block, 0, in.data(), out.data(), n);
  const auto r = out.download();
  int wrong = 0;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) wrong += r[x * n + y] != h[y * n + x];
  std::printf("transpose: %s\n", wrong ? "WRONG" : "correct");
  return wrong != 0;
}
