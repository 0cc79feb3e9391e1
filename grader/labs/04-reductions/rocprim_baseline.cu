// Lab 04: the grader's baseline on rocm, rocprim::reduce (what hipcub::DeviceReduce::Sum calls),
// timed in the same run as the submission's reduce_sum (checks.cpp, performance.speed_vs_vendor).
// Trusted code, built only on the rocm back-end where rocPRIM's headers are found
// (grader/labs/04-reductions/CMakeLists.txt); cub_baseline.cu is its cuda twin.
#include <cstddef>
#include <iostream>  // rocPRIM 5.3's device_reduce.hpp uses std::cout without including it

#include <rocprim/device/device_reduce.hpp>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "vendor_scratch.hpp"

const char* lab04_vendor_name() { return "rocPRIM (rocprim::reduce)"; }

void lab04_vendor_sum(const float* x, int n, float* result) {
  std::size_t need = 0;
  // The first call only computes the scratch size; errors surface at the synchronisation after the
  // timed runs, as for any launch.
  (void)rocprim::reduce(nullptr, need, x, result, static_cast<std::size_t>(n), rocprim::plus<float>());
  void* scratch = lab04_vendor_scratch(need);
  (void)rocprim::reduce(scratch, need, x, result, static_cast<std::size_t>(n), rocprim::plus<float>());
}
