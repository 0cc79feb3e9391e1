// Lab 04: the vendor baselines' scratch memory (cub_baseline.cu, rocprim_baseline.cu). Both
// libraries ask for their temporary storage size first; the buffer grows once to the largest size
// asked for and is kept, so no allocation (which synchronises) happens inside a timed run.
#pragma once

#include <cstddef>

#include "gpulab/host.hpp"

inline void* lab04_vendor_scratch(std::size_t bytes) {
  static void* buffer = nullptr;
  static std::size_t size = 0;
  if (bytes > size) {
    if (buffer) gpulab::device_free(buffer);
    buffer = gpulab::device_malloc(bytes);
    size = bytes;
  }
  return buffer;
}
