// Lab 03, step 1: the naive transpose (the stub's float kernel, here for floats and doubles).
//
// Thread (x, y) moves elements of column c = bx*32 + x. Reads: the 32 lanes of a warp read 32
// neighbouring elements of one row of `in` (coalesced: 4 sectors per float request). Writes: lane
// x writes row c of `out`, so neighbouring lanes store `rows` elements apart: one 32-byte sector
// per lane, 32 sectors per request, of which 4 (floats) or 8 (doubles) bytes are used.
// No shared memory. Grade it: ./gpulab grade 03 --submission solutions/03-bank-conflicts/steps/01_naive.cu
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 32, kRowsPerPass = 8;

template <class T>
__global__ void transpose_naive(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  const int c = blockIdx.x * kTile + threadIdx.x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int r = blockIdx.y * kTile + k;
    if (r < rows && c < cols) out[static_cast<long long>(c) * rows + r] = in[static_cast<long long>(r) * cols + c];
  }
}

dim3 tiles(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_naive<float><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  transpose_naive<double><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}
