// Lab 03: shared-memory bank conflicts. Read labs/03-bank-conflicts/README.md first.
//
// This file is correct but slow on purpose:
//   - transpose(): the naive kernel. Each warp reads 32 neighbouring floats of a row (one
//     128-byte request) but writes them 'rows' floats apart in `out`: 32 sectors per store
//     request, 4 useful bytes in each. Grade it with `./gpulab grade 03`.
//   - transpose_double(): already tiled through shared memory, so both global sides are
//     coalesced, but its shared tile has a bank conflict. Work out how many wavefronts its
//     column read needs (README, "Exercise 2: 8-byte elements") before you change it.
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 32;  // a tile is 32 x 32 elements
constexpr int kRowsPerPass = 8;  // a block is 32 x 8 threads; each thread moves 4 elements

// Thread (x, y) of block (bx, by) copies in[r][c] to out[c][r] for c = bx*32 + x and
// r = by*32 + y, y + 8, y + 16, y + 24. Reads: lane x reads column c, neighbours are 4 bytes apart
// (coalesced). Writes: lane x writes row c of out, neighbours are rows*4 bytes apart (scattered).
__global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * kTile + threadIdx.x;
  for (int k = 0; k < kTile; k += kRowsPerPass) {
    const int r = blockIdx.y * kTile + threadIdx.y + k;
    if (r < rows && c < cols) out[static_cast<long long>(c) * rows + r] = in[static_cast<long long>(r) * cols + c];
  }
}

// TODO(student), exercise 1 (README, "The ladder"): write a tiled transpose.
//   1. __shared__ float tile[32][?]; the block reads a 32 x 32 tile of `in` row by row into it
//      (lane x reads column x: coalesced), then __syncthreads();
//   2. it writes the tile out row by row of `out`, i.e. column by column of the tile: lane x
//      reads tile[x][...] and writes out[...] at neighbouring addresses (coalesced);
//   3. step 2 reads a column of the tile. With tile[32][32] the 32 lanes hit one bank: 32
//      wavefronts per request. Pad the row ([32][33]) or swizzle the column index (XOR) so that
//      every shared access needs 1 wavefront;
//   4. guard the edges: rows and cols are any values >= 1, not only multiples of 32.
// Then launch it below instead of transpose_naive, with the same grid and block: one block per
// 32 x 32 tile of `in` (the swap of block indices happens inside the kernel, where it writes out).

// Exercise 2: a tiled transpose of doubles. Both global sides are coalesced; the shared tile is
// not right yet. TODO(student): how many wavefronts does the read `tile[threadIdx.x][...]` need
// (32 banks of 4 bytes, a double is two banks wide)? Change the tile so that every shared access
// needs the least possible number of wavefronts.
__global__ void transpose_double_tiled(const double* in, double* out, int rows, int cols) {
  __shared__ double tile[kTile][kTile];
  const int c = blockIdx.x * kTile + threadIdx.x;
  for (int k = 0; k < kTile; k += kRowsPerPass) {
    const int r = blockIdx.y * kTile + threadIdx.y + k;
    if (r < rows && c < cols) tile[threadIdx.y + k][threadIdx.x] = in[static_cast<long long>(r) * cols + c];
  }
  __syncthreads();
  // This block's tile becomes rows blockIdx.x*32 ... of `out`; lane x writes column r = by*32 + x.
  const int r = blockIdx.y * kTile + threadIdx.x;
  for (int k = 0; k < kTile; k += kRowsPerPass) {
    const int oc = blockIdx.x * kTile + threadIdx.y + k;  // the row of `out` (a column of `in`)
    if (oc < cols && r < rows) out[static_cast<long long>(oc) * rows + r] = tile[threadIdx.x][threadIdx.y + k];
  }
}

dim3 grid_for(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_naive<<<grid_for(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  transpose_double_tiled<<<grid_for(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}
