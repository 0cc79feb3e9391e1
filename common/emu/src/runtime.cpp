// Emulator configuration, the pending-fault record and device memory.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "internal.hpp"

int warpSize = 32;

namespace gpulab::emu {
namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return (end && *end == '\0' && x > 0) ? static_cast<int>(x) : fallback;
}

struct Config {
  Config() {
    const int w = env_int("GPULAB_WARP_SIZE", 32);
    set_warp_size(w);
    worker_count = env_int("GPULAB_EMU_WORKERS",
                           static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    stack = static_cast<std::size_t>(env_int("GPULAB_EMU_STACK_KB", 64)) * 1024;
    const int mb = env_int("GPULAB_EMU_DEVICE_MEMORY_MB", 0);
    device_memory = mb > 0 ? static_cast<std::size_t>(mb) << 20 : default_device_memory();
  }
  /// Half of the memory this process may use (the machine's, or its cgroup's limit when lower),
  /// at most 16 GiB: device allocations are real memory (filled with 0xFF), and without a
  /// limit a huge cudaMalloc would take the machine's memory until the OS kills the process.
  static std::size_t default_device_memory() {
    std::size_t total = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                        static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
    for (const char* limit : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
      std::ifstream in(limit);
      unsigned long long v = 0;
      if (in >> v && v > 0 && v < total) total = static_cast<std::size_t>(v);  // "max" fails to parse
    }
    return std::min<std::size_t>(total / 2, std::size_t{16} << 30);
  }
  int worker_count = 1;
  std::size_t stack = 64 * 1024;
  std::size_t device_memory = 0;
};
Config& config() {
  static Config c;
  return c;
}

std::mutex fault_mutex;
KernelFault pending;
unsigned long long pending_block = ~0ull;
const detail::Launch* pending_launch = nullptr;

std::mutex memory_mutex;
struct Allocation {
  std::size_t bytes;  ///< as asked for
  void* mapping;      ///< the whole mapping, guard regions included
  std::size_t mapped;
};
std::map<std::uintptr_t, Allocation>& allocations() {
  static std::map<std::uintptr_t, Allocation> m;
  return m;
}
std::size_t g_device_used = 0;  ///< page-rounded bytes of the live allocations (memory_mutex)
/// Changes whenever an allocation comes or goes: per-thread copies of the table check it.
std::atomic<std::uint64_t> g_generation{1};
/// Lowest and highest address of any device mapping so far: host accesses outside skip the
/// table (most host data, the stack and small heap blocks, lies outside).
std::atomic<std::uintptr_t> g_lowest{~std::uintptr_t{0}}, g_highest{0};
// Inaccessible regions around every device allocation: a store far out of bounds faults (and is
// reported with the thread's ids) instead of silently corrupting the emulator's own memory.
constexpr std::size_t kPage = 4096, kGuardBefore = 64 * 1024, kGuardAfter = 1024 * 1024;

std::size_t body_bytes(std::size_t bytes) { return std::max<std::size_t>(kPage, (bytes + kPage - 1) / kPage * kPage); }

// The gate: device memory is inaccessible (PROT_NONE) while host code runs, as on a GPU, where
// a device pointer is not a host address. The runtime's copies and fills and every launch hold a
// DeviceMemoryScope, which opens it; the last scope to end closes it again. A host access in
// between faults; the fault handler reports it and opens the memory so that the program runs on
// (gate_host_fault). Lock order: gate_mutex, then memory_mutex.
std::mutex gate_mutex;
int gate_depth = 0;        ///< scopes open now
bool gate_closed = false;  ///< the allocations' bodies are PROT_NONE now
bool gate_on() {
  // GPULAB_EMU_HOST_ACCESS=allow leaves device memory open to host code (the grader's
  // adversarial suite switches the defence off with it; nothing else should).
  static const bool on = [] {
    const char* v = std::getenv("GPULAB_EMU_HOST_ACCESS");
    return !(v && std::strcmp(v, "allow") == 0);
  }();
  return on;
}
/// Every live allocation's body to `prot` (memory_mutex held).
void protect_bodies(int prot) {
  for (const auto& [p, a] : allocations()) mprotect(reinterpret_cast<void*>(p), body_bytes(a.bytes), prot);
}
void set_gate(bool closed) {  // gate_mutex held
  if (gate_closed == closed) return;
  std::lock_guard<std::mutex> lock(memory_mutex);
  protect_bodies(closed ? PROT_NONE : PROT_READ | PROT_WRITE);
  gate_closed = closed;
}

}  // namespace

void set_warp_size(int lanes) {
  if (lanes < 1 || lanes > 64 || (lanes & (lanes - 1)) != 0)
    throw std::invalid_argument("gpulab emulator: warp size " + std::to_string(lanes) +
                                " must be a power of two from 1 to 64 (GPULAB_WARP_SIZE)");
  warpSize = lanes;
}
int warp_size() {
  config();
  return warpSize;
}
void set_workers(int n) { config().worker_count = std::max(1, n); }
int workers() { return config().worker_count; }
void set_stack_bytes(std::size_t bytes) {
  config().stack = std::max<std::size_t>(bytes, 16 * 1024);
}
std::size_t stack_bytes() { return config().stack; }

KernelFault take_pending_fault() {
  std::lock_guard<std::mutex> lock(fault_mutex);
  KernelFault f = pending;
  pending = {};
  pending_block = ~0ull;
  pending_launch = nullptr;
  return f;
}
bool fault_pending() {
  std::lock_guard<std::mutex> lock(fault_mutex);
  return !pending.kind.empty();
}

std::size_t device_memory_bytes() { return config().device_memory; }
std::size_t device_memory_used() {
  std::lock_guard<std::mutex> lock(memory_mutex);
  return g_device_used;
}
void set_device_memory_bytes(std::size_t bytes) { config().device_memory = bytes; }

void* device_alloc(std::size_t bytes, std::string* refusal) {
  const std::size_t capacity = device_memory_bytes();
  auto refuse = [&](const std::string& why) -> void* {
    if (refusal) *refusal = detail::format_bytes(bytes) + ": " + why;
    return nullptr;
  };
  std::size_t body = 0;
  {
    // Reserve before mapping, so that concurrent allocations cannot both take the last bytes.
    std::lock_guard<std::mutex> lock(memory_mutex);
    const std::size_t left = capacity - std::min(capacity, g_device_used);
    // Compared before rounding up: a size near SIZE_MAX must not wrap around to a small one.
    if (bytes <= left) body = body_bytes(bytes);
    if (bytes > left || body > left)
      return refuse("the emulated device has " + detail::format_bytes(left) + " left of " +
                    detail::format_bytes(capacity) +
                    " (set GPULAB_EMU_DEVICE_MEMORY_MB to change it); a GPU would fail this allocation "
                    "too (cudaErrorMemoryAllocation)");
    g_device_used += body;
  }
  auto unreserve = [&] {
    std::lock_guard<std::mutex> lock(memory_mutex);
    g_device_used -= body;
  };
  const std::size_t mapped = kGuardBefore + body + kGuardAfter;
  void* base = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    unreserve();
    return refuse(std::string("the emulator could not map it (") + std::strerror(err) + ")");
  }
  char* p = static_cast<char*>(base) + kGuardBefore;
  if (mprotect(p, body, PROT_READ | PROT_WRITE) != 0) {
    const int err = errno;
    munmap(base, mapped);
    unreserve();
    return refuse(std::string("the emulator could not map it (") + std::strerror(err) + ")");
  }
  // Unwritten device memory reads as NaN / -1: this touches every page, which the cap bounds.
  std::memset(p, 0xFF, body);
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  std::uintptr_t cur = g_lowest.load();
  while (b < cur && !g_lowest.compare_exchange_weak(cur, b)) {
  }
  cur = g_highest.load();
  while (b + mapped > cur && !g_highest.compare_exchange_weak(cur, b + mapped)) {
  }
  detail::install_fault_handlers_for_this_thread();  // a host access to it must be reported
  std::lock_guard<std::mutex> gate(gate_mutex);
  {
    std::lock_guard<std::mutex> lock(memory_mutex);
    allocations()[reinterpret_cast<std::uintptr_t>(p)] = Allocation{bytes, base, mapped};
    g_generation.fetch_add(1);
    if (gate_closed) mprotect(p, body, PROT_NONE);
  }
  // Outside every scope, host code runs next: closed (also after a fault opened the others).
  if (gate_on() && gate_depth == 0) set_gate(true);
  return p;
}
void device_free(void* p) {
  if (!p) return;
  Allocation a{};
  // Before the address can be reused: a new allocation there must not inherit the bitmaps.
  detail::watch_forget_allocation(reinterpret_cast<std::uintptr_t>(p));
  {
    std::lock_guard<std::mutex> lock(memory_mutex);
    auto it = allocations().find(reinterpret_cast<std::uintptr_t>(p));
    if (it == allocations().end()) return;
    a = it->second;
    allocations().erase(it);
    g_device_used -= body_bytes(a.bytes);
    g_generation.fetch_add(1);
  }
  munmap(a.mapping, a.mapped);
}
bool is_device_range(const void* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> lock(memory_mutex);
  auto& m = allocations();
  auto it = m.upper_bound(a);
  if (it == m.begin()) return false;
  --it;
  return a >= it->first && a + bytes <= it->first + it->second.bytes;
}

DeviceMemoryScope::DeviceMemoryScope() {
  if (!gate_on()) return;
  detail::drain_host_faults();  // what host code did since the last scope, reported in order
  std::lock_guard<std::mutex> lock(gate_mutex);
  if (gate_depth++ == 0) set_gate(false);
}
DeviceMemoryScope::~DeviceMemoryScope() {
  if (!gate_on()) return;
  std::lock_guard<std::mutex> lock(gate_mutex);
  if (--gate_depth == 0) set_gate(true);
}

namespace {
std::mutex symbol_mutex;
std::map<std::uintptr_t, std::size_t>& symbols() {
  static std::map<std::uintptr_t, std::size_t> m;
  return m;
}
}  // namespace

void note_device_symbol(const void* p, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(symbol_mutex);
  std::size_t& known = symbols()[reinterpret_cast<std::uintptr_t>(p)];
  known = std::max(known, bytes);
}
bool is_device_symbol_range(const void* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> lock(symbol_mutex);
  auto it = symbols().upper_bound(a);
  if (it == symbols().begin()) return false;
  --it;
  return a >= it->first && a + bytes <= it->first + it->second;
}

void note_atomic(const void* p, std::size_t bytes, const char*, int) {
  detail::on_atomic(p, static_cast<unsigned>(bytes), __builtin_return_address(0));
}

}  // namespace gpulab::emu

namespace gpulab::emu::detail {
void record_fault(const Launch& launch, unsigned long long block_id, const std::string& kind,
                  const std::string& message) {
  std::lock_guard<std::mutex> lock(fault_mutex);
  // Keep the lowest block's fault: the same whatever the number of workers.
  if (!pending.kind.empty() && pending_launch == &launch && block_id >= pending_block) return;
  if (!pending.kind.empty() && pending_launch != &launch) return;  // an older launch's fault
  pending = {kind, message};
  pending_block = block_id;
  pending_launch = &launch;
  auto& fb = const_cast<Launch&>(launch).fault_block;
  unsigned long long cur = fb.load();
  while (block_id < cur && !fb.compare_exchange_weak(cur, block_id)) {
  }
}
bool gate_open_after_host_access(std::uintptr_t a) {
  if (!gate_on() || a < g_lowest.load(std::memory_order_relaxed) || a >= g_highest.load(std::memory_order_relaxed))
    return false;
  // Called from the SIGSEGV handler on the thread whose host code faulted: that thread holds
  // neither mutex (the runtime touches device memory only inside a scope, with both released).
  std::lock_guard<std::mutex> gate(gate_mutex);
  bool inside = false;
  {
    std::lock_guard<std::mutex> lock(memory_mutex);
    auto& m = allocations();
    auto it = m.upper_bound(a);
    if (it != m.begin()) {
      --it;
      inside = a >= it->first && a < it->first + body_bytes(it->second.bytes);
    }
  }
  if (!inside || !gate_closed) return false;  // not the gate's doing: a real fault
  set_gate(false);
  return true;
}

std::vector<std::pair<std::uintptr_t, std::size_t>> allocation_snapshot() {
  std::lock_guard<std::mutex> lock(memory_mutex);
  std::vector<std::pair<std::uintptr_t, std::size_t>> out;
  for (const auto& [p, a] : allocations()) out.emplace_back(p, a.bytes);
  return out;
}

bool device_allocation_of(std::uintptr_t a, std::size_t size, std::uintptr_t& base, std::size_t& bytes) {
  if (a < g_lowest.load(std::memory_order_relaxed) || a >= g_highest.load(std::memory_order_relaxed)) return false;
  struct Copy {
    std::uint64_t generation = 0;
    std::vector<std::pair<std::uintptr_t, std::size_t>> table;
  };
  static thread_local Copy copy;
  const std::uint64_t gen = g_generation.load(std::memory_order_acquire);
  if (copy.generation != gen) {  // read the generation first: a change meanwhile refreshes again
    copy.table = allocation_snapshot();
    copy.generation = gen;
  }
  const auto& v = copy.table;
  auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(a, ~std::size_t{0}));
  if (it == v.begin()) return false;
  --it;
  if (a < it->first || a - it->first > it->second || size > it->second - (a - it->first)) return false;
  base = it->first;
  bytes = it->second;
  return true;
}

std::string format_bytes(std::size_t bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  std::string s = buf;
  const auto dot0 = s.find(".0 ");
  if (dot0 != std::string::npos) s.erase(dot0, 2);  // "12.0 GB" -> "12 GB"
  return s;
}
}  // namespace gpulab::emu::detail

long long clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
// Read GPULAB_WARP_SIZE & co. when the runtime is loaded, before any kernel reads warpSize.
const bool configured_at_load = (gpulab::emu::workers(), true);
}  // namespace
