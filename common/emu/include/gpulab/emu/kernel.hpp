// gpulab/emu/kernel.hpp - the CUDA vocabulary for kernels compiled as plain C++ and run by the
// gpulab CPU emulator. Included through gpulab/gpu.hpp; never include it directly.
//
// Model: every GPU thread is a fiber; a block's fibers run on one worker OS thread, so
// `__shared__` variables (static thread_local) are shared by exactly the threads of one block.
// Barriers and warp collectives are rendezvous between fibers, checked for divergence.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>  // before __noinline__ is defined: libstdc++'s shared_ptr spells __attribute__((__noinline__))
#include <type_traits>

#include "gpulab/emu/runtime.hpp"

// ---- qualifiers --------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
// As CUDA's own headers define it for GCC and clang: a GNU attribute, which may stand among the
// declaration's specifiers (`__shared__ __align__(16) float t[...]`), where `alignas` may not.
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
/// One instance per running block: each block runs on one worker thread at a time.
/// `used` makes the storage opaque to the optimiser: a `__shared__` array that is read but never
/// written is not folded to its zero initialiser (the emulator poisons it and reports the read, as
/// a GPU would return garbage). Each variable comes after a red zone of its own (a variable the
/// emulator knows by its name, gpulab_shared_redzone_*), so that an access just past one
/// `__shared__` array lands in a red zone, not in the next array, and is stopped and reported.
/// Every `__shared__` variable is 16-byte aligned (float4 accesses), also when written
/// `__align__(16) __shared__ T x[n]` (the alignment then applies to the red zone).
#define GPULAB_EMU_CAT2(a, b) a##b
#define GPULAB_EMU_CAT(a, b) GPULAB_EMU_CAT2(a, b)
#define __shared__                                                                              \
  __attribute__((used, unused)) static thread_local char GPULAB_EMU_CAT(gpulab_shared_redzone_, \
                                                                        __COUNTER__)[128];      \
  __attribute__((used, aligned(16))) static thread_local

/// Marks a file compiled with the emulator's access tracing (its name: pass_abi.hpp), for the twin pass
/// (common/emu/passes/twin_pass.cpp): untraced twins of its functions, and block loops that run
/// only in blocks nobody checks.
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(coverage_sanitizer)
extern "C" {
__attribute__((used)) static const char gpulab_emu_traced_file = 1;
}
#endif
#endif

// ---- built-in index variables ------------------------------------------------------------
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

/// What threadIdx & co. read: variables of the emulator (thread-local to each worker OS thread),
/// which the scheduler rewrites before resuming each fiber. Variables, not macros, so that host
/// code may have variables of the same names (`dim3 blockDim(16, 16);` in main, as CUDA programs
/// often do): a local declaration simply hides the built-in, as in CUDA.
extern __thread uint3 threadIdx __attribute__((tls_model("initial-exec")));
extern __thread uint3 blockIdx __attribute__((tls_model("initial-exec")));
extern __thread dim3 blockDim __attribute__((tls_model("initial-exec")));
extern __thread dim3 gridDim __attribute__((tls_model("initial-exec")));

/// Lanes per warp for this run (32 by default; GPULAB_WARP_SIZE=64 emulates AMD wavefronts).
/// A run-time value, exactly as on CUDA and ROCm 7: never a compile-time constant.
extern int warpSize;

// ---- barriers and warp collectives -------------------------------------------------------
// The trailing file/line parameters default to the caller's location, so every diagnostic
// names the line of the student's code.
inline void __syncthreads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  gpulab::emu::sync_block(gpulab::emu::BarrierOp::sync, 0, file, line);
}
inline int __syncthreads_count(int pred, const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
  return gpulab::emu::sync_block(gpulab::emu::BarrierOp::count, pred != 0, file, line);
}
inline int __syncthreads_and(int pred, const char* file = __builtin_FILE(),
                             int line = __builtin_LINE()) {
  return gpulab::emu::sync_block(gpulab::emu::BarrierOp::all, pred != 0, file, line);
}
inline int __syncthreads_or(int pred, const char* file = __builtin_FILE(),
                            int line = __builtin_LINE()) {
  return gpulab::emu::sync_block(gpulab::emu::BarrierOp::any, pred != 0, file, line);
}
inline void __syncwarp(unsigned long long mask = ~0ull, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  gpulab::emu::warp_collective(gpulab::emu::WarpOp::sync, mask, 0, -1, file, line);
}
inline unsigned long long __activemask(const char* file = __builtin_FILE(),
                                       int line = __builtin_LINE()) {
  return gpulab::emu::active_mask(file, line);
}

namespace gpulab::emu {
template <class T>
inline std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                "warp shuffles move values of at most 8 bytes; shuffle wider types field by field");
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}
template <class T>
inline T from_bits(std::uint64_t u) {
  T v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}
/// Source lane of a shuffle inside its `width`-lane segment; -1 = keep the caller's own value.
int shuffle_source(WarpOp op, int arg, int width, const char* file, int line);
}  // namespace gpulab::emu

template <class T>
T __shfl_sync(unsigned long long mask, T v, int src, int width = warpSize,
              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using namespace gpulab::emu;
  const int s = shuffle_source(WarpOp::shfl, src, width, file, line);
  return from_bits<T>(warp_collective(WarpOp::shfl, mask, to_bits(v), s, file, line));
}
template <class T>
T __shfl_up_sync(unsigned long long mask, T v, unsigned delta, int width = warpSize,
                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using namespace gpulab::emu;
  const int s = shuffle_source(WarpOp::shfl_up, static_cast<int>(delta), width, file, line);
  return from_bits<T>(warp_collective(WarpOp::shfl, mask, to_bits(v), s, file, line));
}
template <class T>
T __shfl_down_sync(unsigned long long mask, T v, unsigned delta, int width = warpSize,
                   const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using namespace gpulab::emu;
  const int s = shuffle_source(WarpOp::shfl_down, static_cast<int>(delta), width, file, line);
  return from_bits<T>(warp_collective(WarpOp::shfl, mask, to_bits(v), s, file, line));
}
template <class T>
T __shfl_xor_sync(unsigned long long mask, T v, int lane_mask, int width = warpSize,
                  const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using namespace gpulab::emu;
  const int s = shuffle_source(WarpOp::shfl_xor, lane_mask, width, file, line);
  return from_bits<T>(warp_collective(WarpOp::shfl, mask, to_bits(v), s, file, line));
}
inline unsigned long long __ballot_sync(unsigned long long mask, int pred,
                                        const char* file = __builtin_FILE(),
                                        int line = __builtin_LINE()) {
  return gpulab::emu::warp_collective(gpulab::emu::WarpOp::ballot, mask, pred != 0, -1, file,
                                      line);
}
inline int __any_sync(unsigned long long mask, int pred, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return static_cast<int>(
      gpulab::emu::warp_collective(gpulab::emu::WarpOp::any, mask, pred != 0, -1, file, line));
}
inline int __all_sync(unsigned long long mask, int pred, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return static_cast<int>(
      gpulab::emu::warp_collective(gpulab::emu::WarpOp::all, mask, pred != 0, -1, file, line));
}

// ---- match and reduce (sm_70 / sm_80 warp functions), built on the collectives above --------
// Every lane of `mask` must call them, as on the GPU (the shuffles and ballots they are made of
// check it). Values compare bit for bit, as the hardware's match does.
template <class T>
unsigned long long __match_any_sync(unsigned long long mask, T value, const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "__match_any_sync compares 4- or 8-byte values");
  const std::uint64_t mine = gpulab::emu::to_bits(value);
  // One group per distinct value: its lowest lane not yet grouped shows its value to the others;
  // `left` is the same on every lane (ballots), so every lane makes the same trips.
  unsigned long long left = mask, group = 0;
  while (left != 0) {
    const int leader = __builtin_ctzll(left);
    const std::uint64_t v = __shfl_sync(mask, mine, leader, warpSize, file, line);
    const unsigned long long same = __ballot_sync(mask, mine == v, file, line);
    if (mine == v) group = same;
    left &= ~same;
    if ((same >> leader & 1ull) == 0) break;  // the leader did not take part: the ballot faulted
  }
  return group;
}
template <class T>
unsigned long long __match_all_sync(unsigned long long mask, T value, int* pred, const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "__match_all_sync compares 4- or 8-byte values");
  const std::uint64_t mine = gpulab::emu::to_bits(value);
  const int first = mask != 0 ? __builtin_ctzll(mask) : 0;
  const std::uint64_t v = __shfl_sync(mask, mine, first, warpSize, file, line);
  const int all = __all_sync(mask, mine == v, file, line);
  *pred = all;
  return all ? mask : 0ull;
}
namespace gpulab::emu {
/// __reduce_*_sync: the lanes of `mask` combined by `op`; a butterfly of shuffles when `mask` is
/// the whole warp, else one shuffle per lane of `mask`.
template <class T, class Op>
T warp_reduce(unsigned long long mask, T value, Op op, const char* file, int line) {
  const unsigned long long whole = warpSize >= 64 ? ~0ull : (1ull << warpSize) - 1ull;
  if (mask == whole) {
    for (int d = warpSize / 2; d > 0; d /= 2) value = op(value, __shfl_xor_sync(mask, value, d, warpSize, file, line));
    return value;
  }
  T out{};
  bool first = true;
  for (unsigned long long left = mask; left != 0; left &= left - 1) {
    const T v = __shfl_sync(mask, value, __builtin_ctzll(left), warpSize, file, line);
    out = first ? v : op(out, v);
    first = false;
  }
  return out;
}
}  // namespace gpulab::emu
// As CUDA's overloads: int and unsigned for add, min and max (the sum wraps, as the hardware's).
#define GPULAB_EMU_WARP_REDUCE(name, T, expr)                                                             \
  inline T name(unsigned long long mask, T value, const char* file = __builtin_FILE(),                    \
                int line = __builtin_LINE()) {                                                            \
    return gpulab::emu::warp_reduce(mask, value, [](T a, T b) { return expr; }, file, line);               \
  }
GPULAB_EMU_WARP_REDUCE(__reduce_add_sync, unsigned, a + b)
GPULAB_EMU_WARP_REDUCE(__reduce_add_sync, int, static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b)))
GPULAB_EMU_WARP_REDUCE(__reduce_min_sync, unsigned, a < b ? a : b)
GPULAB_EMU_WARP_REDUCE(__reduce_min_sync, int, a < b ? a : b)
GPULAB_EMU_WARP_REDUCE(__reduce_max_sync, unsigned, a > b ? a : b)
GPULAB_EMU_WARP_REDUCE(__reduce_max_sync, int, a > b ? a : b)
#undef GPULAB_EMU_WARP_REDUCE
inline unsigned __reduce_and_sync(unsigned long long mask, unsigned value, const char* file = __builtin_FILE(),
                                  int line = __builtin_LINE()) {
  return gpulab::emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a & b; }, file, line);
}
inline unsigned __reduce_or_sync(unsigned long long mask, unsigned value, const char* file = __builtin_FILE(),
                                 int line = __builtin_LINE()) {
  return gpulab::emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a | b; }, file, line);
}
inline unsigned __reduce_xor_sync(unsigned long long mask, unsigned value, const char* file = __builtin_FILE(),
                                  int line = __builtin_LINE()) {
  return gpulab::emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a ^ b; }, file, line);
}

// ---- atomics (device-wide, relaxed, like CUDA's) -----------------------------------------
// Each is reported to the emulator so the memory metrics can count atomics.
namespace gpulab::emu {
template <class T, class F>
T atomic_update(T* p, F f, const char* file, int line) {
  static_assert(sizeof(T) <= 8, "the emulator's atomics update at most 8 bytes");
  // The read-modify-write itself is the emulator's (atomic_apply): no plain load of *p for the
  // tracing to count, and no atomic instruction in the kernel file but the kernel's own.
  T old;
  atomic_apply(
      p, sizeof(T),
      [](const void* current, void* next, const void* context) {
        T c;
        std::memcpy(static_cast<void*>(&c), current, sizeof c);
        const T n = (*static_cast<const F*>(context))(c);
        std::memcpy(next, static_cast<const void*>(&n), sizeof n);
      },
      &f, &old, file, line);
  return old;
}
}  // namespace gpulab::emu

template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicAdd(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c + v); }, file, line);
}
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicSub(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c - v); }, file, line);
}
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicMax(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return c < v ? v : c; }, file, line);
}
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicMin(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return v < c ? v : c; }, file, line);
}
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicExch(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T) { return v; }, file, line);
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
T atomicCAS(T* p, T expected, T desired, const char* file = __builtin_FILE(),
            int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(
      p, [expected, desired](T c) { return c == expected ? desired : c; }, file, line);
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
T atomicAnd(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c & v); }, file, line);
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
T atomicOr(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c | v); }, file, line);
}
/// CUDA's wrapping counters: atomicInc stores (old >= limit) ? 0 : old + 1, atomicDec stores
/// (old == 0 || old > limit) ? limit : old - 1; both return old.
inline unsigned atomicInc(unsigned* p, unsigned limit, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [limit](unsigned c) { return c >= limit ? 0u : c + 1u; }, file, line);
}
inline unsigned atomicDec(unsigned* p, unsigned limit, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [limit](unsigned c) { return c == 0u || c > limit ? limit : c - 1u; }, file,
                                    line);
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
T atomicXor(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c ^ v); }, file, line);
}
// The scoped forms (_block: the block's threads; _system: host and other devices too) are the
// device-wide atomics here: every atomic is serialised by the emulator, the strongest scope.
namespace gpulab::emu {
/// T as a non-deduced context: the second argument converts to the pointer's type.
template <class T>
struct same_type {
  using type = T;
};
}  // namespace gpulab::emu
#define GPULAB_EMU_SCOPED_ATOMIC(name, scope)                                                          \
  template <class T>                                                                                   \
  auto name##scope(T* p, typename gpulab::emu::same_type<T>::type v, const char* file = __builtin_FILE(), \
                   int line = __builtin_LINE()) -> decltype(name(p, v, file, line)) {                  \
    return name(p, v, file, line);                                                                     \
  }
#define GPULAB_EMU_SCOPED_ATOMICS(name) GPULAB_EMU_SCOPED_ATOMIC(name, _block) GPULAB_EMU_SCOPED_ATOMIC(name, _system)
GPULAB_EMU_SCOPED_ATOMICS(atomicAdd)
GPULAB_EMU_SCOPED_ATOMICS(atomicSub)
GPULAB_EMU_SCOPED_ATOMICS(atomicExch)
GPULAB_EMU_SCOPED_ATOMICS(atomicMin)
GPULAB_EMU_SCOPED_ATOMICS(atomicMax)
GPULAB_EMU_SCOPED_ATOMICS(atomicInc)
GPULAB_EMU_SCOPED_ATOMICS(atomicDec)
GPULAB_EMU_SCOPED_ATOMICS(atomicAnd)
GPULAB_EMU_SCOPED_ATOMICS(atomicOr)
GPULAB_EMU_SCOPED_ATOMICS(atomicXor)
#undef GPULAB_EMU_SCOPED_ATOMICS
#undef GPULAB_EMU_SCOPED_ATOMIC
template <class T>
T atomicCAS_block(T* p, T expected, T desired, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return atomicCAS(p, expected, desired, file, line);
}
template <class T>
T atomicCAS_system(T* p, T expected, T desired, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return atomicCAS(p, expected, desired, file, line);
}
inline void __threadfence() { gpulab::emu::thread_fence(); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { gpulab::emu::thread_fence(); }
/// A hint to wait about `ns` nanoseconds: nothing to wait for in the emulator's schedule.
inline void __nanosleep(unsigned) {}
/// Stops the kernel: its launch fails (cudaErrorLaunchFailure), as a GPU's trap does.
[[noreturn]] inline void __trap(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  gpulab::emu::kernel_stop("trap", "__trap() stopped the kernel", file, line);
}

// ---- vector types ------------------------------------------------------------------------
// Under clang the 2- and 4-wide types are vector types, so that a float4 load is one 16-byte
// access (as on a GPU) and the memory metrics count it as such; members are .x .y .z .w.
// Do not rely on vector arithmetic (a + b on float4): CUDA does not define it.
#if defined(__clang__)
#define GPULAB_EMU_VEC(T, N, W) typedef T N##W __attribute__((ext_vector_type(W)));
#else
#define GPULAB_EMU_VEC(T, N, W) \
  struct alignas(sizeof(T) * W) N##W { T x, y GPULAB_EMU_VEC_ZW##W; };
#define GPULAB_EMU_VEC_ZW2
#define GPULAB_EMU_VEC_ZW4 , z, w
#endif
GPULAB_EMU_VEC(float, float, 2)
GPULAB_EMU_VEC(float, float, 4)
GPULAB_EMU_VEC(int, int, 2)
GPULAB_EMU_VEC(int, int, 4)
GPULAB_EMU_VEC(unsigned, uint, 2)
GPULAB_EMU_VEC(unsigned, uint, 4)
GPULAB_EMU_VEC(double, double, 2)
#undef GPULAB_EMU_VEC
struct float3 { float x, y, z; };
struct int3 { int x, y, z; };
struct alignas(32) double4 { double x, y, z, w; };
inline float2 make_float2(float x, float y) { float2 v; v.x = x; v.y = y; return v; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { float4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
inline int2 make_int2(int x, int y) { int2 v; v.x = x; v.y = y; return v; }
inline int3 make_int3(int x, int y, int z) { return {x, y, z}; }
inline int4 make_int4(int x, int y, int z, int w) { int4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
inline uint2 make_uint2(unsigned x, unsigned y) { uint2 v; v.x = x; v.y = y; return v; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { uint4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
inline double2 make_double2(double x, double y) { double2 v; v.x = x; v.y = y; return v; }
inline double4 make_double4(double x, double y, double z, double w) { return {x, y, z, w}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }

// ---- math and bit functions students reach for -------------------------------------------
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
// min/max with CUDA's overload set: the mixed signed/unsigned forms return the unsigned type
// (as CUDA's math_functions.hpp does), so `min(i, blockDim.x)` is not ambiguous.
#define GPULAB_EMU_MINMAX(R, A, B)                                           \
  inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
  inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
GPULAB_EMU_MINMAX(int, int, int)
GPULAB_EMU_MINMAX(unsigned, unsigned, unsigned)
GPULAB_EMU_MINMAX(unsigned, int, unsigned)
GPULAB_EMU_MINMAX(unsigned, unsigned, int)
GPULAB_EMU_MINMAX(long, long, long)
GPULAB_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
GPULAB_EMU_MINMAX(unsigned long, long, unsigned long)
GPULAB_EMU_MINMAX(unsigned long, unsigned long, long)
GPULAB_EMU_MINMAX(long long, long long, long long)
GPULAB_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
GPULAB_EMU_MINMAX(unsigned long long, long long, unsigned long long)
GPULAB_EMU_MINMAX(unsigned long long, unsigned long long, long long)
#undef GPULAB_EMU_MINMAX
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline double min(float a, double b) { return std::fmin(static_cast<double>(a), b); }
inline double max(float a, double b) { return std::fmax(static_cast<double>(a), b); }
inline double min(double a, float b) { return std::fmin(a, static_cast<double>(b)); }
inline double max(double a, float b) { return std::fmax(a, static_cast<double>(b)); }
inline int __float_as_int(float f) { return gpulab::emu::from_bits<int>(gpulab::emu::to_bits(f)); }
inline unsigned __float_as_uint(float f) {
  return gpulab::emu::from_bits<unsigned>(gpulab::emu::to_bits(f));
}
inline float __int_as_float(int i) { return gpulab::emu::from_bits<float>(gpulab::emu::to_bits(i)); }
inline float __uint_as_float(unsigned i) {
  return gpulab::emu::from_bits<float>(gpulab::emu::to_bits(i));
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i, x >>= 1) r = (r << 1) | (x & 1u);
  return r;
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
/// The low 24 bits of each operand (signed for __mul24), the low 32 bits of their product.
inline int __mul24(int a, int b) {
  const long long x = static_cast<int>(static_cast<unsigned>(a) << 8) >> 8, y = static_cast<int>(static_cast<unsigned>(b) << 8) >> 8;
  return static_cast<int>(static_cast<unsigned>(x * y));
}
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xFFFFFFu) * (b & 0xFFFFFFu); }
inline unsigned __sad(int x, int y, unsigned z) {
  return (x > y ? static_cast<unsigned>(x) - static_cast<unsigned>(y) : static_cast<unsigned>(y) - static_cast<unsigned>(x)) + z;
}
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return (x > y ? x - y : y - x) + z; }
/// Byte n of the result is byte (s >> 4n) & 7 of the eight bytes y:x (x the low four).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned r = 0;
  for (int n = 0; n < 4; ++n) r |= static_cast<unsigned>((bytes >> (8 * ((s >> (4 * n)) & 7u))) & 0xFFu) << (8 * n);
  return r;
}
/// hi:lo shifted by `shift` mod 32 (the _lc/_rc forms: by min(shift, 32)); the high (left) or
/// low (right) 32 bits.
namespace gpulab::emu {
inline unsigned long long funnel(unsigned lo, unsigned hi) { return (static_cast<unsigned long long>(hi) << 32) | lo; }
inline unsigned clamp_shift(unsigned shift) { return shift < 32u ? shift : 32u; }
}  // namespace gpulab::emu
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((gpulab::emu::funnel(lo, hi) << (shift & 31u)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((gpulab::emu::funnel(lo, hi) << gpulab::emu::clamp_shift(shift)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>(gpulab::emu::funnel(lo, hi) >> (shift & 31u));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>(gpulab::emu::funnel(lo, hi) >> gpulab::emu::clamp_shift(shift));
}
/// Four signed (__dp4a(int, int, int)) or unsigned bytes of a times those of b, plus c.
inline int __dp4a(int a, int b, int c) {
  int s = c;
  for (int n = 0; n < 4; ++n)
    s += static_cast<signed char>(static_cast<unsigned>(a) >> (8 * n)) * static_cast<signed char>(static_cast<unsigned>(b) >> (8 * n));
  return s;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  unsigned s = c;
  for (int n = 0; n < 4; ++n) s += ((a >> (8 * n)) & 0xFFu) * ((b >> (8 * n)) & 0xFFu);
  return s;
}
inline long long __double_as_longlong(double d) { return gpulab::emu::from_bits<long long>(gpulab::emu::to_bits(d)); }
inline double __longlong_as_double(long long i) { return gpulab::emu::from_bits<double>(gpulab::emu::to_bits(i)); }
inline int __double2hiint(double d) { return static_cast<int>(__double_as_longlong(d) >> 32); }
inline int __double2loint(double d) { return static_cast<int>(static_cast<unsigned>(__double_as_longlong(d))); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                                                     static_cast<unsigned>(lo)));
}

// ---- conversions with a rounding mode ----------------------------------------------------
// _rn: to nearest, ties to even; _rz: toward zero; _ru: up; _rd: down. To an integer type they
// saturate as the hardware's conversions do: NaN gives 0, values beyond the type its limit.
namespace gpulab::emu {
template <class I, class F>
I convert_rounded(F x, int mode) {  // mode: 0 rn, 1 rz, 2 ru, 3 rd
  if (x != x) return 0;
  const F r = mode == 0 ? std::nearbyint(x) : mode == 1 ? std::trunc(x) : mode == 2 ? std::ceil(x) : std::floor(x);
  if (r <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}
}  // namespace gpulab::emu
#define GPULAB_EMU_CONVERT(name, I, F, mode) \
  inline I name(F x) { return gpulab::emu::convert_rounded<I, F>(x, mode); }
GPULAB_EMU_CONVERT(__float2int_rn, int, float, 0)
GPULAB_EMU_CONVERT(__float2int_rz, int, float, 1)
GPULAB_EMU_CONVERT(__float2int_ru, int, float, 2)
GPULAB_EMU_CONVERT(__float2int_rd, int, float, 3)
GPULAB_EMU_CONVERT(__float2uint_rn, unsigned, float, 0)
GPULAB_EMU_CONVERT(__float2uint_rz, unsigned, float, 1)
GPULAB_EMU_CONVERT(__float2uint_ru, unsigned, float, 2)
GPULAB_EMU_CONVERT(__float2uint_rd, unsigned, float, 3)
GPULAB_EMU_CONVERT(__float2ll_rn, long long, float, 0)
GPULAB_EMU_CONVERT(__float2ll_rz, long long, float, 1)
GPULAB_EMU_CONVERT(__float2ll_ru, long long, float, 2)
GPULAB_EMU_CONVERT(__float2ll_rd, long long, float, 3)
GPULAB_EMU_CONVERT(__double2int_rn, int, double, 0)
GPULAB_EMU_CONVERT(__double2int_rz, int, double, 1)
GPULAB_EMU_CONVERT(__double2int_ru, int, double, 2)
GPULAB_EMU_CONVERT(__double2int_rd, int, double, 3)
GPULAB_EMU_CONVERT(__double2ll_rn, long long, double, 0)
GPULAB_EMU_CONVERT(__double2ll_rz, long long, double, 1)
#undef GPULAB_EMU_CONVERT
// Integer to float: to nearest (the default conversion).
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
// Correctly rounded arithmetic (what plain float arithmetic is on a CPU).
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __frsqrt_rn(float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
// Lengths: CUDA's norm functions, without the overflow of squaring first.
inline float norm3df(float a, float b, float c) { return static_cast<float>(std::hypot(double(a), double(b), double(c))); }
inline float rnorm3df(float a, float b, float c) { return static_cast<float>(1.0 / std::hypot(double(a), double(b), double(c))); }
inline float norm4df(float a, float b, float c, float d) {
  return static_cast<float>(std::hypot(std::hypot(double(a), double(b)), std::hypot(double(c), double(d))));
}
inline float rnorm4df(float a, float b, float c, float d) { return 1.0f / norm4df(a, b, c, d); }
inline float rhypotf(float a, float b) { return static_cast<float>(1.0 / std::hypot(double(a), double(b))); }
inline float rcbrtf(float x) { return static_cast<float>(1.0 / std::cbrt(double(x))); }
inline double norm3d(double a, double b, double c) { return std::hypot(a, b, c); }
inline double rnorm3d(double a, double b, double c) { return 1.0 / std::hypot(a, b, c); }

// ---- cache-hinted loads and stores -------------------------------------------------------
// The hints (read-only path, streaming, L2 only, write-back, write-through...) change where a GPU
// caches the data, never the value: here they are plain loads and stores of the kernel file, so
// the tracing, the metrics and the sanitizer see them like any other access.
template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T>
inline T __ldcs(const T* p) { return *p; }
template <class T>
inline T __ldcg(const T* p) { return *p; }
template <class T>
inline T __ldca(const T* p) { return *p; }
template <class T>
inline T __ldlu(const T* p) { return *p; }
template <class T>
inline T __ldcv(const T* p) { return *p; }
template <class T>
inline void __stcs(T* p, typename gpulab::emu::same_type<T>::type v) { *p = v; }
template <class T>
inline void __stcg(T* p, typename gpulab::emu::same_type<T>::type v) { *p = v; }
template <class T>
inline void __stwb(T* p, typename gpulab::emu::same_type<T>::type v) { *p = v; }
template <class T>
inline void __stwt(T* p, typename gpulab::emu::same_type<T>::type v) { *p = v; }
long long clock64();
