// Internal state of the emulator runtime, shared by its translation units. Not installed.
#pragma once

#include "fiber_context.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpulab/emu/kernel.hpp"
#include "gpulab/emu/pass_abi.hpp"  // the calls the compiler passes insert (defined here)
#include "gpulab/emu/watch.hpp"

namespace gpulab::emu::detail {

enum class State : std::uint8_t { runnable, at_barrier, at_warp, at_activemask, done };

/// One emulated GPU thread: a fiber and what it waits for.
struct Thread {
  ctx::fcontext_t context = nullptr;
  uint3 tid{0, 0, 0};
  unsigned linear = 0;
  int stack = 0;  ///< the index in Worker::stacks of the stack it runs on
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
  std::uint32_t sync_epoch = 0;  ///< completed __syncwarp calls (orders its lanes' accesses)
};

/// One traced load or store of an emulated thread (metrics.cpp groups them into requests).
struct Access {
  std::uintptr_t ra;    ///< return address of the tracing call: identifies the instruction
  std::uintptr_t addr;
  std::uint32_t seq;    ///< scratch of the grouping into requests (metrics.cpp)
  std::uint16_t lane;
  std::uint8_t size;
  std::uint8_t flags;   ///< kStore | kShared | kAtomic
};
enum : std::uint8_t { kStore = 1, kShared = 2, kAtomic = 4 };

/// The kinds of sanitizer finding (finding_kind_name gives their names).
enum FindingKind {
  kOutOfBounds = 1, kNotDevice, kRaceWriteWrite, kRaceReadWrite, kRaceWriteRead, kUninitShared, kMisaligned,
  kHostAccess, kSharedOutOfBounds, kGlobalRace, kCrossBlockRace, kHostFunction
};

/// What the sanitizer remembers about one 4-byte word of shared memory in the running block.
struct ShadowWord {
  std::uint32_t write_epoch;        ///< barrier epoch of the last write (0: never written)
  std::uint32_t read_epoch;         ///< barrier epoch of the last read
  std::uint32_t writer_sync_epoch;  ///< the writer's warp __syncwarp count at the write
  std::uint32_t reader_sync_epoch;
  std::uint16_t writer;             ///< linear thread id of the last writer
  std::uint16_t reader;             ///< linear thread id of the last reader
  std::uint8_t multi_reader;        ///< several threads read it in read_epoch
  std::uintptr_t writer_ra;         ///< the last write's instruction (named in race findings)
  std::uintptr_t reader_ra;         ///< the last read's instruction
};

/// A store to shared memory that another lane of the same warp also stored in this barrier
/// interval: a race only if the values differ (several lanes storing one value is benign, as for
/// NVIDIA's racecheck). The value is in memory only after the store, so the check waits for the
/// worker's next traced access (or the end of the block), which comes before any other store.
struct PendingStore {
  bool active = false;
  std::uintptr_t addr = 0;
  unsigned size = 0;
  unsigned char before[16] = {};
  std::uintptr_t ra = 0, other_ra = 0;
  const Thread* thread = nullptr;
  std::uint16_t other = 0;  ///< linear id of the lane that wrote the word before
  bool global = false;      ///< a device-memory word (else a shared-memory one)
  std::uint16_t compare = 0xffff;  ///< the bytes to compare (bit i: byte i of the access)
};

/// The last plain store of the running block to one 4-byte word of device memory (the sanitizer's
/// race check of global memory within a block; atomics are not kept).
struct GlobalWord {
  std::uint32_t write_epoch = 0;
  std::uint32_t writer_sync_epoch = 0;
  std::uint16_t writer = 0;
  std::uint8_t bytes = 0;      ///< the bytes of the word the writer stored (bit i: byte i)
  bool several = false;        ///< threads unordered with each other stored to different bytes:
                               ///< who wrote which is not kept, and the word is not checked
  std::uintptr_t writer_ra = 0;
};

/// The device words a block stored to, by address / 4: an open-addressing table whose slots are
/// valid only for the current generation, so that forgetting a block's words costs nothing (a
/// block's stores are many and short-lived; a node-based map allocated one node per word).
class GlobalShadow {
 public:
  bool empty() const { return used_ == 0; }
  /// False when no word of [first, last] can have been stored to (outside the stores' range).
  bool may_hold(std::uintptr_t first, std::uintptr_t last) const { return last >= lo_ && first <= hi_; }
  /// The word's entry, or null when the block has not stored to it.
  GlobalWord* find(std::uintptr_t word) {
    if (word < lo_ || word > hi_) return nullptr;  // most loads: not the stores' array
    for (std::size_t i = slot_of(word);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.generation != generation_) return nullptr;
      if (s.word == word) return &s.entry;
    }
  }
  /// The most slots a table grows to (about 80 MB: a block storing to a million words); past
  /// that a block's further words are not kept, and not checked.
  static constexpr std::size_t kMaxSlots = std::size_t{1} << 21;
  /// The word's entry, added (all zero) if the block has not stored to it; null when the table
  /// is full.
  GlobalWord* insert(std::uintptr_t word) {
    if ((used_ + 1) * 2 > slots_.size()) {
      if (slots_.size() >= kMaxSlots) return find(word);
      grow();
    }
    for (std::size_t i = slot_of(word);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.generation != generation_) {
        s = Slot{word, generation_, GlobalWord{}};
        ++used_;
        lo_ = std::min(lo_, word);
        hi_ = std::max(hi_, word);
        return &s.entry;
      }
      if (s.word == word) return &s.entry;
    }
  }
  /// Forgets every word (a new block); a table grown past 1 M slots is given back.
  void clear() {
    if (used_ == 0) return;
    used_ = 0;
    lo_ = ~std::uintptr_t{0};
    hi_ = 0;
    if (slots_.size() > (std::size_t{1} << 20) || ++generation_ == 0) {
      slots_.clear();
      slots_.shrink_to_fit();
      mask_ = 0;
      generation_ = 1;
    }
  }

 private:
  struct Slot {
    std::uintptr_t word = 0;
    std::uint32_t generation = 0;
    GlobalWord entry;
  };
  std::size_t slot_of(std::uintptr_t word) const {
    return static_cast<std::size_t>((word * 0x9e3779b97f4a7c15ull) >> 20) & mask_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const std::size_t size = old.empty() ? 1024 : old.size() * 2;
    slots_.assign(size, Slot{});
    mask_ = size - 1;
    const std::uint32_t live = generation_;
    generation_ = 1;
    used_ = 0;
    lo_ = ~std::uintptr_t{0};
    hi_ = 0;
    for (const Slot& s : old)
      if (s.generation == live) *insert(s.word) = s.entry;
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, used_ = 0;
  std::uint32_t generation_ = 1;
  std::uintptr_t lo_ = ~std::uintptr_t{0}, hi_ = 0;  ///< the range of the words stored to
};

/// A sanitizer finding as first seen in a block, before symbolisation (metrics.cpp).
struct FindingRecord {
  int kind = 0;
  std::uintptr_t ra = 0;
  unsigned long long block = 0;
  std::string detail;  ///< thread and block ids, the address, the other thread
  std::uintptr_t other_ra = 0;  ///< races: the other access's instruction (0: unknown)
  long long count = 0;
  const char* launch_file = nullptr;  ///< the launch, named when the access's line is unknown
  int launch_line = 0;
};

/// One device allocation's kernel-access bitmaps while a watch is active (watch.cpp): bit i of
/// bits[0] / bits[1] says byte i was loaded / stored by a kernel. Each bitmap is allocated on
/// the first access of that kind, so a watch costs nothing for memory no kernel touches.
struct WatchBits {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;
  std::atomic<std::uint64_t*> bits[2] = {};
  WatchBits(std::uintptr_t b, std::size_t n) : base(b), bytes(n) {}
  WatchBits(const WatchBits&) = delete;
  WatchBits& operator=(const WatchBits&) = delete;
  ~WatchBits() {
    for (auto& b : bits) std::free(b.load());
  }
};

/// A fiber stack with a PROT_NONE guard page below it.
struct Stack {
  void* base = nullptr;    ///< start of the mapping (the guard page)
  std::size_t size = 0;    ///< whole mapping, guard included
  void* top() const { return static_cast<char*>(base) + size; }
  std::size_t usable() const;
};

struct Launch {
  unsigned long long id = 0;  ///< launches since the program started, from 1
  dim3 grid, block;
  std::size_t dynamic_shared = 0;
  const char* file = nullptr;
  int line = 0;
  KernelThunk thunk = nullptr;
  const void* closure = nullptr;
  const void* kernel = nullptr;  ///< the launched function, where known (its name in the metrics)
  /// The kernel's block loop (twin_pass.cpp), else null; traced: the kernel's file is traced, so
  /// that only blocks nobody checks may run it.
  BlockThunk block_thunk = nullptr;
  BlockThunk block_thunk_plain = nullptr;  ///< its untraced twin (itself where it has none)
  const void* block_loop = nullptr;
  bool block_loop_traced = false;
  bool block_loop_shared = false;  ///< it uses __shared__ variables
  std::atomic<unsigned long long> next_block{0};
  std::atomic<unsigned long long> fault_block{~0ull};  ///< lowest faulting block id
  std::size_t closure_bytes = 0;
  /// Device allocations [begin, begin + bytes), sorted: a snapshot, stable during the launch.
  std::vector<std::pair<std::uintptr_t, std::size_t>> allocations;
  /// Launched during a watch: watch_bits[i] holds allocations[i]'s bitmaps (else empty).
  bool watched = false;
  std::vector<WatchBits*> watch_bits;
  /// The sanitizer's words of this launch for the check between blocks (cross_block.cpp), or null.
  struct CrossBlockState* cross = nullptr;
};

/// Bytes reserved on each side of a worker's dynamic shared memory: an access there is an overrun
/// of it (and never lands on someone else's data).
constexpr std::size_t kDynamicSharedPad = 16 * 1024;

struct SharedVariable;

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
  /// The block's threads run as plain calls one after another on one stack (scheduler.cpp,
  /// direct_main) until one of them waits: then that stack becomes its fiber's, and the threads
  /// after it get fibers of their own.
  bool direct = false;
  /// The running block runs as its kernel's block loop: one call for all its threads.
  bool block_loop = false;
  /// Blocks [loop_next, loop_end) may run as block loops (block_loops_main); of the launch's
  /// blocks this worker ran so, how many, and how many of those were checked.
  unsigned long long loop_next = 0, loop_end = 0;
  long long loop_blocks = 0, loop_checked = 0;
  bool failed = false;
  /// This block's accesses feed the metrics and the shared-memory sanitizer (every block, unless
  /// GPULAB_EMU_CHECKS=sample: block_is_checked); out-of-bounds stops and the grader's watch
  /// apply to every block either way.
  bool checked = true;
  // Tracing (metrics.cpp): accesses of each warp in the running block, the shared-memory
  // ranges and their shadow, and the findings of this worker not yet merged.
  std::vector<std::vector<Access>> accesses;
  std::vector<std::uint64_t> loads_pending;  ///< per warp: lanes whose global load awaits a shared store
  std::vector<std::size_t> group_retry;  ///< per warp: the accesses at which tracing_end_phase tries again
  std::uintptr_t static_shared_begin = 0, static_shared_end = 0;
  std::vector<ShadowWord> shadow;  ///< static shared words, then dynamic shared words
  /// The shadow words this block has written, [shadow_lo, shadow_hi): cleared at the next block's
  /// start, the rest is clear already (an untraced block clears nothing).
  std::size_t shadow_lo = 0, shadow_hi = 0;
  std::uint32_t bar_epoch = 1;
  /// Device-memory words the running block stored to (checked blocks only), by address / 4:
  /// another thread's read of one in the same barrier interval is a race (access.cpp).
  GlobalShadow global_shadow;
  PendingStore pending_store;
  std::vector<FindingRecord> findings;
  std::size_t allocation_hint[2] = {0, 0};  ///< the launch's allocations of the last two device accesses
  const std::vector<SharedVariable>* shared_vars = nullptr;  ///< shared_variables(), from tracing_begin_launch
  mutable std::size_t shared_hint[2] = {0, 0};  ///< the __shared__ variables (of shared_variables()) last accessed
  std::size_t recorded = 0;    ///< accesses kept for the running block
  /// The last traced access (address, size), for the fault handler: a fault right after a
  /// misaligned one is that access faulting (an aligned vector load), as it would on a GPU.
  std::uintptr_t last_address = 0;
  unsigned last_size = 0;
  long long dropped = 0;       ///< accesses not kept (over the per-block limit)
  /// An access stopped before it happened (outside every allocation / `__shared__` variable):
  /// its finding kind, instruction and description; the scheduler turns it into the fault.
  int stop_kind = 0;
  std::uintptr_t stop_ra = 0;
  std::string stop_detail;
  /// The running block, for the check between blocks (cross_block.cpp): it has made an atomic;
  /// a __threadfence() since its last plain device store; an atomic after that fence; a plain
  /// device store at all.
  bool cross_acquired = false, cross_fenced = false, cross_released = false, cross_stored = false;
  std::vector<std::uint8_t> cross_seen;  ///< per region: the block's first store (1) / load (2) noted
};

extern __thread Worker* this_worker __attribute__((tls_model("initial-exec")));
/// True while this thread runs a block whose accesses nobody needs: outside the sample of
/// GPULAB_EMU_CHECKS=sample and not watched by the grader. The tracing hooks then return at once,
/// so the block runs nearly as fast as one built without them.
extern __thread bool untraced_block __attribute__((tls_model("initial-exec")));
/// The untraced twin of a launch thunk (common/emu/passes/twin_pass.cpp), or the thunk itself.
KernelThunk plain_twin(KernelThunk traced);

/// Records a fault for the running block, then never returns to the faulting fiber.
[[noreturn]] void fault(const std::string& kind, const std::string& message);
/// Abandons the running block from inside a fiber (the fault is recorded by the scheduler, on its
/// own stack: see Worker::stop_kind). Never returns.
[[noreturn]] void stop_block();
/// Records a fault found outside a fiber (e.g. a deadlock seen by the scheduler).
void record_fault(const Launch& launch, unsigned long long block_id, const std::string& kind,
                  const std::string& message);

std::string where(const char* file, int line);
std::string describe_thread(const Worker& w, const Thread& t);

// Stacks and signal handling (stacks.cpp).
std::vector<Stack>& stacks_for_worker(int worker_id, std::size_t count);
void install_fault_handlers_for_this_thread();
/// The gate (runtime.cpp): after host code touched device memory at `a` while the gate was
/// closed, opens it (the access is retried and succeeds) and returns true; false when `a` is no
/// device memory the gate closed (a real fault).
bool gate_open_after_host_access(std::uintptr_t a);
/// Called by the SIGSEGV handler for a fault outside kernels: records a host access of device
/// memory and opens the gate (true), or returns false for any other fault. Async-signal-safe.
bool on_host_fault(const siginfo_t* info, const void* context);
void prepare_host_fault_records();
/// Turns the host accesses the handler recorded into findings (and watch records), with file:line.
void drain_host_faults();
/// A host access of device memory at `a` by the instruction before return address `ra`: a
/// "host-access" finding and, during a watch, a host_accesses() record.
void note_host_access(std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra);

// Memory-access tracing (metrics.cpp): every load/store of an instrumented kernel file.
void on_access(const void* p, unsigned size, bool store, void* return_address);
void on_atomic(const void* p, unsigned size, void* return_address);
/// Whether block `id` of launch `launch_id` (of `blocks`) is checked in full: always, unless
/// GPULAB_EMU_CHECKS=sample, then the first and last blocks and two drawn from the others by a
/// hash of the launch's number (the same blocks on every run and for any number of workers).
bool block_is_checked(unsigned long long launch_id, unsigned long long id, unsigned long long blocks);
/// Adds a worker's blocks of a launch, how many of them were checked and how many ran as block
/// loops, to check_coverage().
void count_checked_blocks(long long blocks, long long checked, long long loops);
/// One block loop asked whether its pointer parameters lie apart (twin_pass.cpp, "thread jam").
void count_jam_check(bool apart);

/// Called by the scheduler: a worker starts a launch / a block; a block ends.
void tracing_begin_launch(Worker& w);
void tracing_begin_block(Worker& w);
void tracing_end_block(Worker& w);
/// Keeps the worker's access buffers for a later launch (access.cpp).
void tracing_end_launch(Worker& w);
/// Measures the accesses of a warp whose lanes have all returned (metrics.cpp): none can follow.
void tracing_end_warp(Worker& w, int warp);
/// At a barrier every live thread has reached: measures each warp's accesses since its last
/// measure where that gives the requests measuring them at the block's end would (metrics.cpp).
void tracing_end_phase(Worker& w);
/// Judges a same-warp store still waiting for its value (access.cpp); tracing_end_block calls it.
void tracing_flush_pending(Worker& w);
/// A snapshot of the device allocations, for a launch.
std::vector<std::pair<std::uintptr_t, std::size_t>> allocation_snapshot();
/// The live device allocation holding [a, a+size): its start and size. Cheap and lock-free in
/// the common case (a per-thread copy of the allocation table), for host code's accesses.
bool device_allocation_of(std::uintptr_t a, std::size_t size, std::uintptr_t& base, std::size_t& bytes);
/// A size for messages: "100 GB", "1.5 MB", "12 bytes" (binary units).
std::string format_bytes(std::size_t bytes);

// The watch (watch.cpp).
/// Called once per launch, before its workers start: gives it bitmaps if a watch is active.
void watch_begin_launch(Launch& L);
/// The first access of a kind to an allocation during a watched launch: allocates its bitmap.
std::uint64_t* watch_bitmap_slow(WatchBits& wb, int which);
inline std::uint64_t* watch_bitmap(WatchBits& wb, int which) {
  std::uint64_t* b = wb.bits[which].load(std::memory_order_acquire);
  return b ? b : watch_bitmap_slow(wb, which);
}
/// Traffic of a block of a watched launch (metrics.cpp, at block end): sectors, requests, lines,
/// shared wavefronts (the traffic fields of LaunchCounts; the others are ignored).
void watch_add_traffic(const LaunchCounts& block);
/// A block-wide barrier or a warp's shuffle completed during a watch (scheduler.cpp).
void watch_count_barrier();
void watch_count_shuffle();
/// Host code of a traced file loaded or stored device memory (access.cpp).
void watch_note_host_access(std::uintptr_t return_address, bool store);
/// "4 bytes at sums + 8" (a labelled allocation) or "4 bytes at offset 8 of a 400-byte device
/// allocation".
std::string describe_device_bytes(std::uintptr_t base, std::size_t bytes, std::size_t offset, unsigned size);
/// An allocation is being freed: its bitmaps and label go (its address may be reused).
void watch_forget_allocation(std::uintptr_t base);

// Findings outside a block (metrics.cpp): host code's direct accesses to device memory.
/// Counts one more occurrence of (kind, ra) if it is already known; false if it is new.
bool bump_finding(int kind, std::uintptr_t return_address);
void add_finding(const FindingRecord& f);
/// file:line of a return address in a traced file (thread-safe).
std::pair<std::string, int> symbolize(std::uintptr_t return_address);
void shared_memory_range(std::uintptr_t& begin, std::uintptr_t& end);

// The executable's static TLS block: where `__shared__` variables live (shared_memory.cpp).
void poison_shared_memory(Worker& w);
/// One `__shared__` variable: its offset in the executable's TLS block, size and name (from the
/// executable's symbol table; empty when it has none, e.g. stripped).
struct SharedVariable {
  std::size_t offset = 0, size = 0;
  std::string name;
};
/// Sorted by offset.
const std::vector<SharedVariable>& shared_variables();

// The check between the blocks of a launch (cross_block.cpp). A plain access of a checked block
// to region `region` (an index in Launch::allocations, or allocations.size() for the executable's
// static data).
void cross_block_begin_launch(Launch& L);
void cross_block_end_launch(Launch& L);
void cross_block_begin_block(Worker& w);
void cross_block_end_block(Worker& w);
void cross_block_access(Worker& w, std::size_t region, std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra);
/// The running block made a plain device store / a __threadfence() / an atomic: what decides
/// whether it handed its stores over (cross_block.cpp).
inline void cross_block_note_store(Worker& w) {
  w.cross_stored = true;
  w.cross_fenced = false;
  w.cross_released = false;
}
inline void cross_block_note_fence(Worker& w) { w.cross_fenced = true; }
inline void cross_block_note_atomic(Worker& w) {
  w.cross_acquired = true;
  if (w.cross_fenced) w.cross_released = true;
}

// The executable's writable static data (access.cpp): `__device__` and `__constant__` variables,
// and every other global a kernel file defines. [begin, begin + bytes), without the RELRO part.
void static_data_range(std::uintptr_t& begin, std::size_t& bytes);
/// "the static variable 'stage' (offset 12)" for an address of the executable's static data.
std::string static_data_label(std::uintptr_t a);
/// [begin, end) of the executable's data symbol holding `a`; false where no symbol holds it.
bool static_variable_bounds(std::uintptr_t a, std::uintptr_t& begin, std::uintptr_t& end);
/// The name of the executable's function at `a` ("row_sum_thread_per_row", demangled, without
/// its parameters); empty where no symbol names it.
std::string function_name(const void* a);
/// A traced access from a helper called by kernel code (device_calls.cpp): as a load or store of
/// the kernel file at `ra`; size is 1, 2, 4, 8 or 16.
void trace_from_helper(const void* p, unsigned size, std::uint8_t flags, std::uintptr_t ra);
/// Stops the running block before a call it must not make (a host library function), as an
/// access outside device memory does: a finding of `kind` at `ra`, and a fault.
[[noreturn]] void stop_kernel(int kind, std::uintptr_t ra, const std::string& detail);
/// Whether the emulator-side defence `name` is on: GPULAB_EMU_DISABLE=name[,name] switches it off
/// (the grader passes it to the code under test only for its adversarial suite).
bool emu_defence_on(const char* name);

// Sanitizer vocabulary (access.cpp).
const char* finding_kind_name(int kind);
const char* finding_hint(int kind);
/// The label given to a device allocation (label_device_memory), or "" (watch.cpp).
std::string device_label(std::uintptr_t base);

}  // namespace gpulab::emu::detail
