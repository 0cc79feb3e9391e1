// Host code that touched device memory while the gate was closed (runtime.cpp, DeviceMemoryScope):
// the SIGSEGV handler records where (on_host_fault, async-signal-safe: a fixed table, no locks of
// its own, no allocation), opens the memory so that the program runs on, and the record becomes a
// "host-access" finding with file:line later, outside the handler (drain_host_faults). This sees
// every host access, whatever made it: untraced code, libc's memcpy on a device pointer, code whose
// instrumentation was switched off.
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <ucontext.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "internal.hpp"

namespace gpulab::emu::detail {
namespace {

constexpr int kFrames = 24;
struct HostFault {
  std::uintptr_t address = 0;
  bool store = false;
  int frames = 0;
  /// frame[0] is the faulting instruction itself, the rest return addresses.
  std::uintptr_t frame[kFrames] = {};
};
constexpr unsigned kKept = 64;
// A ring written by the handler and read by drain_host_faults. Only the host thread faults here
// (kernels run with the gate open), and every scope drains before the gate can close again, so
// the ring holds a fault or two at a time; a fault that finds it full is counted.
HostFault g_faults[kKept];
std::atomic<unsigned> g_recorded{0}, g_drained{0};
std::atomic<long long> g_dropped{0};
std::mutex drain_mutex;

/// The address ranges of the program's own code (the executable, not the shared libraries).
std::vector<std::pair<std::uintptr_t, std::uintptr_t>> program_code() {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* out = static_cast<std::vector<std::pair<std::uintptr_t, std::uintptr_t>>*>(data);
        for (int k = 0; k < info->dlpi_phnum; ++k) {
          const auto& ph = info->dlpi_phdr[k];
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
          out->emplace_back(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        return 1;  // the first module is the executable
      },
      &ranges);
  return ranges;
}

/// Where a recorded fault happened: the innermost frame in the program's own code that has a
/// source line — the access itself where host code made it, else the call into the library that
/// did (libc's memcpy); any frame with a line where there is none.
std::uintptr_t place_of(const HostFault& f) {
  static const auto program = program_code();
  auto in_program = [&](std::uintptr_t a) {
    for (const auto& [b, e] : program)
      if (a >= b && a < e) return true;
    return false;
  };
  std::uintptr_t any = 0;
  for (int i = 0; i < f.frames; ++i) {
    // symbolize() looks up the instruction before a return address: the faulting instruction's own
    // address is made into one.
    const std::uintptr_t ra = i == 0 ? f.frame[0] + 1 : f.frame[i];
    if (symbolize(ra).second <= 0) continue;
    if (in_program(ra - 1)) return ra;
    if (!any) any = ra;
  }
  return any ? any : f.frame[0] + 1;
}

}  // namespace

void prepare_host_fault_records() {
  // backtrace() loads the unwinder on its first call: done here, not inside a signal handler.
  static std::once_flag once;
  std::call_once(once, [] {
    void* warm[2];
    (void)backtrace(warm, 2);
  });
}

bool on_host_fault(const siginfo_t* info, const void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const auto* uc = static_cast<const ucontext_t*>(context);
  if (!gate_open_after_host_access(address)) return false;
  const unsigned n = g_recorded.load(std::memory_order_relaxed);
  if (n - g_drained.load(std::memory_order_acquire) >= kKept) {
    g_dropped.fetch_add(1);
    return true;
  }
  HostFault& f = g_faults[n % kKept];
  f.address = address;
  // x86-64: bit 1 of the page-fault error code is set for a write.
  f.store = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
  const auto pc = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  f.frame[0] = pc;
  f.frames = 1;
  // The unwinder goes through this handler and the kernel's signal frame, then reports the
  // interrupted instruction's address itself: the frames from there on are the host code's.
  void* raw[kFrames + 8];
  const int got = backtrace(raw, kFrames + 8);
  int from = -1;
  for (int i = 0; i < got && from < 0; ++i)
    if (reinterpret_cast<std::uintptr_t>(raw[i]) == pc) from = i + 1;
  for (int i = from; from > 0 && i < got && f.frames < kFrames; ++i)
    f.frame[f.frames++] = reinterpret_cast<std::uintptr_t>(raw[i]);
  g_recorded.store(n + 1, std::memory_order_release);
  return true;
}

void drain_host_faults() {
  if (g_drained.load(std::memory_order_relaxed) == g_recorded.load(std::memory_order_acquire) && !g_dropped.load())
    return;  // the usual case, without a lock: nothing new
  std::lock_guard<std::mutex> lock(drain_mutex);
  for (unsigned k = g_drained.load(); k != g_recorded.load(std::memory_order_acquire); ++k) {
    const HostFault& f = g_faults[k % kKept];
    note_host_access(f.address, 0, f.store, place_of(f));
    g_drained.store(k + 1, std::memory_order_release);
  }
  // Faults the ring had no room for (a thousand between two runtime calls): counted at the place
  // of the last one recorded, which is where the host code was then.
  const unsigned last = g_drained.load() - 1;
  for (long long d = g_dropped.exchange(0); d > 0 && g_drained.load() > 0; --d) {
    const HostFault& f = g_faults[last % kKept];
    note_host_access(f.address, 0, f.store, place_of(f));
  }
}

}  // namespace gpulab::emu::detail
