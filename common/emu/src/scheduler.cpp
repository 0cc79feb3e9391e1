// The emulator's scheduler: blocks on worker threads, GPU threads as fibers, and the
// rendezvous behind __syncthreads and the *_sync warp collectives.
//
// Determinism: a block runs on one worker, its fibers in a fixed round-robin order, so a block
// computes the same thing whichever worker runs it. Blocks are handed out in increasing id order;
// after a fault in block k, blocks above k are skipped and blocks below k (already handed out)
// finish, and the fault reported is the lowest block's: the same for any number of workers.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "gpulab/emu/metrics.hpp"
#include "gpulab/emu/async_copy.hpp"
#include "internal.hpp"

// The index built-ins (kernel.hpp), in the global namespace as in CUDA.
__thread uint3 threadIdx __attribute__((tls_model("initial-exec"))) = {0, 0, 0};
__thread uint3 blockIdx __attribute__((tls_model("initial-exec"))) = {0, 0, 0};
__thread dim3 blockDim __attribute__((tls_model("initial-exec")));
__thread dim3 gridDim __attribute__((tls_model("initial-exec")));

// Where the instruction-counting pass (common/emu/passes/count_pass.cpp) adds each basic block's
// counts: a worker's own array while it runs a launch's blocks, a scratch array elsewhere (host
// code of a kernel file), never null.
namespace {
std::uint64_t g_icount_scratch[gpulab::emu::instr::classes];
std::atomic<long long> g_icount_total[gpulab::emu::instr::classes];
}  // namespace
extern "C" {
__thread std::uint64_t* gpulab_emu_icount __attribute__((tls_model("initial-exec"))) = g_icount_scratch;
}

namespace gpulab::emu::detail {

/// Why a thread that returned before a __syncthreads the rest of its block reaches is a fault,
/// said precisely: the rule, and why the code may nevertheless seem to work on a recent GPU.
constexpr const char* kExitAtBarrierRule =
    "The CUDA programming guide allows __syncthreads only where every thread of the block reaches"
    " it (in conditional code, only if the condition is the same in the whole block); otherwise"
    " the behaviour is undefined. NVIDIA GPUs since Volta count threads that have exited as"
    " arrived, so such code happens to work there, by accident; it is not portable (older GPUs"
    " and other vendors may hang or go wrong)."
    "\n  hint: instead of returning early, guard the work with `if (i < n) { ... }` and let every"
    " thread of the block reach the barrier.";

/// The three ways a block's threads can disagree about a __syncthreads, said the same way by the
/// fibers (sync_block, thread_returned) and by block loops (gpulab_emu_block_phase_end).
std::string returned_while_waiting(const std::string& who, int waiting, const char* bar_file, int bar_line) {
  return who + " returned while " + std::to_string(waiting) + " thread(s) of its block wait at __syncthreads " +
         where(bar_file, bar_line) + ". " + kExitAtBarrierRule;
}
std::string barrier_after_return(const char* file, int line, const std::string& who, const std::string& returned) {
  return where(file, line) + ": " + who + " reached __syncthreads, but " + returned + " has already returned before it. " +
         kExitAtBarrierRule;
}
std::string divergent_barrier(const char* file, int line, const std::string& who, int waiting, const char* bar_file,
                              int bar_line) {
  return where(file, line) + ": " + who + " waits at this __syncthreads while " + std::to_string(waiting) +
         " other thread(s) of its block wait at " + where(bar_file, bar_line) +
         ": the barrier is divergent (undefined behaviour on a GPU: it may hang or corrupt)."
         "\n  hint: put __syncthreads where all threads of the block reach it, outside"
         " branches that depend on threadIdx.";
}

__thread Worker* this_worker __attribute__((tls_model("initial-exec"))) = nullptr;
__thread bool untraced_block __attribute__((tls_model("initial-exec"))) = false;

namespace {
/// Traced function -> its untraced twin, filled by the constructors of kernel files built with
/// the twin pass (before main: read-only while kernels run).
std::unordered_map<const void*, void*>& twins() {
  static std::unordered_map<const void*, void*> map;
  return map;
}
}  // namespace

/// Kernel -> its block loop (common/emu/passes/twin_pass.cpp) and whether the kernel's file is
/// traced; filled by the kernel files' constructors, before main.
struct BlockLoop {
  void* loop;
  bool traced;  ///< the kernel's file is traced: only blocks nobody checks may run it
  bool shared;  ///< it uses shared memory (poisoned for each block, as for the threads)
};
std::unordered_map<const void*, BlockLoop>& block_loops() {
  static std::unordered_map<const void*, BlockLoop> map;
  return map;
}

KernelThunk plain_twin(KernelThunk traced) {
  return reinterpret_cast<KernelThunk>(gpulab_emu_plain_twin(reinterpret_cast<void*>(traced)));
}

namespace {

bool same_place(const char* fa, int la, const char* fb, int lb) {
  return la == lb && (fa == fb || (fa && fb && std::strcmp(fa, fb) == 0));
}

std::string hex_mask(lanemask_t m) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", m);
  return buf;
}

std::string lane_list(lanemask_t m) {
  std::string s;
  int shown = 0;
  for (int l = 0; l < 64 && shown < 8; ++l)
    if ((m >> l) & 1ull) {
      s += (s.empty() ? "" : ",") + std::to_string(l);
      ++shown;
    }
  if (__builtin_popcountll(m) > shown) s += ",...";
  return s;
}

const char* op_name(WarpOp op) {
  switch (op) {
    case WarpOp::sync: return "__syncwarp";
    case WarpOp::shfl: return "__shfl*_sync";
    case WarpOp::ballot: return "__ballot_sync";
    case WarpOp::any: return "__any_sync";
    case WarpOp::all: return "__all_sync";
    default: return "warp collective";
  }
}

/// What the fibers (warp_collective, try_complete) and block loops (gpulab_emu_block_collective)
/// say of a warp collective gone wrong.
std::string mask_without_own_lane(const char* file, int line, const std::string& who, int lane, WarpOp op,
                                  lanemask_t mask) {
  return where(file, line) + ": " + who + " (lane " + std::to_string(lane) + ") calls " + op_name(op) +
         " with mask " + hex_mask(mask) + ", which does not include its own lane." +
         (mask == 0xffffffffull && warpSize == 64
              ? "\n  hint: 0xffffffff names only 32 lanes, but this run has 64"
                " lanes per warp; use gpulab::full_mask()."
              : "\n  hint: the calling lane must be named in the mask.");
}
std::string mask_disagrees(const char* file, int line, const std::string& who, int lane, WarpOp op, lanemask_t mask,
                           lanemask_t arrived, const char* at_file, int at_line, lanemask_t at_mask) {
  return where(file, line) + ": lane " + std::to_string(lane) + " of " + who + " calls " + op_name(op) +
         " with mask " + hex_mask(mask) + ", but lanes " + lane_list(arrived) + " of its warp wait at " +
         where(at_file, at_line) + " with mask " + hex_mask(at_mask) +
         " that includes it.\n  hint: all lanes named in a mask must call the collective with the same mask.";
}
std::string inactive_source(const char* file, int line, const std::string& who, int lane, int src, bool gone,
                            lanemask_t mask) {
  const bool narrow_mask = mask == 0xffffffffull && warpSize == 64;
  return where(file, line) + ": " + who + " (lane " + std::to_string(lane) + ") reads lane " + std::to_string(src) +
         " in a shuffle, but lane " + std::to_string(src) +
         (gone ? " has returned or does not exist (a partial last warp)" : " is not in the mask " + hex_mask(mask)) +
         ", so the value is undefined on a GPU." +
         (narrow_mask ? "\n  hint: 0xffffffff names only 32 lanes, but this run has 64"
                        " lanes per warp; use gpulab::full_mask() and offsets derived"
                        " from warpSize."
                      : "\n  hint: keep every lane alive until the warp's shuffles are"
                        " done (guard loads with `if (i < n)` instead of returning"
                        " early), and use a block size that is a multiple of warpSize.");
}
bool valid_shuffle_width(int width) { return width > 0 && width <= warpSize && (width & (width - 1)) == 0; }
std::string bad_shuffle_width(const char* file, int line, int width) {
  return where(file, line) + ": shuffle width " + std::to_string(width) +
         " must be a power of two no larger than warpSize (" + std::to_string(warpSize) + ").";
}
/// The lane whose value `lane` reads in a shuffle of kind op (a valid width); -1: its own.
inline int source_lane(WarpOp op, int arg, int width, int lane) {
  const int base = lane & ~(width - 1);
  // The deltas of shfl_up and shfl_down are unsigned (a "negative" one is a large one). A source
  // beyond the lane's segment keeps the lane's own value; xor may read an earlier segment, as
  // CUDA documents, but not a lane below 0 (a negative lane mask).
  const unsigned delta = static_cast<unsigned>(arg);
  switch (op) {
    case WarpOp::shfl: return base + (arg & (width - 1));
    case WarpOp::shfl_up: return delta > static_cast<unsigned>(lane - base) ? -1 : lane - static_cast<int>(delta);
    case WarpOp::shfl_down: return delta >= static_cast<unsigned>(base + width - lane) ? -1 : lane + static_cast<int>(delta);
    case WarpOp::shfl_xor: {
      const int src = lane ^ arg;
      return src < 0 || src >= base + width ? -1 : src;
    }
    default: return lane;
  }
}

/// Where a resumed fiber came from: the context that jumped to it is that fiber's (a direct
/// switch passes the Thread it leaves) or the scheduler's (it passes nothing).
void arrived(Worker& w, ctx::transfer_t t) {
  if (t.data) static_cast<Thread*>(t.data)->context = t.fctx;
  else w.scheduler = t.fctx;
}

/// Back to the scheduler; returns when this fiber is resumed.
__attribute__((always_inline)) inline void yield_to_scheduler(Worker& w) {
  Thread& self = *w.current;
  if (w.direct) {  // the first thread of the block to wait: direct_main's stack is now its fiber's
    w.direct = false;
    arrived(w, ctx::jump_fcontext(w.scheduler, &self));
    return;
  }
  // A direct switch to the next runnable thread of this pass, the one the scheduler's loop would
  // run next (the same order, one context switch instead of two); at the end of the pass, or
  // once the block failed, back to the scheduler.
  if (!w.failed) {
    const std::size_t n = w.threads.size();
    for (std::size_t j = self.linear + 1; j < n; ++j) {
      Thread& next = w.threads[j];
      if (next.state != State::runnable) continue;
      w.current = &next;
      ::threadIdx = next.tid;
      arrived(w, ctx::jump_fcontext(next.context, &self));
      return;
    }
  }
  arrived(w, ctx::jump_fcontext(w.scheduler, &self));
}

void wake(Worker& w, State from) {
  for (Thread& t : w.threads)
    if (t.state == from) t.state = State::runnable;
}

/// Completes `r` if every live lane it names has arrived. Returns true when it completed.
bool try_complete(Worker& w, Warp& warp, int warp_index, std::size_t ri) {
  Rendezvous& r = warp.open[ri];
  const lanemask_t need = r.mask & warp.live;
  if ((r.arrived & need) != need) return false;
  if (r.op == WarpOp::shfl) watch_count_shuffle();
  const int base = warp_index * warpSize;
  for (int lane = 0; lane < warpSize; ++lane) {
    if (!((r.arrived >> lane) & 1ull)) continue;
    Thread& t = w.threads[static_cast<std::size_t>(base + lane)];
    std::uint64_t out = 0;
    if (r.op == WarpOp::shfl) {
      const int src = r.src[lane];
      if (src < 0) {
        out = r.value[lane];
      } else if ((r.arrived >> src) & 1ull) {
        out = r.value[src];
      } else {
        const bool gone = !((warp.live >> src) & 1ull) && ((r.mask >> src) & 1ull);
        fault("shuffle-inactive-lane", inactive_source(r.file, r.line, describe_thread(w, t), lane, src, gone, r.mask));
      }
    } else if (r.op == WarpOp::ballot || r.op == WarpOp::any || r.op == WarpOp::all) {
      lanemask_t yes = 0;
      for (int l = 0; l < warpSize; ++l)
        if (((r.arrived >> l) & 1ull) && r.value[l]) yes |= 1ull << l;
      out = r.op == WarpOp::ballot ? yes : r.op == WarpOp::any ? (yes != 0) : (yes == r.arrived);
    }
    t.result = out;
    if (&t != w.current) t.state = State::runnable;
  }
  if (r.op == WarpOp::sync) ++warp.sync_epoch;
  warp.open.erase(warp.open.begin() + static_cast<std::ptrdiff_t>(ri));
  return true;
}

/// The thread returned from the kernel.
void thread_returned(Worker& w, Thread& self) {
  self.state = State::done;
  --w.live;
  if (w.exited++ == 0) w.first_exited = &self;
  Warp& warp = w.warps[static_cast<std::size_t>(self.warp)];
  warp.live &= ~(1ull << self.lane);
  // Its warp's accesses are complete: measured now, while still in cache (a block without
  // barriers runs its warps one after another).
  if (warp.live == 0) tracing_end_warp(w, self.warp);
  if (w.bar_arrived > 0)
    fault("exit-at-barrier", returned_while_waiting(describe_thread(w, self), w.bar_arrived, w.bar_file, w.bar_line));
  // Lanes that wait for this one in a warp collective may now be complete without it.
  for (std::size_t ri = 0; ri < warp.open.size();)
    if (!try_complete(w, warp, self.warp, ri)) ++ri;
}

/// A block nobody traces runs the untraced twin of the launch's code where the kernel file has
/// one (common/emu/passes/twin_pass.cpp): its accesses do not even call the hooks.
KernelThunk block_thunk(const Worker& w) {
  return untraced_block ? plain_twin(w.launch->thunk) : w.launch->thunk;
}

void set_block_index(const Launch& L, unsigned long long id) {
  ::blockIdx = uint3{static_cast<unsigned>(id % L.grid.x), static_cast<unsigned>(id / L.grid.x % L.grid.y),
                     static_cast<unsigned>(id / (static_cast<unsigned long long>(L.grid.x) * L.grid.y))};
}

/// Whether block `id` may run as its kernel's block loop (checked is block_is_checked's answer).
bool runs_as_loop(const Launch& L, bool checked) {
  return L.block_loop && (!L.block_loop_traced || (!checked && !L.watched));
}

/// Runs blocks w.loop_next, w.loop_next + 1, ... below w.loop_end, each as one call of its
/// kernel's block loop, on the worker's direct stack, until one must run thread by thread (a
/// checked block of a traced file) or a block below faulted.
void block_loops_main(ctx::transfer_t t) {
  Worker& w = *this_worker;
  arrived(w, t);
  const Launch& L = *w.launch;
  const unsigned long long nblocks = static_cast<unsigned long long>(L.grid.x) * L.grid.y * L.grid.z;
  for (; w.loop_next < w.loop_end && w.loop_next <= L.fault_block.load(); ++w.loop_next) {
    const unsigned long long id = w.loop_next;
    const bool checked = block_is_checked(L.id, id, nblocks);
    if (!runs_as_loop(L, checked)) break;
    w.block_id = id;
    w.checked = checked;
    set_block_index(L, id);
    if (L.block_loop_shared) poison_shared_memory(w);
    tracing_begin_block(w);
    untraced_block = !checked && !L.watched;
    (untraced_block ? L.block_thunk_plain : L.block_thunk)(L.closure, L.block_loop);
    untraced_block = false;
    tracing_end_block(w);
    ++w.loop_blocks;
    w.loop_checked += checked;
  }
  ctx::jump_fcontext(w.scheduler, nullptr);
  std::abort();
}

/// Runs blocks from `id` (below `end`) as block loops while they may (block_loops_main); returns
/// the next block to run.
unsigned long long run_block_loops(Worker& w, unsigned long long id, unsigned long long end) {
  const std::size_t n = w.threads.size();
  Thread& first = w.threads[0];
  first.stack = static_cast<int>(n);  // block_loops_main's stack (a crash there names its block)
  w.current = &first;
  ::threadIdx = first.tid;
  ::blockDim = w.launch->block;
  ::gridDim = w.launch->grid;
  w.failed = false;
  w.block_loop = true;
  w.loop_next = id;
  w.loop_end = end;
  const Stack& s = (*w.stacks)[n];
  ctx::jump_fcontext(ctx::make_fcontext(s.top(), s.usable(), block_loops_main), nullptr);
  w.block_loop = false;
  w.current = nullptr;
  return w.loop_next;
}

std::atomic<int> g_block_loops{-1};  // -1: not set, from the environment

void fiber_main(ctx::transfer_t t) {
  Worker& w = *this_worker;
  arrived(w, t);
  block_thunk(w)(w.launch->closure);
  thread_returned(w, *w.current);
  yield_to_scheduler(w);
  std::abort();  // a finished fiber is never resumed
}

/// Runs the block's threads in order as plain calls on one stack, each to its return: what the
/// fibers would do, in the same order, as long as no thread waits (a block without barriers or
/// warp collectives never switches context). The first thread that waits leaves this loop for
/// good (yield_to_scheduler): this stack becomes its fiber's, the scheduler gives the threads
/// after it fibers of their own, and when it returns it finishes like any fiber.
void direct_main(ctx::transfer_t t) {
  Worker& w = *this_worker;
  arrived(w, t);
  const KernelThunk thunk = block_thunk(w);
  const int stack = static_cast<int>(w.threads.size());  // this stack's index
  for (Thread& self : w.threads) {
    w.current = &self;
    ::threadIdx = self.tid;
    self.stack = stack;
    thunk(w.launch->closure);
    thread_returned(w, self);
    if (!w.direct) {  // it waited on the way, and has run as a fiber since
      yield_to_scheduler(w);
      std::abort();
    }
  }
  ctx::jump_fcontext(w.scheduler, nullptr);  // every thread returned
  std::abort();
}

bool direct_runs_enabled() {
  const char* v = std::getenv("GPULAB_EMU_DIRECT");
  return !(v && std::strcmp(v, "0") == 0);
}

void describe_waiters(const Worker& w, std::ostringstream& os) {
  int at_bar = 0, done = 0;
  for (const Thread& t : w.threads) {
    at_bar += t.state == State::at_barrier;
    done += t.state == State::done;
  }
  if (at_bar) os << "\n  " << at_bar << " thread(s) wait at __syncthreads " << where(w.bar_file, w.bar_line);
  for (std::size_t wi = 0; wi < w.warps.size(); ++wi)
    for (const Rendezvous& r : w.warps[wi].open)
      os << "\n  warp " << wi << ": lanes " << lane_list(r.arrived) << " wait at " << op_name(r.op)
         << " " << where(r.file, r.line) << " with mask " << hex_mask(r.mask) << " for lanes "
         << lane_list(r.mask & w.warps[wi].live & ~r.arrived);
  if (done) os << "\n  " << done << " thread(s) have returned";
}

/// Resolves __activemask() for warps none of whose lanes can run: the lanes waiting at the same
/// __activemask call are the converged group. Returns true if any lane became runnable.
bool resolve_active_masks(Worker& w) {
  bool any = false;
  for (std::size_t wi = 0; wi < w.warps.size(); ++wi) {
    const int base = static_cast<int>(wi) * warpSize;
    const int end = std::min<int>(base + warpSize, static_cast<int>(w.threads.size()));
    bool blocked = true, waiting = false;
    for (int i = base; i < end; ++i) {
      blocked &= w.threads[i].state != State::runnable;
      waiting |= w.threads[i].state == State::at_activemask;
    }
    if (!blocked || !waiting) continue;
    for (int i = base; i < end; ++i) {
      Thread& t = w.threads[i];
      if (t.state != State::at_activemask) continue;
      lanemask_t group = 0;
      for (int j = base; j < end; ++j)
        if (w.threads[j].state == State::at_activemask &&
            same_place(w.threads[j].wait_file, w.threads[j].wait_line, t.wait_file, t.wait_line))
          group |= 1ull << w.threads[j].lane;
      for (int j = base; j < end; ++j)
        if ((group >> w.threads[j].lane) & 1ull) {
          w.threads[j].result = group;
          w.threads[j].state = State::runnable;
        }
      any = true;
    }
  }
  return any;
}

/// Ends a block that failed: its fibers are never resumed.
void abandon_block(Worker& w, unsigned long long id) {
  const Launch& L = *w.launch;
  if (w.stop_kind) {  // an access stopped before it happened: name it here, off the fiber
    const auto [file, line_] = symbolize(w.stop_ra);
    const std::string at = line_ > 0 ? file + ":" + std::to_string(line_)
                                     : "a line of the kernel launched at " + where(L.file, L.line);
    const std::string hint = finding_hint(w.stop_kind);
    record_fault(L, id, finding_kind_name(w.stop_kind),
                 at + ": " + w.stop_detail + " (stopped before the access)" + (hint.empty() ? "" : "\n  hint: " + hint));
    w.stop_kind = 0;
    w.stop_detail.clear();
  }
  tracing_end_block(w);
}

/// Runs one block to completion (or to its first fault).
void run_block(Worker& w, unsigned long long id) {
  const Launch& L = *w.launch;
  w.block_id = id;
  async_copies_reset();  // copies a thread of the last block never waited for are dropped
  w.checked = block_is_checked(L.id, id, static_cast<unsigned long long>(L.grid.x) * L.grid.y * L.grid.z);
  set_block_index(L, id);
  ::blockDim = L.block;
  ::gridDim = L.grid;
  const std::size_t n = w.threads.size();
  for (Warp& warp : w.warps) {
    warp.live = 0;
    warp.open.clear();
    warp.sync_epoch = 0;
  }
  for (std::size_t i = 0; i < n; ++i) {  // (index, lane and warp: set per launch, worker_loop)
    Thread& t = w.threads[i];
    t.context = nullptr;  // a fiber only once it needs one (direct_main)
    t.stack = static_cast<int>(i);
    t.state = State::runnable;
    t.result = 0;
    w.warps[static_cast<std::size_t>(t.warp)].live |= 1ull << t.lane;
  }
  w.live = static_cast<int>(n);
  w.exited = 0;
  w.first_exited = nullptr;
  w.bar_arrived = 0;
  w.failed = false;
  poison_shared_memory(w);
  tracing_begin_block(w);
  struct Untraced {  // for this block only, whichever way it ends
    explicit Untraced(bool on) { untraced_block = on; }
    ~Untraced() { untraced_block = false; }
  } untraced(!w.checked && !L.watched);

  static const bool direct_runs = direct_runs_enabled();
  std::size_t first_fiber = 0;
  if (direct_runs) {
    const Stack& s = (*w.stacks)[n];
    w.direct = true;
    const ctx::transfer_t back = ctx::jump_fcontext(ctx::make_fcontext(s.top(), s.usable(), direct_main), nullptr);
    w.direct = false;
    w.current = nullptr;
    first_fiber = n;  // unless a thread waited: every thread has returned
    if (back.data) {  // a thread waited (or failed): the rest of the block runs on fibers
      Thread& waited = *static_cast<Thread*>(back.data);
      waited.context = back.fctx;
      first_fiber = waited.linear + 1;
      if (w.failed) {
        abandon_block(w, id);
        return;
      }
    }
  }
  for (std::size_t i = first_fiber; i < n; ++i) {
    Thread& t = w.threads[i];
    const Stack& s = (*w.stacks)[i];
    // Each stack's top a different number of cache lines below its page-aligned end: otherwise
    // the hot top of every fiber's stack maps to the same cache sets, and a block's fibers evict
    // each other's frames at every switch (the tiled transpose without checks: 10% faster).
    const std::size_t stagger = (i % 64) * 64;
    t.context = ctx::make_fcontext(static_cast<char*>(s.top()) - stagger, s.usable() - stagger, fiber_main);
  }

  while (w.live > 0) {
    bool ran = false;
    for (std::size_t i = 0; i < n; ++i) {
      Thread& t = w.threads[i];
      if (t.state != State::runnable) continue;
      ran = true;
      ::threadIdx = t.tid;
      w.current = &t;
      // Fibers switch directly to the next runnable one (yield_to_scheduler); the one that comes
      // back here is the last of the pass, or the one that failed: carry on after it.
      const ctx::transfer_t back = ctx::jump_fcontext(t.context, nullptr);
      Thread& last = *static_cast<Thread*>(back.data);
      last.context = back.fctx;
      i = last.linear;
      w.current = nullptr;
      if (w.failed) {
        abandon_block(w, id);
        return;
      }
    }
    if (ran || w.live == 0) continue;
    if (resolve_active_masks(w)) continue;
    std::ostringstream os;
    os << "deadlock in block (" << ::blockIdx.x << "," << ::blockIdx.y << ","
       << ::blockIdx.z << ") of the kernel launched at " << where(L.file, L.line)
       << ": no thread can make progress.";
    describe_waiters(w, os);
    os << "\n  hint: a barrier or warp collective is waiting for threads that went another way"
          " or returned.";
    record_fault(L, id, "deadlock", os.str());
    break;
  }
  tracing_end_block(w);
}

void worker_loop(Launch& L, int worker_id) {
  install_fault_handlers_for_this_thread();
  const unsigned nthreads = L.block.x * L.block.y * L.block.z;
  Worker w;
  w.id = worker_id;
  w.launch = &L;
  w.threads.resize(nthreads);
  for (unsigned i = 0; i < nthreads; ++i) {  // the same in every block
    Thread& t = w.threads[i];
    t.linear = i;
    t.tid = uint3{i % L.block.x, i / L.block.x % L.block.y, i / (L.block.x * L.block.y)};
    t.lane = static_cast<int>(i % static_cast<unsigned>(warpSize));
    t.warp = static_cast<int>(i / static_cast<unsigned>(warpSize));
  }
  w.warps.resize((nthreads + warpSize - 1) / warpSize);
  w.stacks = &stacks_for_worker(worker_id, nthreads + 1);  // the last for direct_main
  // Padded on both sides: an access there overruns the dynamic shared memory (access.cpp).
  std::vector<unsigned char> dyn(L.dynamic_shared + 2 * kDynamicSharedPad + 16);
  unsigned char* body = dyn.data() + kDynamicSharedPad;
  w.dynamic_shared = body + (16 - reinterpret_cast<std::uintptr_t>(body) % 16) % 16;
  Worker* saved = this_worker;
  this_worker = &w;
  std::uint64_t icount[instr::classes] = {};
  std::uint64_t* const saved_icount = gpulab_emu_icount;
  gpulab_emu_icount = icount;
  tracing_begin_launch(w);
  const unsigned long long nblocks =
      static_cast<unsigned long long>(L.grid.x) * L.grid.y * L.grid.z;
  // Blocks are taken a few at a time from the launch's counter: one atomic add per block would
  // cost a drain of the store buffer per block (measurable where a block is a short loop).
  // Which worker runs a block does not change what it computes (see the top of this file).
  long long blocks_run = 0, checked_run = 0;  // (and w.loop_blocks, w.loop_checked)
  const unsigned long long chunk =
      std::clamp<unsigned long long>(nblocks / (64ull * static_cast<unsigned>(workers())), 1, 16);
  for (;;) {
    const unsigned long long first = L.next_block.fetch_add(chunk);
    if (first >= nblocks || first > L.fault_block.load()) break;
    const unsigned long long end = std::min(nblocks, first + chunk);
    for (unsigned long long id = first; id < end && id <= L.fault_block.load();) {
      if (runs_as_loop(L, block_is_checked(L.id, id, nblocks))) {  // from id on, in one go
        const unsigned long long next = run_block_loops(w, id, end);
        if (next != id) {
          id = next;
          continue;
        }
      }
      run_block(w, id++);
      ++blocks_run;
      checked_run += w.checked;
    }
  }
  count_checked_blocks(blocks_run + w.loop_blocks, checked_run + w.loop_checked, w.loop_blocks);
  tracing_end_launch(w);
  gpulab_emu_icount = saved_icount;
  for (int c = 0; c < instr::classes; ++c)
    if (icount[c]) g_icount_total[c].fetch_add(static_cast<long long>(icount[c]));
  this_worker = saved;
}

}  // namespace

std::size_t Stack::usable() const { return size - 4096; }

[[noreturn]] void fault(const std::string& kind, const std::string& message) {
  Worker& w = *this_worker;
  record_fault(*w.launch, w.block_id, kind, message);
  w.failed = true;
  for (;;) yield_to_scheduler(w);  // never resumed
}

[[noreturn]] void stop_block() {
  Worker& w = *this_worker;
  w.failed = true;
  for (;;) yield_to_scheduler(w);  // never resumed
}

std::string where(const char* file, int line) {
  if (!file) return "<unknown>";
  return std::string(file) + ":" + std::to_string(line);
}

std::string describe_thread(const Worker& w, const Thread& t) {
  (void)w;
  std::ostringstream os;
  os << "thread (" << t.tid.x << "," << t.tid.y << "," << t.tid.z << ") of block ("
     << ::blockIdx.x << "," << ::blockIdx.y << "," << ::blockIdx.z << ")";
  return os.str();
}

}  // namespace gpulab::emu::detail

namespace gpulab::emu {
using namespace detail;

int sync_block(BarrierOp op, int pred, const char* file, int line) {
  Worker& w = *this_worker;
  Thread& self = *w.current;
  if (w.exited > 0)
    fault("exit-at-barrier",
          barrier_after_return(file, line, describe_thread(w, self), describe_thread(w, *w.first_exited)));
  if (w.bar_arrived == 0) {
    w.bar_file = file;
    w.bar_line = line;
    w.bar_op = op;
    w.bar_acc = op == BarrierOp::all ? 1 : 0;
  } else if (!same_place(file, line, w.bar_file, w.bar_line)) {
    fault("divergent-barrier",
          divergent_barrier(file, line, describe_thread(w, self), w.bar_arrived, w.bar_file, w.bar_line));
  }
  switch (op) {
    case BarrierOp::count: w.bar_acc += pred; break;
    case BarrierOp::all: w.bar_acc &= pred; break;
    case BarrierOp::any: w.bar_acc |= pred; break;
    case BarrierOp::sync: break;
  }
  if (++w.bar_arrived == w.live) {
    if (w.recorded) tracing_end_phase(w);  // the warps' requests so far, while still in cache
    watch_count_barrier();
    ++w.bar_epoch;  // accesses before and after this barrier are ordered
    w.bar_result = w.bar_acc;
    w.bar_arrived = 0;
    wake(w, State::at_barrier);
    return w.bar_result;
  }
  self.state = State::at_barrier;
  yield_to_scheduler(w);
  return w.bar_result;
}

int shuffle_source(WarpOp op, int arg, int width, const char* file, int line) {
  Worker& w = *this_worker;
  if (!valid_shuffle_width(width)) fault("bad-shuffle-width", bad_shuffle_width(file, line, width));
  return source_lane(op, arg, width, w.current->lane);
}

std::uint64_t warp_collective(WarpOp op, lanemask_t mask, std::uint64_t value, int src,
                              const char* file, int line) {
  Worker& w = *this_worker;
  Thread& self = *w.current;
  Warp& warp = w.warps[static_cast<std::size_t>(self.warp)];
  const lanemask_t bit = 1ull << self.lane;
  const lanemask_t lanes = warpSize >= 64 ? ~0ull : ((1ull << warpSize) - 1ull);
  if (!(mask & bit)) fault("warp-mask", mask_without_own_lane(file, line, describe_thread(w, self), self.lane, op, mask));
  mask &= lanes;
  std::size_t ri = warp.open.size();
  for (std::size_t i = 0; i < warp.open.size(); ++i) {
    Rendezvous& r = warp.open[i];
    if (!(r.mask & bit) || (r.arrived & bit)) continue;
    if (r.mask != mask)
      fault("warp-mask", mask_disagrees(file, line, describe_thread(w, self), self.lane, op, mask, r.arrived, r.file,
                                        r.line, r.mask));
    ri = i;
    break;
  }
  if (ri == warp.open.size()) {
    warp.open.emplace_back();
    Rendezvous& r = warp.open.back();
    r.op = op;
    r.mask = mask;
    r.file = file;
    r.line = line;
  } else {
    Rendezvous& r = warp.open[ri];
    const bool both_syncwarp = r.op == WarpOp::sync && op == WarpOp::sync;
    if (r.op != op || (!both_syncwarp && !same_place(file, line, r.file, r.line)))
      fault("divergent-warp-collective",
            where(file, line) + ": lane " + std::to_string(self.lane) + " of " +
                describe_thread(w, self) + " calls " + op_name(op) + " while lanes " +
                lane_list(r.arrived) + " of its warp wait at " + op_name(r.op) + " " +
                where(r.file, r.line) + ": the lanes of the warp reached different collectives."
                "\n  hint: every lane named in the mask must execute the same collective; check"
                " loops whose trip count differs between lanes.");
  }
  Rendezvous& r = warp.open[ri];
  r.arrived |= bit;
  r.value[self.lane] = value;
  r.src[self.lane] = src;
  if (try_complete(w, warp, self.warp, ri)) {
    // The lane that completes a collective waits its turn too, instead of going on at once: the
    // warp's lanes then go on in thread order in the scheduler's next pass, as the block's other
    // threads do, which is the order in which a block loop runs them (gpulab_emu_block_collective).
    // (The only thread left alive in its block has no one to wait for.)
    if (w.live > 1) yield_to_scheduler(w);
    return self.result;
  }
  self.state = State::at_warp;
  self.wait_file = file;
  self.wait_line = line;
  yield_to_scheduler(w);
  return self.result;
}

lanemask_t active_mask(const char* file, int line) {
  Worker& w = *this_worker;
  Thread& self = *w.current;
  self.state = State::at_activemask;
  self.wait_file = file;
  self.wait_line = line;
  yield_to_scheduler(w);
  return self.result;
}

lanemask_t live_lanes() {
  Worker& w = *this_worker;
  return w.warps[static_cast<std::size_t>(w.current->warp)].live;
}

void* dynamic_shared_base() { return this_worker->dynamic_shared; }

InstructionCounts instruction_counts() {
  InstructionCounts c;
  for (int i = 0; i < instr::classes; ++i) c.by_class[i] = g_icount_total[i].load();
  return c;
}

void reset_instruction_counts() {
  for (auto& t : g_icount_total) t.store(0);
}

void set_block_loops(bool on) { detail::g_block_loops.store(on ? 1 : 0); }

bool block_loops_on() {
  int v = detail::g_block_loops.load();
  if (v < 0) {
    const char* e = std::getenv("GPULAB_EMU_BLOCK_LOOPS");
    v = (e && std::strcmp(e, "0") == 0) ? 0 : 1;
    detail::g_block_loops.store(v);
  }
  return v == 1;
}

bool has_block_loop(const void* kernel) { return detail::block_loops().count(kernel) > 0; }

void launch_blocks(dim3 grid, dim3 block, std::size_t dynamic_shared_bytes, const char* file,
                   int line, KernelThunk thunk, const void* closure, std::size_t closure_bytes,
                   const void* kernel, BlockThunk block_thunk) {
  if (fault_pending()) return;  // like CUDA: a sticky error makes later launches fail
  const unsigned long long nblocks = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  if (nblocks == 0 || block.x * block.y * block.z == 0) return;
  static std::atomic<unsigned long long> launches{0};
  Launch L;
  L.id = ++launches;
  L.grid = grid;
  L.block = block;
  L.dynamic_shared = dynamic_shared_bytes;
  L.file = file;
  L.line = line;
  L.thunk = thunk;
  L.closure = closure;
  L.kernel = kernel;
  L.closure_bytes = closure_bytes;
  if (kernel && block_thunk && block_loops_on()) {
    const auto& loops = block_loops();
    const auto it = loops.find(kernel);
    if (it != loops.end()) {
      L.block_thunk = block_thunk;
      L.block_thunk_plain = reinterpret_cast<BlockThunk>(gpulab_emu_plain_twin(reinterpret_cast<void*>(block_thunk)));
      L.block_loop = it->second.loop;
      L.block_loop_traced = it->second.traced;
      L.block_loop_shared = it->second.shared;
    }
  }
  L.allocations = allocation_snapshot();
  const DeviceMemoryScope open;  // the kernel's threads may touch device memory; host code may not
  watch_begin_launch(L);
  cross_block_begin_launch(L);
  const int nworkers = static_cast<int>(std::min<unsigned long long>(workers(), nblocks));
  std::vector<std::thread> pool;
  for (int i = 1; i < nworkers; ++i) pool.emplace_back(worker_loop, std::ref(L), i);
  worker_loop(L, 0);
  for (std::thread& t : pool) t.join();
  cross_block_end_launch(L);
}

}  // namespace gpulab::emu

extern "C" void gpulab_emu_register_twin(void* traced, void* plain) {
  gpulab::emu::detail::twins()[traced] = plain;
}

extern "C" void gpulab_emu_register_block(void* kernel, void* loop, int flags) {
  auto& loops = gpulab::emu::detail::block_loops();
  const auto [it, first] = loops.try_emplace(kernel, gpulab::emu::detail::BlockLoop{loop, (flags & 1) != 0, (flags & 2) != 0});
  if (!first) {  // an inline kernel defined in two files: the cautious union (traced if either is)
    it->second.traced |= (flags & 1) != 0;
    it->second.shared |= (flags & 2) != 0;
  }
}

// The jam copy of a block loop (twin_pass.cpp, "thread jam") declares the accesses through
// different pointer parameters apart; it runs where that holds: every two pointers of which one is
// written through (bit i of written for pointers[i]) lie in different device allocations. A null
// pointer is apart from everything (an access through it faults either way); any other pointer
// outside the device allocations (a __device__ variable's address) is not known to be apart.
extern "C" int gpulab_emu_pointers_apart(const void* const* pointers, int count, unsigned long long written) {
  std::uintptr_t base[64];
  for (int i = 0; i < count; ++i) {
    const auto a = reinterpret_cast<std::uintptr_t>(pointers[i]);
    std::size_t bytes = 0;
    base[i] = 0;
    if (a && !gpulab::emu::detail::device_allocation_of(a, 0, base[i], bytes)) {
      gpulab::emu::detail::count_jam_check(false);
      return 0;
    }
  }
  for (int i = 0; i < count; ++i)
    for (int j = i + 1; j < count; ++j)
      if (((written >> i) & 1 || (written >> j) & 1) && base[i] && base[i] == base[j]) {
        gpulab::emu::detail::count_jam_check(false);
        return 0;
      }
  return 1;  // (the copy counts the block: gpulab_emu_jam_block)
}

// A jam copy, on entry: whether any of its loops over the threads runs jammed in this block (0
// where each runs thread after thread, its threads' inner loops not all of one count:
// twin_pass.cpp, "inner loops whose count differs between threads").
extern "C" void gpulab_emu_jam_block(int jammed) { gpulab::emu::detail::count_jam_check(jammed != 0); }

extern "C" void* gpulab_emu_block_scratch(std::size_t bytes) {
  struct Buffer {
    void* p = nullptr;
    std::size_t capacity = 0;
    ~Buffer() { std::free(p); }
  };
  static thread_local Buffer b;  // one per worker thread: a block runs on one at a time
  if (bytes > b.capacity) {
    std::free(b.p);
    b.capacity = (std::max(bytes, 2 * b.capacity) + 63) / 64 * 64;
    b.p = std::aligned_alloc(64, b.capacity);
    if (!b.p) {
      std::fprintf(stderr, "gpulab emulator: out of memory for a block's %zu bytes of thread context\n", bytes);
      std::abort();
    }
  }
  return b.p;
}

extern "C" int gpulab_emu_block_phase_end(const int* states, int n, int first_thread, const void* barriers) {
  const int first = states[0];
  int t = 1;
  while (t < n && states[t] == first) ++t;
  if (t == n) return first;  // every thread at the same barrier, or every thread returned
  // They disagree: say what the fibers would have met first, running the threads in this order.
  using namespace gpulab::emu::detail;
  struct Place {
    const char* file;
    int line;
  };
  const auto* place = static_cast<const Place*>(barriers);
  Worker& w = *this_worker;
  auto who = [&](int i) { return describe_thread(w, w.threads[static_cast<std::size_t>(i)]); };
  int waiting = 0, at = 0, returned = -1;
  std::string kind, message;
  for (int i = 0; i < n && kind.empty(); ++i) {  // in the phase's order: from first_thread, around
    t = (first_thread + i) % n;
    const int s = states[t];
    if (s == 0) {
      if (waiting > 0) {
        kind = "exit-at-barrier";
        message = returned_while_waiting(who(t), waiting, place[at].file, place[at].line);
      } else if (returned < 0) {
        returned = t;
      }
    } else if (returned >= 0) {
      kind = "exit-at-barrier";
      message = barrier_after_return(place[s].file, place[s].line, who(t), who(returned));
    } else if (waiting > 0 && s != at) {
      kind = "divergent-barrier";
      message = divergent_barrier(place[s].file, place[s].line, who(t), waiting, place[at].file, place[at].line);
    } else {
      at = s;
      ++waiting;
    }
  }
  record_fault(*w.launch, w.block_id, kind, message);
  return 0;  // the block ends here
}

namespace {
/// A shuffle of kind K in a block loop where each warp's lanes name one mask that holds them all:
/// false where a lane reads one beyond a partial last warp (nothing said yet).
template <gpulab::emu::WarpOp K>
bool plain_shuffle(const std::uint64_t* values, const int* args, const int* widths, std::uint64_t* results, int n, int ws) {
  for (int base = 0; base < n; base += ws) {
    const int live = std::min(ws, n - base);
    for (int l = 0; l < live; ++l) {
      const int src = gpulab::emu::detail::source_lane(K, args[base + l], widths[base + l], l);
      if (src >= live) return false;
      results[base + l] = values[base + (src < 0 ? l : src)];
    }
  }
  return true;
}
}  // namespace

// A warp collective in a block loop (twin_pass.cpp, "warp collectives in region loops"): every
// thread of the block has stopped at the same one (op: its WarpOp, a shuffle's own kind), leaving
// in its slot its mask and value and, for a shuffle, the argument and width. results[t] gets what
// warp_collective would return to thread t; as there, the lanes of a warp that name the same mask
// meet, and what would fault on the fibers faults here with the same message (the first such lane
// in the phase's order: from first_thread, around). Returns 0 where the block ends on a fault.
extern "C" int gpulab_emu_block_collective(int op_code, const std::uint64_t* masks, const std::uint64_t* values,
                                           const int* args, const int* widths, std::uint64_t* results, int n,
                                           int first_thread, const char* file, int line) {
  using namespace gpulab::emu;
  using namespace gpulab::emu::detail;
  Worker& w = *this_worker;
  const WarpOp kind = static_cast<WarpOp>(op_code);
  const bool shuffle = kind == WarpOp::shfl || kind == WarpOp::shfl_up || kind == WarpOp::shfl_down ||
                       kind == WarpOp::shfl_xor;
  const WarpOp op = shuffle ? WarpOp::shfl : kind;  // what warp_collective is called with
  const int ws = warpSize;
  const lanemask_t lanes = ws >= 64 ? ~0ull : ((1ull << ws) - 1ull);
  auto live_of = [&](int base) { return n - base >= ws ? lanes : (1ull << (n - base)) - 1ull; };
  // The usual case: each warp's lanes name one mask that holds them all, and any width is valid.
  bool plain = true;
  for (int base = 0; base < n && plain; base += ws) {
    const lanemask_t live = live_of(base), mask = masks[base] & lanes;
    plain = (mask & live) == live;
    bool alike = true;
    for (int l = 1; l < ws && base + l < n; ++l) alike &= masks[base + l] == masks[base];
    if (shuffle)
      for (int l = 0; l < ws && base + l < n; ++l) {
        const int width = widths[base + l];
        alike &= width > 0 && width <= ws && (width & (width - 1)) == 0;  // (valid_shuffle_width)
      }
    plain = plain && alike;
  }
  if (plain && shuffle) {  // (a source outside a partial last warp faults: said below)
    bool done = false;
    switch (kind) {
      case WarpOp::shfl: done = plain_shuffle<WarpOp::shfl>(values, args, widths, results, n, ws); break;
      case WarpOp::shfl_up: done = plain_shuffle<WarpOp::shfl_up>(values, args, widths, results, n, ws); break;
      case WarpOp::shfl_down: done = plain_shuffle<WarpOp::shfl_down>(values, args, widths, results, n, ws); break;
      default: done = plain_shuffle<WarpOp::shfl_xor>(values, args, widths, results, n, ws); break;
    }
    if (done) {
      for (int base = 0; base < n; base += ws) watch_count_shuffle();  // (one per warp, as the fibers count)
      return 1;
    }
  }
  if (plain && !shuffle) {  // ballot, any, all, __syncwarp: one answer per warp
    for (int base = 0; base < n; base += ws) {
      const int live = std::min(ws, n - base);
      lanemask_t yes = 0;
      for (int l = 0; l < live; ++l)
        if (values[base + l]) yes |= 1ull << l;
      const lanemask_t met = live == 64 ? ~0ull : (1ull << live) - 1ull;
      const std::uint64_t out = kind == WarpOp::ballot ? yes : kind == WarpOp::any ? (yes != 0) : kind == WarpOp::all ? (yes == met) : 0;
      for (int l = 0; l < live; ++l) results[base + l] = out;
    }
    return 1;
  }
  // Anything else: the fibers' arrivals replayed in the phase's order (shuffle_source's width
  // check, then warp_collective's), each warp's rendezvous opened, joined and completed as there,
  // so that the same fault is met first.
  auto who = [&](int t) { return describe_thread(w, w.threads[static_cast<std::size_t>(t)]); };
  auto fail = [&](const char* what, const std::string& message) {
    record_fault(*w.launch, w.block_id, what, message);
    return 0;
  };
  struct Meet {
    lanemask_t mask, arrived;
  };
  std::vector<std::vector<Meet>> open(static_cast<std::size_t>((n + ws - 1) / ws));
  for (int i = 0; i < n; ++i) {
    const int t = (first_thread + i) % n, lane = t % ws, base = t - lane;
    const lanemask_t live = live_of(base), bit = 1ull << lane;
    if (shuffle && !valid_shuffle_width(widths[t])) return fail("bad-shuffle-width", bad_shuffle_width(file, line, widths[t]));
    if (!(masks[t] & bit)) return fail("warp-mask", mask_without_own_lane(file, line, who(t), lane, op, masks[t]));
    const lanemask_t mask = masks[t] & lanes;
    std::vector<Meet>& meets = open[static_cast<std::size_t>(base / ws)];
    std::size_t m = meets.size();
    for (std::size_t j = 0; j < meets.size(); ++j) {
      if (!(meets[j].mask & bit) || (meets[j].arrived & bit)) continue;
      if (meets[j].mask != mask)
        return fail("warp-mask", mask_disagrees(file, line, who(t), lane, op, mask, meets[j].arrived, file, line, meets[j].mask));
      m = j;
      break;
    }
    if (m == meets.size()) meets.push_back({mask, 0});
    Meet& r = meets[m];
    r.arrived |= bit;
    if ((r.arrived & r.mask & live) != (r.mask & live)) continue;
    // Complete (try_complete): each arrived lane's answer, in lane order (a shuffle counted first).
    if (shuffle) watch_count_shuffle();
    lanemask_t yes = 0;
    for (int l = 0; l < ws; ++l)
      if (((r.arrived >> l) & 1ull) && values[base + l]) yes |= 1ull << l;
    for (int l = 0; l < ws; ++l) {
      if (!((r.arrived >> l) & 1ull)) continue;
      std::uint64_t out = 0;
      if (shuffle) {
        const int src = source_lane(kind, args[base + l], widths[base + l], l);
        if (src < 0) {
          out = values[base + l];
        } else if ((r.arrived >> src) & 1ull) {
          out = values[base + src];
        } else {
          const bool gone = !((live >> src) & 1ull) && ((r.mask >> src) & 1ull);
          return fail("shuffle-inactive-lane", inactive_source(file, line, who(base + l), l, src, gone, r.mask));
        }
      } else {
        out = kind == WarpOp::ballot ? yes : kind == WarpOp::any ? (yes != 0) : kind == WarpOp::all ? (yes == r.arrived) : 0;
      }
      results[base + l] = out;
    }
    meets.erase(meets.begin() + static_cast<std::ptrdiff_t>(m));
  }
  // Lanes left waiting for lanes that went on with another group: on the fibers they would wait
  // for good (a deadlock) or meet those lanes at their next collective.
  for (std::size_t wi = 0; wi < open.size(); ++wi)
    if (!open[wi].empty()) {
      const Meet& r = open[wi].front();
      return fail("deadlock", where(file, line) + ": in block (" + std::to_string(::blockIdx.x) + "," +
                                  std::to_string(::blockIdx.y) + "," + std::to_string(::blockIdx.z) + "), lanes " +
                                  lane_list(r.arrived) + " of warp " + std::to_string(wi) + " wait at " + op_name(op) +
                                  " with mask " + hex_mask(r.mask) + " for lanes " + lane_list(r.mask & ~r.arrived) +
                                  ", which went on with a mask of their own." +
                                  "\n  hint: every lane named in a mask must call the collective with that same mask.");
    }
  return 1;
}

extern "C" void* gpulab_emu_plain_twin(void* function) {
  const auto& map = gpulab::emu::detail::twins();
  if (map.empty()) return function;
  const auto it = map.find(function);
  return it == map.end() ? function : it->second;
}
