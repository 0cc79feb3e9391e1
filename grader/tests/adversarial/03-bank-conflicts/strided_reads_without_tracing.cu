// A transpose that writes `out` along its rows and reads `in` down its columns through a helper
// marked [[clang::disable_sanitizer_instrumentation]] (the tracing does not see it), plus a
// kernel that reads `in` along its rows and keeps nothing, so that the kernels read every input
// byte: the measured loads and stores were all coalesced. The emulator's compiler pass refuses
// any function of a kernel file that would escape the tracing.
// defence: instrumentation
// expect[emu]: lab fail
// expect[emu]: correctness fail "switches the emulator's access tracing off"
#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "transpose.hpp"

namespace {

template <class T>
[[clang::disable_sanitizer_instrumentation, gnu::noinline]] __device__ T load_unseen(const T* p) {
  return *p;
}

template <class T>
__global__ void touch_every_element(const T* in, long long count, T* scratch) {
  T s = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    s += in[i];
  if (s == T(-1)) scratch[0] = s;  // (never: keeps the loads)
}

template <class T>
__global__ void write_rows_of_out(const T* in, T* out, int rows, int cols) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < static_cast<long long>(rows) * cols; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = i / rows, r = i % rows;
    out[i] = load_unseen(in + r * cols + c);
  }
}

template <class T>
void transpose_unseen(const T* in, T* out, int rows, int cols) {
  gpulab::DeviceBuffer<T> scratch(1);
  touch_every_element<T><<<128, 256>>>(in, static_cast<long long>(rows) * cols, scratch.data());
  write_rows_of_out<T><<<128, 256>>>(in, out, rows, cols);
}

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) { transpose_unseen(in, out, rows, cols); }
void transpose_double(const double* in, double* out, int rows, int cols) { transpose_unseen(in, out, rows, cols); }
