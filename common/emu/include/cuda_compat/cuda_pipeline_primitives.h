// cuda_pipeline_primitives.h for the emulator: CUDA's asynchronous copies to shared memory (sm_80's
// cp.async) as the primitives spell them. The source is read (and traced) where the copy is issued;
// the destination is written (and traced) where the thread waits for the copy's batch: a legal
// schedule of the hardware, the latest one (common/emu/src/async_copy.cpp).
//
//   __pipeline_memcpy_async(dst_shared, src_global, size_and_align, zfill = 0)
//       copies size_and_align (4, 8 or 16) bytes, both pointers aligned to it; the last `zfill`
//       bytes of the destination are zeros instead of source bytes
//   __pipeline_commit()            closes the thread's batch of copies
//   __pipeline_wait_prior(prior)   waits until only the `prior` most recent batches may be pending
//
// As on a GPU, a copy is complete for the issuing thread after its wait; other threads see it after
// a barrier that follows that wait.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "gpulab/emu/async_copy.hpp"

inline void __pipeline_memcpy_async(void* dst_shared, const void* src_global, std::size_t size_and_align,
                                    std::size_t zfill = 0, const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) {
  // The source is read here, by this file's traced loads: one access of the copy's size.
  std::uint64_t word[2] = {0, 0};
  if (zfill == 0 && size_and_align == 16) {
    const float4 v = *static_cast<const float4*>(src_global);
    __builtin_memcpy(word, &v, 16);
  } else if (zfill == 0 && size_and_align == 8) {
    word[0] = *static_cast<const unsigned long long*>(src_global);
  } else if (zfill == 0 && size_and_align == 4) {
    word[0] = *static_cast<const unsigned*>(src_global);
  } else {
    const std::size_t read = zfill < size_and_align ? size_and_align - zfill : 0;
    const unsigned char* src = static_cast<const unsigned char*>(src_global);
    unsigned char bytes[16] = {};
    for (std::size_t b = 0; b < read && b < 16; ++b) bytes[b] = src[b];
    __builtin_memcpy(word, bytes, 16);
  }
  gpulab::emu::async_copy_issue(dst_shared, static_cast<unsigned>(size_and_align), word[0], word[1], file, line);
}

inline void __pipeline_commit() { gpulab::emu::async_copy_commit(); }

inline void __pipeline_wait_prior(std::size_t prior) { gpulab::emu::async_copy_wait(prior); }
