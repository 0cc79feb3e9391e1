// Emulator configuration, the pending-fault record and device memory.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
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
  }
  int worker_count = 1;
  std::size_t stack = 64 * 1024;
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
// Inaccessible regions around every device allocation: a store far out of bounds faults (and is
// reported with the thread's ids) instead of silently corrupting the emulator's own memory.
constexpr std::size_t kPage = 4096, kGuardBefore = 64 * 1024, kGuardAfter = 1024 * 1024;

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

void* device_alloc(std::size_t bytes) {
  const std::size_t body = std::max<std::size_t>(kPage, (bytes + kPage - 1) / kPage * kPage);
  const std::size_t mapped = kGuardBefore + body + kGuardAfter;
  void* base = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  char* p = static_cast<char*>(base) + kGuardBefore;
  if (mprotect(p, body, PROT_READ | PROT_WRITE) != 0) {
    munmap(base, mapped);
    throw std::bad_alloc();
  }
  std::memset(p, 0xFF, body);
  std::lock_guard<std::mutex> lock(memory_mutex);
  allocations()[reinterpret_cast<std::uintptr_t>(p)] = Allocation{bytes, base, mapped};
  return p;
}
void device_free(void* p) {
  if (!p) return;
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(memory_mutex);
    auto it = allocations().find(reinterpret_cast<std::uintptr_t>(p));
    if (it == allocations().end()) return;
    a = it->second;
    allocations().erase(it);
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
std::vector<std::pair<std::uintptr_t, std::size_t>> allocation_snapshot() {
  std::lock_guard<std::mutex> lock(memory_mutex);
  std::vector<std::pair<std::uintptr_t, std::size_t>> out;
  for (const auto& [p, a] : allocations()) out.emplace_back(p, a.bytes);
  return out;
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
