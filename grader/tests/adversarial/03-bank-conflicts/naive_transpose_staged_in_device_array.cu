// A naive transpose in two launches through a __device__ array: the first copies `in` to the
// static array along rows (coalesced), the second writes `out` along its rows reading the static
// copy down its columns (a row apart from lane to lane). The emulator traced device allocations
// only, so the call's global loads and stores were both coalesced and no shared memory was used:
// full marks for a transpose that is scattered on one side. A kernel file's static data is device
// memory now, in every metric.
// defence: static-data
// expect[emu]: performance.coalesced_global_access fail "of the bytes moved are used"
// expect[emu]: correctness pass
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

namespace {

constexpr long long kCapacity = 1LL << 21;
__device__ float g_float[kCapacity];
__device__ double g_double[kCapacity];

template <class T>
__device__ T* stage();
template <>
__device__ float* stage<float>() { return g_float; }
template <>
__device__ double* stage<double>() { return g_double; }

template <class T>
__global__ void copy_rows(const T* in, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    stage<T>()[i] = in[i];
}

// out[c][r] = in[r][c]: thread r of row c of `out` reads column c of the copy.
template <class T>
__global__ void write_rows_of_out(T* out, int rows, int cols) {
  const T* copy = stage<T>();
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < static_cast<long long>(rows) * cols; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = i / rows, r = i % rows;
    out[i] = copy[r * cols + c];
  }
}

template <class T>
void transpose_staged(const T* in, T* out, int rows, int cols) {
  const long long count = static_cast<long long>(rows) * cols;
  if (count > kCapacity) return;  // (never at the emulator's sizes)
  copy_rows<T><<<128, 256>>>(in, count);
  write_rows_of_out<T><<<128, 256>>>(out, rows, cols);
}

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) { transpose_staged(in, out, rows, cols); }
void transpose_double(const double* in, double* out, int rows, int cols) { transpose_staged(in, out, rows, cols); }
