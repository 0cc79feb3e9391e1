// <cooperative_groups/memcpy_async.h> for the emulator: a group's collective asynchronous copy to
// shared memory (CUDA 11), built on the pipeline primitives (cuda_pipeline_primitives.h).
//
//   cooperative_groups::memcpy_async(group, dst, src, bytes)   every thread of the group calls it
//       with the same arguments; the group's threads share the copy out in 16-byte pieces (4-byte
//       ones when the pointers are not 16-byte aligned), as one batch per call; bytes that fit no
//       piece are copied at once by the group's first thread
//   cooperative_groups::wait(group)            every batch of the calling threads, then group.sync()
//   cooperative_groups::wait_prior<N>(group)   all but the N most recent calls, then group.sync()
//
// As the primitives: a piece lands when its thread waits for it, at the latest moment a GPU allows.
// Not provided: the cuda::aligned_size_t and layout overloads.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cooperative_groups.h>
#include <cuda_pipeline_primitives.h>

namespace cooperative_groups {

template <class Group>
void memcpy_async(const Group& group, void* dst, const void* src, std::size_t bytes) {
  const std::uintptr_t d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  const std::size_t piece = (d | s) % 16 == 0 ? 16 : (d | s) % 4 == 0 ? 4 : 0;
  const std::size_t pieces = piece ? bytes / piece : 0;
  const std::size_t rank = group.thread_rank(), size = group.size();
  unsigned char* to = static_cast<unsigned char*>(dst);
  const unsigned char* from = static_cast<const unsigned char*>(src);
  for (std::size_t p = rank; p < pieces; p += size) __pipeline_memcpy_async(to + p * piece, from + p * piece, piece);
  if (rank == 0)
    for (std::size_t b = pieces * piece; b < bytes; ++b) to[b] = from[b];
  __pipeline_commit();
}

template <class Group, class T>
void memcpy_async(const Group& group, T* dst, const T* src, std::size_t bytes) {
  memcpy_async(group, static_cast<void*>(dst), static_cast<const void*>(src), bytes);
}

template <class Group>
void wait(const Group& group) {
  __pipeline_wait_prior(0);
  group.sync();
}

template <unsigned N, class Group>
void wait_prior(const Group& group) {
  __pipeline_wait_prior(N);
  group.sync();
}

}  // namespace cooperative_groups
