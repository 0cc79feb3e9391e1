// Lab 03, step 2: through a shared-memory tile, unpadded: tile[32][32].
//
// The block reads a 32 x 32 tile of `in` row by row (lane x reads column x: coalesced) into
// tile[row][x], waits at the barrier, then writes row j of its output tile from column j of the
// shared tile: lane x reads tile[x][j] and stores out[...+ x] (coalesced). Both global sides now
// use 4 sectors per float request.
//
// The cost moved into shared memory: tile[x][j] lies at word 32*x + j, and word w is in bank
// w % 32, so all 32 lanes of the column read hit bank j, each at a different word: 32 wavefronts
// for one request (a 32-way bank conflict). For doubles, lane x reads words 64*x + 2j and
// 64*x + 2j + 1: banks 2j % 32 and 2j % 32 + 1 again for every lane, 32 wavefronts where 2 would do.
// Correct, and it fails the lab's shared-wavefront check on purpose.
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 32, kRowsPerPass = 8;

template <class T>
__global__ void transpose_tiled_unpadded(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[kTile][kTile];
  const int x = threadIdx.x;
  const int c = blockIdx.x * kTile + x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int r = blockIdx.y * kTile + k;
    if (r < rows && c < cols) tile[k][x] = in[static_cast<long long>(r) * cols + c];
  }
  __syncthreads();
  const int r = blockIdx.y * kTile + x;  // lane x now walks along a row of `out`
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int oc = blockIdx.x * kTile + k;  // row of `out` = column of `in`
    if (oc < cols && r < rows) out[static_cast<long long>(oc) * rows + r] = tile[x][k];
  }
}

dim3 tiles(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_tiled_unpadded<float><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  transpose_tiled_unpadded<double><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}
