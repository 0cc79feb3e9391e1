// Both scale-adds, one element per thread, correct: the first reads and writes four elements at
// a time as float4 and computes `a * x4 + y4` on the vectors. Under clang (the emulator's
// compiler) float4 is a vector type with arithmetic; CUDA defines no operators on float4, so
// nvcc refuses the file and a GPU build fails. Lab 00 reads no nvcc output for its grade, and the
// emulator gave the file full marks that no GPU would; the emulator's grade now asks nvcc
// whether it compiles.
// defence: gpu-compiler
// defence[cuda]: none (nvcc's compile is the GPU build: it refuses the file itself)
// needs: nvcc
// expect[emu]: lab fail
// expect[emu]: correctness fail "does not compile for a GPU"
// expect[cuda]: correctness fail "does not compile"
#include <cstdint>

#include "gpulab/gpu.hpp"
#include "first_kernels.hpp"

namespace {

__global__ void scale_add_by_fours(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    const float4 x4 = reinterpret_cast<const float4*>(x)[i];
    float4& y4 = reinterpret_cast<float4*>(y)[i];
    y4 = a * x4 + y4;
  } else {
    for (int k = 4 * i; k < n; ++k) y[k] = a * x[k] + y[k];
  }
}

__global__ void scale_add_strided(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

void scale_add(int n, float a, const float* x, float* y) {
  if (!aligned(x) || !aligned(y)) {
    gpulab::launch(scale_add_strided, (n + 255) / 256, 256, 0, n, a, x, y);
    return;
  }
  const int quads = (n + 3) / 4;
  gpulab::launch(scale_add_by_fours, (quads + 255) / 256, 256, 0, n, a, x, y);
}

void scale_add_grid_stride(int n, float a, const float* x, float* y, int blocks, int threads) {
  gpulab::launch(scale_add_strided, blocks, threads, 0, n, a, x, y);
}
