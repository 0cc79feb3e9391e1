// Lab 03, step 4: the tiled transpose with an XOR swizzle: tile[32][32], no padding.
//
// Element (row k, column x) of the tile is stored at tile[k][x ^ k]. XOR with a fixed k permutes
// 0..31, so a row access (fixed k, lanes x = 0..31) still touches 32 different columns, one per
// bank. The column read of lane x wants element (x, j) and finds it at tile[x][j ^ x]: word
// 32*x + (j ^ x), bank j ^ x, again a permutation of 0..31 over the lanes: 1 wavefront, and no
// shared memory is spent on padding. For doubles the column of tile[x][j ^ x] is 2*(j ^ x) words
// into the row: banks pair up as with padding (lanes x and x ^ 16), 2 wavefronts, the least.
// The swizzle needs the tile width to be a power of two (XOR must stay inside the row).
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 32, kRowsPerPass = 8;

template <class T>
__global__ void transpose_tiled_swizzled(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[kTile][kTile];
  const int x = threadIdx.x;
  const int c = blockIdx.x * kTile + x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int r = blockIdx.y * kTile + k;
    if (r < rows && c < cols) tile[k][x ^ k] = in[static_cast<long long>(r) * cols + c];
  }
  __syncthreads();
  const int r = blockIdx.y * kTile + x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int oc = blockIdx.x * kTile + k;
    if (oc < cols && r < rows) out[static_cast<long long>(oc) * rows + r] = tile[x][k ^ x];
  }
}

dim3 tiles(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_tiled_swizzled<float><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  transpose_tiled_swizzled<double><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}
