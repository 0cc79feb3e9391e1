// Lab 03, step 3: the tiled transpose with the tile padded by one element: tile[32][33].
//
// A row of the tile is now 33 elements long. For floats, tile[x][j] is word 33*x + j, in bank
// (33*x + j) % 32 = (x + j) % 32: the 32 lanes of the column read land in 32 different banks,
// 1 wavefront. The row accesses tile[k][x] stay in 32 different banks too. Cost: 32 floats
// (128 bytes) of shared memory per block that nobody reads.
// For doubles a row is 33*2 = 66 words: lane x's two words are in banks (2x + 2j) % 32 and the
// next one, so lanes x and x + 16 share a bank pair: 2 distinct words per bank = 2 wavefronts,
// which is the least 32 lanes x 8 bytes = 256 bytes can take (128 bytes per wavefront).
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 32, kRowsPerPass = 8;

template <class T>
__global__ void transpose_tiled_padded(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[kTile][kTile + 1];  // + 1: consecutive rows start one bank apart
  const int x = threadIdx.x;
  const int c = blockIdx.x * kTile + x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int r = blockIdx.y * kTile + k;
    if (r < rows && c < cols) tile[k][x] = in[static_cast<long long>(r) * cols + c];
  }
  __syncthreads();
  const int r = blockIdx.y * kTile + x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int oc = blockIdx.x * kTile + k;
    if (oc < cols && r < rows) out[static_cast<long long>(oc) * rows + r] = tile[x][k];
  }
}

dim3 tiles(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_tiled_padded<float><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  transpose_tiled_padded<double><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}
