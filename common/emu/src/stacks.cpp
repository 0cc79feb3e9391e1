// Guarded fiber stacks, and the SIGSEGV/SIGBUS handler that turns a fault inside a kernel into
// a message naming the emulated thread (stack overflow, or an invalid address).
#include <signal.h>
#include <ucontext.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "internal.hpp"

namespace gpulab::emu::detail {
namespace {

constexpr std::size_t kPage = 4096;

struct Pool {
  std::size_t stack_size = 0;
  std::vector<Stack> stacks;
};
std::mutex pools_mutex;
std::vector<std::unique_ptr<Pool>>& pools() {
  static std::vector<std::unique_ptr<Pool>> p;
  return p;
}

Stack map_stack(std::size_t usable) {
  Stack s;
  s.size = usable + kPage;
  s.base = mmap(nullptr, s.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                -1, 0);
  if (s.base == MAP_FAILED) throw std::bad_alloc();
  mprotect(s.base, kPage, PROT_NONE);  // the guard page: an overflow faults here
  return s;
}

void write_err(const char* s) {
  ssize_t r = write(2, s, std::strlen(s));
  (void)r;
}

void on_fault(int sig, siginfo_t* info, void* context) {
  Worker* w = this_worker;
  // Host code touching device memory behind the gate: reported, and the program runs on.
  if (sig == SIGSEGV && !(w && w->current) && on_host_fault(info, context)) return;
  char msg[1024];
  if (w && w->current) {
    const Thread& t = *w->current;
    const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    const Stack& s = (*w->stacks)[static_cast<std::size_t>(t.stack)];
    const auto guard = reinterpret_cast<std::uintptr_t>(s.base);
    // Overflow: the stack pointer left the fiber's stack, or the fault hit its guard page.
    // (Kernel files are built with -fstack-clash-protection, so a large frame touches the guard
    // page before anything below it.)
    const auto sp = static_cast<std::uintptr_t>(
        static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RSP]);
    const bool overflow = (addr >= guard - kPage && addr < guard + kPage) ||
                          (sp < guard + kPage && sp + (1u << 26) > guard);
    const bool misaligned = info->si_addr == nullptr && w->last_size > 1 && w->last_address % w->last_size != 0;
    // A block loop ran all the block's threads in one call: which one faulted is not known.
    char who[64];
    if (w->block_loop) std::snprintf(who, sizeof who, "a thread");
    else std::snprintf(who, sizeof who, "thread (%u,%u,%u)", t.tid.x, t.tid.y, t.tid.z);
    const char* loop_note = w->block_loop ? " (an unchecked block, run as loops over its threads: run it with "
                                            "every block checked, or GPULAB_EMU_BLOCK_LOOPS=0, to name the thread)"
                                          : "";
    if (w->block_loop && !overflow)
      std::snprintf(msg, sizeof msg,
                    "\n[gpulab emu] invalid memory access (%s at address %p) in a thread of block "
                    "(%u,%u,%u) of the kernel launched at %s:%d%s.\n  hint: an index past the end of an "
                    "array, or a host pointer passed to a kernel; on a GPU this is an illegal-address error.\n",
                    sig == SIGBUS ? "bus error" : "segmentation fault", info->si_addr, ::blockIdx.x,
                    ::blockIdx.y, ::blockIdx.z, w->launch->file, w->launch->line, loop_note);
    else if (misaligned)
      std::snprintf(msg, sizeof msg,
                    "\n[gpulab emu] misaligned %u-byte access at address %p (%lu bytes past a multiple of %u) in "
                    "thread (%u,%u,%u) of block (%u,%u,%u) of the kernel launched at %s:%d.\n  hint: on a GPU this is "
                    "a misaligned-address error: use float4 (16-byte) or float2 (8-byte) accesses only at addresses "
                    "that are multiples of 16 (8), e.g. rows whose length is a multiple of 4 floats.\n",
                    w->last_size, reinterpret_cast<void*>(w->last_address),
                    static_cast<unsigned long>(w->last_address % w->last_size), w->last_size, t.tid.x,
                    t.tid.y, t.tid.z, ::blockIdx.x, ::blockIdx.y, ::blockIdx.z, w->launch->file,
                    w->launch->line);
    else if (overflow)
      std::snprintf(msg, sizeof msg,
                    "\n[gpulab emu] stack overflow in %s of block (%u,%u,%u) of the "
                    "kernel launched at %s:%d%s: its %zu KiB stack is exhausted (large local arrays "
                    "or deep recursion).\n  hint: make local arrays smaller or move them to shared "
                    "memory; to emulate anyway, set GPULAB_EMU_STACK_KB (now %zu).\n",
                    who, ::blockIdx.x, ::blockIdx.y, ::blockIdx.z, w->launch->file, w->launch->line,
                    loop_note, s.usable() / 1024, s.usable() / 1024);
    else
      std::snprintf(msg, sizeof msg,
                    "\n[gpulab emu] invalid memory access (%s at address %p) in thread (%u,%u,%u) "
                    "of block (%u,%u,%u) of the kernel launched at %s:%d.\n  hint: an index past "
                    "the end of an array, or a host pointer passed to a kernel; on a GPU this is "
                    "an illegal-address error.\n",
                    sig == SIGBUS ? "bus error" : "segmentation fault", info->si_addr, t.tid.x,
                    t.tid.y, t.tid.z, ::blockIdx.x, ::blockIdx.y,
                    ::blockIdx.z, w->launch->file, w->launch->line);
    write_err(msg);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

std::vector<Stack>& stacks_for_worker(int worker_id, std::size_t count) {
  std::lock_guard<std::mutex> lock(pools_mutex);
  auto& p = pools();
  while (p.size() <= static_cast<std::size_t>(worker_id)) p.push_back(std::make_unique<Pool>());
  Pool& pool = *p[static_cast<std::size_t>(worker_id)];
  const std::size_t want = (stack_bytes() + kPage - 1) / kPage * kPage;
  if (pool.stack_size != want) {
    for (Stack& s : pool.stacks) munmap(s.base, s.size);
    pool.stacks.clear();
    pool.stack_size = want;
  }
  while (pool.stacks.size() < count) pool.stacks.push_back(map_stack(want));
  return pool.stacks;
}

void install_fault_handlers_for_this_thread() {
  static thread_local std::unique_ptr<char[]> alt;  // one alternate signal stack per OS thread
  if (!alt) {
    const std::size_t size = 64 * 1024;
    alt.reset(new char[size]);
    stack_t ss{};
    ss.ss_sp = alt.get();
    ss.ss_size = size;
    sigaltstack(&ss, nullptr);
  }
  static std::once_flag once;
  std::call_once(once, [] {
    prepare_host_fault_records();
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
  });
}

}  // namespace gpulab::emu::detail
