// The double tile "padded" by half an element the wrong way: a float tile of [32][65] words,
// read as doubles at odd word offsets: misaligned 8-byte shared accesses (a GPU stops the kernel).
// expect: lab fail
// expect[emu]: sanitizer fail "misaligned"
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {
constexpr int kTile = 32, kRowsPerPass = 8;

template <class T>
__global__ void tiled(const T* in, T* out, int rows, int cols) {
  __shared__ float words[kTile][2 * kTile + 1];  // 65 words a row: odd rows start at odd words
  const int x = threadIdx.x;
  const int c = blockIdx.x * kTile + x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int r = blockIdx.y * kTile + k;
    if (r < rows && c < cols) *reinterpret_cast<T*>(&words[k][0] + (sizeof(T) / 4) * x) = in[static_cast<long long>(r) * cols + c];
  }
  __syncthreads();
  const int r = blockIdx.y * kTile + x;
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    const int oc = blockIdx.x * kTile + k;
    if (oc < cols && r < rows) out[static_cast<long long>(oc) * rows + r] = *reinterpret_cast<T*>(&words[x][0] + (sizeof(T) / 4) * k);
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
