// Lab 03 reference: tiled transpose through a padded 64 x 64 shared-memory tile, 32 x 16 threads,
// every loop with a trip count the compiler knows. The ladder: steps/01_naive.cu,
// steps/02_tiled_unpadded.cu, steps/03_padded.cu (the same padding on a 32 x 32 tile),
// steps/04_swizzled.cu (the same bank metrics without padding), then this file.
//
// Why 64 x 64: the padded 32 x 32 tile (step 3) moves 4 elements per thread and reached 0.84 of
// the copy kernel at 8192^2 floats in the grader's runs on the H200. This tile gives each thread
// 8 loads in flight before the barrier, and a block moves 4x as many bytes per barrier: 1.01 of
// copy at 8192^2 (docs/results/lab03-h200.md has the runs and the command).
//
// Banks: a row of the tile is 65 words (floats), so element (r, c) is in bank (r + c) % 32.
//   global reads  : lane x reads column x (+ 32h) of a row of `in`  -> neighbouring addresses
//   shared writes : tile[k][x + 32h], lanes x = 0..31               -> 32 banks, 1 wavefront
//   shared reads  : tile[x + 32h][k], lanes x = 0..31               -> banks (x + k) % 32, 1 wavefront
//   global writes : lane x writes column x (+ 32h) of a row of `out` -> neighbouring addresses
// Doubles: a row is 130 words, so lanes x and x + 16 share a bank pair: 2 wavefronts, the least
// for 256 bytes (README, "8-byte elements"); the tile is 33,280 bytes, under the 48 KiB of static
// shared memory a block may declare.
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 64;          // tile edge, in elements
constexpr int kLanes = 32;         // threads along x; each covers kTile / kLanes columns
constexpr int kRowsPerPass = 16;   // threads along y; each covers kTile / kRowsPerPass rows

template <class T>
__global__ void transpose_wide_tile(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[kTile][kTile + 1];
  const int x = threadIdx.x, y = threadIdx.y;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;  // the tile's corner in `in`
  // Interior tiles need no bounds test; edge tiles test every element.
  const bool interior = row0 + kTile <= rows && col0 + kTile <= cols;
#pragma unroll
  for (int j = 0; j < kTile / kRowsPerPass; ++j) {
    const int r = y + j * kRowsPerPass;
#pragma unroll
    for (int h = 0; h < kTile / kLanes; ++h) {
      const int c = x + h * kLanes;
      if (interior || (row0 + r < rows && col0 + c < cols))
        tile[r][c] = in[static_cast<long long>(row0 + r) * cols + col0 + c];
    }
  }
  // Every element of the tile is read by another thread than the one that wrote it.
  __syncthreads();
  // Row r of the output tile is column r of the input tile: out[col0 + r][row0 + c] = in[row0 + c][col0 + r].
#pragma unroll
  for (int j = 0; j < kTile / kRowsPerPass; ++j) {
    const int r = y + j * kRowsPerPass;
#pragma unroll
    for (int h = 0; h < kTile / kLanes; ++h) {
      const int c = x + h * kLanes;
      if (interior || (col0 + r < cols && row0 + c < rows))
        out[static_cast<long long>(col0 + r) * rows + row0 + c] = tile[c][r];
    }
  }
}

dim3 tile_grid(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_wide_tile<float><<<tile_grid(rows, cols), dim3(kLanes, kRowsPerPass)>>>(in, out, rows, cols);
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  transpose_wide_tile<double><<<tile_grid(rows, cols), dim3(kLanes, kRowsPerPass)>>>(in, out, rows, cols);
}
