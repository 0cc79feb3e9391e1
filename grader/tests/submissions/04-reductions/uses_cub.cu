// Calls CUB's device-wide sum instead of writing the reduction. The contract forbids it, and the
// grader refuses the hand-in by its includes before it runs (on emu CUB is not on the include
// path at all, so the build stops there).
// expect: lab fail
// expect: correctness fail "cub"
#include <cub/device/device_reduce.cuh>

#include "gpulab/gpu.hpp"
#include "reduce.hpp"

void reduce_sum(const float* x, int n, float* result) {
  static void* temp = nullptr;
  static size_t temp_bytes = 0;
  size_t need = 0;
  cub::DeviceReduce::Sum(nullptr, need, x, result, n);
  if (need > temp_bytes) {
    cudaMalloc(&temp, need);
    temp_bytes = need;
  }
  cub::DeviceReduce::Sum(temp, temp_bytes, x, result, n);
}
