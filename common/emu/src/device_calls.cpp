// What a kernel file does besides the plain loads and stores SanitizerCoverage traces, made
// visible: common/emu/passes/device_pass.cpp rewrites memory functions (memcpy, memmove, memset and
// the compiler's own copies of aggregates), accesses of other sizes than 1, 2, 4, 8 and 16 bytes,
// atomics written with compiler builtins, calls of library functions and calls through pointers
// into calls of the functions below. Each traces at the call's own line (its return address),
// then does what was asked. The emulator's own atomics and __threadfence() are here too.
#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "internal.hpp"

namespace gpulab::emu::detail {

bool emu_defence_on(const char* name) {
  const char* off = std::getenv("GPULAB_EMU_DISABLE");
  if (!off || !*off) return true;
  const std::string list = std::string(",") + off + ",";
  return list.find(std::string(",") + name + ",") == std::string::npos && list.find(",all,") == std::string::npos;
}

namespace {

bool in_kernel() { return this_worker && this_worker->current; }

/// The widest piece, at most `widest` bytes (a power of two up to 16), that starts at every one of
/// `addresses` aligned and fits in n bytes.
unsigned piece(std::initializer_list<std::uintptr_t> addresses, std::size_t n, std::size_t widest) {
  unsigned s = 16;
  while (s > 1 && (s > widest || s > n || std::any_of(addresses.begin(), addresses.end(),
                                                     [s](std::uintptr_t a) { return (a & (s - 1)) != 0; })))
    s >>= 1;
  return s;
}

/// Traces [p, p+n) as the widest aligned pieces a kernel could use (a GPU copies memory of unknown
/// alignment an element at a time).
void trace_pieces(std::uintptr_t a, std::size_t n, std::size_t widest, std::uint8_t flags, std::uintptr_t ra) {
  while (n) {
    const unsigned s = piece({a}, n, widest);
    trace_from_helper(reinterpret_cast<const void*>(a), s, flags, ra);
    a += s;
    n -= s;
  }
}

/// Host code's copy or fill: its first byte tells whether it touches device memory (the tracing
/// reports host code's accesses to device memory), without a call per piece of a large host copy.
void trace_host(const void* dst, const void* src, std::size_t n, std::uintptr_t ra) {
  if (!n) return;
  if (src) trace_from_helper(src, 1, 0, ra);
  trace_from_helper(dst, 1, kStore, ra);
}

/// A copy by kernel code: each piece loaded, then stored, in order, as the compiled loop would.
void copy(void* dst, const void* src, std::size_t n, std::size_t align, std::uintptr_t ra) {
  if (!in_kernel() || untraced_block) {
    if (!in_kernel()) trace_host(dst, src, n, ra);
    std::memmove(dst, src, n);
    return;
  }
  auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  if (d > s && d < s + n) {
    // Overlapping, the destination above: traced first, moved at once (as memmove copies backwards).
    trace_pieces(s, n, std::min<std::size_t>(align, 16), 0, ra);
    trace_pieces(d, n, std::min<std::size_t>(align, 16), kStore, ra);
    std::memmove(dst, src, n);
    return;
  }
  while (n) {
    const unsigned p = piece({d, s}, n, std::min<std::size_t>(align, 16));
    trace_from_helper(reinterpret_cast<const void*>(s), p, 0, ra);
    trace_from_helper(reinterpret_cast<const void*>(d), p, kStore, ra);
    std::memmove(reinterpret_cast<void*>(d), reinterpret_cast<const void*>(s), p);
    d += p;
    s += p;
    n -= p;
  }
}

/// Functions the device pass registered (every function defined in a traced kernel file), sorted:
/// the targets kernel code may call through a pointer.
std::mutex g_functions_mutex;
std::vector<std::uintptr_t>& registered_functions() {
  static std::vector<std::uintptr_t> v;
  return v;
}
std::atomic<bool> g_functions_sorted{false};

bool registered(std::uintptr_t f) {
  if (!g_functions_sorted.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(g_functions_mutex);
    std::vector<std::uintptr_t>& v = registered_functions();
    std::sort(v.begin(), v.end());
    g_functions_sorted.store(true, std::memory_order_release);
  }
  const std::vector<std::uintptr_t>& v = registered_functions();
  return std::binary_search(v.begin(), v.end(), f);
}

/// The math library's functions a kernel may call through a pointer (by name, as the device pass
/// allows them in direct calls).
bool math_function(const char* name) {
  static const char* const kNames[] = {
      "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
      "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "logb", "ilogb", "pow", "sqrt", "cbrt",
      "hypot", "erf", "erfc", "tgamma", "lgamma", "ceil", "floor", "trunc", "round", "lround", "llround", "rint",
      "lrint", "llrint", "nearbyint", "fmod", "remainder", "fma", "fmax", "fmin", "fdim", "fabs", "copysign",
      "nextafter", "ldexp", "scalbn", "scalbln"};
  std::string n = name;
  if (!n.empty() && (n.back() == 'f' || n.back() == 'l') && n != "erf" && n != "modf") n.pop_back();
  return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* k) { return n == k; });
}

}  // namespace

}  // namespace gpulab::emu::detail

using namespace gpulab::emu::detail;

extern "C" {

/// memcpy and memmove of kernel files (also the compiler's copies of aggregates too large to be a
/// few loads and stores); `align` is the alignment the compiler knows of both pointers.
void gpulab_emu_device_memcpy(void* dst, const void* src, std::size_t n, std::size_t align) {
  copy(dst, src, n, align ? align : 1, reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)));
}

void gpulab_emu_device_memset(void* dst, int value, std::size_t n, std::size_t align) {
  const auto ra = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
  if (!in_kernel()) trace_host(dst, nullptr, n, ra);
  else if (!untraced_block) trace_pieces(reinterpret_cast<std::uintptr_t>(dst), n, std::min<std::size_t>(align ? align : 1, 16), kStore, ra);
  std::memset(dst, value, n);
}

/// A load or store (flags: 1 = store) of a size SanitizerCoverage does not trace (a 12-byte
/// vector, a long double, a 32-byte vector), or the pointee of a math function's output argument.
void gpulab_emu_device_access(const void* p, std::size_t n, int flags) {
  const auto ra = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
  if (!in_kernel()) {
    trace_from_helper(p, 1, flags & 1 ? kStore : 0, ra);
    return;
  }
  if (!untraced_block) trace_pieces(reinterpret_cast<std::uintptr_t>(p), n, 16, flags & 1 ? kStore : 0, ra);
}

/// An atomic read-modify-write written with a compiler builtin (__atomic_fetch_add, ...).
void gpulab_emu_device_atomic(const void* p, std::size_t n) {
  const auto ra = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
  if (in_kernel() && untraced_block) return;
  if (n == 1 || n == 2 || n == 4 || n == 8 || n == 16) trace_from_helper(p, static_cast<unsigned>(n), kStore | kAtomic, ra);
  else trace_pieces(reinterpret_cast<std::uintptr_t>(p), n, 16, kStore | kAtomic, ra);
}

/// Before a call of a function outside the kernel file that kernels may not call (a host library
/// function: strlen, qsort, sprintf ...): what it touches is not traced, and a GPU has no such
/// function. In a kernel that stops the block; in host code it is an ordinary call.
void gpulab_emu_device_host_call(const char* name) {
  if (!in_kernel()) return;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  const std::string shown = status == 0 && demangled ? demangled : name;
  std::free(demangled);
  stop_kernel(kHostFunction, reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)),
              " calls " + shown +
                  ", a host library function: on a GPU a kernel can call only device code (the math "
                  "library, printf, malloc/free, memcpy/memset), and the emulator cannot see the memory it touches");
}

/// Before a call through a pointer in a kernel file: in a kernel, the target must be a function of
/// a traced kernel file or of the math library.
void gpulab_emu_device_indirect_call(const void* target) {
  if (!in_kernel() || untraced_block) return;
  const auto f = reinterpret_cast<std::uintptr_t>(target);
  static thread_local std::uintptr_t last_allowed = 0;
  if (f == last_allowed || registered(f)) {
    last_allowed = f;
    return;
  }
  Dl_info info{};
  const char* name = dladdr(target, &info) && info.dli_sname ? info.dli_sname : nullptr;
  if (name && math_function(name)) {
    last_allowed = f;
    return;
  }
  gpulab_emu_device_host_call(name ? name : "a function outside the kernel files");
}

/// Called by a constructor of each traced kernel file: the functions it defines.
void gpulab_emu_device_functions(void* const* functions, std::size_t count) {
  std::lock_guard<std::mutex> lock(g_functions_mutex);
  std::vector<std::uintptr_t>& v = registered_functions();
  for (std::size_t i = 0; i < count; ++i) v.push_back(reinterpret_cast<std::uintptr_t>(functions[i]));
  g_functions_sorted.store(false, std::memory_order_release);
}

}  // extern "C"

namespace gpulab::emu {

void atomic_apply(void* p, std::size_t bytes, AtomicOp op, const void* op_context, void* old, const char*, int) {
  detail::on_atomic(p, static_cast<unsigned>(bytes), __builtin_return_address(0));
  auto loop = [&](auto* word) {
    using W = std::remove_pointer_t<decltype(word)>;
    W cur = __atomic_load_n(word, __ATOMIC_RELAXED), next;
    do op(&cur, &next, op_context);
    while (!__atomic_compare_exchange_n(word, &cur, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    std::memcpy(old, &cur, sizeof cur);
  };
  switch (bytes) {
    case 1: loop(static_cast<std::uint8_t*>(p)); break;
    case 2: loop(static_cast<std::uint16_t*>(p)); break;
    case 4: loop(static_cast<std::uint32_t*>(p)); break;
    default: loop(static_cast<std::uint64_t*>(p)); break;
  }
}

void kernel_stop(const char* kind, const char* message, const char* file, int line) {
  detail::Worker* w = detail::this_worker;
  if (!w || !w->current) {  // not in a kernel: as a GPU's host code would, it just stops
    std::fprintf(stderr, "%s at %s: %s\n", kind, detail::where(file, line).c_str(), message);
    std::abort();
  }
  detail::fault(kind, detail::where(file, line) + ": " + message + " (" + detail::describe_thread(*w, *w->current) + ")");
}

void thread_fence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  detail::Worker* w = detail::this_worker;
  if (w && w->current && w->checked && !detail::untraced_block) detail::cross_block_note_fence(*w);
}

}  // namespace gpulab::emu
