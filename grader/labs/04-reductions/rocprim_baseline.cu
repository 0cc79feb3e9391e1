// Lab 04: the grader's baseline on rocm, rocprim::reduce (what hipcub::DeviceReduce::Sum calls),
// timed in the same run as the submission's reduce_sum (checks.cpp, performance.speed_vs_vendor).
// Trusted code, built only on the rocm back-end where rocPRIM's headers are found
// (grader/labs/04-reductions/CMakeLists.txt); cub_baseline.cu is its cuda twin.
#include <rocprim/device/device_reduce.hpp>

#include <cstddef>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

namespace {
void* temp_storage = nullptr;  // rocPRIM's scratch, grown once and kept (never inside a timed run)
std::size_t temp_bytes = 0;
}  // namespace

const char* lab04_vendor_name() { return "rocPRIM (rocprim::reduce)"; }

void lab04_vendor_sum(const float* x, int n, float* result) {
  std::size_t need = 0;
  rocprim::reduce(nullptr, need, x, result, static_cast<std::size_t>(n), rocprim::plus<float>());  // size only
  if (need > temp_bytes) {
    if (temp_storage) gpulab::device_free(temp_storage);
    temp_storage = gpulab::device_malloc(need);
    temp_bytes = need;
  }
  rocprim::reduce(temp_storage, temp_bytes, x, result, static_cast<std::size_t>(n), rocprim::plus<float>());
}
