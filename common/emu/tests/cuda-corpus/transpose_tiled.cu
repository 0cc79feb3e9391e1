// Out-of-place transpose of a rows x cols matrix whose sides are not multiples of the tile:
// a naive version, a shared-memory tile, and the same tile padded by one column so that the
// column reads of the tile do not fall in one shared-memory bank.
// Covers: dim3 two-dimensional grids and blocks, template kernels (tile and padding), static
// __shared__ 2-D arrays, cudaEvent timing.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(err_));                                               \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // blockDim = (kTile, kRowsPerPass): 256 threads

__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}

template <int TILE, int ROWS, int PAD>
__global__ void transpose_shared(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + PAD];
  const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
  for (int dy = threadIdx.y; dy < TILE; dy += ROWS) {
    const int r = r0 + dy, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[dy][threadIdx.x] = in[static_cast<size_t>(r) * cols + c];
  }
  __syncthreads();
  // Output row = input column c0 + dy, output column = input row r0 + threadIdx.x.
  for (int dy = threadIdx.y; dy < TILE; dy += ROWS) {
    const int orow = c0 + dy, ocol = r0 + threadIdx.x;
    if (orow < cols && ocol < rows) out[static_cast<size_t>(orow) * rows + ocol] = tile[threadIdx.x][dy];
  }
}

int main() {
  CHECK(cudaSetDevice(0));
  const int rows = 1000, cols = 700;
  const size_t count = static_cast<size_t>(rows) * cols;
  std::vector<float> h(count), got(count);
  std::mt19937 gen(99);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (float& v : h) v = dist(gen);
  float *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_in, count * sizeof(float)));
  CHECK(cudaMalloc(&d_out, count * sizeof(float)));
  CHECK(cudaMemcpy(d_in, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  int failures = 0;
  const dim3 tiled_block(kTile, kRowsPerPass);
  const dim3 tiled_grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
  const dim3 naive_block(32, 8);
  const dim3 naive_grid((cols + 31) / 32, (rows + 7) / 8);
  for (int version = 0; version < 3; ++version) {
    const char* name = version == 0 ? "naive" : version == 1 ? "shared_tile" : "shared_tile_padded";
    CHECK(cudaMemset(d_out, 0, count * sizeof(float)));
    CHECK(cudaEventRecord(start));
    if (version == 0)
      transpose_naive<<<naive_grid, naive_block>>>(d_in, d_out, rows, cols);
    else if (version == 1)
      transpose_shared<kTile, kRowsPerPass, 0><<<tiled_grid, tiled_block>>>(d_in, d_out, rows, cols);
    else
      transpose_shared<kTile, kRowsPerPass, 1><<<tiled_grid, tiled_block>>>(d_in, d_out, rows, cols);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0.0;  // a transpose moves values: exact
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const double e = std::fabs(got[static_cast<size_t>(c) * rows + r] - h[static_cast<size_t>(r) * cols + c]);
        if (std::isnan(e) || e > err) err = e;
      }
    const bool ok = err == 0.0;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  return failures ? 1 : 0;
}
