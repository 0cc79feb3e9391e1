// The watch (gpulab/emu/watch.hpp): what kernels and the host did to device memory between
// begin_watch() and end_watch(). Kernel accesses set bits in per-allocation bitmaps (access.cpp);
// the copy API and the CUDA shim report host writes; access.cpp reports host code's direct
// loads and stores.
#include "gpulab/emu/watch.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "gpulab/emu/metrics.hpp"
#include "internal.hpp"

namespace gpulab::emu {
namespace {
using namespace detail;

std::mutex g_mutex;  ///< guards everything below except the atomics
/// Read without the lock on every launch and host copy: the cost of not watching.
std::atomic<bool> g_active{false};
/// Bitmaps of the allocations that watched launches could touch, by allocation start.
std::map<std::uintptr_t, std::unique_ptr<WatchBits>> g_bits;
std::atomic<long long> g_launches{0};
/// Every count of LaunchCounts but the instructions, summed over the watch's blocks, in the order
/// of kLaunchCountFields.
std::atomic<long long> g_counts[kLaunchCountFieldCount];
/// The running sum of one count.
constexpr int field_index(long long LaunchCounts::*member) {
  for (int i = 0; i < kLaunchCountFieldCount; ++i)
    if (kLaunchCountFields[i].member == member) return i;
  return -1;
}
template <long long LaunchCounts::*Member>
std::atomic<long long>& counter() {
  constexpr int i = field_index(Member);
  static_assert(i >= 0, "a count of LaunchCounts missing from kLaunchCountFields");
  return g_counts[i];
}
/// Per watched launch: blocks, threads per block, dynamic shared bytes, and the counts when it
/// began (launches run one after another, so a launch's counts are the difference to the next
/// one's start, or to the counts now for the last).
struct ShapeStart {
  long long blocks, threads, dynamic_shared;
  LaunchCounts before;
  long long max_block_sectors = 0;  ///< filled in when the next launch begins
};
/// The running launch's most global sectors of one block (blocks end on any worker).
std::atomic<long long> g_block_max{0};

/// The watch's counts so far (instructions: the emulator's totals, which the watch does not reset).
LaunchCounts counts_now() {
  LaunchCounts c;
  for (int i = 0; i < kLaunchCountFieldCount; ++i) c.*kLaunchCountFields[i].member = g_counts[i].load();
  const InstructionCounts ic = instruction_counts();
  static_assert(sizeof(c.instructions) / sizeof(c.instructions[0]) == instr::classes);
  for (int i = 0; i < instr::classes; ++i) c.instructions[i] = ic[i];
  return c;
}

LaunchCounts difference(const LaunchCounts& to, const LaunchCounts& from) {
  LaunchCounts d;
  for (const LaunchCountField& f : kLaunchCountFields) d.*f.member = to.*f.member - from.*f.member;
  for (int i = 0; i < instr::classes; ++i) d.instructions[i] = to.instructions[i] - from.instructions[i];
  return d;
}
std::vector<ShapeStart> g_shapes;  // g_mutex
std::vector<HostWrite> g_writes;
/// Device memory copied to the host during the watch (the same record, `dst` naming the source).
std::vector<HostWrite> g_reads;
/// Host code's direct accesses: (return address, store) -> count.
std::map<std::pair<std::uintptr_t, bool>, long long> g_host;
/// Names the grader gave to allocations (they outlive watches; dropped when freed).
std::map<std::uintptr_t, std::string> g_labels;

/// Past this many host-write records, writes are merged into their call site's record.
constexpr std::size_t kMaxWriteRecords = 65536;

/// Set bits of bitmap `bits` in [from, to).
std::size_t count_bits(const std::uint64_t* bits, std::size_t from, std::size_t to) {
  std::size_t n = 0;
  while (from < to && (from & 63) != 0) {
    n += (bits[from >> 6] >> (from & 63)) & 1u;
    ++from;
  }
  for (; from + 64 <= to; from += 64) n += static_cast<std::size_t>(__builtin_popcountll(bits[from >> 6]));
  for (; from < to; ++from) n += (bits[from >> 6] >> (from & 63)) & 1u;
  return n;
}

/// Distinct bytes of [p, p + bytes) that kernels read (which 0) or wrote (1) during the watch, or
/// with `granule` > 0 (a power of two), the granules of that many bytes (aligned in the address
/// space) with at least one such byte.
std::size_t kernel_bytes(const void* p, std::size_t bytes, int which, std::size_t granule = 0) {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (!bytes || !device_allocation_of(a, bytes, base, size)) return 0;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_bits.find(base);
  if (it == g_bits.end()) return 0;
  const std::uint64_t* bits = it->second->bits[which].load(std::memory_order_acquire);
  if (!bits) return 0;
  if (!granule) return count_bits(bits, a - base, a - base + bytes);
  std::size_t n = 0;
  for (std::uintptr_t g = a / granule; g <= (a + bytes - 1) / granule; ++g) {
    const std::uintptr_t from = std::max(a, g * granule), to = std::min(a + bytes, (g + 1) * granule);
    n += count_bits(bits, from - base, to - base) > 0;
  }
  return n;
}

}  // namespace

bool watch_available() { return metrics_available(); }

void begin_watch() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_bits.clear();
  g_launches = 0;
  g_shapes.clear();
  g_block_max = 0;
  for (auto& c : g_counts) c.store(0);
  g_writes.clear();
  g_reads.clear();
  g_host.clear();
  g_active = true;
}

void end_watch() {
  drain_host_faults();  // the host accesses of the watched code belong to it
  g_active = false;
}
bool watch_active() { return g_active.load(); }

std::size_t kernel_read_bytes(const void* p, std::size_t bytes) { return kernel_bytes(p, bytes, 0); }
std::size_t kernel_written_bytes(const void* p, std::size_t bytes) { return kernel_bytes(p, bytes, 1); }
std::size_t kernel_read_granules(const void* p, std::size_t bytes, std::size_t granule) {
  return granule && !(granule & (granule - 1)) ? kernel_bytes(p, bytes, 0, granule) : 0;
}
std::size_t kernel_written_granules(const void* p, std::size_t bytes, std::size_t granule) {
  return granule && !(granule & (granule - 1)) ? kernel_bytes(p, bytes, 1, granule) : 0;
}
long long kernel_load_sectors() { return counter<&LaunchCounts::global_load_sectors>().load(); }
long long kernel_store_sectors() { return counter<&LaunchCounts::global_store_sectors>().load(); }
long long kernel_launches() { return g_launches.load(); }
std::vector<LaunchShape> launch_shapes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<LaunchShape> out;
  const LaunchCounts now = counts_now();
  for (std::size_t i = 0; i < g_shapes.size(); ++i) {
    LaunchShape s;
    s.blocks = g_shapes[i].blocks;
    s.threads_per_block = g_shapes[i].threads;
    s.dynamic_shared_bytes = g_shapes[i].dynamic_shared;
    s.counts = difference(i + 1 < g_shapes.size() ? g_shapes[i + 1].before : now, g_shapes[i].before);
    s.sectors = s.counts.global_load_sectors + s.counts.global_store_sectors;
    s.max_block_sectors = i + 1 < g_shapes.size() ? g_shapes[i].max_block_sectors : g_block_max.load();
    out.push_back(s);
  }
  return out;
}
long long kernel_barriers() { return counter<&LaunchCounts::barriers>().load(); }
long long kernel_shuffles() { return counter<&LaunchCounts::shuffles>().load(); }

std::vector<HostWrite> host_writes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_writes;
}

std::vector<HostWrite> host_reads() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_reads;
}

std::vector<HostAccess> host_accesses() {
  drain_host_faults();
  std::map<std::pair<std::uintptr_t, bool>, long long> raw;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    raw = g_host;
  }
  // Several instructions of one line (a load and a store of `p[i] += 1`, ...) make one entry.
  std::map<std::tuple<std::string, int, bool>, long long> grouped;
  for (const auto& [key, count] : raw) {
    const auto [file, line] = symbolize(key.first);
    grouped[{file, line, key.second}] += count;
  }
  std::vector<HostAccess> out;
  for (const auto& [key, count] : grouped) {
    HostAccess h;
    std::tie(h.file, h.line, h.store) = key;
    h.count = count;
    out.push_back(h);
  }
  return out;
}

void label_device_memory(const void* p, const std::string& name) {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (!device_allocation_of(a, 0, base, size) || base != a) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_labels[base] = name;
}

void note_host_write(const void* dst, std::size_t bytes, const char* how, const char* file, int line) {
  if (!g_active.load(std::memory_order_relaxed) || !bytes) return;
  std::uintptr_t base = 0;
  std::size_t size = 0;
  const auto a = reinterpret_cast<std::uintptr_t>(dst);
  if (!device_allocation_of(a, bytes, base, size)) return;  // a copy to the host, or refused
  const std::string h = how ? how : "?", f = file ? file : "?";
  auto same_site = [&](const HostWrite& w) { return w.line == line && w.how == h && w.file == f; };
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_writes.empty() && same_site(g_writes.back()) && g_writes.back().dst + g_writes.back().bytes == a) {
    g_writes.back().bytes += bytes;  // the next row of a row-by-row upload
    return;
  }
  if (g_writes.size() >= kMaxWriteRecords) {
    // Bounded memory, and still nothing lost: the range grows to cover both (it stays inside
    // the allocation, so it names no buffer the site did not write).
    for (HostWrite& w : g_writes)
      if (same_site(w) && w.dst >= base && w.dst < base + size) {
        const std::uintptr_t end = std::max(w.dst + w.bytes, a + bytes);
        w.dst = std::min(w.dst, a);
        w.bytes = end - w.dst;
        return;
      }
  }
  g_writes.push_back(HostWrite{a, bytes, h, f, line});
}

void note_host_read(const void* src, std::size_t bytes, const char* how, const char* file, int line) {
  if (!g_active.load(std::memory_order_relaxed) || !bytes) return;
  std::uintptr_t base = 0;
  std::size_t size = 0;
  const auto a = reinterpret_cast<std::uintptr_t>(src);
  if (!device_allocation_of(a, bytes, base, size)) return;
  const std::string h = how ? how : "?", f = file ? file : "?";
  std::lock_guard<std::mutex> lock(g_mutex);
  for (HostWrite& r : g_reads)
    if (r.line == line && r.how == h && r.file == f) {  // one record per call site, bytes summed
      r.bytes += bytes;
      return;
    }
  if (g_reads.size() < kMaxWriteRecords) g_reads.push_back(HostWrite{a, bytes, h, f, line});
}

void host_copy(void* dst, const void* src, std::size_t bytes, const char* how, const char* file, int line) {
  // The grader tells uploads of host data from copies within the device, and sees downloads
  // (of allocations and of __device__ / __constant__ variables, cudaMemcpyFromSymbol's).
  auto device = [bytes](const void* p) { return is_device_range(p, bytes) || is_device_symbol_range(p, bytes); };
  const bool from_device = bytes && device(src);
  const std::string named = from_device && device(dst) ? std::string(how) + " (device to device)" : how;
  note_host_write(dst, bytes, named.c_str(), file, line);
  if (from_device && !device(dst)) note_host_read(src, bytes, how, file, line);
  const DeviceMemoryScope open;
  if (bytes) std::memmove(dst, src, bytes);
}
void host_fill(void* dst, int value, std::size_t bytes, const char* how, const char* file, int line) {
  note_host_write(dst, bytes, how, file, line);
  const DeviceMemoryScope open;
  if (bytes) std::memset(dst, value, bytes);
}

}  // namespace gpulab::emu

namespace gpulab::emu::detail {

void watch_begin_launch(Launch& L) {
  if (!g_active.load()) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  L.watched = true;
  ++g_launches;
  // Launches run one after another: the last one's blocks have all ended.
  const long long last_max = g_block_max.exchange(0);
  if (!g_shapes.empty()) g_shapes.back().max_block_sectors = last_max;
  g_shapes.push_back({static_cast<long long>(L.grid.x) * L.grid.y * L.grid.z,
                      static_cast<long long>(L.block.x) * L.block.y * L.block.z,
                      static_cast<long long>(L.dynamic_shared), counts_now(), 0});
  L.watch_bits.clear();
  for (const auto& [base, bytes] : L.allocations) {
    std::unique_ptr<WatchBits>& wb = g_bits[base];
    if (!wb || wb->bytes != bytes) wb = std::make_unique<WatchBits>(base, bytes);
    L.watch_bits.push_back(wb.get());
  }
}

std::uint64_t* watch_bitmap_slow(WatchBits& wb, int which) {
  // calloc: a large bitmap comes from fresh zero pages, so only the parts that kernels touch
  // take memory.
  auto* fresh = static_cast<std::uint64_t*>(std::calloc((wb.bytes + 63) / 64 + 1, sizeof(std::uint64_t)));
  if (!fresh) {
    std::fprintf(stderr, "gpulab emulator: out of memory for the watch's access bitmaps\n");
    std::abort();  // undercounting would wrongly accuse the kernel of not doing its work
  }
  std::uint64_t* expected = nullptr;
  if (wb.bits[which].compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return fresh;
  std::free(fresh);  // another worker allocated it first
  return expected;
}

void watch_add_traffic(const LaunchCounts& b) {
  for (int i = 0; i < kLaunchCountFieldCount; ++i)
    if (const long long v = b.*kLaunchCountFields[i].member) g_counts[i] += v;
  const long long sectors = b.global_load_sectors + b.global_store_sectors;
  long long max = g_block_max.load(std::memory_order_relaxed);
  while (sectors > max && !g_block_max.compare_exchange_weak(max, sectors, std::memory_order_relaxed)) {
  }
}

void watch_count_barrier() {
  if (g_active.load(std::memory_order_relaxed)) counter<&LaunchCounts::barriers>().fetch_add(1, std::memory_order_relaxed);
}
void watch_count_shuffle() {
  if (g_active.load(std::memory_order_relaxed)) counter<&LaunchCounts::shuffles>().fetch_add(1, std::memory_order_relaxed);
}

void watch_note_host_access(std::uintptr_t return_address, bool store) {
  if (!g_active.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_host[{return_address, store}];
}

std::string describe_device_bytes(std::uintptr_t base, std::size_t bytes, std::size_t offset, unsigned size) {
  std::string label;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_labels.find(base);
    if (it != g_labels.end()) label = it->second;
  }
  // Size 0: not known (a host access seen as a page fault, whose width the fault does not say).
  const std::string n = size == 0 ? std::string() : std::to_string(size) + (size == 1 ? " byte " : " bytes ");
  if (!label.empty()) return n + "at " + label + " + " + std::to_string(offset);
  return n + "at offset " + std::to_string(offset) + " of a " + std::to_string(bytes) + "-byte device allocation";
}

std::string device_label(std::uintptr_t base) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_labels.find(base);
  return it != g_labels.end() ? it->second : std::string();
}

void watch_forget_allocation(std::uintptr_t base) {
  std::unique_ptr<WatchBits> gone;  // freed outside the lock
  std::lock_guard<std::mutex> lock(g_mutex);
  g_labels.erase(base);
  auto it = g_bits.find(base);
  if (it == g_bits.end()) return;
  gone = std::move(it->second);
  g_bits.erase(it);
}

}  // namespace gpulab::emu::detail
