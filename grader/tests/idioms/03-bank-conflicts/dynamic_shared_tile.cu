// Idiom: dynamic shared memory as a typed 2-D tile: `extern __shared__ unsigned char[]` viewed
// through reinterpret_cast<T (*)[kTile + 1]>, sized by the launch's third parameter for each
// element type, with cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...).
// expect: lab pass
#include <stdexcept>

#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 64;          // tile edge, in elements
constexpr int kLanes = 32;         // threads along x; each covers kTile / kLanes columns
constexpr int kRowsPerPass = 16;   // threads along y; each covers kTile / kRowsPerPass rows

template <class T>
__global__ void transpose_wide_tile(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  // The padded tile lives in dynamic shared memory, sized by the launch: a 2-D array view of it.
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T (*tile)[kTile + 1] = reinterpret_cast<T (*)[kTile + 1]>(shared_bytes);
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

template <class T>
constexpr std::size_t tile_bytes() {
  return sizeof(T) * kTile * (kTile + 1);
}

// Lets the kernel use its tile's bytes of dynamic shared memory (33,280 for doubles: under the
// default 48 KiB, but said explicitly, as a kernel whose tile may grow must).
template <class T>
void launch_transpose(const T* in, T* out, int rows, int cols) {
  static const cudaError_t allowed = cudaFuncSetAttribute(
      transpose_wide_tile<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(tile_bytes<T>()));
  if (allowed != cudaSuccess) throw std::runtime_error("transpose: cannot give the kernel its shared memory");
  transpose_wide_tile<T><<<tile_grid(rows, cols), dim3(kLanes, kRowsPerPass), tile_bytes<T>()>>>(in, out, rows, cols);
}

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) { launch_transpose(in, out, rows, cols); }

void transpose_double(const double* in, double* out, int rows, int cols) { launch_transpose(in, out, rows, cols); }
