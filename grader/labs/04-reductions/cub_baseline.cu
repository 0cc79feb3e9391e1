// Lab 04: the grader's baseline on cuda, cub::DeviceReduce::Sum, timed in the same run as the
// submission's reduce_sum (checks.cpp, performance.speed_vs_vendor). Trusted code: part of the
// checks, not of the code under test; built only on the cuda back-end (grader/labs/04-reductions/
// CMakeLists.txt), where CUB ships with the toolkit. rocprim_baseline.cu is its rocm twin.
#include <cub/device/device_reduce.cuh>

#include <cstddef>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

namespace {
void* temp_storage = nullptr;  // CUB's scratch, grown once and kept (never inside a timed run)
std::size_t temp_bytes = 0;
}  // namespace

const char* lab04_vendor_name() { return "CUB (cub::DeviceReduce::Sum)"; }

void lab04_vendor_sum(const float* x, int n, float* result) {
  std::size_t need = 0;
  cub::DeviceReduce::Sum(nullptr, need, x, result, n);  // only asks for the scratch size
  if (need > temp_bytes) {
    if (temp_storage) gpulab::device_free(temp_storage);
    temp_storage = gpulab::device_malloc(need);
    temp_bytes = need;
  }
  cub::DeviceReduce::Sum(temp_storage, temp_bytes, x, result, n);
}
