// A padded 32 x 32 tile transpose, correct and conflict-free, whose edge tiles clamp their loops
// with std::min inside the kernel. std::min is a constexpr host function: clang (the emulator's
// compiler) calls it from device code, nvcc refuses it without --expt-relaxed-constexpr, so a GPU
// build of this file fails. Lab 03 reads no nvcc output for its grade, and the emulator gave the
// file full marks that no GPU would; the emulator's grade now asks nvcc whether it compiles.
// defence: gpu-compiler
// defence[cuda]: none (nvcc's compile is the GPU build: it refuses the file itself)
// needs: nvcc
// expect[emu]: lab fail
// expect[emu]: correctness fail "does not compile for a GPU"
// expect[cuda]: correctness fail "does not compile"
#include <algorithm>

#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr int kTile = 32;
constexpr int kRows = 8;

template <class T>
__global__ void transpose_padded(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[kTile][kTile + 1];
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const int tile_rows = std::min(kTile, rows - row0), tile_cols = std::min(kTile, cols - col0);
  for (int r = threadIdx.y; r < tile_rows; r += kRows)
    if (static_cast<int>(threadIdx.x) < tile_cols) tile[r][threadIdx.x] = in[static_cast<long long>(row0 + r) * cols + col0 + threadIdx.x];
  __syncthreads();
  for (int r = threadIdx.y; r < tile_cols; r += kRows)
    if (static_cast<int>(threadIdx.x) < tile_rows) out[static_cast<long long>(col0 + r) * rows + row0 + threadIdx.x] = tile[threadIdx.x][r];
}

dim3 grid_of(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_padded<float><<<grid_of(rows, cols), dim3(kTile, kRows)>>>(in, out, rows, cols);
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  transpose_padded<double><<<grid_of(rows, cols), dim3(kTile, kRows)>>>(in, out, rows, cols);
}
