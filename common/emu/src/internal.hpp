// Internal state of the emulator runtime, shared by its translation units. Not installed.
#pragma once

#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/emu/kernel.hpp"

namespace gpulab::emu::detail {

namespace ctx = boost::context::detail;

enum class State : std::uint8_t { runnable, at_barrier, at_warp, at_activemask, done };

/// One emulated GPU thread: a fiber and what it waits for.
struct Thread {
  ctx::fcontext_t context = nullptr;
  uint3 tid{0, 0, 0};
  unsigned linear = 0;
  int lane = 0;
  int warp = 0;
  State state = State::runnable;
  std::uint64_t result = 0;  ///< result of the collective it last completed
  const char* wait_file = nullptr;
  int wait_line = 0;
};

/// An open warp collective: lanes arrive one by one; the last one completes it.
struct Rendezvous {
  WarpOp op = WarpOp::sync;
  lanemask_t mask = 0;
  lanemask_t arrived = 0;
  const char* file = nullptr;
  int line = 0;
  std::uint64_t value[64] = {};
  int src[64] = {};
};

struct Warp {
  lanemask_t live = 0;  ///< lanes that exist and have not exited
  std::vector<Rendezvous> open;
};

/// A fiber stack with a PROT_NONE guard page below it.
struct Stack {
  void* base = nullptr;    ///< start of the mapping (the guard page)
  std::size_t size = 0;    ///< whole mapping, guard included
  void* top() const { return static_cast<char*>(base) + size; }
  std::size_t usable() const;
};

struct Launch {
  dim3 grid, block;
  std::size_t dynamic_shared = 0;
  const char* file = nullptr;
  int line = 0;
  KernelThunk thunk = nullptr;
  const void* closure = nullptr;
  std::atomic<unsigned long long> next_block{0};
  std::atomic<unsigned long long> fault_block{~0ull};  ///< lowest faulting block id
};

/// Everything one worker OS thread needs while it runs a block.
struct Worker {
  int id = 0;
  const Launch* launch = nullptr;
  unsigned long long block_id = 0;
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  std::vector<Stack>* stacks = nullptr;
  unsigned char* dynamic_shared = nullptr;
  int live = 0;
  int exited = 0;
  const Thread* first_exited = nullptr;
  // The block barrier (__syncthreads and its _count/_and/_or forms).
  int bar_arrived = 0;
  int bar_acc = 0;
  int bar_result = 0;
  BarrierOp bar_op = BarrierOp::sync;
  const char* bar_file = nullptr;
  int bar_line = 0;
  ctx::fcontext_t scheduler = nullptr;
  Thread* current = nullptr;
  bool failed = false;
};

extern __thread Worker* this_worker __attribute__((tls_model("initial-exec")));

/// Records a fault for the running block, then never returns to the faulting fiber.
[[noreturn]] void fault(const std::string& kind, const std::string& message);
/// Records a fault found outside a fiber (e.g. a deadlock seen by the scheduler).
void record_fault(const Launch& launch, unsigned long long block_id, const std::string& kind,
                  const std::string& message);

std::string where(const char* file, int line);
std::string describe_thread(const Worker& w, const Thread& t);

// Stacks and signal handling (stacks.cpp).
std::vector<Stack>& stacks_for_worker(int worker_id, std::size_t count);
void install_fault_handlers_for_this_thread();

// Memory-access tracing (metrics.cpp): every load/store of an instrumented kernel file.
void on_access(const void* p, unsigned size, bool store, void* return_address);

// The executable's static TLS block: where `__shared__` variables live (shared_memory.cpp).
void poison_shared_memory(Worker& w);

}  // namespace gpulab::emu::detail
