// Lab 03 reference: tiled transpose through a padded shared-memory tile (steps/3_padded.cu is
// the same kernel in the ladder; steps/4_swizzled.cu reaches the same metrics without padding).
//
// Per block: a 32 x 32 tile, 32 x 8 threads, 4 elements per thread.
//   global reads  : lane x reads column x of a row of `in`   -> neighbouring addresses
//   shared writes : tile[k][x]                                 -> 32 banks, 1 wavefront (floats)
//   global writes : lane x writes column x of a row of `out`  -> neighbouring addresses
//   shared reads  : tile[x][k], rows 33 words apart            -> banks (x + k) % 32, 1 wavefront
// For doubles every access takes 2 wavefronts, the least for 256 bytes (README, "8-byte elements").
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 32;        // tile edge, in elements
constexpr int kRowsPerPass = 8;  // block = kTile x kRowsPerPass threads

template <class T>
__global__ void transpose_padded_tile(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[kTile][kTile + 1];
  const int x = threadIdx.x;
  const int in_col = blockIdx.x * kTile + x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int in_row = blockIdx.y * kTile + k;
    if (in_row < rows && in_col < cols) tile[k][x] = in[static_cast<long long>(in_row) * cols + in_col];
  }
  // Every element of the tile is written by another thread than the one that reads it.
  __syncthreads();
  const int out_col = blockIdx.y * kTile + x;  // = a row of `in`
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int out_row = blockIdx.x * kTile + k;  // = a column of `in`
    if (out_row < cols && out_col < rows) out[static_cast<long long>(out_row) * rows + out_col] = tile[x][k];
  }
}

// One block per 32 x 32 tile of `in`: x over its columns, y over its rows.
dim3 tile_grid(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_padded_tile<float><<<tile_grid(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  transpose_padded_tile<double><<<tile_grid(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}
