// The out-of-range check on the output side tests the input's bounds (r < cols, oc < rows):
// right for square matrices, wrong (and out of bounds) when rows != cols.
// expect: lab fail
// expect: correctness fail "elements of out are wrong"
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {
constexpr int kTile = 32, kRowsPerPass = 8;

template <class T>
__global__ void tiled(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[kTile][kTile + 1];
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
    if (oc < rows && r < cols) out[static_cast<long long>(oc) * rows + r] = tile[x][k];
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
