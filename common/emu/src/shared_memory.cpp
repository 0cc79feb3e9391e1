// Where `__shared__` variables live, and poisoning them at the start of every block.
//
// `__shared__` is `static thread_local`: each worker OS thread has its own copy, and a block
// runs on one worker, so the copy is the block's shared memory. Those variables are the only
// thread-locals of the executable (the runtime, GoogleTest and Google Benchmark keep theirs in
// their own modules), so the executable's static TLS block is the shared memory of every
// kernel. Filling it with 0xFF bytes before each block makes a read of shared memory that no
// thread of this block wrote return NaN / -1, identically whichever worker runs the block.
#include <link.h>

#include <cstdlib>
#include <cstring>

#include "internal.hpp"

namespace gpulab::emu::detail {
namespace {

struct TlsBlock {
  std::size_t size = 0;
};

TlsBlock executable_tls() {
  TlsBlock t;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        // The first object listed is the executable itself.
        for (int k = 0; k < info->dlpi_phnum; ++k) {
          const auto& ph = info->dlpi_phdr[k];
          if (ph.p_type == PT_TLS) {
            const std::size_t align = ph.p_align ? ph.p_align : 1;
            static_cast<TlsBlock*>(data)->size = (ph.p_memsz + align - 1) / align * align;
          }
        }
        return 1;  // stop after the executable
      },
      &t);
  return t;
}

bool poisoning_enabled() {
  const char* v = std::getenv("GPULAB_EMU_POISON_SHARED");
  return !(v && std::strcmp(v, "0") == 0);
}

}  // namespace

/// [begin, end) of this thread's copy of the executable's thread-locals (x86-64 TLS variant II:
/// the executable's block ends at the thread pointer).
void shared_memory_range(std::uintptr_t& begin, std::uintptr_t& end) {
  static const TlsBlock tls = executable_tls();
  std::uintptr_t tp;
#if defined(__x86_64__)
  asm("mov %%fs:0, %0" : "=r"(tp));
  begin = tp - tls.size;
  end = tp;
#else
  (void)tp;
  begin = end = 0;  // other architectures: no poisoning
#endif
}

void poison_shared_memory(Worker& w) {
  static const bool enabled = poisoning_enabled();
  if (!enabled) return;
  std::uintptr_t begin, end;
  shared_memory_range(begin, end);
  if (end > begin) std::memset(reinterpret_cast<void*>(begin), 0xFF, end - begin);
  if (w.launch->dynamic_shared) std::memset(w.dynamic_shared, 0xFF, w.launch->dynamic_shared);
}

}  // namespace gpulab::emu::detail
