// gpulab/emu/async_copy.hpp - the emulator's side of asynchronous copies to shared memory
// (cuda_pipeline_primitives.h): a copy's source bytes are read (by the kernel's own traced loads)
// when it is issued, its destination written (and traced, at the waiting line) when the issuing
// thread waits for its batch (common/emu/src/async_copy.cpp says why). The bytes travel by value:
// these functions read and write no memory of the caller's but the destinations they trace.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpulab::emu {

/// Records a copy of `size` (4, 8 or 16) bytes for `dst`, already read from the source (`lo`, then
/// `hi`: little-endian) in the calling thread's open batch; faults on another size or a
/// destination not aligned to it.
void async_copy_issue(void* dst, unsigned size, std::uint64_t lo, std::uint64_t hi, const char* file, int line);
/// Closes the calling thread's open batch.
void async_copy_commit();
/// Writes the calling thread's copies whose batches are older than its `prior` most recent
/// committed ones, in issue order, each traced as a store of the caller's line.
void async_copy_wait(std::size_t prior);
/// Forgets every copy (a new block starts on this worker).
void async_copies_reset();

}  // namespace gpulab::emu
