// Every traced load and store of a kernel file lands here: classify the address (global, shared,
// the thread's own stack, static data), run the sanitizer's checks, and record the access for
// the metrics.
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <type_traits>

#include "internal.hpp"

namespace gpulab::emu::detail {
namespace {

bool g_sanitizer = true;

/// Static data of every loaded module (the executable's and libraries' globals, constants), and
/// the executable's own writable data: the globals of the kernel files (`__device__` and
/// `__constant__` variables, which the emulator defines as plain globals), which kernels may read
/// and write as device memory, traced as such.
struct StaticRanges {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  std::uintptr_t data_begin = 0, data_end = 0;  ///< the executable's writable data, RELRO excepted
  StaticRanges() {
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
          auto* self = static_cast<StaticRanges*>(data);
          const bool executable = self->ranges.empty() && self->data_end == 0;  // listed first
          std::uintptr_t relro_end = 0;
          for (int k = 0; k < info->dlpi_phnum; ++k) {
            const auto& ph = info->dlpi_phdr[k];
            const std::uintptr_t b = info->dlpi_addr + ph.p_vaddr;
            if (ph.p_type == PT_GNU_RELRO) relro_end = b + ph.p_memsz;
            if (ph.p_type != PT_LOAD) continue;
            self->ranges.emplace_back(b, b + ph.p_memsz);
            if (executable && (ph.p_flags & PF_W)) self->data_begin = b, self->data_end = b + ph.p_memsz;
          }
          if (executable) self->data_begin = std::min(std::max(self->data_begin, relro_end), self->data_end);
          return 0;
        },
        this);
    // Sorted by start and merged where they overlap or touch, for contains(): a kernel reading a
    // library's global (a constant table, say) asks for every such read, and a process maps a
    // hundred segments or so.
    std::sort(ranges.begin(), ranges.end());
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> merged;
    for (const auto& r : ranges) {
      if (!merged.empty() && r.first <= merged.back().second) merged.back().second = std::max(merged.back().second, r.second);
      else merged.push_back(r);
    }
    ranges.swap(merged);
  }
  bool contains(std::uintptr_t a) const {
    // The last range starting at or before a is the only one that can hold it.
    auto it = std::upper_bound(ranges.begin(), ranges.end(), a,
                               [](std::uintptr_t x, const std::pair<std::uintptr_t, std::uintptr_t>& r) { return x < r.first; });
    return it != ranges.begin() && a < std::prev(it)->second;
  }
};
const StaticRanges& static_ranges() {
  static const StaticRanges r;
  return r;
}

/// Kernel accesses to the executable's writable static data count as device memory (metrics,
/// sanitizer); GPULAB_EMU_DISABLE=static-data restores the old rule that ignored them.
bool static_data_traced() {
  static const bool on = emu_defence_on("static-data");
  return on;
}

/// Whether [a, a+size) is static data a kernel may access as device memory: the executable's
/// writable globals, except the emulator's `warpSize` (a copy of it may live there).
bool static_device_data(std::uintptr_t a, unsigned size) {
  const StaticRanges& r = static_ranges();
  if (a < r.data_begin || a + size > r.data_end) return false;
  const auto ws = reinterpret_cast<std::uintptr_t>(&warpSize);
  return !(a < ws + sizeof warpSize && ws < a + size);
}

std::string ids(const Worker& w, const Thread& t) { return describe_thread(w, t); }

std::string thread_name(const Worker& w, unsigned linear) {
  const dim3 b = w.launch->block;
  std::ostringstream os;
  os << "thread (" << linear % b.x << "," << linear / b.x % b.y << "," << linear / (b.x * b.y) << ")";
  return os.str();
}

/// Records a finding, or counts one more of a finding already recorded (same kind, same access).
/// `detail` is the message, or a callable that makes it: racy code repeats the same finding
/// millions of times, and only the first needs its text.
template <class Detail>
void report(Worker& w, int kind, std::uintptr_t ra, Detail&& detail, std::uintptr_t other_ra = 0) {
  for (FindingRecord& f : w.findings)
    if (f.kind == kind && f.ra == ra) {
      ++f.count;
      return;
    }
  FindingRecord f;
  f.kind = kind;
  f.ra = ra;
  f.block = w.block_id;
  if constexpr (std::is_invocable_v<Detail>) f.detail = detail();
  else f.detail = std::forward<Detail>(detail);
  f.other_ra = other_ra;
  f.count = 1;
  f.launch_file = w.launch->file;
  f.launch_line = w.launch->line;
  w.findings.push_back(std::move(f));
}

/// An access that must not happen (outside every device allocation or `__shared__` variable): a
/// finding, and the block stops here, before the access, as a GPU kernel stops at an illegal
/// address. The scheduler records the fault (kind, file:line, ids) and the process carries on.
[[noreturn]] void stop_before_access(Worker& w, int kind, std::uintptr_t ra, const std::string& detail) {
  report(w, kind, ra, detail);
  w.stop_kind = kind;
  w.stop_ra = ra;
  w.stop_detail = detail;
  stop_block();
}

std::string distance(std::uintptr_t d) {
  return d < 10000 ? std::to_string(d) + (d == 1 ? " byte" : " bytes") : format_bytes(d) + " (" + std::to_string(d) + " bytes)";
}
std::string named(std::uintptr_t base) {
  const std::string label = device_label(base);
  return label.empty() ? "" : " (" + label + ")";
}

/// Describes where a non-device address lies relative to the nearest allocation.
std::string near_allocation(const Launch& L, std::uintptr_t a, unsigned size, bool& past_end) {
  past_end = false;
  const auto& v = L.allocations;
  auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(a, ~std::size_t{0}));
  std::ostringstream os;
  // The nearest allocation on either side, and how far the access is from it.
  const std::pair<std::uintptr_t, std::size_t>* before = it != v.begin() ? &*std::prev(it) : nullptr;
  const std::pair<std::uintptr_t, std::size_t>* after = it != v.end() ? &*it : nullptr;
  const std::uintptr_t gap_before = before && a >= before->first + before->second ? a - (before->first + before->second) : ~std::uintptr_t{0};
  const std::uintptr_t gap_after = after && after->first > a ? after->first - a : ~std::uintptr_t{0};
  if (before && gap_before <= gap_after && gap_before < (1u << 20)) {
    past_end = true;
    os << size << " bytes at " << distance(gap_before) << " past the end of a " << before->second
       << "-byte device allocation" << named(before->first) << " (element " << (a - before->first) / size
       << " of an array of " << before->second / size << ")";
    return os.str();
  }
  if (after && gap_after < (1u << 20)) {
    past_end = true;
    os << size << " bytes at " << distance(gap_after) << " before the start of a " << after->second
       << "-byte device allocation" << named(after->first) << " (a negative index)";
    return os.str();
  }
  os << size << " bytes at address 0x" << std::hex << a << std::dec
     << ", which is not device memory (a wild or host pointer, or an index far out of range)";
  if (before && gap_before <= gap_after)
    os << "; the nearest device allocation" << named(before->first) << ", " << before->second << " bytes, ends "
       << distance(gap_before) << " before it";
  else if (after && gap_after != ~std::uintptr_t{0})
    os << "; the nearest device allocation" << named(after->first) << ", " << after->second << " bytes, starts "
       << distance(gap_after) << " after it";
  else
    os << "; no device memory is allocated";
  return os.str();
}

/// Static `__shared__` memory: the variable holding [a, a+size), or a description of where an
/// access outside every variable lies (empty when it is inside one, or when the executable has no
/// symbol table to say where its variables are).
/// Whether [a, a+size) lies in one of the two `__shared__` variables the worker's last shared
/// accesses were in (a tiled kernel alternates between its tiles; the one found becomes the first).
inline bool in_hinted_shared_variable(const Worker& w, std::uintptr_t a, unsigned size) {
  const auto& vars = *w.shared_vars;
  for (int i = 0; i < 2; ++i) {
    const std::size_t h = w.shared_hint[i];
    if (h < vars.size() && a >= w.static_shared_begin + vars[h].offset &&
        a + size <= w.static_shared_begin + vars[h].offset + vars[h].size) {
      if (i == 1) std::swap(w.shared_hint[0], w.shared_hint[1]);
      return true;
    }
  }
  return false;
}

std::string outside_shared_variables(const Worker& w, std::uintptr_t a, unsigned size) {
  const auto& vars = *w.shared_vars;
  if (vars.empty()) return {};
  const std::uintptr_t begin = w.static_shared_begin;
  auto holds = [&](const SharedVariable& v) { return a >= begin + v.offset && a + size <= begin + v.offset + v.size; };
  // The common case: one of the two variables last accessed, else the one whose offset is the
  // highest at or below the access (sorted by offset).
  if (in_hinted_shared_variable(w, a, size)) return {};
  const auto above = std::upper_bound(vars.begin(), vars.end(), a - begin,
                                      [](std::uintptr_t off, const SharedVariable& v) { return off < v.offset; });
  if (above != vars.begin() && holds(*(above - 1))) {
    w.shared_hint[1] = w.shared_hint[0];
    w.shared_hint[0] = static_cast<std::size_t>(above - 1 - vars.begin());
    return {};
  }
  const SharedVariable* near = nullptr;
  std::uintptr_t best = ~std::uintptr_t{0};
  bool past = false;
  for (const SharedVariable& v : vars) {
    const std::uintptr_t b = begin + v.offset, e = b + v.size;
    if (holds(v)) return {};  // (not found above: variables that overlap)
    const std::uintptr_t d = a >= e ? a - e : a + size <= b ? b - a : 0;
    if (d < best || (d == best && a >= e)) {
      best = d;
      near = &v;
      past = a >= b;
    }
  }
  std::ostringstream os;
  const std::uintptr_t b = begin + near->offset;
  if (past && a >= b + near->size)
    os << size << " bytes at " << distance(a - (b + near->size)) << " past the end of the " << near->size
       << "-byte __shared__ array '" << near->name << "' (element " << (a - b) / size << " of " << near->size / size << ")";
  else if (!past)
    os << size << " bytes at " << distance(b - a) << " before the start of the " << near->size << "-byte __shared__ array '"
       << near->name << "' (a negative index)";
  else
    os << size << " bytes that straddle the end of the " << near->size << "-byte __shared__ array '" << near->name << "'";
  return os.str();
}

/// Index in L.allocations of the allocation holding [a, a+size), or -1.
long find_device(const Launch& L, std::uintptr_t a, unsigned size) {
  const auto& v = L.allocations;
  auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(a, ~std::size_t{0}));
  if (it == v.begin()) return -1;
  --it;
  return a >= it->first && a + size <= it->first + it->second ? it - v.begin() : -1;
}
bool in_device(const Launch& L, std::uintptr_t a, unsigned size) { return find_device(L, a, size) >= 0; }

/// Sets the bits of bytes [offset, offset+size) (size <= 16: at most two words). Atomic, as
/// several workers mark one bitmap; a word whose bits are all set already is only read, so
/// re-reading data (the common case) costs no locked instruction and no cache-line ping-pong.
inline void set_bits(std::uint64_t* bits, std::size_t offset, unsigned size) {
  auto set = [](std::uint64_t* word, std::uint64_t m) {
    if ((__atomic_load_n(word, __ATOMIC_RELAXED) & m) != m) __atomic_fetch_or(word, m, __ATOMIC_RELAXED);
  };
  const unsigned b = offset & 63;
  std::uint64_t* w = bits + (offset >> 6);
  if (b + size <= 64) {
    set(w, (size == 64 ? ~0ull : (1ull << size) - 1) << b);
  } else {
    set(w, ~0ull << b);
    set(w + 1, (1ull << (b + size - 64)) - 1);
  }
}

/// A kernel's global access during a watch: which bytes it loaded / stored (atomics: both).
void watch_mark(const Launch& L, long index, std::uintptr_t a, unsigned size, std::uint8_t flags) {
  WatchBits& wb = *L.watch_bits[static_cast<std::size_t>(index)];
  const std::size_t offset = a - wb.base;
  if (!(flags & kStore) || (flags & kAtomic)) set_bits(watch_bitmap(wb, 0), offset, size);
  if (flags & kStore) set_bits(watch_bitmap(wb, 1), offset, size);
}

/// A finding of kind host-access at host code's `ra`, after the kernels' findings in the order
/// host code first made them; `detail` says what it touched.
void add_host_finding(std::uintptr_t ra, bool store, const std::string& detail) {
  watch_note_host_access(ra, store);
  if (!g_sanitizer || bump_finding(kHostAccess, ra)) return;
  FindingRecord f;
  f.kind = kHostAccess;
  f.ra = ra;
  static std::atomic<unsigned long long> order{0};
  f.block = (1ull << 63) + order++;
  f.count = 1;
  f.detail = detail;
  add_finding(f);
}

// ---- static variables that kernels and host code both touch ----------------------------------
// On a GPU a `__device__` or `__constant__` variable is device memory: host code that names it
// reaches only a host copy of it (what kernels wrote is not there, what it writes no kernel
// sees), and a host variable cannot be touched by a kernel at all (nvcc refuses it). On the
// emulator both are one host global, so host code could read what a kernel staged there (the
// inputs) and write what a kernel then copies into the outputs (results computed on the host).
// A variable of the executable's static data that kernels touch and host code of a traced file
// touches directly is therefore a host access, reported at the host code's line whichever side
// came first. The runtime's symbol copies (cudaMemcpyToSymbol / FromSymbol) are the emulator's
// code, not traced, and mark nothing.
struct SharedStatic {
  bool kernel = false;         // a kernel touched it
  std::uintptr_t host_ra = 0;  // host code's first direct access, 0 when none
  bool host_store = false;
};
std::mutex g_static_mutex;
std::map<std::uintptr_t, SharedStatic> g_static_vars;  // by the variable's first byte
// The variable this worker's kernels last marked: later accesses of it need no lock.
thread_local std::uintptr_t t_marked_begin = 0, t_marked_end = 0;

void report_shared_static(std::uintptr_t var, std::uintptr_t ra, bool store) {
  add_host_finding(ra, store,
                   std::string("host code ") + (store ? "wrote " : "read ") + static_data_label(var) +
                       " directly, a variable kernels use: on a GPU a __device__ or __constant__ variable is"
                       " device memory, and host code reaches only a host copy of it. Copy it with"
                       " cudaMemcpyToSymbol / cudaMemcpyFromSymbol instead.");
}

/// The variable holding [a, a+size): its symbol's bounds, else the bytes themselves.
std::uintptr_t static_variable_of(std::uintptr_t a, unsigned size, std::uintptr_t& end) {
  std::uintptr_t begin = a;
  end = a + size;
  static_variable_bounds(a, begin, end);
  return begin;
}

__attribute__((noinline)) void kernel_static_access(std::uintptr_t a, unsigned size) {
  if (a >= t_marked_begin && a < t_marked_end) return;
  std::uintptr_t end = 0;
  const std::uintptr_t begin = static_variable_of(a, size, end);
  std::lock_guard<std::mutex> lock(g_static_mutex);
  SharedStatic& v = g_static_vars[begin];
  if (!v.kernel && v.host_ra) report_shared_static(begin, v.host_ra, v.host_store);  // host code came first
  v.kernel = true;
  t_marked_begin = begin;
  t_marked_end = end;
}

/// Every direct access of a variable kernels use is reported (and counted by the watch).
void host_static_access(std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra) {
  std::uintptr_t end = 0;
  const std::uintptr_t begin = static_variable_of(a, size, end);
  std::lock_guard<std::mutex> lock(g_static_mutex);
  SharedStatic& v = g_static_vars[begin];
  if (!v.host_ra) {
    v.host_ra = ra;
    v.host_store = store;
  }
  if (v.kernel) report_shared_static(begin, ra, store);
}

/// A load or store by host code of a traced file (not inside a kernel). Legal on the emulator,
/// where device memory is host memory, but an illegal address on a GPU: reported, not stopped,
/// so that the program runs on and the grader can say what happened.
__attribute__((noinline)) void host_access(std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra) {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;
  if (!device_allocation_of(a, size, base, bytes)) {
    if (static_device_data(a, size) && static_data_traced()) host_static_access(a, size, store, ra);
    return;  // other host memory: nothing to say
  }
  add_host_finding(ra, store,
                   std::string("host code ") + (store ? "wrote" : "read") + " device memory directly (" +
                       describe_device_bytes(base, bytes, a - base, size) +
                       "): on a GPU the host cannot dereference a device pointer (illegal address). " +
                       (store ? "Write a host array and copy it with gpulab::copy_to_device / cudaMemcpy instead."
                              : "Copy it with gpulab::copy_to_host / cudaMemcpy first."));
}

std::string write_write_race(const Worker& w, const Thread& t, unsigned other, bool global = false) {
  return ids(w, t) + (global ? " writes a device-memory word that " : " writes a shared-memory word that ") +
         thread_name(w, other) + " also wrote, with no __syncthreads between them (write-write race" +
         (global ? ": on a GPU which value is left depends on the order the threads happen to run in)" : ")");
}

/// The deferred check of a same-warp store, or of any store to a device word another thread of
/// the block wrote (PendingStore): now that the store has happened, a race only if it changed the
/// bytes (threads that all write the same value to a flag do not race).
__attribute__((noinline)) void flush_pending_store(Worker& w) {
  PendingStore& p = w.pending_store;
  if (!p.active) return;
  p.active = false;
  const auto* now = reinterpret_cast<const unsigned char*>(p.addr);
  bool changed = false;
  for (unsigned i = 0; i < p.size; ++i) changed = changed || ((p.compare >> i & 1u) && now[i] != p.before[i]);
  if (changed)
    report(w, p.global ? kGlobalRace : kRaceWriteWrite, p.ra,
           [&] { return write_write_race(w, *p.thread, p.other, p.global); }, p.other_ra);
}

/// Keeps the bytes a store is about to overwrite, so that flush_pending_store can tell, at the
/// worker's next access, whether it changed those of them in `compare` (bit i: byte i of the
/// access; the bytes another thread stored too).
void defer_store_check(Worker& w, const Thread& t, std::uintptr_t a, unsigned size, std::uintptr_t ra,
                       std::uint16_t other, std::uintptr_t other_ra, bool global, std::uint16_t compare = 0xffff) {
  if (size > sizeof w.pending_store.before) return;
  PendingStore& p = w.pending_store;
  p.compare = compare;
  p.active = true;
  p.addr = a;
  p.size = size;
  std::memcpy(p.before, reinterpret_cast<const void*>(a), size);
  p.ra = ra;
  p.other_ra = other_ra;
  p.thread = &t;
  p.other = other;
  p.global = global;
}

/// Two accesses of one barrier interval are ordered only if they are the same thread's, or the
/// same warp's with a __syncwarp between them.
bool ordered_in_block(const Worker& w, const Thread& t, std::uint16_t other, std::uint32_t other_sync) {
  const auto me = static_cast<std::uint16_t>(t.linear);
  const unsigned ws = static_cast<unsigned>(warpSize);
  return other == me || (other / ws == me / ws && w.warps[static_cast<std::size_t>(t.warp)].sync_epoch > other_sync);
}

/// The race check of device memory within a block: a plain load of a word another thread of the
/// block stored to since the last __syncthreads (a counter incremented without atomics: the
/// emulator runs a warp's lanes one after another, so each lane sees the last one's store and the
/// result looks right, where a GPU's lanes load together and all but one increment are lost), and
/// a plain store that changes such a word. Atomics are neither checked nor kept; nor is a load
/// before another thread's store (the order the emulator runs lanes in cannot tell which came
/// first on a GPU). Across blocks nothing is checked: a block's accesses are forgotten when it ends.
__attribute__((noinline)) void check_global(Worker& w, Thread& t, std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra) {
  const std::uint32_t epoch = w.bar_epoch;
  const std::uint32_t sync = w.warps[static_cast<std::size_t>(t.warp)].sync_epoch;
  const auto me = static_cast<std::uint16_t>(t.linear);
  bool conflict = false;
  std::uint16_t overlap = 0;  // the bytes of the access another thread stored too (bit i: byte i)
  std::uint16_t other = 0;
  std::uintptr_t other_ra = 0;
  for (std::uintptr_t word = a / 4; word <= (a + size - 1) / 4; ++word) {
    // The bytes of this word the access touches (a half or a char shares a word with others').
    const std::uintptr_t lo = std::max(a, word * 4), hi = std::min(a + size, word * 4 + 4);
    const auto bytes = static_cast<std::uint8_t>(((1u << (hi - lo)) - 1) << (lo - word * 4));
    if (!store) {
      const GlobalWord* g = w.global_shadow.find(word);
      if (g && g->write_epoch == epoch && !g->several && (g->bytes & bytes) &&
          !ordered_in_block(w, t, g->writer, g->writer_sync_epoch)) {
        const bool same_warp = g->writer / static_cast<unsigned>(warpSize) == me / static_cast<unsigned>(warpSize);
        report(w, kGlobalRace, ra, [&] {
                 return ids(w, t) + " reads a device-memory word that " + thread_name(w, g->writer) +
                        " wrote with no __syncthreads between them (read-after-write race: " +
                        (same_warp ? "on a GPU the lanes of a warp load together, before any of them stores)"
                                   : "on a GPU the warps of a block run at the same time, so the load may come "
                                     "before the store)");
               }, g->writer_ra);
        return;
      }
      continue;
    }
    GlobalWord* slot = w.global_shadow.insert(word);
    if (!slot) continue;  // the table is full: this word is not kept
    GlobalWord& g = *slot;
    if (g.write_epoch != epoch) {
      g.bytes = bytes;
      g.several = false;
    } else if (g.writer == me) {
      g.bytes |= bytes;
    } else if (ordered_in_block(w, t, g.writer, g.writer_sync_epoch)) {
      g.bytes = bytes;  // the earlier store is ordered before this one and before what follows it
    } else {
      if ((g.bytes & bytes) && !g.several) {
        if (!conflict) other = g.writer, other_ra = g.writer_ra;
        conflict = true;
        for (unsigned k = 0; k < 4; ++k)
          if (g.bytes & bytes & (1u << k)) overlap |= static_cast<std::uint16_t>(1u << (word * 4 + k - a));
      }
      if (g.bytes & ~bytes) g.several = true;  // another thread's bytes stay in the word
      g.bytes = bytes;
    }
    g.write_epoch = epoch;
    g.writer = me;
    g.writer_sync_epoch = sync;
    g.writer_ra = ra;
  }
  if (conflict) defer_store_check(w, t, a, size, ra, other, other_ra, true, overlap);
}

void check_shared(Worker& w, Thread& t, std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra,
                  std::uintptr_t region_begin, std::size_t shadow_offset) {
  const std::size_t first = (a - region_begin) / 4, last = (a + size - 1 - region_begin) / 4;
  const std::uint32_t epoch = w.bar_epoch;
  const std::uint32_t sync = w.warps[static_cast<std::size_t>(t.warp)].sync_epoch;
  const auto me = static_cast<std::uint16_t>(t.linear);
  const unsigned ws = static_cast<unsigned>(warpSize);
  bool same_warp_write = false;  // a same-warp write-write: judged once the value is stored
  std::uint16_t same_warp_writer = 0;
  std::uintptr_t same_warp_ra = 0;
  if (shadow_offset + first < w.shadow.size()) {
    w.shadow_lo = std::min(w.shadow_lo, shadow_offset + first);
    w.shadow_hi = std::max(w.shadow_hi, std::min(w.shadow.size(), shadow_offset + last + 1));
  }
  for (std::size_t i = first; i <= last; ++i) {
    if (shadow_offset + i >= w.shadow.size()) break;
    ShadowWord& s = w.shadow[shadow_offset + i];
    auto ordered = [&](std::uint16_t other, std::uint32_t other_sync) {
      return ordered_in_block(w, t, other, other_sync);
    };
    if (store) {
      if (s.write_epoch == epoch && !ordered(s.writer, s.writer_sync_epoch)) {
        if (s.writer / ws == me / ws) {
          same_warp_write = true;
          same_warp_writer = s.writer;
          same_warp_ra = s.writer_ra;
        } else {
          report(w, kRaceWriteWrite, ra, [&] { return write_write_race(w, t, s.writer); }, s.writer_ra);
        }
      } else if (s.read_epoch == epoch && (s.multi_reader || !ordered(s.reader, s.reader_sync_epoch))) {
        report(w, kRaceReadWrite, ra, [&] {
                 return ids(w, t) + " overwrites a shared-memory word that " +
                        (s.multi_reader ? std::string("other threads") : thread_name(w, s.reader)) +
                        " read since the last __syncthreads (read-write race: they may see the new value)";
               }, s.reader_ra);
      }
      s.write_epoch = epoch;
      s.writer = me;
      s.writer_sync_epoch = sync;
      s.writer_ra = ra;
    } else {
      if (s.write_epoch == 0)
        report(w, kUninitShared, ra,
               [&] { return ids(w, t) + " reads a shared-memory word that no thread of its block has written"; });
      else if (s.write_epoch == epoch && !ordered(s.writer, s.writer_sync_epoch))
        report(w, kRaceWriteRead, ra, [&] {
                 return ids(w, t) + " reads a shared-memory word that " + thread_name(w, s.writer) +
                        " wrote with no __syncthreads between them (read-after-write race)";
               }, s.writer_ra);
      if (s.read_epoch == epoch && s.reader != me) s.multi_reader = 1;
      else if (s.read_epoch != epoch) s.multi_reader = 0;
      s.read_epoch = epoch;
      s.reader = me;
      s.reader_sync_epoch = sync;
      s.reader_ra = ra;
    }
  }
  if (same_warp_write) defer_store_check(w, t, a, size, ra, same_warp_writer, same_warp_ra, false);
}

__attribute__((always_inline)) inline void record(Worker& w, Thread& t, std::uintptr_t a, unsigned size, std::uint8_t flags, std::uintptr_t ra) {
  if (!w.checked) return;  // a block outside the sample: no metrics
  // A block's accesses are kept until it ends (its lanes run one after another between
  // barriers); past this many, the rest are dropped from the metrics (a spinning or huge block).
  constexpr std::size_t kMaxAccessesPerBlock = std::size_t{1} << 23;
  if (w.recorded >= kMaxAccessesPerBlock) {
    ++w.dropped;
    return;
  }
  ++w.recorded;
  // Field by field into the vector: an Access built on the stack from narrow stores and copied
  // in one wide load stalled on store forwarding (half the hook's time on the transpose).
  Access& x = w.accesses[static_cast<std::size_t>(t.warp)].emplace_back();
  x.ra = ra;
  x.addr = a;
  x.lane = static_cast<std::uint16_t>(t.lane);
  x.size = static_cast<std::uint8_t>(size);
  x.flags = flags;
}

/// The launch's allocation holding [a, a+size) if it is one of the worker's last two device
/// accesses' (a kernel reading two arrays alternates between them; the one found becomes the
/// first), else -1.
inline long hinted_allocation(Worker& w, const Launch& L, std::uintptr_t a, unsigned size) {
  for (int i = 0; i < 2; ++i) {
    const std::size_t h = w.allocation_hint[i];
    if (h < L.allocations.size() && a >= L.allocations[h].first &&
        a + size <= L.allocations[h].first + L.allocations[h].second) {
      if (i == 1) std::swap(w.allocation_hint[0], w.allocation_hint[1]);
      return static_cast<long>(h);
    }
  }
  return -1;
}

/// The sanitizer's checks of a device-memory access in region `region` (an allocation's index,
/// or the static data's): races within the block, and between blocks. An atomic is not checked:
/// it is what orders the blocks' plain accesses (cross_block.cpp).
__attribute__((always_inline)) inline void sanitize_global(Worker& w, Thread& t, std::size_t region, std::uintptr_t a,
                                                           unsigned size, std::uint8_t flags, std::uintptr_t ra) {
  if (!g_sanitizer || !w.checked) return;
  if (flags & kAtomic) {
    cross_block_note_atomic(w);
    return;
  }
  if (flags & kStore) cross_block_note_store(w);
  if ((flags & kStore) || w.global_shadow.may_hold(a / 4, (a + size - 1) / 4)) check_global(w, t, a, size, flags & kStore, ra);
  if (w.launch->cross) cross_block_access(w, region, a, size, flags & kStore, ra);
}

/// An access of device memory, inside the launch's allocation `index`: the watch, the sanitizer's
/// race checks, the metrics.
__attribute__((always_inline)) inline void device_access(Worker& w, Thread& t, const Launch& L, std::size_t index, std::uintptr_t a, unsigned size,
                          std::uint8_t flags, std::uintptr_t ra) {
  if (L.watched) watch_mark(L, index, a, size, flags);
  sanitize_global(w, t, index, a, size, flags, ra);
  record(w, t, a, size, flags, ra);
}

/// An access of the executable's static data (a `__device__` array): device memory for the
/// metrics and the sanitizer, as on a GPU. The watch's byte maps cover allocations only (the
/// grader asks them of its buffers).
__attribute__((noinline)) void static_access(Worker& w, Thread& t, const Launch& L, std::uintptr_t a, unsigned size,
                                             std::uint8_t flags, std::uintptr_t ra) {
  kernel_static_access(a, size);
  sanitize_global(w, t, L.allocations.size(), a, size, flags, ra);
  record(w, t, a, size, flags, ra);
}

void trace_any(Worker* w, std::uintptr_t a, unsigned size, std::uint8_t flags, std::uintptr_t ra);

/// Whether `a` lies in one of this worker's index built-ins (threadIdx, blockIdx, blockDim, gridDim).
__attribute__((always_inline)) inline bool index_built_in(std::uintptr_t a) {
  auto inside = [a](const auto& v) {
    const auto b = reinterpret_cast<std::uintptr_t>(&v);
    return a >= b && a < b + sizeof v;
  };
  return inside(::threadIdx) || inside(::blockIdx) || inside(::blockDim) || inside(::gridDim);
}

/// The hook of every traced access. Its usual cases first, inline: an aligned access of the
/// device allocation the worker's last device access was in, or of the `__shared__` variable its
/// last shared access was in; trace_any takes the rest.
__attribute__((always_inline)) inline void trace(const void* p, unsigned size, std::uint8_t flags, std::uintptr_t ra) {
  Worker* w = this_worker;
  if (!w || !w->current) [[unlikely]] {  // host code of a kernel file
    host_access(reinterpret_cast<std::uintptr_t>(p), size, flags & kStore, ra);
    // Reported here with its own line: the gate opens, so the access itself does not fault.
    gate_open_after_host_access(reinterpret_cast<std::uintptr_t>(p));
    return;
  }
  // A block outside the sample (GPULAB_EMU_CHECKS=sample) runs as if built without checks: no
  // metrics, no sanitizer, no bounds (loads and stores return in their hooks already; atomics
  // come here).
  if (untraced_block) return;
  if (w->pending_store.active) [[unlikely]]
    flush_pending_store(*w);
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if ((a & (size - 1)) == 0) [[likely]] {
    const Launch& L = *w->launch;
    if (const long h = hinted_allocation(*w, L, a, size); h >= 0) {
      w->last_address = a;
      w->last_size = size;
      device_access(*w, *w->current, L, static_cast<std::size_t>(h), a, size, flags, ra);
      return;
    }
    if (a >= w->static_shared_begin && a < w->static_shared_end && in_hinted_shared_variable(*w, a, size)) {
      w->last_address = a;
      w->last_size = size;
      if (g_sanitizer && !(flags & kAtomic) && w->checked)
        check_shared(*w, *w->current, a, size, flags & kStore, ra, w->static_shared_begin, 0);
      record(*w, *w->current, a, size, flags | kShared, ra);
      return;
    }
    // warpSize, read in every trip of a shuffle loop (`offset = warpSize / 2`) and by every
    // shuffle's default width: the emulator's own variable, never device memory (trace_any would
    // find it among the libraries' static data, at some cost: 135 million reads in one lab 04 grade).
    if (p == static_cast<const void*>(&::warpSize) && !(flags & kStore)) return;
    // The index built-ins (each worker's thread-local threadIdx & co.), read by every thread of a
    // traced file: never device memory.
    if (!(flags & kStore) && index_built_in(a)) return;
  }
  trace_any(w, a, size, flags, ra);
}

__attribute__((noinline)) void trace_any(Worker* w, std::uintptr_t a, unsigned size, std::uint8_t flags, std::uintptr_t ra) {
  Thread& t = *w->current;
  const Launch& L = *w->launch;
  const bool store = flags & kStore;
  // A GPU serves 2-, 4-, 8- and 16-byte accesses only at addresses aligned to their size; the CPU
  // does not care, so check here (e.g. a float4 load of a row that does not start at 16 bytes).
  w->last_address = a;
  w->last_size = size;
  // A fault on a GPU, so the kernel stops here (the CPU's aligned vector load would crash too).
  if (g_sanitizer && (a & (size - 1)) != 0 &&
      (in_device(L, a, size) || (a >= w->static_shared_begin && a < w->static_shared_end) ||
       (static_device_data(a, size) && static_data_traced())))
    stop_before_access(*w, kMisaligned, ra,
           ids(*w, t) + (store ? " writes " : " reads ") + std::to_string(size) + " bytes at an address " +
               std::to_string(a % size) + " bytes past a multiple of " + std::to_string(size));
  const char* verb = store ? " writes " : " reads ";
  // Shared memory: the executable's static TLS block, or this launch's dynamic shared memory.
  if (a >= w->static_shared_begin && a < w->static_shared_end) {
    if (g_sanitizer) {
      const std::string outside = outside_shared_variables(*w, a, size);
      if (!outside.empty()) stop_before_access(*w, kSharedOutOfBounds, ra, ids(*w, t) + verb + outside);
      if (!(flags & kAtomic) && w->checked) check_shared(*w, t, a, size, store, ra, w->static_shared_begin, 0);
    }
    record(*w, t, a, size, flags | kShared, ra);
    return;
  }
  const auto dyn = reinterpret_cast<std::uintptr_t>(w->dynamic_shared);
  if (L.dynamic_shared && a >= dyn && a + size <= dyn + L.dynamic_shared) {
    if (g_sanitizer && !(flags & kAtomic) && w->checked)
      check_shared(*w, t, a, size, store, ra, dyn, (w->static_shared_end - w->static_shared_begin + 3) / 4);
    record(*w, t, a, size, flags | kShared, ra);
    return;
  }
  // The launch's arguments (every thread's launch thunk reads them) and the thread's own stack
  // (locals, parameters): common, and never device memory.
  const auto cl = reinterpret_cast<std::uintptr_t>(L.closure);
  if (a >= cl && a < cl + L.closure_bytes) return;
  const Stack& s = (*w->stacks)[static_cast<std::size_t>(t.stack)];
  const auto lo = reinterpret_cast<std::uintptr_t>(s.base);
  if (a >= lo && a < lo + s.size) return;
  // The allocations of this worker's last two device accesses first (a kernel reading two arrays
  // alternates between them), then a search of the launch's allocations.
  long index = hinted_allocation(*w, L, a, size);
  // The index built-ins (never device memory), read in every thread of a traced file (an unaligned
  // read of one comes here).
  const bool built_in = !store && index_built_in(a);
  if (index < 0) {
    if (built_in) return;
    if ((index = find_device(L, a, size)) >= 0) {
      w->allocation_hint[1] = w->allocation_hint[0];
      w->allocation_hint[0] = static_cast<std::size_t>(index);
    }
  }
  if (index >= 0) {
    device_access(*w, t, L, static_cast<std::size_t>(index), a, size, flags, ra);
    return;
  }
  // Not shared, not device memory, not the arguments or the stack: the executable's writable static
  // data (device memory, as `__device__` variables are on a GPU), other static data (constants,
  // libraries' data: ignored), the index built-ins - or a bug.
  if (static_device_data(a, size) && static_data_traced()) {
    static_access(*w, t, L, a, size, flags, ra);
    return;
  }
  if (static_ranges().contains(a)) return;
  if (!g_sanitizer) return;
  // Every other access is stopped before it happens: on a GPU it reads or writes what it should
  // not, or faults. Near the block's shared memory it overruns a `__shared__` array (or the
  // launch's dynamic shared memory); elsewhere it misses the device allocations.
  constexpr std::uintptr_t kNear = 64 * 1024;
  const std::uintptr_t ssb = w->static_shared_begin, sse = w->static_shared_end;
  if (sse > ssb && a + kNear >= ssb && a < sse + kNear) {
    std::string outside = outside_shared_variables(*w, a, size);
    if (outside.empty())
      outside = std::to_string(size) + " bytes at " +
                (a >= sse ? distance(a - sse) + " past the end" : distance(ssb - a) + " before the start") + " of the " +
                std::to_string(sse - ssb) + "-byte static shared memory of the block";
    stop_before_access(*w, kSharedOutOfBounds, ra, ids(*w, t) + verb + outside);
  }
  if (a + kDynamicSharedPad >= dyn && a < dyn + L.dynamic_shared + kDynamicSharedPad)
    stop_before_access(*w, kSharedOutOfBounds, ra,
                       ids(*w, t) + verb + std::to_string(size) + " bytes at " +
                           (a >= dyn ? distance(a + size - (dyn + L.dynamic_shared)) + " past the end"
                                     : distance(dyn - a) + " before the start") +
                           " of the launch's " + std::to_string(L.dynamic_shared) + "-byte dynamic shared memory");
  bool past_end = false;
  const std::string where_ = near_allocation(L, a, size, past_end);
  stop_before_access(*w, past_end ? kOutOfBounds : kNotDevice, ra, ids(*w, t) + verb + where_);
}

}  // namespace

void note_host_access(std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra) { host_access(a, size, store, ra); }

void on_access(const void* p, unsigned size, bool store, void* ra) {
  trace(p, size, store ? kStore : 0, reinterpret_cast<std::uintptr_t>(ra));
}
void on_atomic(const void* p, unsigned size, void* ra) {
  trace(p, size, kStore | kAtomic, reinterpret_cast<std::uintptr_t>(ra));
}
void trace_from_helper(const void* p, unsigned size, std::uint8_t flags, std::uintptr_t ra) { trace(p, size, flags, ra); }

void stop_kernel(int kind, std::uintptr_t ra, const std::string& detail) {
  Worker& w = *this_worker;
  stop_before_access(w, kind, ra, ids(w, *w.current) + detail);
}

void static_data_range(std::uintptr_t& begin, std::size_t& bytes) {
  const StaticRanges& r = static_ranges();
  begin = r.data_begin;
  bytes = static_data_traced() ? r.data_end - r.data_begin : 0;
}

namespace {
/// Access buffers of launches that ended, kept with their capacity: a launch whose few checked
/// blocks (--checks=sample) grew fresh buffers from nothing paid for it in page faults and copies
/// as much as for the tracing itself.
std::mutex g_buffers_mutex;
std::vector<std::vector<std::vector<Access>>> g_spare_buffers;
}  // namespace

void tracing_begin_launch(Worker& w) {
  w.allocation_hint[0] = w.allocation_hint[1] = 0;
  shared_memory_range(w.static_shared_begin, w.static_shared_end);
  w.shared_vars = &shared_variables();
  {
    std::lock_guard<std::mutex> lock(g_buffers_mutex);
    if (!g_spare_buffers.empty()) {
      w.accesses.swap(g_spare_buffers.back());
      g_spare_buffers.pop_back();
    }
  }
  for (std::vector<Access>& v : w.accesses) v.clear();
  w.accesses.resize(w.warps.size());
  w.loads_pending.assign(w.warps.size(), 0);
  w.group_retry.assign(w.warps.size(), 0);
  const std::size_t words = (w.static_shared_end - w.static_shared_begin + 3) / 4 + (w.launch->dynamic_shared + 3) / 4;
  w.shadow.assign(words, ShadowWord{});
  w.shadow_lo = words;
  w.shadow_hi = 0;
}

void tracing_end_launch(Worker& w) {
  std::size_t bytes = 0;
  for (const std::vector<Access>& v : w.accesses) bytes += v.capacity() * sizeof(Access);
  constexpr std::size_t kKeep = std::size_t{64} << 20;  // a huge block's buffers are let go
  std::lock_guard<std::mutex> lock(g_buffers_mutex);
  if (bytes <= kKeep && g_spare_buffers.size() < 64) g_spare_buffers.push_back(std::move(w.accesses));
  w.accesses.clear();
}

void tracing_flush_pending(Worker& w) { flush_pending_store(w); }

void tracing_begin_block(Worker& w) {
  w.pending_store.active = false;
  cross_block_begin_block(w);
  w.global_shadow.clear();
  // Only what the last block wrote: a kernel uses a few of the executable's shared variables, and
  // a block nobody traced wrote no shadow and counted no accesses.
  if (w.shadow_lo < w.shadow_hi)
    std::fill(w.shadow.begin() + static_cast<std::ptrdiff_t>(w.shadow_lo),
              w.shadow.begin() + static_cast<std::ptrdiff_t>(w.shadow_hi), ShadowWord{});
  w.shadow_lo = w.shadow.size();
  w.shadow_hi = 0;
  w.bar_epoch = 1;
  w.recorded = 0;
  std::fill(w.loads_pending.begin(), w.loads_pending.end(), 0);
  std::fill(w.group_retry.begin(), w.group_retry.end(), 0);
}

const char* finding_kind_name(int kind) {
  switch (kind) {
    case kOutOfBounds: return "out-of-bounds";
    case kNotDevice: return "not-device-memory";
    case kRaceWriteWrite:
    case kRaceReadWrite:
    case kRaceWriteRead:
    case kGlobalRace: return "race";
    case kUninitShared: return "uninitialized-shared";
    case kCrossBlockRace: return "race";
    case kMisaligned: return "misaligned";
    case kHostAccess: return "host-access";
    case kHostFunction: return "host-function";
    case kSharedOutOfBounds: return "shared-out-of-bounds";
    default: return "finding";
  }
}

const char* finding_hint(int kind) {
  switch (kind) {
    case kOutOfBounds: return "guard the access with the array's bound (if (i < n)); on a GPU it reads garbage or faults";
    case kNotDevice: return "the pointer does not point into device memory: pass a pointer from gpulab::DeviceBuffer / device_malloc, and check the index computed from it";
    case kSharedOutOfBounds: return "index a __shared__ array only within its declared size: check the loop bound and the block size the array assumes (blockDim.x may exceed it); on a GPU this overwrites other shared variables or faults";
    case kRaceWriteWrite:
    case kRaceWriteRead:
    case kRaceReadWrite: return "put a __syncthreads() between the writes to shared memory and the reads of other threads' values";
    case kGlobalRace: return "a device-memory word that several threads of a block update needs atomicAdd (or atomicMax, ...), or a __syncthreads() between one thread's store and the others' loads; give each thread its own word where it can";
    case kCrossBlockRace: return "blocks must not share a device-memory word that one of them writes: update it with atomicAdd (or atomicMax, ...), give each block its own words and combine them in a later launch, or hand results over as in the \"last block\" reduction (store, __threadfence(), atomicAdd on a counter; only the block that counts last reads)";
    case kHostFunction: return "kernels on a GPU call only device functions: the math library, printf, malloc/free, memcpy/memset; write the loop yourself in the kernel";
    case kUninitShared: return "write every shared element before reading it, and __syncthreads() before other threads read it";
    case kMisaligned: return "on a GPU this is a misaligned-address error: use float4 (16-byte) accesses only where the address is a multiple of 16";
    default: return "";  // host-access: its message says what to do
  }
}

void set_sanitizer_enabled(bool on) { g_sanitizer = on; }

}  // namespace gpulab::emu::detail
