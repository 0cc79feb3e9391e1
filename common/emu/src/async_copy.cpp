// common/emu/src/async_copy.cpp - the emulator's asynchronous copies to shared memory: CUDA's
// __pipeline_memcpy_async / __pipeline_commit / __pipeline_wait_prior (<cuda_pipeline.h>, the
// cp.async instruction of sm_80).
//
// A legal schedule of the hardware, the latest one: the source is read when the copy is issued
// (traced at the issuing line, by the header's inline code), and the destination is written when
// the thread waits for the copy's batch (traced at the waiting line). A kernel that reads the
// destination before its wait therefore sees the old bytes, as it may on a GPU, and one that reads
// another thread's destination without a barrier after that thread's wait is a race the sanitizer
// reports. Copies a thread never waits for are never written (on a GPU nobody could read them
// safely either).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpulab/emu/async_copy.hpp"
#include "internal.hpp"

namespace gpulab::emu {
namespace {

struct Pending {
  std::uint64_t batch;  ///< the commit that closes it: the thread's commits so far + 1
  void* dst;
  unsigned size;
  std::uint64_t lo, hi;
};

struct ThreadCopies {
  std::uint64_t committed = 0;   ///< batches committed by the thread
  std::vector<Pending> pending;  ///< in issue order
};

/// The running block's threads' copies (a worker runs one block at a time; reset per block).
thread_local std::vector<ThreadCopies> g_threads;

ThreadCopies& mine() {
  const unsigned linear = ::threadIdx.x + ::blockDim.x * (::threadIdx.y + ::blockDim.y * ::threadIdx.z);
  if (g_threads.size() <= linear) g_threads.resize(static_cast<std::size_t>(::blockDim.x) * ::blockDim.y * ::blockDim.z);
  return g_threads[linear];
}

}  // namespace

void async_copies_reset() { g_threads.clear(); }

void async_copy_issue(void* dst, unsigned size, std::uint64_t lo, std::uint64_t hi, const char* file, int line) {
  if (size != 4 && size != 8 && size != 16)
    detail::fault("async-copy", detail::where(file, line) + ": __pipeline_memcpy_async copies 4, 8 or 16 bytes, not " +
                                    std::to_string(size) +
                                    "\n  hint: issue one copy per 4-, 8- or 16-byte piece (the size is also the alignment)");
  if (reinterpret_cast<std::uintptr_t>(dst) % size != 0)
    detail::fault("misaligned", detail::where(file, line) + ": __pipeline_memcpy_async to an address not aligned to its " +
                                    std::to_string(size) + " bytes (a misaligned-address error on a GPU)");
  ThreadCopies& t = mine();
  t.pending.push_back({t.committed + 1, dst, size, lo, hi});
}

void async_copy_commit() { ++mine().committed; }

void async_copy_wait(std::size_t prior) {
  void* const ra = __builtin_return_address(0);
  ThreadCopies& t = mine();
  const std::uint64_t done = t.committed > prior ? t.committed - prior : 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < t.pending.size(); ++i) {
    const Pending p = t.pending[i];
    if (p.batch > done) {
      t.pending[kept++] = p;
      continue;
    }
    detail::on_access(p.dst, p.size, true, ra);  // checked and traced as the kernel's store
    unsigned char bytes[16];
    std::memcpy(bytes, &p.lo, 8);
    std::memcpy(bytes + 8, &p.hi, 8);
    std::memcpy(p.dst, bytes, p.size);
  }
  t.pending.resize(kept);
}

}  // namespace gpulab::emu
