// Padding with 2 elements per row ([32][34]): rows start 2 banks apart, so lanes x and x + 16 of
// the float column read share a bank: 2 wavefronts where 1 would do. On the H200 a 2-way conflict
// costs nothing measurable in a transpose bound by DRAM (0.843 / 0.627 of copy on 2026-12-01; the
// [32][33] tile of step 3 measured 0.843 / 0.632 on 2026-11-30, docs/results/lab03-h200.md), so
// the GPU grade passes it; so does the emulator's since 2026-12-01, which fails a bank conflict
// only where the performance model says it would cost time (it used to fail any conflict).
// expect: lab pass
// expect: correctness pass
// expect[emu]: performance pass
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {
constexpr int kTile = 32, kRowsPerPass = 8;

template <class T>
__global__ void tiled(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[kTile][kTile + 2];
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
  tiled<float><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}
void transpose_double(const double* in, double* out, int rows, int cols) {
  tiled<double><<<tiles(rows, cols), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}
