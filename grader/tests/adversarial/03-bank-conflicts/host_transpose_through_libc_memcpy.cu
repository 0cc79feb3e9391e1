// Lab 03's transposes done on the host: a kernel first reads every input element and writes every
// output element (coalesced, so the metrics look ideal), then libc's memcpy (never traced) copies
// the input to the host, the host transposes, and memcpy overwrites the output.
// On a GPU a device pointer is no host address: a segmentation fault.
// defence: host-access
// defence[cuda]: none
// expect: lab fail
// expect[emu]: correctness fail "host code dereferenced device memory"
// expect[cuda]: correctness fail "signal 11"
#include <cstring>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "transpose.hpp"

namespace {

template <class T>
__global__ void touch(const T* in, T* out, long long count) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = in[i];  // every byte read and written, neighbours side by side
}

template <class T>
void on_host(const T* in, T* out, int rows, int cols) {
  const long long count = static_cast<long long>(rows) * cols;
  touch<T><<<static_cast<unsigned>((count + 255) / 256), 256>>>(in, out, count);
  gpulab::synchronize();
  void* (*volatile copy)(void*, const void*, std::size_t) = std::memcpy;  // a real libc call
  std::vector<T> a(static_cast<std::size_t>(count)), t(static_cast<std::size_t>(count));
  copy(a.data(), in, a.size() * sizeof(T));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t[static_cast<std::size_t>(c) * rows + r] = a[static_cast<std::size_t>(r) * cols + c];
  copy(out, t.data(), t.size() * sizeof(T));
}

}  // namespace

void transpose(const float* in, float* out, int rows, int cols) { on_host(in, out, rows, cols); }
void transpose_double(const double* in, double* out, int rows, int cols) { on_host(in, out, rows, cols); }
