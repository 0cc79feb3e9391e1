// Lab 04: the grader's baseline on cuda, cub::DeviceReduce::Sum, timed in the same run as the
// submission's reduce_sum (checks.cpp, performance.speed_vs_vendor). Trusted code: part of the
// checks, not of the code under test; built only on the cuda back-end (grader/labs/04-reductions/
// CMakeLists.txt), where CUB ships with the toolkit. rocprim_baseline.cu is its rocm twin.
#include <cub/device/device_reduce.cuh>

#include <cstddef>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "vendor_scratch.hpp"

const char* lab04_vendor_name() { return "CUB (cub::DeviceReduce::Sum)"; }

void lab04_vendor_sum(const float* x, int n, float* result) {
  std::size_t need = 0;
  cub::DeviceReduce::Sum(nullptr, need, x, result, n);  // only asks for the scratch size
  void* scratch = lab04_vendor_scratch(need);
  cub::DeviceReduce::Sum(scratch, need, x, result, n);
}
